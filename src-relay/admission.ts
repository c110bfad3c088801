import type http from 'node:http';

export interface AdmissionLimits {
  maxSessions: number;
  maxSessionsPerAddress: number;
  maxSessionsPerToken: number;
}

/**
 * Caps on sessions at once: in all, per client address and per access token. A place is taken
 * before the token is checked (so a refused client costs no call at the service) and given back
 * when the handshake is refused or the session ends.
 */
export class Admission {
  private total = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly byToken = new Map<string, number>();
  private readonly limits: AdmissionLimits;

  constructor(limits: AdmissionLimits) {
    this.limits = limits;
  }

  /** A place for one more session, or why not; `release` gives it back (once). */
  take(
    address: string,
    tokenKey: string,
  ): { ok: true; release: () => void } | { ok: false; status: 429 | 503; reason: string } {
    if (this.total >= this.limits.maxSessions)
      return { ok: false, status: 503, reason: 'the relay is full; retry later' };
    if ((this.byAddress.get(address) ?? 0) >= this.limits.maxSessionsPerAddress)
      return { ok: false, status: 429, reason: 'too many connections from this address' };
    if ((this.byToken.get(tokenKey) ?? 0) >= this.limits.maxSessionsPerToken)
      return { ok: false, status: 429, reason: 'too many connections with this token' };
    this.total += 1;
    bump(this.byAddress, address, 1);
    bump(this.byToken, tokenKey, 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.total -= 1;
        bump(this.byAddress, address, -1);
        bump(this.byToken, tokenKey, -1);
      },
    };
  }
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}

/**
 * The address a request came from: the socket's peer, or behind a trusted reverse proxy the
 * right-most X-Forwarded-For entry (the one the proxy added; entries left of it are the client's
 * word). IPv4-mapped IPv6 addresses are written as IPv4.
 */
export function clientAddress(req: http.IncomingMessage, trustProxy: boolean): string {
  let address = req.socket.remoteAddress ?? 'unknown';
  const forwarded = req.headers['x-forwarded-for'];
  if (trustProxy && forwarded) {
    const list = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded).split(',');
    const last = list[list.length - 1]?.trim();
    if (last) address = last;
  }
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
