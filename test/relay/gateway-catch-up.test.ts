/**
 * Gateway mode, a Yeastar P-Series (issue 40): the event stream has no replay, so a call that
 * started ringing while no socket of the tenant was subscribed (a takeover of the upstream lease,
 * a reconnect, the relay's start) is heard only by webhook, if any. Once its stream is subscribed
 * the relay asks *Query Calls* (`call/query`, by type) for the calls in which an extension still
 * rings, and stores each as its 30011 report: a call still ringing when the stream starts pops.
 * The standard service publishes no such query: nothing is asked there.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { startRelay } from '../../src-relay/server.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import { relayConfig } from '../../rigs/relay/helpers.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A gateway relay (stream only, memory store) on `sim`; what it stored, by body. */
async function gatewayOn(sim: Simulator) {
  const config = relayConfig({
    [sim.tenant]: {
      baseUrl: sim.baseUrl,
      phoneSystem: sim.phoneSystem,
      gateway: { apiKeyEnv: 'UNUSED_KEY', secretEnv: 'UNUSED_SECRET' },
    },
  });
  const store = new MemoryStore({ clock: systemClock, retention: config.retention });
  const relay = await startRelay({
    config,
    store,
    clock: systemClock,
    logger: silentLogger,
    secrets: new SecretRegistry(),
    gateway: new Map([[sim.tenant, { apiKey: sim.apiKey.key, secret: sim.apiKey.secret }]]),
    upstreamTuning: { backoff: { baseMs: 50, capMs: 200 } },
  });
  cleanups.push(async () => {
    await relay.close();
    await store.close();
  });
  const stored = async () =>
    (await store.readAfter(sim.tenant, '0-0', 1000)).events.map(
      (e) => JSON.parse(String(e.body)) as { event: number; data: Record<string, unknown> },
    );
  const connected = async () => {
    for (let i = 0; i < 100; i++) {
      const health = (await (await fetch(relay.url + '/healthz')).json()) as {
        upstream: Record<string, { state: string }>;
      };
      if (health.upstream[sim.tenant]?.state === 'connected') return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the gateway stream did not connect');
  };
  return { stored, connected };
}

async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 60 && !done(value); i++) {
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}

describe('gateway: the calls still ringing when the stream starts', () => {
  it('a Yeastar P-Series: a call ringing before the stream was subscribed pops, its caller named', async () => {
    const sim = await startSimulator({ phoneSystem: 'yeastar-p-series' });
    cleanups.push(() => sim.close());
    // Rings before any socket listens (as in the seconds of a takeover), and a call already
    // answered: only the one still ringing is a ring to store.
    const ringing = sim.ring({ from: '+14155550100', to: '101' });
    const answered = sim.ring({ from: '+442079460958', to: '102' });
    sim.setCallState(answered, 'answered', { to: '102' });

    const relay = await gatewayOn(sim);
    const events = await eventually(relay.stored, (es) =>
      es.some((e) => e.data.call_id === ringing),
    );
    const rings = events.filter((e) => e.data.state === 'ringing');
    expect(rings.map((e) => [e.data.call_id, e.data.to, e.data.from])).toEqual([
      [ringing, '101', '+14155550100'],
    ]);
  });

  it('the standard service: nothing is asked (it publishes no query of calls)', async () => {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const before = sim.ring({ from: '+14155550100', to: '101' });
    const relay = await gatewayOn(sim);
    // Once the stream is up, a later ring is stored; the one before it is not (no replay).
    await relay.connected();
    const after = sim.ring({ from: '+14155550100', to: '101' });
    const events = await eventually(relay.stored, (es) => es.some((e) => e.data.call_id === after));
    expect(events.some((e) => e.data.call_id === after)).toBe(true);
    expect(events.some((e) => e.data.call_id === before)).toBe(false);
  });
});
