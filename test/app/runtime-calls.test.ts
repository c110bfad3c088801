/**
 * The runtime's call actions (issue 38): nothing offered without a phone system's CallControl,
 * and a call link confirmed unless the organisation's policy locked the confirmation off (a
 * user's own settings file cannot drop it).
 */
import { describe, expect, it } from 'vitest';
import { AppRuntime, type AppRuntimeDeps } from '../../src-main/core/app/runtime.ts';
import { HistoryStore } from '../../src-main/core/history/history-store.ts';
import type { CallControl } from '../../src-main/core/ports/call-control.ts';
import { validatePolicy } from '../../src-main/core/settings/policy.ts';
import { MemoryCredentialStore } from '../../src-main/core/credentials/credential-store.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import {
  FakeClipboard,
  FakeConnection,
  FakeNotifier,
  FakeOpener,
  FakePopup,
  FakeTray,
  MemorySettings,
} from '../../rigs/app-harness.ts';

function runtime(
  initial: ConstructorParameters<typeof MemorySettings>[0],
  extra: Partial<AppRuntimeDeps>,
) {
  const clock = new FakeClock();
  return new AppRuntime({
    clock,
    logger: silentLogger,
    secrets: new SecretRegistry(),
    settings: new MemorySettings(initial),
    credentials: new MemoryCredentialStore(),
    history: new HistoryStore({
      path: 'mem',
      clock,
      logger: silentLogger,
      limit: 10,
      write: async () => {},
      read: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOENT' })),
    }),
    views: {
      notifier: new FakeNotifier(),
      popup: new FakePopup(),
      urlOpener: new FakeOpener(),
      clipboard: new FakeClipboard(),
      tray: new FakeTray(),
    },
    connect: (config) => new FakeConnection(config),
    startDemo: async () => {
      throw new Error('no demo here');
    },
    createProbe: () => ({ getToken: async () => 't', listExtensions: async () => [] }),
    ...extra,
  });
}

function dialler() {
  const dialled: string[] = [];
  const control: CallControl = {
    offered: () => new Set(['dial']),
    dial: async (n) => (dialled.push(n), { ok: true }),
    transfer: async () => ({ ok: true }),
    hangup: async () => ({ ok: true }),
    answer: async () => ({ ok: true }),
    decline: async () => ({ ok: true }),
  };
  return { control, dialled };
}

const CONFIGURED = { baseUrl: 'https://acme.example.com', apiKey: 'key1', extensions: ['101'] };

describe('AppRuntime call actions', () => {
  it('offers nothing and says "not offered" without a phone system’s CallControl', async () => {
    const rt = runtime(CONFIGURED, {});
    await rt.start();
    expect([...rt.callControl().offered()]).toEqual([]);
    expect(rt.calls.offered()).toEqual([]);
    expect(await rt.calls.dial('+14155550123')).toMatchObject({ refusal: 'not-offered' });
  });

  it('asks before a link dials, even when the user’s own settings file says not to', async () => {
    const pbx = dialler();
    const asked: string[] = [];
    const rt = runtime(
      { ...CONFIGURED, confirmDialLinks: false },
      {
        callControl: () => pbx.control,
        confirmDial: async (shown) => (asked.push(shown), false),
      },
    );
    await rt.start();
    expect(await rt.calls.openLink('tel:+14155550123')).toMatchObject({ refusal: 'cancelled' });
    expect(asked).toEqual(['(415) 555-0123']);
    expect(pbx.dialled).toEqual([]);
  });

  it('dials a link without asking only where the policy locked the confirmation off', async () => {
    const pbx = dialler();
    const asked: string[] = [];
    // The administrator's policy.json, read by the real validator.
    const { policy } = validatePolicy(
      { managedBy: 'Acme IT', settings: { confirmDialLinks: false }, locked: ['confirmDialLinks'] },
      '/etc/screenpop/policy.json',
    );
    expect(policy.locked).toEqual({ confirmDialLinks: false });
    const rt = runtime(
      { ...CONFIGURED, ...policy.locked },
      {
        callControl: () => pbx.control,
        confirmDial: async (shown) => (asked.push(shown), false),
        managed: { by: policy.managedBy, locked: ['confirmDialLinks'] },
      },
    );
    await rt.start();
    expect(await rt.calls.openLink('tel:+14155550123')).toEqual({ ok: true });
    expect(asked).toEqual([]);
    expect(pbx.dialled).toEqual(['+14155550123']);
  });
});
