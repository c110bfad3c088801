/**
 * The colleague picker of Transfer (issue 38 item 4): the tenant's extensions (the directory's
 * extension list: each extension's number and the phone system's name for it) found by what the
 * user typed, a name or an extension. Pure: the directory hands its index over.
 *
 * - Matched by the start of the extension, or of the name or any word of it, then anywhere in the
 *   name; case and accents do not matter ("zoe" finds "Zoë Lambert"). Best first: the extension
 *   typed exactly, an extension starting with it, a name or a word starting with it, the rest;
 *   alphabetically within each.
 * - The user's own extensions are left out (a call is not transferred to oneself).
 * - At most `limit` (default 8): a list to pick from, not the directory. A query longer than a
 *   name could be (64 characters) or without a letter or digit finds nothing.
 */

export interface Colleague {
  /** The extension's number, as the transfer dials it. */
  extension: string;
  /** The phone system's name for it (already made fit to show by the directory). */
  name: string;
}

export const COLLEAGUES_SHOWN = 8;
export const MAX_COLLEAGUE_QUERY = 64;

/** Lower case without accents, for matching only (never shown). */
function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** The index's key of an extension (the directory keys short numbers `ext:<digits>`). */
const EXTENSION_KEY = /^ext:(\d{1,16})$/;

/**
 * `extensions`: the directory's extension index (number key to name). `own`: the user's own
 * extensions (left out).
 */
export function findColleagues(
  extensions: ReadonlyMap<string, string>,
  query: string,
  own: readonly string[] = [],
  limit = COLLEAGUES_SHOWN,
): Colleague[] {
  if (typeof query !== 'string' || query.length > MAX_COLLEAGUE_QUERY) return [];
  const q = fold(query.trim());
  if (!/[\p{L}\p{N}]/u.test(q)) return [];
  const mine = new Set(own);
  const found: { c: Colleague; rank: number }[] = [];
  for (const [key, name] of extensions) {
    const extension = EXTENSION_KEY.exec(key)?.[1];
    if (!extension || mine.has(extension)) continue;
    const folded = fold(name);
    let rank: number;
    if (extension === q) rank = 0;
    else if (extension.startsWith(q)) rank = 1;
    else if (folded.startsWith(q) || folded.split(/[\s\-.,'’()]+/u).some((w) => w.startsWith(q)))
      rank = 2;
    else if (folded.includes(q)) rank = 3;
    else continue;
    found.push({ c: { extension, name }, rank });
  }
  found.sort(
    (a, b) =>
      a.rank - b.rank ||
      a.c.name.localeCompare(b.c.name) ||
      a.c.extension.localeCompare(b.c.extension, 'en', { numeric: true }),
  );
  return found.slice(0, Math.max(0, limit)).map((f) => f.c);
}
