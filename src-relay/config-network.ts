/**
 * The relay configuration's network rules: what an issuer URL, a service base URL and an address
 * or CIDR range are, and when two base URLs reach the same service (the schema in config.ts checks
 * with them; the webhook handler builds its allow list with `addressList`).
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
// check-config.ts imports the config too; the function is only called once both are loaded.
import { isSecureOrLoopback } from '../src-shared/net/loopback.ts';

export function isIssuerUrl(text: string): boolean {
  try {
    return isSecureOrLoopback(new URL(text));
  } catch {
    return false;
  }
}

export function isAddressOrRange(text: string): boolean {
  return addressList([text]) !== null;
}

/** The addresses and CIDR ranges of `entries` as one BlockList; null if one is neither. */
export function addressList(entries: readonly string[]): BlockList | null {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.trim().split('/');
    const type = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
    if (!type || extra !== undefined) return null;
    if (prefix === undefined) {
      list.addAddress(address, type);
      continue;
    }
    const bits = Number(prefix);
    if (!/^\d{1,3}$/.test(prefix) || bits > (type === 'ipv4' ? 32 : 128)) return null;
    list.addSubnet(address, bits, type);
  }
  return list;
}

export function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** Base URLs that reach one service compare equal (case of the host, default port, trailing /). */
export function sameServiceKey(baseUrl: string): string {
  const u = new URL(baseUrl);
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}
