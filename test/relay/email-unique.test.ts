import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { FileUserStore } from '../../src-relay/users/file-user-store.ts';
import { usersCommand } from '../../src-relay/users/users-cli.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { orgConfig } from '../../rigs/relay/users-support.ts';

// Issue 34 item 4: addresses are unique. Two active users whose addresses compare equal
// (canonicalEmail) would make a sign-in with that address either of them: the command refuses the
// second, and a users file edited by hand with two is refused with both names.
const tmp = useTempDir('relay-email-unique-');

describe('one e-mail address, one user', () => {
  it('refuses a second user with an address that compares equal, and takes it once the first is revoked', async () => {
    const config = orgConfig(join(tmp.path, 'users.json'));
    const lines: string[] = [];
    const run = (...args: string[]) => usersCommand(args, config, (l) => lines.push(l));
    expect(await run('add', 'anna', '--extension', '101', '--email', 'anna@bu\u0308cher.de')).toBe(
      0,
    );
    await expect(
      run('add', 'anna2', '--extension', '102', '--email', 'Anna@XN--BCHER-KVA.DE'),
    ).rejects.toThrow(/already user anna's/);
    // Another address altogether is fine; so is the same one after the first holder is revoked.
    expect(await run('add', 'kate', '--extension', '103', '--email', 'kate@example.org')).toBe(0);
    expect(await run('revoke', 'anna')).toBe(0);
    expect(
      await run('add', 'anna2', '--extension', '102', '--email', 'Anna@XN--BCHER-KVA.DE'),
    ).toBe(0);
  });

  it('refuses a users file that gives two active users one address, naming both', async () => {
    const file = join(tmp.path, 'hand-edited.json');
    const user = (name: string, email: string) => ({
      tenant: 'acme',
      name,
      extensions: ['101'],
      dids: [],
      email,
      createdAt: 1,
      revokedAt: null,
    });
    writeFileSync(
      file,
      JSON.stringify({
        v: 1,
        users: [user('bob', 'bob@example.org'), user('robert', 'Bob@Example.ORG')],
        codes: [],
        devices: [],
      }),
    );
    const store = new FileUserStore({ file, clock: new FakeClock() });
    await expect(store.open()).rejects.toThrow(
      /users bob and robert of tenant acme have one e-mail address/,
    );
  });
});
