/**
 * Transfer's colleague picker (issue 38 item 4) through the real Directory: the tenant's extension
 * list as extension/list hands it over (number and caller-ID name), found by name or extension.
 */
import { describe, expect, it } from 'vitest';
import { Directory, type DirectoryEntry } from '../../src-main/core/contacts/directory.ts';
import { COLLEAGUES_SHOWN } from '../../src-main/core/contacts/colleagues.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

async function directory(list: DirectoryEntry[]) {
  const dir = new Directory({
    clock: new FakeClock(),
    logger: silentLogger,
    fetchExtensions: () => Promise.resolve(list),
    defaultRegion: 'GB',
  });
  await dir.refreshNow();
  return dir;
}

const TEAM: DirectoryEntry[] = [
  { number: '201', callerIdName: 'Me Myself' },
  { number: '204', callerIdName: 'Bob Stone' },
  { number: '215', callerIdName: 'Zoë Bowman' },
  { number: '230', callerIdName: 'Anna-Lena Boberg' },
  { number: '2040', callerIdName: 'Carol Ames' },
  { number: '310', callerIdName: 'Roberto Díaz' },
  { number: '320', callerIdName: 'سارة أحمد' },
  // A number on the list that is no extension: never offered as a colleague.
  { number: '+44 20 7946 0958', callerIdName: 'Reception line' },
];

describe('colleagues for Transfer', () => {
  it('by the start of the extension: the one typed exactly first, then the others by name', async () => {
    const dir = await directory(TEAM);
    expect(dir.colleagues('204', ['201'])).toEqual([
      { extension: '204', name: 'Bob Stone' },
      { extension: '2040', name: 'Carol Ames' },
    ]);
    // The user's own extension is left out.
    expect(dir.colleagues('20', ['201']).map((c) => c.extension)).toEqual(['204', '2040']);
  });

  it('by the start of the name or of any word of it, then anywhere in it; case and accents ignored', async () => {
    const dir = await directory(TEAM);
    expect(dir.colleagues('bo', [])).toEqual([
      { extension: '230', name: 'Anna-Lena Boberg' },
      { extension: '204', name: 'Bob Stone' },
      { extension: '215', name: 'Zoë Bowman' },
    ]);
    // The start of a word comes before the inside of one ("Roberto" before "Carol").
    expect(dir.colleagues('ro', [])).toEqual([
      { extension: '310', name: 'Roberto Díaz' },
      { extension: '2040', name: 'Carol Ames' },
    ]);
    expect(dir.colleagues('ZOE', [])).toEqual([{ extension: '215', name: 'Zoë Bowman' }]);
    expect(dir.colleagues('diaz', [])).toEqual([{ extension: '310', name: 'Roberto Díaz' }]);
    expect(dir.colleagues('lena', [])).toEqual([{ extension: '230', name: 'Anna-Lena Boberg' }]);
    expect(dir.colleagues('سارة', [])).toEqual([{ extension: '320', name: 'سارة أحمد' }]);
  });

  it('finds nothing for no query, punctuation only, an over-long query, or a number that is no extension', async () => {
    const dir = await directory(TEAM);
    for (const q of ['', '   ', '--', 'x'.repeat(65), 'reception', '7946'])
      expect(dir.colleagues(q, [])).toEqual([]);
  });

  it(`offers at most ${COLLEAGUES_SHOWN}, the best first`, async () => {
    const many = Array.from({ length: 40 }, (_, i) => ({
      number: String(500 + i),
      callerIdName: `Agent ${String(i).padStart(2, '0')}`,
    }));
    const dir = await directory(many);
    const found = dir.colleagues('agent', []);
    expect(found).toHaveLength(COLLEAGUES_SHOWN);
    expect(found[0]).toEqual({ extension: '500', name: 'Agent 00' });
    expect(dir.colleagues('539', [])).toEqual([{ extension: '539', name: 'Agent 39' }]);
  });

  it('names as the directory shows them: no control or bidi-override characters', async () => {
    const dir = await directory([{ number: '250', callerIdName: 'Eve\u202E Evil\u0007' }]);
    const [eve] = dir.colleagues('eve', []);
    expect(eve?.extension).toBe('250');
    expect(eve?.name).not.toContain('\u202E');
    expect(eve?.name).not.toContain('\u0007');
  });
});
