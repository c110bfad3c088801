/**
 * Calls the agent dialled are logged (issue 39): the app's core (AppRuntime, wired as the Electron
 * app wires it, only the views and the queue are fakes) against the simulator playing a Yeastar
 * P-Series PBX over real sockets. A dial from Screenpop rings the agent's extension first
 * (caller-first, never a pop); the PBX's call record (30012) then says how it went. Each dialled
 * call is logged once, as OUTBOUND, by the call-log setting's rule: answered with its talk time,
 * and, under `answered-and-missed`, one nobody answered as missed (HubSpot NO_ANSWER).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventPipeline } from '../../src-main/core/events/pipeline.ts';
import { YEASTAR_P_SERIES_WIRE } from '../../src-shared/wire/yeastar-p-series.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import type { CallLogCalls } from '../../src-shared/rules/call-log-rule.ts';
import { serviceConnectionFactory } from '../../src-main/core/connection/connection.ts';
import { AppRuntime } from '../../src-main/core/app/runtime.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { startSimulator } from '../../src-sim/index.ts';
import {
  presenterHarness,
  fakeViews,
  memoryHistory,
  MemorySettings,
  RecordingCallLog,
} from '../../rigs/app-harness.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('AppRuntime with a Yeastar P-Series PBX: calls the agent dialled', () => {
  it('are logged once each as OUTBOUND: answered with its talk time, not answered as missed', async () => {
    const sim = await startSimulator({ phoneSystem: 'yeastar-p-series', extensions: 4 });
    cleanups.push(() => sim.close());
    const me = sim.extensions[0]!.number;
    const credentials = new MemoryCredentialStore();
    await credentials.setSecret(keychainAccount(sim.apiKey.key, sim.baseUrl), sim.apiKey.secret);
    const secrets = new SecretRegistry();
    const callLog = new RecordingCallLog();
    const views = fakeViews();
    const runtime = new AppRuntime({
      clock: systemClock,
      logger: silentLogger,
      secrets,
      settings: new MemorySettings({
        phoneSystem: 'yeastar-p-series',
        baseUrl: sim.baseUrl,
        apiKey: sim.apiKey.key,
        extensions: [me],
        defaultRegion: 'US',
        callLogCalls: 'answered-and-missed',
      }),
      credentials,
      history: memoryHistory(systemClock),
      views,
      connect: serviceConnectionFactory({
        clock: systemClock,
        logger: silentLogger,
        secrets,
        transport: () => directTransport({ secrets }),
      }),
      startDemo: () => Promise.reject(new Error('no demo here')),
      createProbe: () => ({ getToken: async () => 't', listExtensions: async () => [] }),
      callLog,
    });
    cleanups.push(() => runtime.shutdown());
    await runtime.start();
    await vi.waitFor(() => expect(runtime.status().state).toBe('connected'), { timeout: 10_000 });

    // Answered: the agent picks up the caller-first ring, talks a while, hangs up.
    const answered = await runtime.calls.dial('(415) 555-0199');
    expect(answered).toMatchObject({ ok: true, callId: expect.any(String) });
    const answeredId = (answered as { callId: string }).callId;
    await new Promise((r) => setTimeout(r, 200));
    sim.setCallState(answeredId, 'answered', { to: me });
    await new Promise((r) => setTimeout(r, 700));
    sim.setCallState(answeredId, 'ended');
    await vi.waitFor(() => expect(callLog.records).toHaveLength(1), { timeout: 5_000 });

    // Not answered: the call ends while it still rings.
    const unanswered = await runtime.calls.dial('(415) 555-0177');
    const unansweredId = (unanswered as { callId: string }).callId;
    await new Promise((r) => setTimeout(r, 200));
    sim.setCallState(unansweredId, 'ended');
    await vi.waitFor(() => expect(callLog.records).toHaveLength(2), { timeout: 5_000 });
    // Nothing more comes (each call once), and no card popped for either.
    await new Promise((r) => setTimeout(r, 300));

    // `to` is the number as dialled (the PBX's dialable form, phone-number.ts), as its record says.
    expect(callLog.records).toEqual([
      {
        callId: answeredId,
        direction: 'outbound',
        from: me,
        to: '4155550199',
        extension: me,
        startedAt: expect.any(Number),
        answeredAt: expect.any(Number),
        endedAt: expect.any(Number),
        durationMs: expect.any(Number),
        outcome: 'answered',
      },
      {
        callId: unansweredId,
        direction: 'outbound',
        from: me,
        to: '4155550177',
        extension: me,
        startedAt: expect.any(Number),
        endedAt: expect.any(Number),
        durationMs: 0,
        outcome: 'missed',
      },
    ]);
    // Talk time from the PBX's record (whole seconds): the agent talked about 0.7 s.
    const talked = callLog.records[0]!;
    expect(talked.durationMs).toBeGreaterThanOrEqual(1_000);
    expect(talked.durationMs % 1_000).toBe(0);
    expect(talked.answeredAt).toBe(talked.endedAt - talked.durationMs);
    expect(views.notifier.shown).toEqual([]);
  }, 30_000);
});

/**
 * A call dialled on the agent's own phone (not from Screenpop): the PBX's Outbound record of it
 * names the extension that dialled (`call_from`). Frames captured from a real P570
 * (test/fixtures/yeastar-p-series, README): call D, extension 703 dials out and the far side is
 * busy; call C, extension 700's outbound call fails.
 */
