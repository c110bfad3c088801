/** npm run dist on macOS without a certificate: an ad-hoc signed, marked test build (27.2). */
import { describe, expect, it } from 'vitest';
import { macSigningArgs, UNSIGNED_MARK } from '../../scripts/dist.ts';

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
