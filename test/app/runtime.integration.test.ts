/**
 * The app's core against the simulator over real sockets: engine + directory + presenter + history,
 * wired by AppRuntime exactly as the Electron app wires them (only the views are fakes).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serviceConnectionFactory } from '../../src-main/core/connection/connection.ts';
import { startDemo } from '../../src-sim/demo.ts';
import { AppRuntime } from '../../src-main/core/app/runtime.ts';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { describeErrcode } from '../../src-shared/api/service-errors.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { fakeViews, memoryHistory, MemorySettings } from '../../rigs/app-harness.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function makeRuntime(settings: MemorySettings, credentials = new MemoryCredentialStore()) {
  const secrets = new SecretRegistry();
  const views = fakeViews();
  const history = memoryHistory(systemClock);
  const runtime = new AppRuntime({
    clock: systemClock,
    logger: silentLogger,
    secrets,
    settings,
    credentials,
    history,
    views,
    connect: serviceConnectionFactory({
      clock: systemClock,
      logger: silentLogger,
      secrets,
      transport: () => directTransport({ secrets }),
    }),
    startDemo: () => startDemo({ clock: systemClock, logger: silentLogger, ringEverySec: 1 }),
    createProbe: (input) => {
      const client = new ServiceClient({
        baseUrl: input.baseUrl,
        clock: systemClock,
        secrets,
        fetch: directTransport({ secrets }).fetch,
      });
      return {
        getToken: async () => (await client.getToken(input.apiKey, input.secret)).accessToken,
        listExtensions: (t) => client.listExtensions(t),
      };
    },
  });
  cleanups.push(() => runtime.shutdown());
  return { runtime, views, history };
}

async function simulator(): Promise<Simulator> {
  const sim = await startSimulator({ extensions: 6 });
  cleanups.push(() => sim.close());
  return sim;
}

describe('AppRuntime with the simulator', () => {
  it('rings -> card with the directory name; answered elsewhere or here -> lingers then closes; history records answered elsewhere, answered and missed', async () => {
    const sim = await simulator();
    const credentials = new MemoryCredentialStore();
    await credentials.setSecret(keychainAccount(sim.apiKey.key, sim.baseUrl), sim.apiKey.secret);
    const settings = new MemorySettings({
      baseUrl: sim.baseUrl,
      apiKey: sim.apiKey.key,
      extensions: ['101'],
      popupLingerSec: 1,
    });
    const { runtime, views, history } = makeRuntime(settings, credentials);

    expect(await runtime.start()).toEqual({ needsOnboarding: false });
    await vi.waitFor(() => expect(runtime.status().state).toBe('connected'), { timeout: 10_000 });
    await vi.waitFor(() => expect(runtime.directory.extensionCount).toBe(6), { timeout: 10_000 });
    const caller = sim.extensions[2];
    if (!caller) throw new Error('simulator has no extension 103');

    const answered = sim.ring({ from: caller.number, to: ['101', '104'] });
    await vi.waitFor(
      () =>
        expect(views.popup.cards).toMatchObject([
          { callId: answered, callerName: caller.caller_id_name, state: 'ringing' },
        ]),
      { timeout: 5000 },
    );
    expect(views.notifier.shown.map((n) => n.card.callId)).toEqual([answered]);
    expect(views.tray.last?.status.state).toBe('connected');

    sim.setCallState(answered, 'answered', { to: '104' });
    await vi.waitFor(() => expect(views.popup.cards[0]?.state).toBe('answered'), { timeout: 5000 });
    expect(views.popup.cards[0]?.outcome).toBe('answered-elsewhere');
    expect(views.popup.visible).toBe(true);
    await vi.waitFor(() => expect(views.popup.visible).toBe(false), { timeout: 5000 });
    expect(history.get(answered)?.outcome).toBe('answered-elsewhere');

    // Answered on the user's own extension: the user took it.
    const mine = sim.ring({ from: caller.number, to: '101' });
    await vi.waitFor(() => expect(views.popup.cards.map((c) => c.callId)).toEqual([mine]), {
      timeout: 5000,
    });
    sim.setCallState(mine, 'answered');
    await vi.waitFor(() => expect(history.get(mine)?.outcome).toBe('answered'), { timeout: 5000 });
    expect(views.popup.cards[0]?.outcome).toBe('answered');
    await vi.waitFor(() => expect(views.popup.visible).toBe(false), { timeout: 5000 });

    const missed = sim.ring({ from: '+14155550123', to: '101' });
    await vi.waitFor(() => expect(views.popup.cards.map((c) => c.callId)).toEqual([missed]), {
      timeout: 5000,
    });
    expect(views.popup.cards[0]).toMatchObject({ callerName: null, fromDisplay: '(415) 555-0123' });
    sim.setCallState(missed, 'ended');
    await vi.waitFor(() => expect(history.get(missed)?.outcome).toBe('missed'), { timeout: 5000 });
    expect(runtime.status().missedCount).toBe(1);
    await vi.waitFor(() => expect(views.tray.last?.missedCount).toBe(1));

    // A ring for someone else never pops: a ring for us sent after it (same socket, in order)
    // arrives, and the other one is not in the history.
    const other = sim.ring({ from: '+14155550123', to: '105' });
    const marker = sim.ring({ from: '+14155550123', to: '101' });
    await vi.waitFor(() => expect(history.get(marker)).toBeDefined(), { timeout: 5000 });
    expect(history.get(other)).toBeUndefined();
    expect(history.list()).toHaveLength(4);
  });

  it('without settings needs onboarding; the demo then connects and rings the demo extension', async () => {
    const settings = new MemorySettings();
    const { runtime, views } = makeRuntime(settings);
    expect(await runtime.start()).toEqual({ needsOnboarding: true });
    expect(runtime.status()).toMatchObject({ state: 'needs-attention' });

    const view = await runtime.startDemo();
    expect(view).toMatchObject({ needsOnboarding: false, settings: { demoMode: true } });
    await vi.waitFor(
      () => expect(runtime.status()).toMatchObject({ state: 'connected', demo: true }),
      { timeout: 10_000 },
    );
    await vi.waitFor(() => expect(views.notifier.shown.length).toBeGreaterThan(0), {
      timeout: 10_000,
    });
    expect(settings.current.demoMode).toBe(true);
    expect(settings.current.apiKey).toBe(''); // the demo key never reaches the settings file
  });

  it('tests a draft connection in plain words', async () => {
    const sim = await simulator();
    const { runtime } = makeRuntime(new MemorySettings());
    await runtime.start();
    const ok = await runtime.testConnection({
      settings: { baseUrl: sim.baseUrl, apiKey: sim.apiKey.key, extensions: ['102'] },
      secret: sim.apiKey.secret,
    });
    expect(ok).toMatchObject({
      ok: true,
      extensionName: sim.extensions[1]?.caller_id_name,
      extensionCount: 6,
    });

    const bad = await runtime.testConnection({
      settings: { baseUrl: sim.baseUrl, apiKey: sim.apiKey.key },
      secret: 'wrong-secret',
    });
    expect(bad).toMatchObject({
      ok: false,
      errcode: 10001,
      message: 'The service rejected the API key or secret.',
    });

    const key = sim.createApiKey({ allowlist: ['203.0.113.7'] });
    const ip = await runtime.testConnection({
      settings: { baseUrl: sim.baseUrl, apiKey: key.key },
      secret: key.secret,
    });
    expect(ip).toMatchObject({ ok: false, errcode: 10004, ipToAllow: '127.0.0.1' });
    expect(ip.message).toContain('the address it sees'); // the simulator is on this computer
    expect(ip.message.startsWith(describeErrcode(10004).reason)).toBe(true);
    expect(JSON.stringify([ok, bad, ip])).not.toContain(sim.apiKey.secret);
  });

  it('says the same words for a fault in the tray as in Test connection', async () => {
    const sim = await simulator();
    const credentials = new MemoryCredentialStore();
    await credentials.setSecret(keychainAccount(sim.apiKey.key, sim.baseUrl), 'wrong-secret');
    const settings = new MemorySettings({
      baseUrl: sim.baseUrl,
      apiKey: sim.apiKey.key,
      extensions: ['101'],
    });
    const { runtime, views } = makeRuntime(settings, credentials);
    await runtime.start();
    await vi.waitFor(() => expect(views.tray.last?.status.state).toBe('needs-attention'), {
      timeout: 10_000,
    });
    const tray = views.tray.last!.status;
    const tested = await runtime.testConnection({ settings: {}, secret: 'wrong-secret' });
    const { reason, remedy } = describeErrcode(10001);
    expect(tray).toMatchObject({ reason, remedy });
    expect(tested).toEqual({ ok: false, errcode: 10001, message: reason, remedy });
  });
});