describe('a call dialled on the agent’s own phone (Yeastar’s Outbound record)', () => {
  const fixture = (name: string) =>
    readFileSync(join('test/fixtures/yeastar-p-series', name), 'utf8');
  const play = async (calls: CallLogCalls, extension: string, frames: string[]) => {
    const clock = new FakeClock(1_702_285_525_000);
    const pipeline = new EventPipeline({
      clock,
      user: { extensions: [extension], dids: [], defaultRegion: 'ZA' },
    });
    const callLog = new RecordingCallLog();
    const t = presenterHarness({
      clock,
      callLog,
      isUserNumber: (n) => n === extension,
      settings: { callLogCalls: calls },
    });
    pipeline.onPop((p) => t.presenter.handlePop(p));
    pipeline.onDismiss((d) => t.presenter.handleDismiss(d));
    pipeline.onRecord((r) => t.presenter.handleRecord(r));
    const decode = YEASTAR_P_SERIES_WIRE.stream.decoder();
    for (const name of frames) {
      pipeline.ingest(fixture(name), { source: 'direct', receivedAt: clock.now() }, decode);
      await clock.advance(500);
    }
    return { callLog, t };
  };
  const D = [
    'captured-30011-D1-ext-answered-alone-outbound.json',
    'captured-30012-D2-outbound-busy.json',
  ];

  it('is logged once as OUTBOUND: busy is declined (answered-and-missed); the same record again is not a second log', async () => {
    const { callLog, t } = await play('answered-and-missed', '703', [...D, D[1]!]);
    expect(callLog.records).toEqual([
      {
        callId: '1702285525.16',
        direction: 'outbound',
        from: '703',
        to: '0875550199',
        extension: '703',
        startedAt: 1_702_285_525_500,
        endedAt: 1_702_285_525_500,
        durationMs: 0,
        outcome: 'declined',
      },
    ]);
    expect(t.presenter.cards()).toEqual([]);
  });

  it('is not logged when not answered under `answered`, nor when another extension dialled it, nor when it failed', async () => {
    expect((await play('answered', '703', D)).callLog.records).toEqual([]);
    expect((await play('answered-and-missed', '101', D)).callLog.records).toEqual([]);
    const failed = await play('answered-and-missed', '700', [
      'captured-30011-C3-ext-answered-alone.json',
      'captured-30012-C5-outbound-failed.json',
    ]);
    expect(failed.callLog.records).toEqual([]);
  });
});
