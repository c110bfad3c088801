import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import type { ConnectionStatus } from '../../src-main/core/events/contracts.ts';
import type { Notice, Pop } from '../../src-main/core/events/pipeline.ts';
import { ALL_FEATURES_ON, noticeTopics } from '../../src-main/core/events/features.ts';
import { ScreenpopEngine } from '../../src-main/core/engine.ts';
import { relayFilterFor } from '../../src-main/core/relay-client/filter.ts';
import { RelayEventSource } from '../../src-main/core/relay-client/relay-source.ts';
import { startRelay, type RelayServer } from '../../src-relay/server.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { tokenManagerFor } from '../events/support.ts';
import { relayConfig } from '../../rigs/relay/helpers.ts';
import { sleepReal, waitFor } from '../../rigs/wait.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const WEBHOOK_SECRET = 'whsec-e2e-0123456789';
const USER = { extensions: ['101'], dids: ['+1 (415) 555-0100'], defaultRegion: 'US' };

interface Rig {
  sim: Simulator;
  relay: RelayServer;
  store: MemoryStore;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Simulator -> signed webhooks -> relay (memory store), as an organisation would run it. */
async function rig(): Promise<Rig> {
  const sim = await startSimulator();
  cleanups.push(() => sim.close());
  const config = relayConfig({ [sim.tenant]: { baseUrl: sim.baseUrl, secrets: [WEBHOOK_SECRET] } });
  const store = new MemoryStore({ clock: systemClock, retention: config.retention });
  const relay = await startRelay({ config, store, clock: systemClock, logger: silentLogger });
  cleanups.push(async () => {
    await relay.close();
    await store.close();
  });
  sim.addWebhook({ url: relay.webhookUrl(sim.tenant), secret: WEBHOOK_SECRET });
  return { sim, relay, store };
}

function relaySource(
  r: Rig,
  tokens: ReturnType<typeof tokenManagerFor>,
  optIn: number[] = [],
): RelayEventSource {
  return new RelayEventSource({
    relayUrl: r.relay.url,
    tenant: r.sim.tenant,
    tokens,
    filter: relayFilterFor(USER, optIn),
    clock: systemClock,
    backoff: { baseMs: 50, capMs: 400 },
    createSocket: directTransport().createSocket,
  });
}

describe('relay end to end with the simulator', () => {
  it('the simulator signs webhooks, the relay checks them and the desktop gets its rings', async () => {
    const r = await rig();
    const tokens = tokenManagerFor(r.sim.baseUrl, r.sim.apiKey, systemClock);
    const source = relaySource(r, tokens);
    const frames: string[] = [];
    const statuses: ConnectionStatus[] = [];
    source.onFrame((t) => frames.push(t));
    source.onStatus((s) => statuses.push(s));
    source.start();
    cleanups.push(() => source.stop());
    await waitFor(() => statuses.at(-1)?.state === 'connected', 'relay source connected', {
      timeoutMs: 5000,
    });
    const sent: string[] = [];
    const off = r.sim.onSent((_env, text) => sent.push(text));
    r.sim.ring({ from: '+442071234567', to: '101' });
    r.sim.ring({ from: '+442071234567', to: '4155550100' }); // the user's DID, written nationally
    r.sim.ring({ from: '+442071234567', to: '102' }); // someone else
    await waitFor(() => frames.length >= 2, 'two rings via the relay', { timeoutMs: 5000 });
    await sleepReal(200);
    off();
    expect(frames).toHaveLength(2);
    // Byte for byte what the simulator sent (the webhook body is the WS frame text, docs/wire-protocol.md section 5).
    for (const f of frames) expect(sent).toContain(f);
    expect(r.relay.metrics.rejected.size).toBe(0);
    // The token was checked against the tenant's service once, then cached.
    expect(r.sim.stats().extensionList).toBe(1);
  });

  it('the direct stream dies during a ring burst: every ring pops exactly once, via the relay', async () => {
    const r = await rig();
    const tokens = tokenManagerFor(r.sim.baseUrl, r.sim.apiKey, systemClock);
    const engine = new ScreenpopEngine({
      baseUrl: r.sim.baseUrl,
      tokens,
      clock: systemClock,
      user: USER,
      mode: 'auto',
      createRelaySource: () => relaySource(r, tokens),
      createSocket: directTransport().createSocket,
      fetch: directTransport().fetch,
    });
    const pops: Pop[] = [];
    engine.onPop((p) => pops.push(p));
    engine.start();
    cleanups.push(() => engine.stop());
    await waitFor(() => engine.status().state === 'connected', 'both sources connected', {
      timeoutMs: 10_000,
    });

    const calls: string[] = [];
    const afterKill = new Set<string>();
    for (let i = 0; i < 30; i++) {
      // Half-open: the direct socket stays "open" but nothing more arrives on it; only the heartbeat
      // (25 s) would notice, long after this burst.
      if (i === 10) r.sim.stallSockets();
      const callId = r.sim.ring({
        from: `+1415555${String(1000 + i)}`,
        to: i % 2 ? '101' : '+14155550100',
      });
      calls.push(callId);
      if (i >= 10) afterKill.add(callId);
      await sleepReal(15);
    }
    await waitFor(
      () => new Set(pops.map((p) => p.callId)).size === calls.length,
      'every ring popped',
      { timeoutMs: 10_000 },
    );
    await sleepReal(300);
    const perCall = new Map<string, number>();
    for (const p of pops) perCall.set(p.callId, (perCall.get(p.callId) ?? 0) + 1);
    expect([...perCall.keys()].sort()).toEqual([...calls].sort());
    expect([...perCall.values()].every((n) => n === 1)).toBe(true);
    for (const p of pops) if (afterKill.has(p.callId)) expect(p.source).toBe('relay');
  });

  it('voicemail, SMS, trunk and presence reach the desktop through the relay when the features are on', async () => {
    const r = await rig();
    const tokens = tokenManagerFor(r.sim.baseUrl, r.sim.apiKey, systemClock);
    const engine = new ScreenpopEngine({
      baseUrl: r.sim.baseUrl,
      tokens,
      clock: systemClock,
      user: USER,
      mode: 'relay',
      createRelaySource: () => relaySource(r, tokens, noticeTopics(ALL_FEATURES_ON)),
      createSocket: directTransport().createSocket,
      fetch: directTransport().fetch,
    });
    const notices: Notice[] = [];
    engine.onNotice((n) => notices.push(n));
    engine.start();
    cleanups.push(() => engine.stop());
    await waitFor(() => engine.status().state === 'connected', 'relay connected', {
      timeoutMs: 10_000,
    });
    r.sim.voicemail({ extension: '101', from: '+4930123456', durationSec: 42 });
    r.sim.voicemail({ extension: '102', from: '+4930123456', durationSec: 42 });
    r.sim.sms({ from: '+4930123456', to: '4155550100', text: 'via the relay' });
    r.sim.setTrunkStatus('SIP-Main', 'unreachable');
    r.sim.setPresence('101', 'away');
    r.sim.setPresence('102', 'away');
    await waitFor(() => notices.length === 4, 'four notices via the relay', { timeoutMs: 10_000 });
    await sleepReal(200);
    expect(notices.map((n) => [n.type, n.source])).toEqual([
      ['voicemail', 'relay'],
      ['sms', 'relay'],
      ['trunk', 'relay'],
      ['presence', 'relay'],
    ]);
  });

  it('without the features, the relay passes no other code (its filter is rings only)', async () => {
    const r = await rig();
    const tokens = tokenManagerFor(r.sim.baseUrl, r.sim.apiKey, systemClock);
    const source = relaySource(r, tokens);
    const frames: string[] = [];
    source.onFrame((t) => frames.push(t));
    const statuses: ConnectionStatus[] = [];
    source.onStatus((s) => statuses.push(s));
    source.start();
    cleanups.push(() => source.stop());
    await waitFor(() => statuses.at(-1)?.state === 'connected', 'connected', { timeoutMs: 5000 });
    r.sim.voicemail({ extension: '101', from: '+4930123456', durationSec: 42 });
    r.sim.ring({ from: '+442071234567', to: '101' });
    await waitFor(() => frames.length >= 1, 'the ring', { timeoutMs: 5000 });
    await sleepReal(200);
    expect(frames.map((f) => (JSON.parse(f) as { event: number }).event)).toEqual([30011]);
  });
});
