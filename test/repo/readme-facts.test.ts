/**
 * README's figures and requirements against what the repository says elsewhere, where a newcomer
 * meets them first (issue 33 item 12): the Node.js that `npm ci` needs (package.json's `engines`,
 * npm 11's own range, since every script runs on the Node 24 that `npm ci` installs), apt commands
 * that work as root in a container as well as with sudo, and the count of the system packages the
 * tests need. Before: README and `engines` asked for Node 22.18 while npm scripts ran on Node 20,
 * the quick start said `sudo apt-get` (no sudo in a root container), and "those three need" came
 * before four packages.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};

/** The text of the `## heading` section of README. */
function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}`);
  expect(start, heading).toBeGreaterThan(-1);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

describe('README, as a newcomer reads it', () => {
  it('asks for the Node.js that npm 11 runs on, the one engines names', () => {
    // npm 11's own engines; the scripts then run on the `node` devDependency (Node 24).
    expect(PACKAGE.engines.node).toBe('^20.17.0 || >=22.9.0');
    expect(PACKAGE.devDependencies.node).toMatch(/^\^24\./);
    expect(section('Quick start')).toContain('npm 11 on Node.js 20.17+');
    const build = section('Build from source');
    expect(build).toContain('20.17 or newer (22.9 or newer on 22');
    // What the system's own node needs outside npm: bin/screenpop-headless.js's check.
    const bin = readFileSync(join(ROOT, 'bin/screenpop-headless.js'), 'utf8');
    expect(bin).toContain('needs Node.js 22.18 or newer');
    expect(build).toContain('needs Node.js 22.18 or newer: `bin/screenpop-headless.js`');
  });

  it('gives apt commands that work as root (a container) and with sudo', () => {
    for (const name of ['Quick start', 'Build from source']) {
      const text = section(name);
      expect(text, name).not.toMatch(/^sudo apt-get/m);
      for (const line of text.split('\n').filter((l) => l.startsWith('apt-get install')))
        expect(line, name).toContain('as root or with sudo');
    }
  });

  it('counts the system packages the tests need as it lists them', () => {
    const m = /Those need\s+the (\w+) packages `([^`]+)` from apt/.exec(README);
    expect(m, 'the sentence naming the test packages').not.toBeNull();
    const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six'];
    expect(words.indexOf(m![1]!)).toBe(m![2]!.split(/\s+/).length);
  });
});
