/**
 * An unanswered call that goes to voicemail shows one notification, the voicemail's, whichever of
 * the ring's end and the voicemail arrives first (presenters/one-notification-per-call.ts),
 * through the runtime on the fake clock; History keeps both.
 */
import { describe, expect, it } from 'vitest';
import { AppRuntime } from '../../src-main/core/app/runtime.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import type { VoicemailNotice } from '../../src-main/core/events/notices.ts';
import { HistoryStore } from '../../src-main/core/history/history-store.ts';
import { notOfferedCallControl } from '../../src-main/core/calls/not-offered.ts';
import { SAME_CALL_MS } from '../../src-main/core/presenters/one-notification-per-call.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';
import {
  FakeClipboard,
  FakeConnection,
  FakeNotifier,
  FakeOpener,
  FakePopup,
  FakeTray,
  MemorySettings,
} from '../../rigs/app-harness.ts';

const CONFIGURED = { baseUrl: 'https://acme.example.com', apiKey: 'key1', extensions: ['101'] };
const ADA = '+4930123456';

async function setup() {
  const clock = new FakeClock();
  const credentials = new MemoryCredentialStore();
  await credentials.setSecret(keychainAccount(CONFIGURED.apiKey, CONFIGURED.baseUrl), 's-1');
  const notifier = new FakeNotifier();
  const connections: FakeConnection[] = [];
  const history = new HistoryStore({
    path: 'mem',
    clock,
    logger: silentLogger,
    limit: 10,
    write: async () => {},
    read: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOENT' })),
  });
  const runtime = new AppRuntime({
    clock,
    logger: silentLogger,
    secrets: new SecretRegistry(),
    settings: new MemorySettings(CONFIGURED),
    credentials,
    history,
    views: {
      notifier,
      popup: new FakePopup(),
      urlOpener: new FakeOpener(),
      clipboard: new FakeClipboard(),
      tray: new FakeTray(),
    },
    connect: (config) => {
      const c = new FakeConnection(config);
      connections.push(c);
      return c;
    },
    startDemo: async () => {
      throw new Error('no demo here');
    },
    createProbe: () => ({ getToken: async () => 't', listExtensions: async () => [] }),
    callControl: () => notOfferedCallControl(),
  });
  await runtime.start();
  await flushMicrotasks();
  const connection = connections[0];
  if (!connection) throw new Error('no connection was built');
  connection.status({ state: 'connected' });
  /** A call from `from` rings now (its receipt time is the clock's, as in the app). */
  const ring = (callId: string, from = ADA) =>
    connection.pop(callId, { from, receivedAt: clock.now() });
  /** A voicemail arrives now on extension 101. */
  const voicemail = (voicemailId: string, from = ADA) => {
    const notice: VoicemailNotice = {
      type: 'voicemail',
      eventId: `e-${voicemailId}`,
      timestamp: clock.now(),
      receivedAt: clock.now(),
      source: 'direct',
      voicemailId,
      extension: '101',
      from,
      callerName: null,
      durationSec: 42,
      notify: true,
    };
    connection.notice(notice);
  };
  return { clock, runtime, notifier, connection, ring, voicemail };
}

describe('a call that went to voicemail shows one notification', () => {
  it('the missed call first, then its voicemail: the voicemail replaces the missed-call notification', async () => {
    const t = await setup();
    t.ring('c1');
    await t.clock.advance(20_000);
    t.connection.dismiss('c1', 'ended');
    expect(t.notifier.missed.map((m) => m.card.callId)).toEqual(['c1']);
    expect([...t.notifier.open]).toEqual(['c1']);
    // The caller leaves a 42-second message (the standard service's 30015 names no call).
    await t.clock.advance(60_000);
    t.voicemail('vm-7');
    expect(t.notifier.notices.map((n) => n.alert.id)).toEqual(['voicemail:vm-7']);
    expect([...t.notifier.open]).toEqual(['voicemail:vm-7']);
    // History keeps both: the missed call and the message.
    expect(t.runtime.history().map((e) => e.callId)).toEqual(['voicemail:vm-7', 'c1']);
  });

  it('the voicemail first (its ring end reported late), then the ring end: no missed-call notification, and the ring notification goes', async () => {
    const t = await setup();
    t.ring('c1');
    expect([...t.notifier.open]).toEqual(['c1']); // the ring notification
    await t.clock.advance(80_000);
    t.voicemail('vm-7');
    await t.clock.advance(2_000);
    t.connection.dismiss('c1', 'ended');
    expect(t.notifier.missed).toEqual([]);
    expect(t.notifier.notices.map((n) => n.alert.id)).toEqual(['voicemail:vm-7']);
    expect([...t.notifier.open]).toEqual(['voicemail:vm-7']);
    // The card's linger ends later: nothing else is shown or closed.
    await t.clock.advance(10 * 60_000);
    expect([...t.notifier.open]).toEqual(['voicemail:vm-7']);
  });

  it('a voicemail named by its call (Yeastar P-Series) replaces it even from a withheld number', async () => {
    const t = await setup();
    t.ring('1700000000.42', 'anonymous');
    t.connection.dismiss('1700000000.42', 'ended');
    await t.clock.advance(30_000);
    t.voicemail('1700000000.42', 'anonymous');
    expect([...t.notifier.open]).toEqual(['voicemail:1700000000.42']);
  });

  it('another call stays two notifications: another caller, two withheld numbers, a later call, a message too late', async () => {
    const t = await setup();
    // Another caller's voicemail.
    t.ring('c1');
    t.connection.dismiss('c1', 'ended');
    t.voicemail('vm-1', '+442079460958');
    expect([...t.notifier.open].sort()).toEqual(['c1', 'voicemail:vm-1']);
    // Withheld numbers are not the same caller.
    t.ring('c2', 'anonymous');
    t.connection.dismiss('c2', 'ended');
    t.voicemail('vm-2', 'anonymous');
    expect(t.notifier.open.has('c2')).toBe(true);
    // Ada leaves a message, then calls again and is missed: that later call is news.
    await t.clock.advance(1_000);
    t.voicemail('vm-3');
    await t.clock.advance(1_000);
    t.ring('c3');
    t.connection.dismiss('c3', 'ended');
    expect(t.notifier.missed.map((m) => m.card.callId)).toEqual(['c1', 'c2', 'c3']);
    expect(t.notifier.open.has('c3')).toBe(true);
    // A message more than SAME_CALL_MS after the call began is not taken as that call's.
    const u = await setup();
    u.ring('c4');
    u.connection.dismiss('c4', 'ended');
    await u.clock.advance(SAME_CALL_MS + 1);
    u.voicemail('vm-4');
    expect([...u.notifier.open].sort()).toEqual(['c4', 'voicemail:vm-4']);
  });

  it('one voicemail replaces one missed call: the second voicemail of the caller is shown beside the first', async () => {
    const t = await setup();
    t.ring('c1');
    t.connection.dismiss('c1', 'ended');
    t.voicemail('vm-1');
    t.voicemail('vm-2');
    expect([...t.notifier.open].sort()).toEqual(['voicemail:vm-1', 'voicemail:vm-2']);
  });
});
