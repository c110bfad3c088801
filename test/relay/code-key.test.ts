/**
 * Issue 33 item 4: enrolment codes stored under a key kept apart from the users. A copy of the
 * users file (or of Redis) then holds no value a guessed code can be checked against offline: a
 * code's plain SHA-256 (60 bits: a match in hours on rented GPUs with 500 codes pending) is not
 * in it. Codes issued before the key was configured still enrol until they expire.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkConfig } from '../../src-relay/check-config.ts';
import type { RelayConfig } from '../../src-relay/config.ts';
import { readCodeKey } from '../../src-relay/users/code-key.ts';
import { usersCommand } from '../../src-relay/users/users-cli.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { addUser, enrol, orgConfig, startOrgRelay } from '../../rigs/relay/users-support.ts';

const tmp = useTempDir('relay-code-key-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const KEY = 'q0S3nq7M2m5p2wYx5v8cH1bJ4kL9zT6rE0aUfGdNiOs=';
let n = 0;

/** A config whose users file and code key file are new; `key` null: no key configured. */
function keyedConfig(key: string | null = KEY): { config: RelayConfig; usersFile: string } {
  n += 1;
  const usersFile = join(tmp.path, `users-${n}.json`);
  const users: Record<string, unknown> = { file: usersFile };
  if (key !== null) {
    users.codeKeyFile = join(tmp.path, `code-${n}.key`);
    writeFileSync(users.codeKeyFile as string, key + '\n', { mode: 0o600 });
  }
  return { config: orgConfig(usersFile, { users }), usersFile };
}

async function relayFor(config: RelayConfig) {
  const org = await startOrgRelay(config, undefined, {
    codeKey: readCodeKey(config.users, {}),
  });
  cleanups.push(() => org.close());
  return org;
}

/** `relay users add <name>` as the administrator runs it; the code it printed. */
async function addWithCommand(config: RelayConfig, name: string, extension: string) {
  const lines: string[] = [];
  expect(
    await usersCommand(['add', name, '--extension', extension], config, (l) => lines.push(l)),
  ).toBe(0);
  return /enrolment code: (\S+)/.exec(lines.join('\n'))![1]!;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('enrolment codes stored under a key kept apart from the users', () => {
  it('a copy of the users file holds no SHA-256 of a pending code; the code enrols at the relay holding the key', async () => {
    const { config, usersFile } = keyedConfig();
    const code = await addWithCommand(config, 'alice', '101');
    const copy = readFileSync(usersFile, 'utf8');
    // What an offline search computes for each guess: not there, in any spelling of the code.
    for (const guess of [code, code.replace(/-/g, '')]) expect(copy).not.toContain(sha256(guess));
    const stored = (JSON.parse(copy) as { codes: { hash: string }[] }).codes.map((c) => c.hash);
    expect(stored).toEqual([expect.stringMatching(/^hmac:[0-9a-f]{64}$/)]);
    expect(copy).not.toContain(KEY);

    const { relay } = await relayFor(config);
    expect((await enrol(relay.url, code)).status).toBe(200);
  });

  it('a code stored under the key does not enrol at a relay with another key or none', async () => {
    const { config } = keyedConfig();
    const code = await addWithCommand(config, 'alice', '101');
    const other = orgConfig(config.users.file!, {
      users: { file: config.users.file, codeKeyEnv: 'OTHER_KEY' },
    });
    const wrong = await startOrgRelay(other, undefined, {
      codeKey: readCodeKey(other.users, { OTHER_KEY: KEY.replace('q', 'r') }),
    });
    cleanups.push(() => wrong.close());
    expect((await enrol(wrong.relay.url, code)).status).toBe(401);
  });

  it('a code issued before the key was configured (its plain SHA-256 stored) still enrols', async () => {
    const before = keyedConfig(null);
    const code = await addWithCommand(before.config, 'alice', '101');
    const stored = readFileSync(before.usersFile, 'utf8');
    expect(stored).toContain(sha256(code)); // the old form
    // The administrator adds the key; the relay restarts with it.
    const keyFile = join(tmp.path, 'added.key');
    writeFileSync(keyFile, KEY, { mode: 0o600 });
    const after = orgConfig(before.usersFile, {
      users: { file: before.usersFile, codeKeyFile: keyFile },
    });
    const { relay, users } = await relayFor(after);
    expect((await enrol(relay.url, code)).status).toBe(200);
    // Another code in the old form (as issued before the upgrade) is found as well.
    const late = await addUser(users, 'bob', ['102']);
    expect((await enrol(relay.url, late)).status).toBe(200);
  });

  it('--check-config says what is missing: no key (a warning), a missing file or variable, a short key (errors)', () => {
    const none = checkConfig(keyedConfig(null).config, Date.now(), {});
    expect(none.errors).toEqual([]);
    expect(none.warnings.join('\n')).toMatch(/users\.codeKeyFile .*is not set.*plain SHA-256/);

    const missing = orgConfig(join(tmp.path, 'u.json'), {
      users: { file: join(tmp.path, 'u.json'), codeKeyFile: join(tmp.path, 'nowhere.key') },
    });
    expect(checkConfig(missing, Date.now(), {}).errors.join('\n')).toMatch(
      /users\.codeKeyFile: cannot read .*nowhere\.key: it does not exist/,
    );
    const unset = orgConfig(join(tmp.path, 'u.json'), {
      users: { file: join(tmp.path, 'u.json'), codeKeyEnv: 'RELAY_CODE_KEY' },
    });
    expect(checkConfig(unset, Date.now(), {}).errors.join('\n')).toMatch(
      /environment variable RELAY_CODE_KEY .*is not set/,
    );
    expect(checkConfig(unset, Date.now(), { RELAY_CODE_KEY: 'short' }).errors.join('\n')).toMatch(
      /too short/,
    );
    const good = checkConfig(unset, Date.now(), { RELAY_CODE_KEY: KEY });
    expect(good.errors).toEqual([]);
    expect(good.summary.join('\n')).toContain(
      'HMAC-SHA-256 under the key of the environment variable RELAY_CODE_KEY',
    );
    expect(good.warnings.join('\n')).not.toContain('codeKey');
  });
});
