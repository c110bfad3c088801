/**
 * The direct mode's CallControl (src-main/core/calls/) through its public surface, against the
 * simulator playing a Yeastar P-Series PBX over real sockets (its call API built from the guide's
 * pages, docs/phone-systems/yeastar-p-series.md section 10) and the standard service (no call API):
 * a dial from the user's extension whose caller-first ring never pops, hang-up and blind transfer
 * by the channel *Query Calls* names, and every refusal path with its words.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DirectCallControl } from '../../src-main/core/calls/direct-call-control.ts';
import {
  serviceConnectionFactory,
  type Connection,
} from '../../src-main/core/connection/connection.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src-main/core/settings/types.ts';
import type { PopEvent } from '../../src-main/core/ports/ports.ts';
import type { OwnCall } from '../../src-main/core/events/own-dials.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig(
  opts: { phoneSystem?: Settings['phoneSystem']; scopes?: string[]; connected?: boolean } = {},
) {
  const phoneSystem = opts.phoneSystem ?? 'yeastar-p-series';
  const sim: Simulator = await startSimulator({ phoneSystem, extensions: 4 });
  cleanups.push(() => sim.close());
  const key = opts.scopes ? sim.createApiKey({ scopes: opts.scopes }) : sim.apiKey;
  const me = sim.extensions[0]!.number;
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    phoneSystem,
    baseUrl: sim.baseUrl,
    extensions: [me],
    defaultRegion: 'US',
  };
  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const connection = serviceConnectionFactory({
    clock: systemClock,
    logger,
    secrets,
    transport: () => directTransport({ logger, secrets }),
  })({
    baseUrl: sim.baseUrl,
    settings,
    credentials: async () => ({ key: key.key, secret: key.secret }),
  });
  cleanups.push(() => connection.stop());
  const pops: PopEvent[] = [];
  const own: OwnCall[] = [];
  connection.engine.onPop((p) => pops.push(p));
  connection.engine.onOwnCall?.((c) => own.push(c));
  connection.engine.start();
  await vi.waitFor(() => expect(connection.engine.status().state).toBe('connected'), {
    timeout: 5_000,
  });
  const current: { connection: Connection | null } = {
    connection: opts.connected === false ? null : connection,
  };
  const control = new DirectCallControl({
    connection: () => current.connection,
    settings: () => settings,
    logger,
  });
  return { sim, me, control, pops, own, logger, secrets, current };
}

describe('DirectCallControl on a Yeastar P-Series PBX (the simulator)', () => {
  it('dials from the user extension: the call id, and its caller-first ring is the own call, never a pop', async () => {
    const t = await rig();
    expect([...t.control.offered()].sort()).toEqual(['dial', 'hangup', 'transfer']);
    const result = await t.control.dial('(415) 555-0199');
    expect(result).toMatchObject({ ok: true });
    const callId = (result as { callId: string }).callId;
    await vi.waitFor(() =>
      expect(t.own).toEqual([
        { callId, number: '4155550199', extension: t.me, startedAt: expect.any(Number) },
      ]),
    );
    // The agent answers, then hangs up from Screenpop: *Query Calls* names the channel.
    t.sim.setCallState(callId, 'answered', { to: t.me });
    expect(await t.control.hangup(callId)).toEqual({ ok: true, callId });
    await new Promise((r) => setTimeout(r, 100));
    expect(t.pops).toEqual([]);
    expect(await t.control.hangup(callId)).toMatchObject({ ok: false, refusal: 'no-such-call' });
  });

  it('transfers an answered call blind to a colleague (the caller moved, the agent out)', async () => {
    const t = await rig();
    const colleague = t.sim.extensions[1]!.number;
    const callId = t.sim.ring({ from: '+14155550123', to: t.me });
    await vi.waitFor(() => expect(t.pops.map((p) => p.callId)).toEqual([callId]));
    t.sim.setCallState(callId, 'answered', { to: t.me });
    expect(await t.control.transfer(callId, colleague, 'blind')).toEqual({ ok: true, callId });
    // The agent's leg is gone: hanging up is now "no such call" for the agent.
    expect(await t.control.hangup(callId)).toMatchObject({ ok: false, refusal: 'no-such-call' });
  });

  it('completes an attended transfer: the caller stays with the colleague, the agent leaves', async () => {
    const t = await rig();
    const colleague = t.sim.extensions[1]!.number;
    const callId = t.sim.ring({ from: '+14155550123', to: t.me });
    await vi.waitFor(() => expect(t.pops.map((p) => p.callId)).toEqual([callId]));
    t.sim.setCallState(callId, 'answered', { to: t.me });
    expect(await t.control.transfer(callId, colleague, 'attended')).toEqual({ ok: true, callId });
    t.sim.setCallState(callId, 'answered', { to: colleague });
    expect(await t.control.completeTransfer!(callId)).toEqual({ ok: true, callId });
    // The agent is out of the call; completing again finds no call of the agent's.
    expect(await t.control.hangup(callId)).toMatchObject({ ok: false, refusal: 'no-such-call' });
    expect(await t.control.completeTransfer!(callId)).toMatchObject({
      ok: false,
      refusal: 'no-such-call',
    });
  });

  it('cancels an attended transfer: the colleague is dropped and the agent is back with the caller', async () => {
    const t = await rig();
    const colleague = t.sim.extensions[1]!.number;
    const callId = t.sim.ring({ from: '+14155550123', to: t.me });
    await vi.waitFor(() => expect(t.pops.map((p) => p.callId)).toEqual([callId]));
    t.sim.setCallState(callId, 'answered', { to: t.me });
    expect(await t.control.transfer(callId, colleague, 'attended')).toEqual({ ok: true, callId });
    expect(await t.control.cancelTransfer!(callId)).toEqual({ ok: true, callId });
    // No transfer under way any more: a second cancel is the PBX's refusal (40002 in the simulator).
    expect(await t.control.cancelTransfer!(callId)).toMatchObject({
      ok: false,
      refusal: 'refused',
    });
    // The agent still has the call: hanging up works and ends the agent's part of it.
    expect(await t.control.hangup(callId)).toEqual({ ok: true, callId });
  });

  it('refuses a number that is not dialable, with the number in the words, and sends nothing', async () => {
    const t = await rig();
    for (const bad of [
      'javascript:alert(1)',
      '١٢٣٤٥٦٧٨٩٠',
      '+1 415 555 0199;ext=12',
      '*97',
      '1'.repeat(60),
      '',
    ]) {
      const r = await t.control.dial(bad);
      expect(r, bad).toMatchObject({ ok: false, refusal: 'invalid-number' });
      expect((r as { words: unknown }).words).toMatchObject([
        { id: 'status.call.refused.invalid-number' },
      ]);
    }
    expect(t.own).toEqual([]);
  });

  it('an API application without the permission: "permission" (10005), the words naming it', async () => {
    const t = await rig({ scopes: ['extension:read', 'event:*'] });
    const r = await t.control.dial('2008');
    expect(r).toMatchObject({ ok: false, refusal: 'permission' });
    expect((r as { message: string }).message).toMatch(/lacks the permission to control calls/);
    // The ring held for the dial was never there; nothing pops, nothing is held.
    expect(t.pops).toEqual([]);
    for (const record of t.logger.records)
      expect(JSON.stringify(record)).not.toMatch(/access_token=[A-Za-z0-9]/);
  });

  it('no connection: "unreachable", said as not connected', async () => {
    const t = await rig({ connected: false });
    const r = await t.control.dial('2008');
    expect(r).toMatchObject({ ok: false, refusal: 'unreachable' });
    expect((r as { message: string }).message).toMatch(/not connected/);
  });

  it('answer and decline (uaCSTA) are not offered', async () => {
    const t = await rig();
    expect(await t.control.answer('x')).toMatchObject({ ok: false, refusal: 'not-offered' });
    expect(await t.control.decline('x')).toMatchObject({ ok: false, refusal: 'not-offered' });
  });
});

describe('DirectCallControl on the standard service', () => {
  it('offers nothing and says "not offered by this phone system" for every action', async () => {
    const t = await rig({ phoneSystem: 'standard' });
    expect(t.control.offered().size).toBe(0);
    for (const r of [
      await t.control.dial('2008'),
      await t.control.transfer('c1', '2008', 'blind'),
      await t.control.hangup('c1'),
    ]) {
      expect(r).toMatchObject({ ok: false, refusal: 'not-offered' });
      expect((r as { message: string }).message).toBe(
        'Calling from Screenpop is not offered by this phone system.',
      );
    }
  });
});
