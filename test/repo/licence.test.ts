/**
 * The licence is said in four places that must agree: README's Licence section, both package.json
 * files and the installers' copyright line (electron-builder.yml). Until the owner chooses a
 * licence, all say "proprietary, no licence granted"; a licence chosen in one place and not the
 * others fails here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('the licence, said the same everywhere', () => {
  it('README: proprietary, all rights reserved, as package.json and the installers say', () => {
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('\n## Licence\n'));
    expect(section.startsWith('\n## Licence\n')).toBe(true);
    const text = section.split('\n## ')[1]!.replace(/\s+/g, ' ');
    expect(text).toContain('Screenpop is proprietary: Copyright © Screenpop, all rights reserved.');
    expect(text).toContain('"license": "UNLICENSED"');

    for (const file of ['package.json', 'src-relay/package.json']) {
      const pkg = JSON.parse(read(file)) as { license?: string; private?: boolean };
      expect({ file, license: pkg.license, private: pkg.private }).toEqual({
        file,
        license: 'UNLICENSED',
        private: true,
      });
    }
    const author = (JSON.parse(read('package.json')) as { author: { name: string } }).author.name;
    expect(read('electron-builder.yml')).toMatch(
      new RegExp(`^copyright: Copyright © ${author}$`, 'm'),
    );
    expect(text).toContain(`Copyright © ${author}`);
    // No licence file that would say otherwise.
    for (const name of ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'LICENCE', 'COPYING'])
      expect(existsSync(join(ROOT, name)), name).toBe(false);
  });
});
