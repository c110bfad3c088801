import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  CloseCode,
  RELAY_ERRCODE,
  relayOrgPath,
  type ControlFrame,
} from '../../src-shared/relay/relay-protocol.ts';
import {
  normaliseEnrolmentCode,
  newEnrolmentCode,
  secretHash,
} from '../../src-relay/users/secrets.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { relayEntry } from '../../rigs/relay/relay-process.ts';
import { TestClient } from '../../rigs/relay/helpers.ts';
import {
  ALL_KINDS,
  addUser,
  enrol,
  eventBody,
  orgConfig,
  postAll,
  startOrgRelay,
  twoUsersDay,
} from '../../rigs/relay/users-support.ts';

const tmp = useTempDir('relay-users-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function orgRelay(overrides: Record<string, unknown> = {}) {
  const config = orgConfig(join(tmp.path, 'users.json'), overrides);
  const org = await startOrgRelay(config);
  cleanups.push(() => org.close());
  return { ...org, config };
}

async function connect(url: string, credential: string, filter = {}) {
  const client = await TestClient.connect(url, credential, filter);
  cleanups.push(() => client.close());
  return client;
}

function identityOf(client: TestClient) {
  const ready = client.controls.find((c) => c.type === 'ready') as Extract<
    ControlFrame,
    { type: 'ready' }
  >;
  return ready.identity;
}

describe('enrolment codes', () => {
  it('are 12 characters of Crockford base-32, read back whatever the case, spaces and look-alike letters', () => {
    const code = newEnrolmentCode();
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
    expect(normaliseEnrolmentCode(code.toLowerCase().replace(/-/g, ' '))).toBe(code);
    expect(normaliseEnrolmentCode('0O1I-L234-5678')).toBe('0011-1234-5678');
    expect(normaliseEnrolmentCode('ABCD-EFGH-JKM')).toBeNull();
    expect(normaliseEnrolmentCode('ABCD-EFGH-JKMU')).toBeNull(); // U is not in the alphabet
  });
});

