/**
 * The desk phone's address as Settings take it for remote answer (uaCSTA, issue 38;
 * docs/phone-systems/yeastar-p-series.md section 10): an IP address, IPv4 dotted or IPv6, with an
 * optional SIP port (`192.168.28.2`, `192.168.28.2:5060`, `[fd00::2]:5060`). Never a URL, a host
 * name, a path or anything with spaces: the address is compared with the one the PBX reports in
 * (30020) uaCSTA Call, never dialled or opened. Pure: the app, the Settings window and the runner
 * read it the same way.
 */

/** The longest address taken: an IPv6 address in brackets with a port is at most 47 characters. */
export const MAX_DESK_PHONE_ADDRESS_CHARS = 64;

export interface DeskPhoneAddress {
  /** The IP address alone, canonical (IPv4 without leading zeros, IPv6 lower-cased, compressed). */
  host: string;
  /** The SIP port where one was given (1 to 65535). */
  port?: number;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function ipv4(text: string): string | null {
  const m = IPV4.exec(text);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  // A leading zero is refused (`010` is octal to some readers): one address, one spelling.
  if (m.slice(1).some((p) => p.length > 1 && p.startsWith('0'))) return null;
  return parts.every((p) => p <= 255) ? parts.join('.') : null;
}

function ipv6(text: string): string | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(':')) return null;
  try {
    // The WHATWG URL parser is the IPv6 grammar (available to Node and the renderer alike).
    const host = new URL(`http://[${text}]/`).hostname;
    return host.slice(1, -1);
  } catch {
    return null;
  }
}

function port(text: string): number | null {
  if (!/^\d{1,5}$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : null;
}

/** The address, or null when `raw` is not an IP address with an optional port. */
export function parseDeskPhoneAddress(raw: string): DeskPhoneAddress | null {
  const text = raw.trim();
  if (!text || text.length > MAX_DESK_PHONE_ADDRESS_CHARS) return null;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    const host = ipv6(bracketed[1]!);
    if (!host) return null;
    if (bracketed[2] === undefined) return { host };
    const p = port(bracketed[2]);
    return p === null ? null : { host, port: p };
  }
  const v6 = ipv6(text);
  if (v6) return { host: v6 };
  const colon = text.lastIndexOf(':');
  const host = ipv4(colon < 0 ? text : text.slice(0, colon));
  if (!host) return null;
  if (colon < 0) return { host };
  const p = port(text.slice(colon + 1));
  return p === null ? null : { host, port: p };
}

/** Whether two addresses name the same phone: the same IP, and the same port where both give one. */
export function sameDeskPhone(a: DeskPhoneAddress, b: DeskPhoneAddress): boolean {
  return a.host === b.host && (a.port === undefined || b.port === undefined || a.port === b.port);
}
