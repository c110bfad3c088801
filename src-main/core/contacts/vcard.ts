/**
 * Contacts from vCard files: 2.1 (phones' own exports: bare TYPE words such as `TEL;CELL;VOICE`,
 * `ENCODING=QUOTED-PRINTABLE` with a `CHARSET`, soft line breaks), 3.0 (RFC 2426; Apple/iCloud:
 * `item1.TEL` with an `item1.X-ABLabel`, `type=` parameters) and 4.0 (RFC 6350: `TEL;VALUE=uri:
 * tel:+1-555-555-5555;ext=5555`, quoted parameter lists such as `TYPE="voice,cell"`).
 *
 * A card's name is FN, else N (given, additional, family; RFC 2426 makes FN required but many
 * exports leave it out), else ORG. Numbers keep their kind (mobile, work, home, main); fax and pager
 * numbers are not read. Vcards nested in a card (AGENT in 2.1) are skipped, not read as people.
 */
import { decodeCharset } from './decode.ts';
import { kindFromWords } from './csv-contacts.ts';
import type { Contact, ContactNumber, ContactsReading, NumberKind } from './types.ts';

interface Property {
  group: string;
  name: string;
  /** Parameter names in upper case; bare 2.1 words are TYPE values. */
  params: Map<string, string[]>;
  value: string;
}

/** Splits `text` on `sep` outside double quotes. */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let part = '';
  let quoted = false;
  for (const c of text) {
    if (c === '"') quoted = !quoted;
    if (c === sep && !quoted) {
      parts.push(part);
      part = '';
    } else part += c;
  }
  parts.push(part);
  return parts;
}

/** The index of the colon that ends a property's name and parameters (not one inside quotes). */
function valueStart(line: string): number {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') quoted = !quoted;
    else if (c === ':' && !quoted) return i;
  }
  return -1;
}

function parseProperty(line: string): Property | null {
  const colon = valueStart(line);
  if (colon <= 0) return null;
  const [head = '', ...rawParams] = splitOutsideQuotes(line.slice(0, colon), ';');
  const dot = head.lastIndexOf('.');
  const params = new Map<string, string[]>();
  const add = (name: string, values: string[]) =>
    params.set(name, [...(params.get(name) ?? []), ...values]);
  for (const raw of rawParams) {
    const eq = raw.indexOf('=');
    if (eq < 0) {
      // vCard 2.1: `TEL;CELL;VOICE`, `;QUOTED-PRINTABLE`.
      const word = raw.trim().toUpperCase();
      if (word === 'QUOTED-PRINTABLE' || word === 'BASE64') add('ENCODING', [word]);
      else if (word) add('TYPE', [word]);
      continue;
    }
    const name = raw.slice(0, eq).trim().toUpperCase();
    const values = splitOutsideQuotes(raw.slice(eq + 1), ',')
      .map((v) => v.trim().replace(/^"|"$/g, ''))
      .flatMap((v) => v.split(','))
      .map((v) => v.trim().toUpperCase())
      .filter(Boolean);
    add(name, values);
  }
  return {
    group: dot >= 0 ? head.slice(0, dot).toLowerCase() : '',
    name: (dot >= 0 ? head.slice(dot + 1) : head).trim().toUpperCase(),
    params,
    value: line.slice(colon + 1),
  };
}

const HEX = /^[0-9A-Fa-f]$/;

/** Quoted-printable (RFC 2045) to bytes: `=C3=BC` is one byte each; soft breaks are gone already. */
function quotedPrintableBytes(value: string): Uint8Array {
  // Each character gives at most 3 bytes (anything outside ASCII is kept as its UTF-8 bytes).
  const bytes = new Uint8Array(value.length * 3);
  const encoder = new TextEncoder();
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x3d && HEX.test(value[i + 1] ?? '') && HEX.test(value[i + 2] ?? '')) {
      bytes[n++] = parseInt(value.slice(i + 1, i + 3), 16);
      i += 2;
    } else if (c < 0x80) bytes[n++] = c;
    else {
      // The value is ASCII by definition; anything else is kept as its UTF-8 bytes.
      const code = value.codePointAt(i) ?? c;
      const char = String.fromCodePoint(code);
      n += encoder.encodeInto(char, bytes.subarray(n)).written;
      i += char.length - 1;
    }
  }
  return bytes.subarray(0, n);
}