describe('organisation mode: two users of one tenant', () => {
  it('gives each enrolled device only its user’s calls, voicemail, SMS and presence, plus trunk status, whatever filter it asks for', async () => {
    const { relay, users } = await orgRelay();
    const aliceCode = await addUser(users, 'alice', ['101'], ['+49 30 555 0001']);
    const bobCode = await addUser(users, 'bob', ['102'], ['+49 30 555 0002']);
    const alice = await enrol(relay.url, aliceCode);
    const bob = await enrol(relay.url, bobCode);
    expect(alice.status).toBe(200);
    expect(alice.body.credential).toMatch(/^sprd_[A-Za-z0-9_-]{43}$/);
    expect(alice.body.identity).toEqual({
      user: 'alice',
      via: 'device',
      extensions: ['101'],
      dids: ['+49 30 555 0001'],
      expiresAt: null,
    });
    // Alice asks for bob's extension and number, and for every kind of event: the relay's grant wins.
    const a = await connect(relay.clientUrl('acme'), alice.body.credential, {
      extensions: ['102', '103'],
      dids: ['+49 30 555 0002'],
      events: ALL_KINDS,
    });
    const b = await connect(relay.clientUrl('acme'), bob.body.credential, { events: ALL_KINDS });
    expect(identityOf(a)?.user).toBe('alice');
    expect(identityOf(b)?.extensions).toEqual(['102']);
    const day = twoUsersDay();
    await postAll(relay.webhookUrl('acme'), day.bodies);
    await a.until(() => a.events.length >= day.alice.length);
    await b.until(() => b.events.length >= day.bob.length);
    // Every event is out of the relay (the last one, unknown to both, came after theirs).
    await new Promise((r) => setTimeout(r, 200));
    expect(a.eventIds()).toEqual(day.alice);
    expect(b.eventIds()).toEqual(day.bob);
    expect(a.events.join('\n')).not.toContain('for bob only');
    expect(b.events.join('\n')).not.toContain('for alice only');
  });

  it('replays only the user’s own events to a device that resumes from a cursor', async () => {
    const { relay, users } = await orgRelay();
    const alice = await enrol(
      relay.url,
      await addUser(users, 'alice', ['101'], ['+49 30 555 0001']),
    );
    const first = await connect(relay.clientUrl('acme'), alice.body.credential, {
      events: ALL_KINDS,
    });
    const cursor = first.cursor;
    await first.close();
    const day = twoUsersDay();
    await postAll(relay.webhookUrl('acme'), day.bodies);
    const again = await TestClient.connect(
      relay.clientUrl('acme'),
      alice.body.credential,
      { extensions: ['102'], events: ALL_KINDS },
      cursor,
    );
    cleanups.push(() => again.close());
    expect(again.eventIds()).toEqual(day.alice);
  });

  it('sends a user the call records (30012) of their own calls only, when asked', async () => {
    const { relay, users } = await orgRelay();
    const alice = await enrol(
      relay.url,
      await addUser(users, 'alice', ['101'], ['+49 30 555 0001']),
    );
    const asks = await connect(relay.clientUrl('acme'), alice.body.credential, {
      events: [30012],
    });
    const silent = await connect(relay.clientUrl('acme'), alice.body.credential, { events: [] });
    const record = (id: string, to: string) =>
      eventBody(id, 30012, { call_id: `c-${id}`, to, status: 'ANSWERED', talk_sec: 60 });
    await postAll(relay.webhookUrl('acme'), [
      record('rec-101', '101'),
      record('rec-102', '102'),
      record('rec-did-alice', '+49 30 5550001'),
      eventBody('ring-101', 30011, { call_id: 'c-x', from: '1', to: '101', state: 'ringing' }),
    ]);
    await asks.until(() => asks.eventIds().includes('ring-101'));
    await silent.until(() => silent.eventIds().includes('ring-101'));
    expect(asks.eventIds()).toEqual(['rec-101', 'rec-did-alice', 'ring-101']);
    expect(silent.eventIds()).toEqual(['ring-101']);
  });

  it('leaves out what a user turned off (SMS) but always sends their calls', async () => {
    const { relay, users } = await orgRelay();
    const alice = await enrol(
      relay.url,
      await addUser(users, 'alice', ['101'], ['+49 30 555 0001']),
    );
    const a = await connect(relay.clientUrl('acme'), alice.body.credential, { events: [30007] });
    const day = twoUsersDay();
    await postAll(relay.webhookUrl('acme'), day.bodies);
    await a.until(() => a.eventIds().includes('trunk'));
    expect(a.eventIds()).toEqual(['ring-101', 'ring-did-alice', 'trunk']);
  });
});

describe('organisation mode: a user’s numbers (DIDs) are matched exactly', () => {
  it('never gives a user a colleague’s outbound call to a number ending in their DID', async () => {
    const { relay, users } = await orgRelay();
    // Alice's record holds a short DID (added before `users add` refused one); Bob's is full.
    const alice = await enrol(relay.url, await addUser(users, 'alice', ['101'], ['555 0100']));
    const bob = await enrol(relay.url, await addUser(users, 'bob', ['102'], ['+1 415 555 0199']));
    const a = await connect(relay.clientUrl('acme'), alice.body.credential, { events: [] });
    const b = await connect(relay.clientUrl('acme'), bob.body.credential, { events: [] });
    const call = (id: string, from: string, to: string) =>
      eventBody(id, 30011, { call_id: `c-${id}`, from, to, state: 'ringing' });
    await postAll(relay.webhookUrl('acme'), [
      // Bob (102) calls out to a number that ends in alice's short DID.
      call('bob-out', '102', '+1 415 555 0100'),
      // Bob's direct number, written with the international prefix 00 and without: both his.
      call('bob-did-00', '+442071234567', '0014155550199'),
      call('bob-did', '+442071234567', '+1 (415) 555-0199'),
      // A number ending in bob's (a suffix of 7+ digits used to match): not his.
      call('not-bob', '+442071234567', '+44 415 555 0199'),
      call('ring-101', '+442071234567', '101'),
    ]);
    await a.until(() => a.eventIds().includes('ring-101'));
    await b.until(() => b.eventIds().includes('bob-did'));
    await new Promise((r) => setTimeout(r, 200));
    expect(a.eventIds()).toEqual(['ring-101']);
    expect(b.eventIds()).toEqual(['bob-did-00', 'bob-did']);
  });
});

