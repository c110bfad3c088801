/**
 * The relay's start against a real redis-server that wants a password (startup.test.ts has the
 * other failures to start): the words for a missing and a wrong password, the password never
 * printed, and --check-config connecting with the right one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTempDir } from '../support/temp-dir.ts';
import { redisAvailable, startRedis, type RedisProcess } from '../../rigs/relay/helpers.ts';
import { runRelayWith } from '../../rigs/relay/relay-process.ts';

const tmp = useTempDir('relay-startup-redis-');
const start = (config: Record<string, unknown>, args: string[] = []) =>
  runRelayWith(tmp.path, config, args);

describe.runIf(redisAvailable('test/relay/startup-redis.test.ts'))('with a password', () => {
  let redis: RedisProcess;
  const PASSWORD = 'redis-pass-7f3a9c';
  beforeAll(async () => {
    redis = await startRedis({ args: ['--requirepass', PASSWORD] });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('none given: says Redis wants one and where it goes', async () => {
    const r = await start({ storage: { kind: 'redis', url: redis.url } });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/Redis requires a password and none was given/);
  });

  it('a wrong one: said refused, the URL printed without it', async () => {
    const r = await start({
      storage: { kind: 'redis', url: `redis://:wrong-${PASSWORD}@127.0.0.1:${redis.port}` },
    });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      new RegExp(`Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${redis.port}: Redis refused`),
    );
    expect(r.out + r.err).not.toContain(PASSWORD);
  });

  it('the right one: --check-config connects, and says so', async () => {
    const r = await start(
      { storage: { kind: 'redis', url: `redis://:${PASSWORD}@127.0.0.1:${redis.port}` } },
      ['--check-config'],
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/storage: redis at redis:\/\/:\*\*\*@127\.0\.0\.1/);
    expect(r.out).toMatch(/storage opened and closed again: redis answers/);
    expect(r.out + r.err).not.toContain(PASSWORD);
  });
});
