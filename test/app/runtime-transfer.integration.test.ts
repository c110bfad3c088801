/**
 * Transfer from the popup (issue 38 item 4) as the app wires it: AppRuntime with the real
 * connection, directory and direct CallControl, against the simulator playing a Yeastar P-Series
 * PBX over real sockets (its extension list and call API built from the guide's pages,
 * docs/phone-systems/yeastar-p-series.md section 10). The colleague picker finds the PBX's own
 * extensions by name and by extension (never the user's own); an attended transfer to the colleague
 * picked is completed, another cancelled, each on the user's own call.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serviceConnectionFactory } from '../../src-main/core/connection/connection.ts';
import { AppRuntime } from '../../src-main/core/app/runtime.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { startSimulator } from '../../src-sim/index.ts';
import { fakeViews, memoryHistory, MemorySettings } from '../../rigs/app-harness.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function yeastarApp() {
  const sim = await startSimulator({ phoneSystem: 'yeastar-p-series', extensions: 6 });
  cleanups.push(() => sim.close());
  const credentials = new MemoryCredentialStore();
  await credentials.setSecret(keychainAccount(sim.apiKey.key, sim.baseUrl), sim.apiKey.secret);
  const me = sim.extensions[0]!.number;
  const secrets = new SecretRegistry();
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
    }),
    credentials,
    history: memoryHistory(systemClock),
    views: fakeViews(),
    connect: serviceConnectionFactory({
      clock: systemClock,
      logger: silentLogger,
      secrets,
      transport: () => directTransport({ secrets }),
    }),
    startDemo: () => Promise.reject(new Error('not used')),
    createProbe: () => {
      throw new Error('not used');
    },
  });
  cleanups.push(() => runtime.shutdown());
  await runtime.start();
  await vi.waitFor(() => expect(runtime.status().state).toBe('connected'), { timeout: 10_000 });
  await vi.waitFor(() => expect(runtime.directory.extensionCount).toBe(6), { timeout: 10_000 });
  return { sim, runtime, me };
}

describe('Transfer from the popup, against a Yeastar P-Series simulator', () => {
  it('finds colleagues by name and extension, then consults one and completes the transfer', async () => {
    const { sim, runtime, me } = await yeastarApp();
    expect(runtime.calls.offered()).toContain('transfer');
    const colleague = sim.extensions[2]!;
    const firstName = colleague.caller_id_name.split(' ')[0]!;
    expect(runtime.calls.colleagues(firstName.toLowerCase())).toContainEqual({
      extension: colleague.number,
      name: colleague.caller_id_name,
    });
    expect(runtime.calls.colleagues(colleague.number)[0]).toEqual({
      extension: colleague.number,
      name: colleague.caller_id_name,
    });
    // The user's own extension is never offered.
    expect(runtime.calls.colleagues(me).map((c) => c.extension)).not.toContain(me);

    const callId = sim.ring({ from: '+14155550123', to: me });
    sim.setCallState(callId, 'answered', { to: me });
    expect(await runtime.calls.transfer(callId, colleague.number, 'attended')).toEqual({
      ok: true,
      callId,
    });
    sim.setCallState(callId, 'answered', { to: colleague.number });
    expect(await runtime.calls.completeTransfer(callId)).toEqual({ ok: true, callId });
    // The user left the call: a second Complete finds no call of the user's.
    expect(await runtime.calls.completeTransfer(callId)).toMatchObject({
      ok: false,
      refusal: 'no-such-call',
    });
  });

  it('cancels a consultation: the user is back with the caller and can hang up', async () => {
    const { sim, runtime, me } = await yeastarApp();
    const colleague = sim.extensions[1]!.number;
    const callId = sim.ring({ from: '+14155550123', to: me });
    sim.setCallState(callId, 'answered', { to: me });
    expect(await runtime.calls.transfer(callId, colleague, 'attended')).toEqual({
      ok: true,
      callId,
    });
    expect(await runtime.calls.cancelTransfer(callId)).toEqual({ ok: true, callId });
    expect(await runtime.calls.hangup(callId)).toEqual({ ok: true, callId });
  });

  it('main keeps the consultation for a reloaded popup, until the call ends on the phone', async () => {
    const { sim, runtime, me } = await yeastarApp();
    const colleague = sim.extensions[2]!;
    const callId = sim.ring({ from: '+14155550123', to: me });
    await vi.waitFor(() => expect(runtime.presenter.cards()).toHaveLength(1));
    sim.setCallState(callId, 'answered', { to: me });
    await vi.waitFor(() => expect(runtime.presenter.inCall(callId)).toBe(true));
    const pushed: string[][] = [];
    runtime.consultations.onChange((list) => pushed.push(list.map((c) => c.callId)));
    await runtime.calls.transfer(callId, colleague.number, 'attended');
    // What a popup loading now is given: whom, by the PBX's own name for the extension.
    expect(runtime.calls.consultations()).toMatchObject([
      { callId, target: colleague.number, targetName: colleague.caller_id_name },
    ]);
    // The user finishes on the desk phone: their leg ends (the PBX's report), nothing to complete.
    sim.setCallState(callId, 'ended', { to: me });
    await vi.waitFor(() => expect(runtime.calls.consultations()).toEqual([]));
    expect(pushed).toEqual([[callId], []]);
  });
});
