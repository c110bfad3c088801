/**
 * Call back on missed-call and voicemail notifications (issue 38), through the runtime: a call
 * that stops ringing unanswered leaves a "missed call" notification (its ring notification is not
 * just closed), which, like a voicemail's, offers Call back only where the phone system offers
 * dialling; the action is the History's own Call back (CallActions.callBack), dialling the caller.
 */
import { describe, expect, it } from 'vitest';
import { AppRuntime } from '../../src-main/core/app/runtime.ts';
import { keychainAccount } from '../../src-main/core/credentials/credential-store.ts';
import { MemoryCredentialStore } from '../../src-main/core/credentials/credential-store.ts';
import { HistoryStore } from '../../src-main/core/history/history-store.ts';
import type { CallControl } from '../../src-main/core/ports/call-control.ts';
import { notOfferedCallControl } from '../../src-main/core/calls/not-offered.ts';
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

async function setup(control: CallControl, settings: Record<string, unknown> = {}) {
  const clock = new FakeClock();
  const credentials = new MemoryCredentialStore();
  await credentials.setSecret(keychainAccount(CONFIGURED.apiKey, CONFIGURED.baseUrl), 's-1');
  const notifier = new FakeNotifier();
  const connections: FakeConnection[] = [];
  const runtime = new AppRuntime({
    clock,
    logger: silentLogger,
    secrets: new SecretRegistry(),
    settings: new MemorySettings({ ...CONFIGURED, ...settings }),
    credentials,
    history: new HistoryStore({
      path: 'mem',
      clock,
      logger: silentLogger,
      limit: 10,
      write: async () => {},
      read: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOENT' })),
    }),
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
    callControl: () => control,
  });
  await runtime.start();
  await flushMicrotasks();
  const connection = connections[0];
  if (!connection) throw new Error('no connection was built');
  connection.status({ state: 'connected' });
  return { clock, runtime, notifier, connection };
}

function dialler() {
  const dialled: string[] = [];
  const control: CallControl = {
    offered: () => new Set(['dial']),
    dial: async (n) => (dialled.push(n), { ok: true, callId: 'out-1' }),
    transfer: async () => ({ ok: true }),
    hangup: async () => ({ ok: true }),
    answer: async () => ({ ok: true }),
    decline: async () => ({ ok: true }),
  };
  return { control, dialled };
}

const voicemail = {
  type: 'voicemail' as const,
  eventId: 'vm-e1',
  timestamp: 1,
  receivedAt: 1,
  source: 'direct',
  voicemailId: 'v1',
  extension: '101',
  from: '+4930123456',
  callerName: null,
  durationSec: 42,
  notify: true,
};

describe('Call back on a missed-call notification', () => {
  it('a call that stops ringing unanswered leaves a missed-call notification with Call back, which dials the caller', async () => {
    const pbx = dialler();
    const t = await setup(pbx.control);
    t.connection.pop('c1');
    t.connection.dismiss('c1', 'ended');
    expect(t.notifier.missed.map((m) => [m.card.callId, m.card.from, m.options])).toEqual([
      ['c1', '102', { silent: true, callBack: true }],
    ]);
    // The card goes after its linger; the missed-call notification stays for the user.
    await t.clock.advance(10 * 60_000);
    expect(t.runtime.presenter.cards()).toEqual([]);
    expect(t.notifier.open.has('c1')).toBe(true);
    // The action (main: onCallBack(id)) is the History's Call back, by the History item's id.
    expect(await t.runtime.calls.callBack('history', 'c1')).toEqual({ ok: true, callId: 'out-1' });
    expect(pbx.dialled).toEqual(['102']);
  });

  it('is not offered where the phone system offers no dialling', async () => {
    const t = await setup(notOfferedCallControl());
    t.connection.pop('c1');
    t.connection.dismiss('c1', 'ended');
    expect(t.notifier.missed.map((m) => m.options)).toEqual([{ silent: true, callBack: false }]);
  });

  it('an answered call, or Do Not Disturb, leaves no missed-call notification', async () => {
    const t = await setup(dialler().control);
    t.connection.pop('c1');
    t.connection.dismiss('c1', 'answered');
    expect(t.notifier.missed).toEqual([]);
    const quiet = await setup(dialler().control, { doNotDisturb: true });
    quiet.connection.pop('c2');
    quiet.connection.dismiss('c2', 'ended');
    expect(quiet.notifier.missed).toEqual([]);
  });
});

describe('Call back on a voicemail notification', () => {
  it('offers Call back where dialling is offered; the action dials the caller by the History item', async () => {
    const pbx = dialler();
    const t = await setup(pbx.control);
    t.connection.notice(voicemail);
    expect(t.notifier.notices.map((n) => [n.alert.id, n.options])).toEqual([
      ['voicemail:v1', { silent: false, callBack: true }],
    ]);
    expect(await t.runtime.calls.callBack('history', 'voicemail:v1')).toMatchObject({ ok: true });
    expect(pbx.dialled).toEqual(['+4930123456']);
  });

  it('does not offer it where the phone system offers no dialling', async () => {
    const t = await setup(notOfferedCallControl());
    t.connection.notice(voicemail);
    expect(t.notifier.notices.map((n) => n.options)).toEqual([{ silent: false }]);
  });
});
