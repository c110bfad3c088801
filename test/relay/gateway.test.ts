/**
 * Gateway mode (docs/relay-protocol.md 2.4): the relay's start with the phone system's credential
 * (a missing secret file or variable, a refused key, an unreachable service: words and exit 1, the
 * secret never printed), and its own stream through an outage of the phone system (degraded in
 * /healthz and the metric, reconnected by itself, the relay never exits).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { startRelay, type RelayServer } from '../../src-relay/server.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { freePort, relayConfig } from '../../rigs/relay/helpers.ts';
import { runRelayWith } from '../../rigs/relay/relay-process.ts';

const tmp = useTempDir('relay-gateway-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function simulator(): Promise<Simulator> {
  const sim = await startSimulator();
  cleanups.push(() => sim.close());
  return sim;
}

describe('the relay as the gateway: its start', () => {
  it('names a missing secret file or variable, and exits 1', async () => {
    const gateway = { apiKeyEnv: 'ACME_KEY', secretFile: join(tmp.path, 'nowhere.secret') };
    const tenants = { acme: { baseUrl: 'https://acme.pbx.example', gateway } };
    const missingFile = await runRelayWith(tmp.path, { tenants }, [], { ACME_KEY: 'k-1' });
    expect(missingFile.code).toBe(1);
    // The same check as --check-config: the start refuses before anything runs.
    expect(missingFile.err).toContain('relay: cannot start: the config cannot be used:');
    expect(missingFile.err).toContain(
      `tenants.acme.gateway.secretFile: cannot read ${gateway.secretFile}: it does not exist.`,
    );

    const fromEnv = { apiKeyEnv: 'ACME_KEY', secretEnv: 'ACME_SECRET' };
    const check = await runRelayWith(
      tmp.path,
      { tenants: { acme: { baseUrl: 'https://acme.pbx.example', gateway: fromEnv } } },
      ['--check-config'],
      { ACME_KEY: 'k-1' },
    );
    expect(check.code).toBe(1);
    expect(check.out).toMatch(
      /error: tenants\.acme\.gateway: the phone system's API secret \(Client Secret\) is missing: the environment variable ACME_SECRET \(tenants\.acme\.gateway\.secretEnv\) is not set/,
    );

    // The value in the JSON is not a setting: the schema refuses it by name.
    const inJson = await runRelayWith(tmp.path, {
      tenants: { acme: { baseUrl: 'https://acme.pbx.example', gateway: { secret: 'x' } } },
    });
    expect(inJson.code).toBe(1);
    expect(inJson.err).toMatch(/tenants\.acme\.gateway\.secret: not a relay setting/);
  });

  it('says a refused key and an unreachable phone system in words, without the secret, and exits 1', async () => {
    const sim = await simulator();
    const secretFile = join(tmp.path, 'acme.secret');
    const wrong = 'wrong-secret-0123456789abcdef';
    writeFileSync(secretFile, wrong + '\n', { mode: 0o600 });
    const gateway = { apiKeyEnv: 'ACME_KEY', secretFile };
    const refused = await runRelayWith(
      tmp.path,
      { tenants: { [sim.tenant]: { baseUrl: sim.baseUrl, gateway } } },
      [],
      { ACME_KEY: sim.apiKey.key },
    );
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      new RegExp(
        `relay: cannot start: tenants\\.${sim.tenant}\\.gateway: the phone system at ${sim.baseUrl} refused the gateway's API key and secret`,
      ),
    );
    expect(refused.err + refused.out).not.toContain(wrong);

    const closed = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await runRelayWith(
      tmp.path,
      { tenants: { acme: { baseUrl: closed, gateway } } },
      [],
      { ACME_KEY: sim.apiKey.key },
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toMatch(
      /tenants\.acme\.gateway: the phone system at .* cannot be reached \(.*ECONNREFUSED.*\)\. Check tenants\.acme\.baseUrl/,
    );
  });
});

describe('the relay as the gateway: an outage of the phone system', () => {
  it('degrades (healthz, metric), reconnects by itself and stores what rings after', async () => {
    const sim = await simulator();
    const config = relayConfig({
      [sim.tenant]: {
        baseUrl: sim.baseUrl,
        gateway: { apiKeyEnv: 'UNUSED_KEY', secretEnv: 'UNUSED_SECRET' },
      },
    });
    const store = new MemoryStore({ clock: systemClock, retention: config.retention });
    const relay: RelayServer = await startRelay({
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
    const health = async () =>
      (
        (await (await fetch(relay.url + '/healthz')).json()) as {
          ok: boolean;
          upstream: Record<string, { state: string }>;
        }
      ).upstream[sim.tenant]!.state;
    const waitFor = async (state: string) => {
      for (let i = 0; i < 100 && (await health()) !== state; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(await health()).toBe(state);
    };
    await waitFor('connected');

    // The phone system drops the stream and refuses the next handshakes (a restart, a deploy).
    sim.failHttp({ status: 503, count: 3, target: 'handshake' });
    sim.closeAllSockets(1012);
    await waitFor('reconnecting');
    const metrics = await (await fetch(relay.url + '/metrics')).text();
    expect(metrics).toContain(
      `relay_upstream_state{tenant="${sim.tenant}",state="reconnecting"} 1`,
    );
    expect(metrics).toContain(`relay_upstream_state{tenant="${sim.tenant}",state="connected"} 0`);

    await waitFor('connected');
    const callId = sim.ring({ from: '+14155550100', to: '101' });
    let stored: string[] = [];
    for (let i = 0; i < 100 && stored.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const { events } = await store.readAfter(sim.tenant, '0-0', 100);
      stored = events.map((e) => String(e.body)).filter((b) => b.includes(callId));
    }
    expect(stored).toHaveLength(1);
  });

  it('a storage fault (a failover, a replica catching up) does not drop what the stream brought: tried again, stored once, in order', async () => {
    const sim = await simulator();
    const config = relayConfig({
      [sim.tenant]: {
        baseUrl: sim.baseUrl,
        gateway: { apiKeyEnv: 'UNUSED_KEY', secretEnv: 'UNUSED_SECRET' },
      },
    });
    // Redis answering as after a primary was killed: the write's WAIT reached no replica.
    let failures = 0;
    class FailingStore extends MemoryStore {
      override appendAll(...args: Parameters<MemoryStore['appendAll']>) {
        if (refuse > 0) {
          refuse -= 1;
          failures += 1;
          return Promise.reject(
            new Error('redis: the event reached 0 of 1 replicas within 1000 ms'),
          );
        }
        return super.appendAll(...args);
      }
    }
    let refuse = 0;
    const store = new FailingStore({ clock: systemClock, retention: config.retention });
    const relay: RelayServer = await startRelay({
      config,
      store,
      clock: systemClock,
      logger: silentLogger,
      secrets: new SecretRegistry(),
      gateway: new Map([[sim.tenant, { apiKey: sim.apiKey.key, secret: sim.apiKey.secret }]]),
    });
    cleanups.push(async () => {
      await relay.close();
      await store.close();
    });
    for (let i = 0; i < 100; i++) {
      const h = (await (await fetch(relay.url + '/healthz')).json()) as {
        upstream: Record<string, { state: string }>;
      };
      if (h.upstream[sim.tenant]!.state === 'connected') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    refuse = 3;
    const first = sim.ring({ from: '+14155550100', to: '101' });
    const second = sim.ring({ from: '+14155550101', to: '102' });
    let bodies: string[] = [];
    for (let i = 0; i < 200; i++) {
      const { events } = await store.readAfter(sim.tenant, '0-0', 100);
      bodies = events.map((e) => String(e.body));
      if (bodies.some((b) => b.includes(second))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(failures).toBe(3);
    const ours = bodies.filter((b) => b.includes(first) || b.includes(second));
    expect(ours.map((b) => (b.includes(first) ? 'first' : 'second'))).toEqual(['first', 'second']);
  });
});
