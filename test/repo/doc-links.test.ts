/**
 * Every relative link and picture in the repository's Markdown points at a file that is there, and
 * README's pictures are the ones `npm run screenshots` writes (docs/screenshots/), not copies of
 * test runs: a moved or deleted file (the old assets/screenshot-popup.png) fails here, not in a
 * newcomer's browser.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const markdown = execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && !f.startsWith('test/fixtures/'));

/** The relative targets of `[text](target)` and `![alt](target)`, without anchors or titles. */
function localTargets(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    out.push(decodeURI(target.split('#')[0]!));
  }
  return out;
}

describe('links in the Markdown files', () => {
  it('finds the Markdown files', () => {
    expect(markdown).toContain('README.md');
    expect(markdown.length).toBeGreaterThan(10);
  });

  it('every relative link and picture resolves to a file in the repository', () => {
    const missing: string[] = [];
    for (const file of markdown) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const target of localTargets(text))
        if (!existsSync(join(ROOT, dirname(file), target))) missing.push(`${file} -> ${target}`);
    }
    expect(missing).toEqual([]);
  });

  it("README's pictures are the ones the screenshot script writes", () => {
    const script = readFileSync(join(ROOT, 'scripts/screenshots.ts'), 'utf8');
    const pictures = localTargets(readFileSync(join(ROOT, 'README.md'), 'utf8')).filter((t) =>
      /\.(png|jpe?g|gif|svg)$/i.test(t),
    );
    expect(pictures.length).toBeGreaterThanOrEqual(4);
    for (const picture of pictures) {
      expect(picture.startsWith('docs/screenshots/'), picture).toBe(true);
      const name = picture.slice('docs/screenshots/'.length).replace(/\.png$/, '');
      expect(script, `scripts/screenshots.ts does not write ${picture}`).toMatch(
        new RegExp(`['\`/}]${name}(\\.png)?['\`]`),
      );
    }
  });
});
