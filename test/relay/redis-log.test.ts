/**
 * The relay's log while Redis is down: ioredis reports an error at every reconnect attempt of both
 * connections (about twice a second), and every one used to be a "redis error" line. Now the
 * first two are, then one line a minute counts the rest, and a line says when Redis is back. Each
 * line carries the error itself (its code, cause and stack through the logger), not its message.
 * Real redis-server, real time (ioredis' own reconnect timers).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { RedisStore } from '../../src-relay/store/redis-store.ts';
import { redisAvailable, startRedis, type RedisProcess } from '../../rigs/relay/helpers.ts';
import { sleepReal, waitFor } from '../../rigs/wait.ts';

const haveRedis = redisAvailable('test/relay/redis-log.test.ts');

let redis: RedisProcess | undefined;
let store: RedisStore | undefined;
afterEach(async () => {
  await store?.close().catch(() => {});
  await redis?.stop();
  store = redis = undefined;
});

describe.skipIf(!haveRedis)('the relay log while Redis is down', () => {
  it(
    'says "redis error" a bounded number of times, then that Redis is back',
    { timeout: 30_000 },
    async () => {
      redis = await startRedis();
      const logger = memoryLogger();
      store = new RedisStore({
        url: redis.url,
        tenants: ['acme'],
        clock: systemClock,
        logger,
        blockMs: 200,
      });
      await store.open();
      const { dir, port } = redis;
      await redis.stop({ keepData: true });
      // Five seconds of reconnect attempts (every 0.2-2 s, two connections): about ten errors.
      await sleepReal(5_000);
      const errors = logger.records.filter((r) => r.msg.startsWith('redis error'));
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.length).toBeLessThanOrEqual(2);
      // The line says what failed as the system said it (the code an operator looks up), not only
      // ioredis' message: before, it was the message string alone; the key is `error`, as everywhere.
      expect(errors[0]!.error).toMatchObject({ code: 'ECONNREFUSED' });

      redis = await startRedis({ dir, port });
      await waitFor(
        () => logger.records.some((r) => r.msg === 'redis connection ready again'),
        'the line that says Redis is back',
        { timeoutMs: 10_000 },
      );
    },
  );
});
