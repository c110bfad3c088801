/**
 * src-shared/wire/README.md: everything that differs between phone systems sits behind the wire's
 * seams, and the rest of the product never asks which one is in use. A phone system's id written
 * as a string in product code outside the seam is such a question; the few tables keyed by it that
 * remain are listed here with their reason.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PHONE_SYSTEMS } from '../../src-shared/phone-systems/names.ts';

/** Where a phone system is spoken of by its id: its seam, its frames, the simulator's modes. */
const SEAM = ['src-shared/wire/', 'src-shared/phone-systems/', 'src-sim/'];

/** Keyed by the id, with the reason it is not in the wire. */
const ALLOWED: Record<string, string> = {
  // The Settings window's words for a field in a system's own terms: the windows may not load the
  // wire (its decoders need Node), and these are catalogue words, not a branch.
  'src-renderer/settings/fields.ts': 'field words per phone system',
};

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

describe('the wire seam', () => {
  it('no product file outside it names a phone system by its id (a branch by name)', () => {
    const ids = PHONE_SYSTEMS.filter((s) => s !== 'standard');
    const found: string[] = [];
    for (const top of readdirSync('.').filter((d) => d.startsWith('src-')))
      for (const file of sources(top)) {
        if (SEAM.some((s) => file.startsWith(s)) || ALLOWED[file]) continue;
        // Code only: a comment may say which system a rule is about.
        const text = readFileSync(file, 'utf8')
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/^\s*\/\/.*$/gm, '');
        for (const id of ids)
          if (text.includes(`'${id}'`) || text.includes(`"${id}"`)) found.push(`${file}: ${id}`);
        // A test of the standard service by name is the same question asked the other way.
        if (/[!=]== ?'standard'/.test(text)) found.push(`${file}: standard`);
      }
    expect(found).toEqual([]);
  });
});