/** A property's text: decoded from quoted-printable in its CHARSET when so encoded. */
function textOf(p: Property): string {
  if (p.params.get('ENCODING')?.includes('QUOTED-PRINTABLE'))
    return decodeCharset(quotedPrintableBytes(p.value), p.params.get('CHARSET')?.[0]);
  return p.value;
}

/** Splits a structured value (N, ORG) on unescaped semicolons, then unescapes each part. */
function components(value: string): string[] {
  const parts: string[] = [];
  let part = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && i + 1 < value.length) {
      part += c + value[i + 1];
      i++;
    } else if (c === ';') {
      parts.push(part);
      part = '';
    } else part += c;
  }
  parts.push(part);
  return parts.map(unescapeText);
}

/** RFC 6350 3.4: \\ \, \; and \n (a line break, shown as a space in a name). */
function unescapeText(value: string): string {
  return value.replace(/\\([\\,;nN])/g, (_m, c: string) => (c === 'n' || c === 'N' ? ' ' : c));
}

/** The kind a TEL's TYPE values say; null for a fax or pager (not read). */
function telKind(types: string[]): NumberKind | null {
  const has = (t: string) => types.includes(t);
  if ((has('FAX') || has('PAGER')) && !has('VOICE') && !has('CELL')) return null;
  if (has('CELL') || has('IPHONE') || has('CAR') || has('PCS') || has('MOBILE')) return 'mobile';
  if (has('WORK')) return 'work';
  if (has('HOME')) return 'home';
  if (has('MAIN') || has('X-MAIN')) return 'main';
  return 'other';
}

/** Apple's label for a grouped TEL: `_$!<Mobile>!$_` for its own kinds, else the user's words. */
function labelKind(label: string): NumberKind | null {
  const own = /^_\$!<(.*)>!\$_$/.exec(label.trim());
  const words = own?.[1] ?? label;
  if (/fax|pager/i.test(words)) return null;
  return kindFromWords(words);
}

/** A TEL value as a number: `tel:` URIs lose the scheme and parameters (`;ext=`). */
function telNumber(value: string): string {
  const v = value.trim();
  if (/^tel:/i.test(v)) return v.slice(4).split(';')[0]?.trim() ?? '';
  return v;
}

interface Card {
  fn: string;
  n: string;
  org: string;
  tels: Array<{ group: string; number: string; kind: NumberKind | null; typed: boolean }>;
  labels: Map<string, string>;
}

function newCard(): Card {
  return { fn: '', n: '', org: '', tels: [], labels: new Map() };
}

function finish(card: Card): Contact | null {
  const company = card.org;
  const name = card.fn || card.n || company;
  const numbers: ContactNumber[] = [];
  for (const tel of card.tels) {
    const label = tel.group ? card.labels.get(tel.group) : undefined;
    const kind = !tel.typed && label !== undefined ? labelKind(label) : tel.kind;
    if (kind && tel.number) numbers.push({ number: tel.number, kind });
  }
  if (!name || numbers.length === 0) return null;
  return { name, company: company === name ? '' : company, numbers };
}

/**
 * The longest quoted-printable value read, joined across its soft line breaks: 64 KiB. Names,
 * numbers and companies are a few dozen characters, and a long note is a few kilobytes; a value
 * that runs on past this is a damaged file (a line ending in "=" that was no soft break carries
 * every line after it into one value), and the reading stops there and says at which line, rather
 * than hide the rest of the file inside one value.
 */
export const MAX_QP_VALUE_CHARS = 64 * 1024;

/** A quoted-printable value that ran on past MAX_QP_VALUE_CHARS, from its first line (1-based). */
class LongValue {
  readonly line: number;
  constructor(line: number) {
    this.line = line;
  }
}

