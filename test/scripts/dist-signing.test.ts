/**
 * npm run dist's signing decisions: macOS without a certificate is an ad-hoc signed, marked test
 * build (27.2); a Developer ID (given or found in the keychain, as electron-builder finds it) must
 * come with notarization or the build stops (35.9); Windows keys held by a token or a cloud service
 * reach electron-builder from the environment (35.9).
 */
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  keytarProblem,
  macSigningArgs,
  UNSIGNED_MARK,
  windowsSigningArgs,
} from '../../scripts/dist.ts';

const NOTARIZE = {
  APPLE_ID: 'a@acme.example',
  APPLE_APP_SPECIFIC_PASSWORD: 'x',
  APPLE_TEAM_ID: 'T1',
};
/** What `security find-identity -v -p codesigning` prints on a Mac with a Developer ID. */
const KEYCHAIN = [
  '  1) 0123456789ABCDEF0123456789ABCDEF01234567 "Developer ID Application: Acme Ltd (T1)"',
  '     1 valid identities found',
];

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

  it('leaves signing to electron-builder with CSC_LINK or CSC_NAME and notarization, and does nothing for other targets', () => {
    expect(macSigningArgs({ CSC_LINK: '/certs/id.p12', ...NOTARIZE }, 'darwin', [])).toEqual({
      args: [],
      note: 'signed with CSC_LINK, notarized with the Apple ID',
    });
    expect(
      macSigningArgs(
        {
          CSC_NAME: 'Developer ID Application: Acme',
          APPLE_API_KEY: '/k.p8',
          APPLE_API_KEY_ID: 'K',
          APPLE_API_ISSUER: 'I',
        },
        'darwin',
        [],
      ).args,
    ).toEqual([]);
    expect(macSigningArgs({}, 'darwin', ['--linux', 'deb']).args).toEqual([]);
    expect(macSigningArgs({}, 'linux', []).args).toEqual([]);
    expect(macSigningArgs({}, 'win32', ['-w']).args).toEqual([]);
  });
});

describe('macSigningArgs: signed means notarized', () => {
  it('a Developer ID in the keychain signs (electron-builder finds it): no ad-hoc signature', () => {
    expect(macSigningArgs({ ...NOTARIZE }, 'darwin', [], KEYCHAIN)).toEqual({
      args: [],
      note: "signed with the keychain's Developer ID Application: Acme Ltd (T1), notarized with the Apple ID",
    });
    // Auto-discovery off: electron-builder ignores the keychain, so the build is ad hoc.
    expect(
      macSigningArgs({ CSC_IDENTITY_AUTO_DISCOVERY: 'false' }, 'darwin', [], KEYCHAIN).args,
    ).toContain('-c.mac.identity=-');
  });

  it('stops a signed build without notarization credentials, saying which to set', () => {
    for (const env of [{ CSC_LINK: '/certs/id.p12' }, {}, { APPLE_ID: 'a@acme.example' }]) {
      const decided = macSigningArgs(env, 'darwin', [], KEYCHAIN);
      expect(decided.error).toMatch(/signed .* but not notarized, and Gatekeeper blocks/);
      expect(decided.error).toContain('APPLE_KEYCHAIN_PROFILE');
    }
  });
});

describe('windowsSigningArgs', () => {
  it('passes a token-held, Azure Trusted Signing or script signer to electron-builder from the environment', () => {
    expect(windowsSigningArgs({ WIN_CSC_SHA1: 'AB12' }, 'win32', []).args).toEqual([
      '-c.win.signtoolOptions.certificateSha1=AB12',
    ]);
    expect(
      windowsSigningArgs(
        {
          AZURE_TRUSTED_SIGNING_ENDPOINT: 'https://weu.codesigning.azure.net',
          AZURE_TRUSTED_SIGNING_ACCOUNT: 'acme',
          AZURE_TRUSTED_SIGNING_PROFILE: 'public',
          AZURE_TRUSTED_SIGNING_PUBLISHER: 'Acme Ltd',
        },
        'linux',
        ['--win'],
      ).args,
    ).toEqual([
      '-c.win.azureSignOptions.endpoint=https://weu.codesigning.azure.net',
      '-c.win.azureSignOptions.codeSigningAccountName=acme',
      '-c.win.azureSignOptions.certificateProfileName=public',
      '-c.win.azureSignOptions.publisherName=Acme Ltd',
    ]);
    expect(windowsSigningArgs({ WIN_SIGN_SCRIPT: './sign.cjs' }, 'win32', []).args).toEqual([
      '-c.win.signtoolOptions.sign=./sign.cjs',
    ]);
    expect(windowsSigningArgs({}, 'win32', [])).toEqual({ args: [], note: null });
    expect(windowsSigningArgs({ WIN_CSC_SHA1: 'AB12' }, 'darwin', []).args).toEqual([]);
  });

  it('stops on an incomplete or doubled setting', () => {
    expect(
      windowsSigningArgs({ AZURE_TRUSTED_SIGNING_ENDPOINT: 'https://x' }, 'win32', []).error,
    ).toContain('needs AZURE_TRUSTED_SIGNING_ENDPOINT, _ACCOUNT, _PROFILE and _PUBLISHER');
    expect(
      windowsSigningArgs({ WIN_CSC_SHA1: 'AB', WIN_SIGN_SCRIPT: './s.cjs' }, 'win32', []).error,
    ).toContain('more than one Windows signing way');
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
