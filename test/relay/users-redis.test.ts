import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CloseCode } from '../../src-shared/relay/relay-protocol.ts';
import { RedisUserStore } from '../../src-relay/users/redis-user-store.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { relayEntry } from '../../rigs/relay/relay-process.ts';
import {
  SECRET,
  TestClient,
  redisAvailable,
  startRedis,
  type RedisProcess,
} from '../../rigs/relay/helpers.ts';
import {
  ALL_KINDS,
  addUser,
  enrol,
  postAll,
  startRedisUsersRelay,
  twoUsersDay,
} from '../../rigs/relay/users-support.ts';

// Users in Redis, shared by two relay instances and the `relay users` command (docs/relay-protocol.md 2.2).
const haveRedis = redisAvailable('test/relay/users-redis.test.ts');
const tmp = useTempDir('relay-users-redis-');

describe.skipIf(!haveRedis)('organisation mode with Redis: users shared by every instance', () => {
  let redis: RedisProcess;
  const cleanups: Array<() => Promise<void>> = [];
  const tenants = {
    acme: { baseUrl: 'http://127.0.0.1:9/acme', secrets: [SECRET], access: 'users' as const },
  };

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  async function instance(prefix: string) {
    const { relay, users, close } = await startRedisUsersRelay(redis.url, prefix);
    cleanups.push(close);
    return { relay, users };
  }

  it('a device enrolled at one instance connects to another and gets only its user’s events; a code is spent once even when two instances race', async () => {
    const a = await instance('t1:');
    const b = await instance('t1:');
    const aliceCode = await addUser(a.users, 'alice', ['101'], ['+49 30 555 0001']);
    const bobCode = await addUser(b.users, 'bob', ['102'], ['+49 30 555 0002']);
    const race = await Promise.all([enrol(a.relay.url, aliceCode), enrol(b.relay.url, aliceCode)]);
    expect(race.map((r) => r.status).sort()).toEqual([200, 401]);
    const alice = race.find((r) => r.status === 200)!.body;
    const bob = (await enrol(a.relay.url, bobCode)).body;
    const aliceClient = await TestClient.connect(b.relay.clientUrl('acme'), alice.credential, {
      extensions: ['102'],
      events: ALL_KINDS,
    });
    const bobClient = await TestClient.connect(a.relay.clientUrl('acme'), bob.credential, {
      events: ALL_KINDS,
    });
    cleanups.push(
      () => aliceClient.close(),
      () => bobClient.close(),
    );
    const day = twoUsersDay();
    await postAll(a.relay.webhookUrl('acme'), day.bodies);
    await aliceClient.until(() => aliceClient.events.length >= day.alice.length);
    await bobClient.until(() => bobClient.events.length >= day.bob.length);
    await new Promise((r) => setTimeout(r, 300));
    expect(aliceClient.eventIds()).toEqual(day.alice);
    expect(bobClient.eventIds()).toEqual(day.bob);
  });

  it('`relay users revoke` (a process of its own, talking to Redis) ends the session on whichever instance holds it', async () => {
    const a = await instance('t2:');
    const b = await instance('t2:');
    const code = await addUser(a.users, 'alice', ['101']);
    const { body } = await enrol(a.relay.url, code);
    const client = await TestClient.connect(b.relay.clientUrl('acme'), body.credential, {});
    cleanups.push(() => client.close());
    const configFile = join(tmp.path, 'relay.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        tenants,
        storage: { kind: 'redis', url: redis.url, keyPrefix: 't2:' },
      }),
    );
    const revoked = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [relayEntry(), 'users', 'revoke', 'alice', '-c', configFile],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.once('exit', (c) => resolve({ code: c, out }));
    });
    expect(revoked).toEqual({ code: 0, out: expect.stringContaining('user alice revoked') });
    await client.until(() => client.closeCode !== null, 5_000);
    expect(client.closeCode).toBe(CloseCode.revoked);
    await expect(
      TestClient.connect(a.relay.clientUrl('acme'), body.credential, {}),
    ).rejects.toThrow('handshake refused: 401');
    const list = await a.users.list('acme');
    expect(list.map((u) => [u.user.name, u.user.revokedAt !== null, u.devices.length])).toEqual([
      ['alice', true, 0],
    ]);
  });

  it('one address, two instances adding it at the same instant under two names: one is added, the other refused naming the holder (issue 34)', async () => {
    const a = new RedisUserStore({ url: redis.url, keyPrefix: 't4:' });
    const b = new RedisUserStore({ url: redis.url, keyPrefix: 't4:' });
    await a.open();
    await b.open();
    cleanups.push(async () => {
      await a.close();
      await b.close();
    });
    for (let round = 0; round < 5; round++) {
      const address = `kate${round}@example.org`;
      const results = await Promise.allSettled([
        a.addUser(
          { tenant: 'acme', name: `kate-a${round}`, extensions: [], dids: [], email: address },
          1,
        ),
        b.addUser(
          {
            tenant: 'acme',
            name: `kate-b${round}`,
            extensions: [],
            dids: [],
            email: address.toUpperCase(),
          },
          1,
        ),
      ]);
      expect(
        results.filter((r) => r.status === 'fulfilled'),
        address,
      ).toHaveLength(1);
      const refused = results.find((r) => r.status === 'rejected');
      expect(String(refused?.reason)).toMatch(/kate-[ab]\d/);
    }
    // A revoked holder frees the address.
    const holder = (await a.list('acme')).find(
      (u) => u.user.email?.toLowerCase() === 'kate0@example.org',
    );
    expect(await a.revoke('acme', holder!.user.name, 2)).toBe(true);
    await expect(
      b.addUser(
        { tenant: 'acme', name: 'kate-c0', extensions: [], dids: [], email: 'kate0@example.org' },
        3,
      ),
    ).resolves.toMatchObject({ name: 'kate-c0' });
  });

  it('revokes an e-mail address: the users with it, the user named by it, or a revoked record of its own (issue 33 item 2)', async () => {
    const { users } = await instance('t3:');
    const heard: string[] = [];
    users.onChange((c) => heard.push(c.user));
    const code = await addUser(users, 'bob', ['102'], [], 'Bob@Example.org');
    await addUser(users, 'carol@example.org', ['103']);
    expect((await enrol((await instance('t3:')).relay.url, code)).status).toBe(200);
    expect(await users.revokeAddress('acme', 'bob@example.ORG', 1)).toEqual(['bob']);
    expect(await users.revokeAddress('acme', 'carol@example.org', 2)).toEqual([
      'carol@example.org',
    ]);
    expect(await users.revokeAddress('acme', 'dave@example.org', 3)).toEqual(['dave@example.org']);
    const list = await users.list('acme');
    expect(list.map((u) => [u.user.name, u.user.revokedAt, u.devices.length])).toEqual([
      ['bob', 1, 0],
      ['carol@example.org', 2, 0],
      ['dave@example.org', 3, 0],
    ]);
    expect(await users.findByEmail('acme', 'DAVE@example.org')).toMatchObject({
      extensions: [],
      revokedAt: 3,
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(heard).toEqual(expect.arrayContaining(['bob', 'carol@example.org', 'dave@example.org']));
  });
});