/**
 * Logical lines: folded lines unfolded (CRLF then a space or tab continues the line, RFC 6350
 * 3.2), and a quoted-printable value ending in a soft break ("=") joined with the next line
 * (vCard 2.1, where such continuations need not start with a space). Linear in the text: a line's
 * pieces are collected and joined once.
 */
function logicalLines(text: string): string[] | LongValue {
  const physical = text.replace(/\r\n|\r/g, '\n').split('\n');
  // Unfolded: a line and the lines that continue it (a space or tab first), with where it starts.
  const unfolded: Array<{ line: string; at: number }> = [];
  for (let i = 0; i < physical.length; i++) {
    const at = i + 1;
    const parts = [physical[i] ?? ''];
    while (/^[ \t]/.test(physical[i + 1] ?? '')) parts.push((physical[++i] ?? '').slice(1));
    unfolded.push({ line: parts.length === 1 ? parts[0]! : parts.join(''), at });
  }
  const lines: string[] = [];
  for (let i = 0; i < unfolded.length; i++) {
    const first = unfolded[i]!;
    let line = first.line;
    if (
      line.endsWith('=') &&
      /QUOTED-PRINTABLE/i.test(line.slice(0, Math.max(0, valueStart(line))))
    ) {
      const parts: string[] = [];
      let length = 0;
      while (line.endsWith('=') && i + 1 < unfolded.length) {
        parts.push(line.slice(0, -1));
        length += line.length - 1;
        if (length > MAX_QP_VALUE_CHARS) return new LongValue(first.at);
        line = unfolded[++i]!.line;
      }
      parts.push(line);
      line = parts.join('');
    }
    lines.push(line);
  }
  return lines;
}

export function readVCardContacts(text: string, maxNumbers: number): ContactsReading {
  const contacts: Contact[] = [];
  let cards = 0;
  let withNumber = 0;
  let skipped = 0;
  let count = 0;
  let depth = 0;
  let card = newCard();
  const lines = logicalLines(text);
  if (lines instanceof LongValue)
    return {
      layout: 'vcard',
      contacts: [],
      skipped: 0,
      problem: { kind: 'long-value', line: lines.line, limitKb: MAX_QP_VALUE_CHARS / 1024 },
    };
  for (const line of lines) {
    const p = parseProperty(line);
    if (!p) continue;
    if (p.name === 'BEGIN' && p.value.trim().toUpperCase() === 'VCARD') {
      if (depth++ === 0) card = newCard();
      continue;
    }
    if (p.name === 'END' && p.value.trim().toUpperCase() === 'VCARD') {
      if (depth === 0) continue;
      if (--depth > 0) continue;
      cards++;
      if (card.tels.length > 0) withNumber++;
      const contact = finish(card);
      if (contact && count < maxNumbers) {
        contacts.push(contact);
        count += contact.numbers.length;
      } else skipped++;
      continue;
    }
    if (depth !== 1) continue;
    switch (p.name) {
      case 'FN':
        card.fn = unescapeText(textOf(p)).trim();
        break;
      case 'N': {
        const [family = '', given = '', additional = ''] = components(textOf(p));
        card.n = [given, additional, family]
          .map((s) => s.trim())
          .filter(Boolean)
          .join(' ');
        break;
      }
      case 'ORG':
        card.org = (components(textOf(p))[0] ?? '').trim();
        break;
      case 'TEL': {
        const types = p.params.get('TYPE') ?? [];
        card.tels.push({
          group: p.group,
          number: telNumber(textOf(p)),
          kind: telKind(types),
          typed: types.some((t) => t !== 'VOICE' && t !== 'PREF'),
        });
        break;
      }
      case 'X-ABLABEL':
        if (p.group) card.labels.set(p.group, unescapeText(textOf(p)));
        break;
    }
  }
  if (contacts.length === 0)
    return {
      layout: 'vcard',
      contacts,
      skipped,
      problem: cards === 0 ? { kind: 'empty' } : { kind: 'no-cards', cards, withNumber },
    };
  return { layout: 'vcard', contacts, skipped };
}