describe('organisation mode: what a heartbeat tells a user', () => {
  it('answers with the user’s own position, never the tenant’s (colleagues’ calls stay unseen)', async () => {
    const { relay, users } = await orgRelay();
    const alice = await enrol(relay.url, await addUser(users, 'alice', ['101']));
    const bob = await enrol(relay.url, await addUser(users, 'bob', ['102']));
    const a = await connect(relay.clientUrl('acme'), alice.body.credential, { events: [] });
    const b = await connect(relay.clientUrl('acme'), bob.body.credential, { events: [] });
    const heartbeat = async (client: TestClient) => {
      const before = client.controls.length;
      client.send(JSON.stringify({ type: 'heartbeat' }));
      await client.until(() => client.controls.slice(before).some((c) => c.type === 'heartbeat'));
      const answer = client.controls.slice(before).find((c) => c.type === 'heartbeat');
      return (answer as { cursor?: string }).cursor ?? null;
    };
    const atStart = await heartbeat(a);
    const ring = (id: string, to: string) =>
      eventBody(id, 30011, { call_id: `c-${id}`, from: '+442071234567', to, state: 'ringing' });
    await postAll(relay.webhookUrl('acme'), [ring('for-bob', '102')]);
    await b.until(() => b.eventIds().includes('for-bob'));
    // Bob's call moved the tenant's position; alice's answer stays where it was.
    expect(await heartbeat(a)).toBe(atStart);
    const bobsPosition = await heartbeat(b);
    expect(bobsPosition).not.toBe(atStart);
    // Her own call moves hers, and resuming from it loses nothing of hers.
    await postAll(relay.webhookUrl('acme'), [ring('for-alice', '101')]);
    await a.until(() => a.eventIds().includes('for-alice'));
    const own = await heartbeat(a);
    expect(own).not.toBe(atStart);
    await a.close();
    await postAll(relay.webhookUrl('acme'), [ring('bob-again', '102'), ring('alice-again', '101')]);
    const again = await TestClient.connect(relay.clientUrl('acme'), alice.body.credential, {}, own);
    cleanups.push(() => again.close());
    await again.until(() => again.eventIds().includes('alice-again'));
    expect(again.eventIds()).toEqual(['alice-again']);
    // A quiet user's resume point still moves, once per connection: a replay reads colleagues'
    // events too (and leaves them out), so the ready frame carries the position it reached.
    const alicesLast = again.cursor;
    await again.close();
    await postAll(relay.webhookUrl('acme'), [ring('bob-third', '102')]);
    const third = await TestClient.connect(
      relay.clientUrl('acme'),
      alice.body.credential,
      {},
      alicesLast,
    );
    cleanups.push(() => third.close());
    const ready = third.controls.find((c) => c.type === 'ready') as { cursor: string };
    expect(ready.cursor).not.toBe(alicesLast);
    expect(third.eventIds()).toEqual([]);
    expect(await heartbeat(third)).toBe(ready.cursor);
  });
});

