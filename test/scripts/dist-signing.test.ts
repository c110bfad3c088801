/** npm run dist on macOS without a certificate: an ad-hoc signed, marked test build (27.2). */
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keytarProblem, macSigningArgs, UNSIGNED_MARK } from '../../scripts/dist.ts';

describe('macSigningArgs', () => {
  it('signs a macOS build ad hoc, without the hardened runtime, and marks it, when no certificate is given', () => {
    const { args, note } = macSigningArgs({}, 'darwin', []);
    expect(args).toEqual([
      '-c.mac.identity=-',
      '-c.mac.hardenedRuntime=false',
      `-c.extraMetadata.${UNSIGNED_MARK}=true`,
    ]);
    expect(note).toContain('no notifications, no self-update');
    expect(macSigningArgs({}, 'linux', ['--mac']).args).toHaveLength(3);
  });

  it('leaves signing to electron-builder with CSC_LINK or CSC_NAME, and does nothing for other targets', () => {
    expect(macSigningArgs({ CSC_LINK: '/certs/id.p12' }, 'darwin', [])).toEqual({
      args: [],
      note: null,
    });
    expect(
      macSigningArgs({ CSC_NAME: 'Developer ID Application: Acme' }, 'darwin', []).args,
    ).toEqual([]);
    expect(macSigningArgs({}, 'darwin', ['--linux', 'deb']).args).toEqual([]);
    expect(macSigningArgs({}, 'linux', []).args).toEqual([]);
    expect(macSigningArgs({}, 'win32', ['-w']).args).toEqual([]);
  });
});

describe('keytarProblem', () => {
  it('stops npm run dist where keytar (optional at install) is missing, saying how to get it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-dist-'));
    try {
      expect(keytarProblem(dir)).toMatch(/^npm run dist cannot package: keytar/);
      expect(keytarProblem(dir)).toContain('sudo apt-get install libsecret-1-dev');
      mkdirSync(join(dir, 'node_modules', 'keytar'), { recursive: true });
      writeFileSync(join(dir, 'node_modules', 'keytar', 'package.json'), '{}');
      expect(keytarProblem(dir)).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
