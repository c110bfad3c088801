/**
 * The optional contacts file: a CSV export (a header row with a name column and a number column) or
 * a vCard file (FN and TEL lines). It is the user's own file, but still parsed defensively: bounded
 * size and entry count, quoted CSV fields, folded vCard lines, anything unreadable skipped.
 */
export interface Contact {
  name: string;
  number: string;
}

export const MAX_CONTACTS_BYTES = 5 * 1024 * 1024;
export const MAX_CONTACTS = 50_000;

const NAME_HEADERS = ['name', 'full name', 'display name', 'fn', 'contact', 'contact name'];
const NUMBER_HEADERS = [
  'number',
  'phone',
  'phone number',
  'telephone',
  'tel',
  'mobile',
  'mobile phone',
  'business phone',
  'work phone',
];

export function parseContacts(text: string): Contact[] {
  const body = text.replace(/^\uFEFF/, '');
  return /^\s*BEGIN:VCARD/im.test(body) ? parseVCard(body) : parseCsv(body);
}

/** RFC 4180-ish: commas or semicolons, double-quoted fields with "" escapes, CRLF or LF. */
export function parseCsvRows(text: string): string[][] {
  const firstLine = text.split(/\r?\n/, 1)[0] ?? '';
  const sep =
    (firstLine.match(/;/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? ';' : ',';
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === sep) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      if (rows.length > MAX_CONTACTS) break;
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

function parseCsv(text: string): Contact[] {
  const rows = parseCsvRows(text);
  const header = (rows[0] ?? []).map((h) => h.trim().toLowerCase());
  const nameCol = header.findIndex((h) => NAME_HEADERS.includes(h));
  const numberCols = header
    .map((h, i) => (NUMBER_HEADERS.includes(h) ? i : -1))
    .filter((i) => i >= 0);
  if (nameCol < 0 || numberCols.length === 0) return [];
  const out: Contact[] = [];
  for (const row of rows.slice(1)) {
    const name = (row[nameCol] ?? '').trim();
    if (!name) continue;
    for (const col of numberCols) {
      const number = (row[col] ?? '').trim();
      if (number) out.push({ name, number });
    }
    if (out.length >= MAX_CONTACTS) break;
  }
  return out;
}

function unescapeVCard(value: string): string {
  return value.replace(/\\([,;\\nN])/g, (_m, c: string) => (c === 'n' || c === 'N' ? ' ' : c));
}

function parseVCard(text: string): Contact[] {
  // Unfold: a line starting with a space or tab continues the previous one.
  const lines = text.replace(/\r?\n[ \t]/g, '').split(/\r?\n/);
  const out: Contact[] = [];
  let name = '';
  let numbers: string[] = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const prop = (line.slice(0, colon).split(';')[0] ?? '')
      .replace(/^item\d+\./i, '')
      .toUpperCase();
    const value = line.slice(colon + 1);
    if (prop === 'BEGIN') {
      name = '';
      numbers = [];
    } else if (prop === 'FN') name = unescapeVCard(value).trim();
    else if (prop === 'TEL') numbers.push(value.replace(/^tel:/i, '').trim());
    else if (prop === 'END') {
      if (name) for (const number of numbers) if (number) out.push({ name, number });
      if (out.length >= MAX_CONTACTS) break;
    }
  }
  return out;
}
