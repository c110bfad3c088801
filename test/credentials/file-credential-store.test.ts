import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CredentialFileError,
  FileCredentialStore,
} from '../../src-main/core/credentials/file-credential-store.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('credential-file-');

describe('the credential file (--credential-file, a machine without a keychain)', () => {
  it('starts empty, keeps secrets in a 0600 file written whole, and deletes them', async () => {
    const path = join(tmp.path, 'credential.json');
    const store = new FileCredentialStore(path, 'linux');
    expect(await store.getSecret('org:acme@relay')).toBeNull();
    await store.setSecret('org:acme@relay', '{"kind":"device","credential":"sprd_x"}');
    await store.setSecret('other', 'y');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      'org:acme@relay': '{"kind":"device","credential":"sprd_x"}',
      other: 'y',
    });
    expect(await new FileCredentialStore(path, 'linux').getSecret('other')).toBe('y');
    expect(await store.deleteSecret('other')).toBe(true);
    expect(await store.deleteSecret('other')).toBe(false);
    expect(await store.getSecret('other')).toBeNull();
  });

  it('refuses a file others can read, and one that is not a credential file', async () => {
    const path = join(tmp.path, 'exposed.json');
    writeFileSync(path, '{"a":"b"}', { mode: 0o600 });
    chmodSync(path, 0o644);
    const store = new FileCredentialStore(path, 'linux');
    await expect(store.getSecret('a')).rejects.toThrow(CredentialFileError);
    await expect(store.check()).rejects.toThrow('mode 644: others may read it');
    // Not repaired behind the administrator's back either.
    await expect(store.setSecret('a', 'c')).rejects.toThrow(CredentialFileError);
    expect(statSync(path).mode & 0o777).toBe(0o644);
    const garbage = join(tmp.path, 'garbage.json');
    writeFileSync(garbage, 'not json', { mode: 0o600 });
    await expect(new FileCredentialStore(garbage, 'linux').check()).rejects.toThrow('not JSON');
  });
});
