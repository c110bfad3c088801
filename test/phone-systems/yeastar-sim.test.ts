/**
 * Yeastar P-Series end to end in-process: the app's own connection factory (service client, token
 * manager, engine) with `phoneSystem: 'yeastar-p-series'`, against the simulator in that mode over
 * real sockets on 127.0.0.1. The far side speaks the vendor's wire: the token only in the query,
 * report frames with members, its errcodes (src-sim/phone-system.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/clock.ts';
import { memoryLogger, SecretRegistry } from '../../src-shared/log.ts';
import { serviceConnectionFactory } from '../../src-main/core/app/connection.ts';
import type { ConnectionStatus } from '../../src-main/core/events/contracts.ts';
import type { Dismiss, Notice, Pop } from '../../src-main/core/events/pipeline.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src-main/core/settings/types.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { waitFor, sleepReal } from '../support/wait.ts';
import { directTransport } from '../support/direct-transport.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function yeastarSim(): Promise<Simulator> {
  const sim = await startSimulator({ phoneSystem: 'yeastar-p-series', extensions: 10 });
  cleanups.push(() => sim.close());
  return sim;
}

function connect(sim: Simulator, opts: { secret?: string; settings?: Partial<Settings> } = {}) {
  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    phoneSystem: 'yeastar-p-series',
    baseUrl: sim.baseUrl,
    apiKey: sim.apiKey.key,
    extensions: ['101'],
    eventSource: 'direct',
    ...opts.settings,
  };
  const connection = serviceConnectionFactory({
    clock: systemClock,
    logger,
    secrets,
    heartbeatMs: 1_000,
    transport: () => directTransport({ logger, secrets }),
  })({
    baseUrl: sim.baseUrl,
    settings,
    credentials: async () => ({ key: sim.apiKey.key, secret: opts.secret ?? sim.apiKey.secret }),
  });
  const t = {
    connection,
    logger,
    pops: [] as Pop[],
    dismisses: [] as Dismiss[],
    notices: [] as Notice[],
    statuses: [] as ConnectionStatus[],
  };
  const { engine } = connection;
  engine.onPop((p) => t.pops.push(p as Pop));
  engine.onDismiss((d) => t.dismisses.push(d as Dismiss));
  engine.onNotice((n) => t.notices.push(n));
  engine.onStatus((s) => t.statuses.push(s));
  cleanups.push(() => connection.stop());
  engine.start();
  return t;
}

const connected = (t: ReturnType<typeof connect>) =>
  waitFor(() => t.connection.engine.status().state === 'connected', 'connected');

describe('Yeastar P-Series against the simulator in that mode', () => {
  it('with the standard profile, says it looks like a Yeastar PBX and to choose it, not an IP allowlist', async () => {
    // The probe's newcomer: phone system left on the standard service, a Yeastar PBX's address.
    // The PBX answers the standard stream's bearer header with its own 10004 "TOKEN EXPIRED",
    // which the standard table reads as "IP not allowed": before, the status said "This
    // computer's IP address is not on the API key's allowlist".
    const sim = await yeastarSim();
    const t = connect(sim, { settings: { phoneSystem: 'standard' } });
    await waitFor(
      () => t.connection.engine.status().state === 'needs-attention',
      'needs attention',
    );
    const status = t.connection.engine.status();
    expect(status.reason).toBe(
      "This looks like a Yeastar P-Series PBX, not the standard service Screenpop is set up for: it answered with Yeastar's own errcode 10004.",
    );
    expect(status.remedy).toBe(
      "In Settings, choose Yeastar P-Series as the Phone system, and enter the PBX's Client ID and Client Secret (its web portal, Integrations > API).",
    );
    expect(t.statuses.map((s) => s.reason ?? '').join('\n')).not.toContain('allowlist');
  });

  it('pops a direct ring with the caller and the line dialled, and dismisses when answered', async () => {
    const sim = await yeastarSim();
    const t = connect(sim);
    await connected(t);
    const callId = sim.ring({ from: '+4930123456', to: '101' });
    await waitFor(() => t.pops.length === 1, 'pop');
    expect(t.pops[0]).toMatchObject({ callId, from: '+4930123456', to: '101', line: '5550100' });
    sim.setCallState(callId, 'answered', { to: '101' });
    await waitFor(() => t.dismisses.length === 1, 'dismiss');
    expect(t.dismisses[0]).toMatchObject({ callId, state: 'answered', to: '101' });
  });

  it('a ring group answered by a colleague dismisses as answered elsewhere; the others never pop', async () => {
    const sim = await yeastarSim();
    const t = connect(sim);
    await connected(t);
    const callId = sim.ring({ from: '+14155550123', to: ['101', '102'] });
    await waitFor(() => t.pops.length === 1, 'pop');
    await sleepReal(5); // the colleague answers in a later report
    sim.setCallState(callId, 'answered', { to: '102' });
    await waitFor(() => t.dismisses.length === 1, 'dismiss');
    expect(t.dismisses[0]).toMatchObject({ callId, state: 'answered', to: '102' });
    sim.setCallState(callId, 'ended', { to: '101' });
    sim.setCallState(callId, 'ended');
    await sleepReal(200);
    expect(t.pops).toHaveLength(1);
  });

  it('an internal call pops with the calling extension as the caller', async () => {
    const sim = await yeastarSim();
    const t = connect(sim);
    await connected(t);
    sim.ring({ from: '103', to: '101' });
    await waitFor(() => t.pops.length === 1, 'pop');
    expect(t.pops[0]).toMatchObject({ from: '103', to: '101' });
    expect(t.pops[0]!.line).toBeUndefined();
  });

  it('the same report 50 times pops once', async () => {
    const sim = await yeastarSim();
    const t = connect(sim);
    await connected(t);
    sim.duplicateNext(1, 50);
    sim.ring({ from: '+4930123456', to: '101' });
    await waitFor(() => t.pops.length === 1, 'pop');
    await sleepReal(300);
    expect(t.pops).toHaveLength(1);
  });

  it('reconnects after 1012 and after the tokens expire (10004 TOKEN EXPIRED, 4002), and still pops', async () => {
    const sim = await yeastarSim();
    const t = connect(sim);
    await connected(t);
    sim.closeAllSockets(1012);
    await waitFor(() => t.statuses.some((s) => s.state === 'connecting'), 'drop noticed');
    await connected(t);
    sim.expireAllTokens();
    await waitFor(
      () => t.statuses.filter((s) => s.state === 'connected').length >= 2,
      'connected again after expiry',
    );
    sim.ring({ from: '+4930123456', to: '101' });
    await waitFor(() => t.pops.length === 1, 'pop after reconnect');
  });

  it('trunk and presence reports become notices; voicemail and SMS are not offered', async () => {
    const sim = await yeastarSim();
    const t = connect(sim);
    await connected(t);
    sim.setTrunkStatus('SIP-Main', 'unreachable');
    sim.setPresence('101', 'lunch_break');
    await waitFor(() => t.notices.length === 2, 'notices');
    expect(t.notices.map((n) => n.type).sort()).toEqual(['presence', 'trunk']);
    const trunk = t.notices.find((n) => n.type === 'trunk');
    expect(trunk).toMatchObject({ trunk: 'SIP-Main', status: 'unreachable', registered: false });
    expect(t.connection.engine.featureStatuses().map((f) => [f.feature, f.state])).toEqual([
      ['voicemail', 'not-offered'],
      ['sms', 'not-offered'],
      ['trunk', 'on'],
      ['presence', 'on'],
    ]);
    expect(() => sim.voicemail({ extension: '101', from: '+1', durationSec: 3 })).toThrow(
      /not offered/,
    );
  });

  it("a wrong Client Secret needs attention, in the phone system's words", async () => {
    const sim = await yeastarSim();
    const t = connect(sim, { secret: 'not-the-secret' });
    await waitFor(
      () => t.connection.engine.status().state === 'needs-attention',
      'needs attention',
    );
    const status = t.connection.engine.status();
    expect(status.errcode).toBe(-1);
    expect(status.reason).toMatch(/Client ID or Client Secret/);
  });

  it('lists the extensions with the token in the query, and never logs the token', async () => {
    const sim = await yeastarSim();
    const t = connect(sim);
    await connected(t);
    const list = await t.connection.fetchExtensions();
    expect(list.map((e) => e.number)).toContain('101');
    expect(sim.stats().extensionList).toBeGreaterThan(0);
    const logs = JSON.stringify(t.logger.records);
    expect(logs).not.toMatch(/access_token=(?!\[REDACTED\])/);
  });
});
