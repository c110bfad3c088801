import { domainToASCII, domainToUnicode } from 'node:url';

/**
 * An e-mail address as the relay compares it (sign-in claims, the config's mapping, relay users'
 * `--email`, the phone system's `email_addr`): one function, so that two different addresses can
 * never compare equal through Unicode case folding.
 *
 * `String.prototype.toLowerCase()` folds more than A-Z: the Kelvin sign U+212A becomes `k`, the
 * dotted capital I U+0130 becomes `i` + a combining dot, so `\u212Aate@example.org` would be taken
 * for `kate@example.org`. Here:
 * - trimmed; refused unless already in NFC (NFC itself maps U+212A to K, so normalising would
 *   fold it too);
 * - the local part must be printable ASCII (no space, no `@`); only A-Z is lower-cased (mail
 *   providers treat local parts case-insensitively; nothing else is folded);
 * - the domain is lower-cased A-Z when ASCII; a non-ASCII domain is accepted only when it is
 *   already in the form IDNA (UTS 46) maps it to, and is then compared as its A-label
 *   (`bücher.de` and `xn--bcher-kva.de` are one domain); a domain that the mapping would change
 *   (`exampl\u212Ae.org`, `EXAMPLE.ORG` in full-width letters, an upper-case `Ü`) is refused rather
 *   than folded.
 * Returns null for anything that is not such an address.
 */
export function canonicalEmail(raw: string): string | null {
  const text = raw.trim();
  // Not normalised but refused when not in NFC: NFC itself maps the Kelvin sign to K.
  if (text !== text.normalize('NFC')) return null;
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1 || text.length > 320) return null;
  const local = text.slice(0, at);
  const domain = text.slice(at + 1);
  if (local.length > 64 || !/^[\x21-\x3f\x41-\x7e]+$/.test(local)) return null;
  const ascii = asciiDomain(domain);
  return ascii === null ? null : `${lowerAZ(local)}@${ascii}`;
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

/** Whether two addresses are one (both canonical and equal); an invalid address equals nothing. */
export function sameEmail(a: string, b: string): boolean {
  const x = canonicalEmail(a);
  return x !== null && x === canonicalEmail(b);
}
