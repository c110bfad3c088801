/**
 * Black box, `auto` mode: the simulator (webhooks to the relay), the relay on Redis, redis-server
 * and the runner with `--relay-url ... --event-source auto`, all separate processes. The relay is
 * killed and restarted on its port, Redis is killed and restarted on its port and data, and the
 * direct stream is refused for a while: rings keep popping through whichever path is up, none
 * twice, none stale, and the runner keeps running. redis-server is started without a preloaded
 * fake clock (libfaketime cannot start it), so this file is left out of CI's run at a future date.
 */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessGroup } from '../../rigs/processes.ts';
import { expectHealthy, HEARTBEAT_ARGS } from './scenario.ts';
import { REDIS_BIN, startAutoMode, type AutoModeRig } from './services.ts';

const haveRedis = existsSync(REDIS_BIN);
if (!haveRedis && process.env.CI === 'true')
  throw new Error(`${REDIS_BIN} is missing; CI must install redis-server`);
if (!haveRedis) console.warn(`test/blackbox/relay-redis.test.ts skipped: no ${REDIS_BIN}`);

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

type Rig = AutoModeRig;

async function startAll(): Promise<Rig> {
  group = new ProcessGroup();
  return startAutoMode(group, { runnerArgs: HEARTBEAT_ARGS });
}

/** Rings `n` calls a second apart while the fault lasts. */
async function ringDuring(r: Rig, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await r.ledger.ring(r.sim);
    await new Promise((done) => setTimeout(done, 1_000));
  }
}

/**
 * Refuses the direct stream (handshakes answered 503, open sockets closed with 1012), rings `n`
 * calls, which only the relay can deliver, then lets the direct stream back.
 */
async function relayAlone(r: Rig, n: number): Promise<void> {
  const mark = r.runner.lines.length;
  await r.sim.control('POST', 'faults/fail-http', {
    status: 503,
    count: 10_000,
    target: 'handshake',
  });
  await r.sim.control('POST', 'faults/close', { code: 1012 });
  await r.runner.waitForDrop(mark);
  const before = r.ledger.figures().sent;
  await ringDuring(r, n);
  await r.ledger.settle(r.sim, 30_000);
  expect(r.ledger.figures().missed, 'rings only the relay could deliver').toEqual([]);
  expect(r.ledger.figures().sent).toBe(before + n);
  await r.sim.control('POST', 'faults/fail-http', { status: 503, count: 0, target: 'handshake' });
  await r.runner.waitForState('connected', 60_000);
}

describe.skipIf(!haveRedis)('auto mode: relay and Redis restarts', { timeout: 120_000 }, () => {
  it('the relay killed and restarted on its port: the direct stream pops meanwhile, the relay comes back', async () => {
    const r = await startAll();
    await r.ledger.ringAndSettle(r.sim);
    for (const how of ['SIGKILL', 'SIGTERM'] as const) {
      const mark = r.runner.lines.length;
      r.relay.proc.signal(how);
      await r.relay.proc.exit;
      await r.runner.waitForDrop(mark);
      expect(r.runner.state()).toBe('degraded'); // the direct stream still up: degraded, not offline
      await ringDuring(r, 3);
      await r.relay.start();
      await r.runner.waitForState('connected', 60_000);
      await r.ledger.settle(r.sim);
      await relayAlone(r, 2); // the restarted relay delivers
    }
    expectHealthy(r.runner, r.ledger, 11);
  });

  it('Redis killed and restarted on its port and data: pops go on, the relay recovers', async () => {
    const r = await startAll();
    await r.ledger.ringAndSettle(r.sim);
    await r.redis.kill();
    await ringDuring(r, 3);
    await r.redis.start();
    await r.ledger.settle(r.sim);
    await r.runner.waitForState('connected', 60_000);
    await relayAlone(r, 2); // the relay writes to and reads from the restarted Redis again
    expectHealthy(r.runner, r.ledger, 6);
    expect(r.relay.proc.running(), r.relay.proc.describe()).toBe(true);
  });

  it('the direct stream refused: the relay alone carries the rings, and none pops twice when both are back', async () => {
    const r = await startAll();
    await relayAlone(r, 3);
    await ringDuring(r, 2);
    await r.ledger.settle(r.sim);
    expectHealthy(r.runner, r.ledger, 5);
  });
});
