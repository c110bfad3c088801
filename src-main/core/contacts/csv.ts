/**
 * CSV as spreadsheets and address books write it (RFC 4180 and its common variants): comma,
 * semicolon (Excel in locales whose decimal mark is a comma) or tab separators, double-quoted
 * fields with "" escapes and line breaks inside, CRLF, LF or CR line ends. Bounded: parsing stops
 * after `maxRows` rows.
 */

/** The separator of a file: whichever of , ; and tab its first line has most of (comma on a tie). */
export function detectSeparator(text: string): string {
  const firstLine = text.split(/\r\n|\n|\r/, 1)[0] ?? '';
  const count = (c: string) => firstLine.split(c).length - 1;
  const candidates: Array<[string, number]> = [
    [',', count(',')],
    [';', count(';')],
    ['\t', count('\t')],
  ];
  return candidates.reduce((best, next) => (next[1] > best[1] ? next : best))[0];
}

export function parseCsvRows(text: string, maxRows = Infinity): string[][] {
  const sep = detectSeparator(text);
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
      if (rows.length >= maxRows) return rows;
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