describe('organisation mode: who is admitted', () => {
  it('refuses a service token, an unknown device credential and nothing at all, with the relay’s errcode', async () => {
    const { relay } = await orgRelay();
    for (const token of ['service-access-token', 'sprd_' + 'A'.repeat(43), 'a.b.c']) {
      await expect(TestClient.connect(relay.clientUrl('acme'), token, {})).rejects.toThrow(
        'handshake refused: 401',
      );
    }
    const metrics = await (await fetch(relay.url + '/metrics')).text();
    expect(metrics).toMatch(/relay_handshakes_refused_total\{reason="sign-in-refused"\} 3/);
    expect(metrics).not.toMatch(/reason="token-rejected"/); // the service was never asked
  });

  it('spends a code once; a wrong, used or expired code is refused with 46004 and wrong codes are rate-limited per address', async () => {
    const { relay, users } = await orgRelay({ auth: { maxFailuresPerAddressPerMinute: 3 } });
    const code = await addUser(users, 'alice', ['101']);
    expect((await enrol(relay.url, code.toLowerCase())).status).toBe(200);
    const again = await enrol(relay.url, code);
    expect(again.status).toBe(401);
    expect(again.body.errcode).toBe(RELAY_ERRCODE.codeRefused);
    expect((await enrol(relay.url, 'not a code')).status).toBe(400);
    // A code past its time: issued (with its user) two hours ago, for one hour.
    const past = Date.now() - 2 * 3_600_000;
    await users.addUser(
      { tenant: 'acme', name: 'carol', extensions: ['103'], dids: [], email: null },
      past,
    );
    const late = newEnrolmentCode();
    await users.issueCode('acme', 'carol', secretHash(late), 3_600_000, past);
    const expired = await enrol(relay.url, late);
    expect(expired.status).toBe(401);
    expect(expired.body.errmsg).toContain('expired');
    // Three refusals spent the budget: the right code of another user is not even looked at now.
    const bobCode = await addUser(users, 'bob', ['102']);
    expect((await enrol(relay.url, bobCode)).status).toBe(429);
  });

  it('says how to sign in to a users tenant, and nothing about others', async () => {
    const config = orgConfig(join(tmp.path, 'users.json'));
    config.tenants.other = {
      baseUrl: 'http://127.0.0.1:9/other',
      secrets: ['x'.repeat(20)],
      access: 'service-token',
    };
    const org = await startOrgRelay(config);
    cleanups.push(() => org.close());
    const info = await fetch(org.relay.url + relayOrgPath('acme'));
    expect(await info.json()).toEqual({ tenant: 'acme', oidc: null, enrolment: true });
    expect((await fetch(org.relay.url + relayOrgPath('other'))).status).toBe(404);
    expect(
      (await fetch(org.relay.url + '/v1/enrol/other', { method: 'POST', body: '{}' })).status,
    ).toBe(404);
  });

  it('does not tell on the stream which tenants exist: an unknown one is refused as a missing or rejected token', async () => {
    const org = await startOrgRelay(orgConfig(join(tmp.path, 'users.json')));
    cleanups.push(() => org.close());
    const refusal = (tenant: string, token?: string) =>
      new Promise<{ status: number; body: unknown }>((resolve, reject) => {
        const ws = new WebSocket(org.relay.clientUrl(tenant), {
          headers: token ? { Authorization: `Bearer ${token}` } : {},
        });
        ws.once('open', () => reject(new Error('admitted')));
        ws.once('unexpected-response', (_req, res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        });
        ws.once('error', reject);
      });
    // Without a token: the same answer for acme (exists) and nobody (does not).
    expect(await refusal('nobody')).toEqual(await refusal('acme'));
    // With one: 401 as a rejected token, not 404.
    expect(await refusal('nobody', 'some-token')).toEqual({
      status: 401,
      body: { errcode: expect.any(Number), errmsg: 'token rejected by the service' },
    });
  });

  it('keeps the users file private (0600) with hashes only: neither the code nor the credential is in it', async () => {
    const { relay, users, config } = await orgRelay();
    const code = await addUser(users, 'alice', ['101']);
    const { body } = await enrol(relay.url, code);
    const text = readFileSync(config.users.file!, 'utf8');
    expect(text).toContain('alice');
    expect(text).not.toContain(code);
    expect(text).not.toContain(body.credential);
    expect(statSync(config.users.file!).mode & 0o777).toBe(0o600);
  });
});

