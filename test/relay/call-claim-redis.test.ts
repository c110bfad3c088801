import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import { redisAvailable, startRedis, type RedisProcess } from '../../rigs/relay/helpers.ts';
import { credentials, raceBoth } from '../../rigs/relay/claim-support.ts';
import { startRedisUsersRelay } from '../../rigs/relay/users-support.ts';

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
    const { relay, users, close } = await startRedisUsersRelay(redis.url, prefix);
    cleanups.push(close);
    return { relay, users };
  }

  it('alice at one instance and bob at the other claim each call at the same instant: one holds it', async () => {
    const a = await instance('claim1:');
    const b = await instance('claim1:');
    const [alice, bob] = await credentials(a.users, a.relay.url);
    await raceBoth([a.relay.url, b.relay.url], alice, bob, 20);
  });
});
