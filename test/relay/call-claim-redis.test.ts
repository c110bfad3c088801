import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { startRelay } from '../../src-relay/server.ts';
import { RedisStore } from '../../src-relay/store/redis-store.ts';
import { RedisUserStore } from '../../src-relay/users/redis-user-store.ts';
import {
  SECRET,
  redisAvailable,
  relayConfig,
  startRedis,
  type RedisProcess,
} from '../../rigs/relay/helpers.ts';
import { credentials, raceBoth } from '../../rigs/relay/claim-support.ts';

// Organisation mode with Redis: a call's CRM log claimed once across instances (docs/relay-protocol.md 2.2).
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const haveRedis = redisAvailable('test/relay/call-claim-redis.test.ts');

describe.skipIf(!haveRedis)('POST /v1/claim/<tenant> with Redis, two relay instances', () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  async function instance(prefix: string) {
    const tenants = {
      acme: { baseUrl: 'http://127.0.0.1:9/acme', secrets: [SECRET], access: 'users' as const },
    };
    const config = relayConfig(tenants, {
      storage: { kind: 'redis', url: redis.url, keyPrefix: prefix },
    });
    const store = new RedisStore({
      url: redis.url,
      keyPrefix: prefix,
      tenants: ['acme'],
      clock: systemClock,
      logger: silentLogger,
      blockMs: 500,
    });
    await store.open();
    const users = new RedisUserStore({ url: redis.url, keyPrefix: prefix });
    await users.open();
    await users.follow();
    const relay = await startRelay({
      config,
      store,
      clock: systemClock,
      logger: silentLogger,
      users,
    });
    cleanups.push(async () => {
      await relay.close();
      await store.close();
      await users.close();
    });
    return { relay, users };
  }

  it('alice at one instance and bob at the other claim each call at the same instant: one holds it', async () => {
    const a = await instance('claim1:');
    const b = await instance('claim1:');
    const [alice, bob] = await credentials(a.users, a.relay.url);
    await raceBoth([a.relay.url, b.relay.url], alice, bob, 20);
  });
});