describe('relay users (the administrator’s command, a process of its own)', () => {
  function relayUsers(
    configFile: string,
    ...args: string[]
  ): Promise<{ code: number | null; out: string; err: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [relayEntry(), 'users', ...args, '-c', configFile], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.once('exit', (code) => resolve({ code, out, err }));
    });
  }

  /** The in-process relay's config as a file, for the command (a process of its own) to read. */
  function writeConfigFile(config: {
    tenants: { acme?: { baseUrl: string } };
    users: { file?: string };
  }) {
    const file = join(tmp.path, 'relay.json');
    writeFileSync(
      file,
      JSON.stringify({
        tenants: {
          acme: {
            baseUrl: config.tenants.acme!.baseUrl,
            secrets: ['s'.repeat(20)],
            access: 'users',
          },
        },
        users: { file: config.users.file },
      }),
    );
    return file;
  }

  it('adds a user with a one-time code, and a revoke ends their open session at once (4003) and every later one', async () => {
    const { relay, config } = await orgRelay();
    const configFile = writeConfigFile(config);
    const added = await relayUsers(
      configFile,
      'add',
      'alice',
      '--extension',
      '101',
      '--did',
      '+49 30 555 0001',
    );
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    const code = /enrolment code: (\S+)/.exec(added.out)![1]!;
    const { body } = await enrol(relay.url, code);
    const client = await connect(relay.clientUrl('acme'), body.credential, {});
    expect(identityOf(client)?.extensions).toEqual(['101']);

    const listed = await relayUsers(configFile, 'list');
    expect(listed.out).toMatch(
      /^alice\tactive\textensions 101\tnumbers \+49 30 555 0001\t1 device \[[0-9a-f]{8} "test device"\]$/m,
    );

    const revoked = await relayUsers(configFile, 'revoke', 'alice');
    expect(revoked.code).toBe(0);
    await client.until(() => client.closeCode !== null, 5_000);
    expect(client.closeCode).toBe(CloseCode.revoked);
    await expect(TestClient.connect(relay.clientUrl('acme'), body.credential, {})).rejects.toThrow(
      'handshake refused: 401',
    );
    // A fresh start: a new code works, the old credential still does not.
    const readded = await relayUsers(configFile, 'add', 'alice', '--extension', '101');
    const fresh = await enrol(relay.url, /enrolment code: (\S+)/.exec(readded.out)![1]!);
    expect(fresh.status).toBe(200);
    await expect(TestClient.connect(relay.clientUrl('acme'), body.credential, {})).rejects.toThrow(
      'handshake refused: 401',
    );
  });

  it('says what is wrong with a command line (exit 2) and refuses a user twice (exit 1)', async () => {
    const { config } = await orgRelay();
    const configFile = writeConfigFile(config);
    const noExt = await relayUsers(configFile, 'add', 'alice');
    expect(noExt.code).toBe(2);
    expect(noExt.err).toContain('add needs at least one --extension');
    const badExt = await relayUsers(configFile, 'add', 'alice', '--extension', '10a');
    expect(badExt.err).toContain('--extension 10a: an extension is 1 to 7 digits');
    // The one rule (src-shared/rules/phone-number-rules.ts): eight digits are a telephone number, which
    // the desktop would never match as an extension.
    const longExt = await relayUsers(configFile, 'add', 'alice', '--extension', '12345678');
    expect(longExt.code).toBe(2);
    expect(longExt.err).toContain('--extension 12345678: an extension is 1 to 7 digits');
    expect((await relayUsers(configFile, 'add', 'alice', '--extension', '101')).code).toBe(0);
    const twice = await relayUsers(configFile, 'add', 'alice', '--extension', '101');
    expect(twice.code).toBe(1);
    expect(twice.err).toContain('user alice exists');
    // A short DID would match nothing in organisation mode (and by a suffix it once took
    // colleagues' calls): refused with what to write instead.
    const shortDid = await relayUsers(
      configFile,
      'add',
      'carol',
      '--extension',
      '103',
      '--did',
      '555 0100',
    );
    expect(shortDid.code).toBe(2);
    expect(shortDid.err).toContain('--did 555 0100: write the number in full international form');
    expect(
      (
        await relayUsers(
          configFile,
          'add',
          'carol',
          '--extension',
          '103',
          '--did',
          '+1 415 555 0100',
        )
      ).code,
    ).toBe(0);
  });
});
