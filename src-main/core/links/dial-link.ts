/**
 * `tel:`, `callto:` and `sip:` links (issue 38): the number a link from outside asks Screenpop to
 * call, or the reason it is refused. What is about links lives here (schemes, percent-decoding,
 * parameters, hidden characters); what is dialled is the one rule of the phone-number module
 * (`dialableNumber`: a national number as the user's own phone would dial it, `+`/`00` numbers in
 * E.164), shown normalised for the user's region. A link never dials by itself:
 * `needsConfirmation` is the one rule for whether the user is asked first (always, unless the
 * organisation's policy said not to).
 *
 * Everything here is untrusted (a web page or a CRM wrote it): the text is bounded before it is
 * read, percent-decoded once, and refused when it hides characters (control, bidi, zero-width),
 * or is not a number the one rule dials. Parameters (`;phone-context=`, `;ext=`, `;user=phone`)
 * are never dialled: a local number with a `phone-context` is refused rather than guessed at; a
 * global number's parameters are dropped.
 */
import type { Phrase } from '../../../src-shared/i18n/phrase.ts';
import { phrase } from '../../../src-shared/i18n/phrase.ts';
import { dialableNumber } from '../numbers/phone-number.ts';

/** The schemes Screenpop registers with the operating system and reads here. */
export const DIAL_LINK_SCHEMES = ['tel', 'callto', 'sip'] as const;
export type DialLinkScheme = (typeof DIAL_LINK_SCHEMES)[number];

/** The longest link read (RFC 3966 numbers are short; a longer link is not a number). */
export const MAX_DIAL_LINK_CHARS = 256;

export type DialLinkRefusal = 'not-a-call-link' | 'too-long' | 'hidden-characters' | 'not-a-number';

export type DialLink =
  | {
      ok: true;
      scheme: DialLinkScheme;
      /** What is dialled (numbers/phone-number.ts `dialableNumber`: what the user's phone dials). */
      number: string;
      /** The number as the confirmation shows it (national in the user's region). */
      shown: string;
    }
  | { ok: false; refusal: DialLinkRefusal; words: Phrase };

function refuse(refusal: DialLinkRefusal): DialLink {
  const words =
    refusal === 'too-long'
      ? phrase('status.dial-link.too-long', { max: MAX_DIAL_LINK_CHARS })
      : phrase(`status.dial-link.${refusal}`);
  return { ok: false, refusal, words };
}

/** C0/C1 controls, bidi marks and embeddings/isolates, zero-width characters, BOM, line separators. */
const HIDDEN =
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/** A scheme from `text` (`tel:` ...), lower-cased, when it is one Screenpop reads. */
function schemeOf(text: string): DialLinkScheme | null {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(text);
  const s = m?.[1]?.toLowerCase();
  return (DIAL_LINK_SCHEMES as readonly string[]).includes(s ?? '') ? (s as DialLinkScheme) : null;
}

/** The part of the link that names the number, before any parameters, or null when there is none. */
function numberPart(scheme: DialLinkScheme, rest: string): { text: string; params: string } | null {
  let body = rest;
  if (scheme === 'callto' || scheme === 'sip') {
    // callto://+441234 (Skype's form) and callto:+441234; sip:+441234@host;user=phone
    if (scheme === 'callto') body = body.replace(/^\/\//, '');
    const q = body.indexOf('?');
    if (q >= 0) body = body.slice(0, q);
    if (scheme === 'sip') {
      const at = body.indexOf('@');
      if (at >= 0) body = body.slice(0, at);
    }
    if (scheme === 'callto') body = body.replace(/\/$/, '');
  }
  const semi = body.indexOf(';');
  const text = semi >= 0 ? body.slice(0, semi) : body;
  const params = semi >= 0 ? body.slice(semi + 1) : '';
  return text.length > 0 ? { text, params } : null;
}

/**
 * The number `link` asks Screenpop to call (the one rule, `dialTarget`), shown normalised for
 * `region` (ISO 3166 alpha-2), or why not. Never throws.
 */
export function parseDialLink(link: unknown, region?: string): DialLink {
  if (typeof link !== 'string') return refuse('not-a-call-link');
  if (link.length > MAX_DIAL_LINK_CHARS) return refuse('too-long');
  const raw = link.trim();
  const scheme = schemeOf(raw);
  if (!scheme) return refuse('not-a-call-link');
  if (HIDDEN.test(raw)) return refuse('hidden-characters');
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw.slice(scheme.length + 1));
  } catch {
    return refuse('not-a-number');
  }
  // Decoded once: what decoding revealed is read as it is (a second `%` is not a number).
  if (HIDDEN.test(decoded)) return refuse('hidden-characters');
  const part = numberPart(scheme, decoded.trim());
  if (!part) return refuse('not-a-number');
  const global = part.text.trim().startsWith('+');
  if (!global && /(^|;)phone-context=/i.test(part.params)) return refuse('not-a-number');
  const n = dialTarget(part.text, region);
  return n.ok ? { ok: true, scheme, number: n.number, shown: n.shown } : n;
}

export type DialTarget =
  | { ok: true; number: string; shown: string }
  | { ok: false; refusal: 'not-a-number' | 'hidden-characters'; words: Phrase };

/**
 * `raw` (a link's number, the dial box, a transfer's target) read by the one rule for what
 * Screenpop dials, `dialableNumber` (numbers/phone-number.ts: what the user's own phone would
 * dial), with its refusal in words: hidden characters said as such (text pasted from a web page
 * can carry them), anything else the rule refuses as "not a number". Never throws.
 */
export function dialTarget(raw: unknown, region?: string): DialTarget {
  const no = (refusal: 'not-a-number' | 'hidden-characters'): DialTarget => ({
    ok: false,
    refusal,
    words: phrase(`status.dial-link.${refusal}`),
  });
  if (typeof raw !== 'string' || raw.length > MAX_DIAL_LINK_CHARS) return no('not-a-number');
  if (HIDDEN.test(raw)) return no('hidden-characters');
  const n = dialableNumber(raw, region);
  return n ? { ok: true, number: n.dial, shown: n.shown } : no('not-a-number');
}

/** Where a request to dial came from. */
export type DialSource =
  | 'user' // the user pressed Call back / Call in Screenpop, or typed into the dial box
  | 'link'; // a tel:/callto:/sip: link from another program or a web page

/**
 * Whether the user must confirm before Screenpop dials: a link from outside always, unless the
 * organisation's policy turned the confirmation off (`confirmDialLinks: false` for managed fleets);
 * the user's own click in Screenpop never.
 */
export function needsConfirmation(source: DialSource, confirmDialLinks: boolean): boolean {
  if (source === 'user') return false;
  return confirmDialLinks !== false;
}

/** The first `tel:`/`callto:`/`sip:` link among a launch's arguments (Windows, Linux), or null. */
export function dialLinkInArgs(argv: readonly unknown[]): string | null {
  for (const arg of argv) {
    // A link too long is returned too: parseDialLink refuses it with words, rather than silence.
    if (typeof arg === 'string' && schemeOf(arg.trimStart().slice(0, 16))) return arg.trim();
  }
  return null;
}
