import { domainToASCII, domainToUnicode } from 'node:url';

/**
 * An e-mail address as the relay compares it (sign-in claims, the config's mapping, relay users'
 * `--email`, the phone system's `email_addr`): one function, so that two different addresses can
 * never compare equal through Unicode case folding, and one address typed two ways is one.
 *
 * `String.prototype.toLowerCase()` folds more than A-Z: the Kelvin sign U+212A becomes `k`, the
 * dotted capital I U+0130 becomes `i` + a combining dot, so `\u212Aate@example.org` would be taken
 * for `kate@example.org`. Here:
 * - trimmed, then put in NFC (a domain typed decomposed, `u` + U+0308, is the `ü` one), except
 *   that a character NFC would turn into plain ASCII (the Kelvin sign into `K`: a "singleton"
 *   decomposition) refuses the address instead;
 * - the local part must be printable ASCII (no space, no `@`); only A-Z is lower-cased (mail
 *   providers treat local parts case-insensitively; nothing else is folded);
 * - the domain is lower-cased A-Z when ASCII; a non-ASCII domain is accepted only when it is
 *   already in the form IDNA (UTS 46) maps it to, and is then compared as its A-label
 *   (`node:url`'s domainToASCII: `bücher.de` and `xn--bcher-kva.de` are one domain); a domain
 *   that the mapping would change (`exampl\u212Ae.org`, `EXAMPLE.ORG` in full-width letters, an
 *   upper-case `Ü`, the dotted `\u0130`) is refused rather than folded.
 * Returns null for anything that is not such an address.
 */
export function canonicalEmail(raw: string): string | null {
  const trimmed = raw.trim();
  if (foldsIntoAscii(trimmed)) return null;
  const text = trimmed.normalize('NFC');
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1 || text.length > 320) return null;
  const local = text.slice(0, at);
  const domain = text.slice(at + 1);
  if (local.length > 64 || !/^[\x21-\x3f\x41-\x7e]+$/.test(local)) return null;
  const ascii = asciiDomain(domain);
  return ascii === null ? null : `${lowerAZ(local)}@${ascii}`;
}

/** Whether a non-ASCII character of the text decomposes into ASCII alone (U+212A into K). */
function foldsIntoAscii(text: string): boolean {
  for (const c of text)
    if (c > '\x7f' && [...c.normalize('NFD')].every((d) => d <= '\x7f')) return true;
  return false;
}

/** Host name labels: letters, digits and inner hyphens (an A-label `xn--…` is one of them). */
const ASCII_DOMAIN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

function asciiDomain(domain: string): string | null {
  if (domain.length > 255) return null;
  if (/^[\x21-\x7e]+$/.test(domain)) {
    const lower = lowerAZ(domain);
    return ASCII_DOMAIN.test(lower) ? lower : null;
  }
  const aLabel = domainToASCII(domain);
  if (!aLabel || domainToUnicode(aLabel) !== domain) return null;
  return aLabel;
}

function lowerAZ(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * The name an address's revocation and sessions go by: its canonical form, else the text trimmed
 * with only A-Z lower-cased. An address that is not canonical never signs in (sign-in refuses it),
 * but an administrator may still revoke it as typed; no Unicode folding either way.
 */
export function emailKey(raw: string): string {
  return canonicalEmail(raw) ?? lowerAZ(raw.trim());
}

/**
 * Names whose addresses compare equal (canonicalEmail): for each address held twice, the first
 * name that holds it, the later one and the address. Two users with one address would make a
 * sign-in with it ambiguous: the config and the users store refuse that with these names.
 */
export function sameAddressPairs(
  entries: Iterable<readonly [name: string, address: string]>,
): Array<{ first: string; second: string; address: string }> {
  const seen = new Map<string, string>();
  const out: Array<{ first: string; second: string; address: string }> = [];
  for (const [name, address] of entries) {
    const key = canonicalEmail(address);
    if (key === null) continue;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, name);
    else out.push({ first, second: name, address: key });
  }
  return out;
}

/** Whether two addresses are one (both canonical and equal); an invalid address equals nothing. */
export function sameEmail(a: string, b: string): boolean {
  const x = canonicalEmail(a);
  return x !== null && x === canonicalEmail(b);
}
