/**
 * Yeastar P-Series end to end in-process: the app's own connection factory (service client, token
 * manager, engine) with `phoneSystem: 'yeastar-p-series'`, against the simulator in that mode over
 * real sockets on 127.0.0.1. The far side speaks the vendor's wire: the token only in the query,
 * report frames with members, its errcodes (src-sim/phone-system.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { serviceConnectionFactory } from '../../src-main/core/connection/connection.ts';
import type { ConnectionStatus } from '../../src-main/core/events/contracts.ts';
import type { Dismiss, Notice, Pop } from '../../src-main/core/events/pipeline.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src-main/core/settings/types.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { waitFor, sleepReal } from '../../rigs/wait.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function yeastarSim(
  reportStyle?: 'snapshot' | 'member' | 'mixed',
  seed?: number,
): Promise<Simulator> {
  const sim = await startSimulator({
    phoneSystem: 'yeastar-p-series',
    extensions: 10,
    ...(reportStyle && { reportStyle }),
    ...(seed !== undefined && { seed }),
  });
  cleanups.push(() => sim.close());
  return sim;
}

/** How many members each 30011 report the simulator sent listed. */
function membersPerReport(sim: Simulator): number[] {
  const counts: number[] = [];
  sim.onSent((envelope) => {
    if (envelope.event === 30011) counts.push((envelope.data.members as unknown[]).length);
  });
  return counts;
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

  it('trunk and presence reports become notices; voicemail is offered (call records), SMS is not', async () => {
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
      // A voicemail rides on the 30012 call record (doc section 5; decoded in yeastar-members.test.ts).
      ['voicemail', 'on'],
      ['sms', 'not-offered'],
      ['trunk', 'on'],
      ['presence', 'on'],
    ]);
    // The PBX has no voicemail event of its own: the simulator refuses one in this mode (its
    // voicemails are call records: setCallState(id, 'voicemail'), below).
    expect(() => sim.voicemail({ extension: '101', from: '+1', durationSec: 3 })).toThrow(
      /not offered/,
    );
  });

  it('a 30012 call record (subscribed with calls) ends the ring and, with VOICEMAIL, is a voicemail notice unless turned off', async () => {
    const sim = await yeastarSim();
    const record = (callId: string) =>
      JSON.stringify({
        type: 30012,
        sn: 'SIM',
        msg: JSON.stringify({
          call_id: callId,
          time_start: '2026-01-16 09:00:00',
          call_from: '+14155550123',
          call_to: '101',
          call_duration: 25,
          talk_duration: 0,
          status: 'VOICEMAIL',
          type: 'Inbound',
        }),
      });
    const on = connect(sim);
    const off = connect(sim, {
      settings: { features: { ...DEFAULT_SETTINGS.features, voicemail: false } },
    });
    const records: unknown[] = [];
    on.connection.engine.onCallRecord?.((r) => records.push(r));
    await connected(on);
    await connected(off);
    const callId = sim.ring({ from: '+14155550123', to: '101' });
    await waitFor(() => on.pops.length === 1 && off.pops.length === 1, 'the pops');
    // The PBX's own frame, to sockets subscribed to 30012 (a record the simulator does not send).
    sim.emitRaw(record(callId), { event: 30012 });
    await waitFor(() => on.dismisses.length === 1 && off.dismisses.length === 1, 'the dismisses');
    await waitFor(() => on.notices.length === 1, 'the voicemail');
    expect(on.notices).toMatchObject([
      { type: 'voicemail', voicemailId: callId, extension: '101', from: '+14155550123' },
    ]);
    await sleepReal(200);
    expect(off.notices).toEqual([]);
    // The record itself reaches the app (History's talk time).
    expect(records).toEqual([
      {
        callId,
        to: '101',
        status: 'VOICEMAIL',
        talkSec: 0,
        durationSec: expect.any(Number),
        from: '+14155550123',
        direction: 'inbound',
      },
    ]);
    expect(off.dismisses.map((d) => d.state)).toEqual(['voicemail']);
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

/**
 * Member-style reports, as real P-Series PBXs were captured sending them (issue 32; the simulator's
 * `reportStyle: 'member'`, its default): the caller in a report of its own before the ring, each
 * ring and answer beside the caller, each hang-up alone. The app must pop and dismiss exactly as on
 * snapshots.
 */
describe('Yeastar P-Series member-style reports, against the simulator', () => {
  it('pops a direct ring with the caller named and the line (the caller came in an earlier report), and dismisses when answered', async () => {
    const sim = await yeastarSim('member');
    const sizes = membersPerReport(sim);
    const t = connect(sim);
    await connected(t);
    const callId = sim.ring({ from: '+4930123456', to: '101' });
    await waitFor(() => t.pops.length === 1, 'pop');
    expect(t.pops[0]).toMatchObject({ callId, from: '+4930123456', to: '101', line: '5550100' });
    sim.setCallState(callId, 'answered', { to: '101' });
    await waitFor(() => t.dismisses.length === 1, 'dismiss');
    expect(t.dismisses[0]).toMatchObject({ callId, state: 'answered', to: '101' });
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    // The changed member, with the caller beside a ring or an answer (captured A3).
    expect(new Set(sizes)).toEqual(new Set([1, 2]));
  });

  it("a ring group: a colleague's ring and hang-up, each reported alone, leave mine ringing; the colleague's answer dismisses it", async () => {
    const sim = await yeastarSim('member');
    const sizes = membersPerReport(sim);
    const t = connect(sim);
    await connected(t);
    const callId = sim.ring({ from: '+14155550123', to: ['101', '102', '103'] });
    await waitFor(() => t.pops.length === 1, 'pop');
    await sleepReal(300); // 102's and 103's rings, each alone, came after mine
    expect(t.dismisses).toEqual([]);
    // 103 declines: its BYE alone. My phone still rings.
    sim.setCallState(callId, 'ended', { to: '103' });
    await sleepReal(300);
    expect(t.dismisses).toEqual([]);
    // 102 answers: its ANSWER alone, the caller's ANSWERED alone, then my BYE alone.
    sim.setCallState(callId, 'answered', { to: '102' });
    await waitFor(() => t.dismisses.length === 1, 'dismiss');
    expect(t.dismisses[0]).toMatchObject({ callId, state: 'answered', to: '102' });
    sim.setCallState(callId, 'ended');
    await sleepReal(300);
    expect(t.pops).toHaveLength(1);
    expect(t.dismisses).toHaveLength(1);
    expect(t.pops[0]).toMatchObject({ callId, from: '+14155550123', to: '101', line: '5550100' });
    expect(new Set(sizes)).toEqual(new Set([1, 2]));
  });

  it('a blind transfer to me pops with the original caller, reported before the transfer', async () => {
    const sim = await yeastarSim('member');
    const t = connect(sim);
    await connected(t);
    const callId = sim.ring({ from: '+4930123456', to: '102' });
    sim.setCallState(callId, 'answered', { to: '102' });
    await sleepReal(100);
    sim.transfer(callId, { from: '102', to: '101' });
    await waitFor(() => t.pops.length === 1, 'pop');
    expect(t.pops[0]).toMatchObject({ callId, from: '+4930123456', to: '101', line: '5550100' });
    sim.setCallState(callId, 'answered', { to: '101' });
    await waitFor(() => t.dismisses.length === 1, 'dismiss');
    expect(t.dismisses[0]).toMatchObject({ callId, state: 'answered', to: '101' });
  });

  it('two devices of my extension (desk phone and Linkus): one stopping leaves it ringing; both stopping dismisses', async () => {
    const sim = await yeastarSim('member');
    const t = connect(sim);
    await connected(t);
    const callId = sim.ring({ from: '+4930123456', to: '101', devices: 2 });
    await waitFor(() => t.pops.length === 1, 'pop');
    sim.setCallState(callId, 'ended', { to: '101', device: 2 });
    await sleepReal(300);
    expect(t.dismisses).toEqual([]);
    sim.setCallState(callId, 'ended', { to: '101', device: 1 });
    await waitFor(() => t.dismisses.length === 1, 'dismiss');
    expect(t.dismisses[0]).toMatchObject({ callId, state: 'ended', to: '101' });
    expect(t.pops).toHaveLength(1);
  });

  it('an attended transfer to me pops with the original caller and says who transferred it', async () => {
    const sim = await yeastarSim('member');
    const t = connect(sim);
    await connected(t);
    const callId = sim.ring({ from: '+4930123456', to: '102' });
    sim.setCallState(callId, 'answered', { to: '102' });
    await sleepReal(100);
    sim.transfer(callId, { from: '102', to: '101', attended: true });
    await waitFor(() => t.pops.length === 1, 'pop');
    expect(t.pops[0]).toMatchObject({
      callId,
      from: '+4930123456',
      to: '101',
      transferredBy: '102',
    });
    sim.setCallState(callId, 'answered', { to: '101' });
    await waitFor(() => t.dismisses.length === 1, 'dismiss');
    expect(t.dismisses[0]).toMatchObject({ callId, state: 'answered', to: '101' });
    sim.setCallState(callId, 'ended', { to: '102' });
    sim.setCallState(callId, 'ended');
  });

  it("a call through a queue carries the queue's number to the pop, and its records reach History", async () => {
    const sim = await yeastarSim('member');
    const t = connect(sim);
    const records: unknown[] = [];
    t.connection.engine.onCallRecord?.((r) => records.push(r));
    await connected(t);
    const callId = sim.ring({ from: '+4930123456', to: ['101', '102'], via: '6400' });
    await waitFor(() => t.pops.length === 1, 'pop');
    expect(t.pops[0]).toMatchObject({ callId, to: '101', callPath: '6400' });
    sim.setCallState(callId, 'answered', { to: '101' });
    sim.setCallState(callId, 'ended');
    await waitFor(() => records.length === 2, 'the records');
    expect(records).toEqual([
      // Who called and the direction (the call log tells the agent's outbound calls by them).
      {
        callId,
        to: '102',
        status: 'NO ANSWER',
        talkSec: 0,
        durationSec: expect.any(Number),
        from: '+4930123456',
        direction: 'inbound',
      },
      {
        callId,
        to: '101',
        status: 'ANSWERED',
        talkSec: 0,
        durationSec: expect.any(Number),
        from: '+4930123456',
        direction: 'inbound',
      },
    ]);
  });

  it('a call that goes to my voicemail: the ring ends and the voicemail notice comes from the call record', async () => {
    const sim = await yeastarSim('member');
    const t = connect(sim);
    await connected(t);
    const callId = sim.ring({ from: '+4930123456', to: '101' });
    await waitFor(() => t.pops.length === 1, 'pop');
    sim.setCallState(callId, 'voicemail');
    await waitFor(() => t.notices.length === 1, 'the voicemail');
    expect(t.notices).toMatchObject([
      { type: 'voicemail', voicemailId: callId, extension: '101', from: '+4930123456' },
    ]);
    expect(t.dismisses).toHaveLength(1);
  });

  it('mixed: calls in either shape pop once with the caller and are dismissed alike', async () => {
    const sim = await yeastarSim('mixed', 3);
    const sizes = membersPerReport(sim);
    const t = connect(sim);
    await connected(t);
    const callers = [
      '+4930100001',
      '+4930100002',
      '+4930100003',
      '+4930100004',
      '+4930100005',
      '+4930100006',
    ];
    for (const [i, from] of callers.entries()) {
      const callId = sim.ring({ from, to: ['101', '104'] });
      await waitFor(() => t.pops.length === i + 1, `pop ${i + 1}`);
      sim.setCallState(callId, i % 2 ? 'answered' : 'ended', i % 2 ? { to: '101' } : {});
      await waitFor(() => t.dismisses.length === i + 1, `dismiss ${i + 1}`);
      if (i % 2) sim.setCallState(callId, 'ended');
    }
    // Both shapes were sent (with seed 3), and every pop named its caller.
    expect(sizes.some((n) => n === 1) && sizes.some((n) => n > 1)).toBe(true);
    expect(t.pops.map((p) => p.from)).toEqual(callers);
    await sleepReal(300);
    expect(t.pops).toHaveLength(callers.length);
    expect(t.dismisses).toHaveLength(callers.length);
  });
});
