/**
 * Remote answer (uaCSTA, issue 38 item 4) end to end: the direct connection subscribes to (30020)
 * uaCSTA Call when "Answer from Screenpop" is on, the simulator (a Yeastar P-Series PBX with a
 * uaCSTA desk phone, its reports shaped from the guide's example) rings, and the DirectCallControl
 * offers Answer and Decline on a ringing call only where its uaCSTA call is certain, asks again
 * at the press, and sends uacsta_call/accept or refuse with the reported id and address.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DirectCallControl } from '../../src-main/core/calls/direct-call-control.ts';
import { serviceConnectionFactory } from '../../src-main/core/connection/connection.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src-main/core/settings/types.ts';
import type { PopEvent } from '../../src-main/core/ports/ports.ts';
import { startSimulator } from '../../src-sim/index.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { english } from '../../src-shared/i18n/phrase.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const PHONE_IP = '192.168.28.2:5060';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig(opts: { on?: boolean; uacstaPhone?: boolean; address?: string } = {}) {
  const sim = await startSimulator({ phoneSystem: 'yeastar-p-series', extensions: 4 });
  cleanups.push(() => sim.close());
  const me = sim.extensions[0]!.number;
  if (opts.uacstaPhone ?? true) sim.setUacstaPhone(me, PHONE_IP);
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    phoneSystem: 'yeastar-p-series',
    baseUrl: sim.baseUrl,
    extensions: [me],
    defaultRegion: 'US',
    answerFromDeskPhone: opts.on ?? true,
    deskPhoneAddress: opts.address ?? '192.168.28.2',
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
    credentials: async () => ({ key: sim.apiKey.key, secret: sim.apiKey.secret }),
  });
  cleanups.push(() => connection.stop());
  const pops: PopEvent[] = [];
  connection.engine.onPop((p) => pops.push(p));
  connection.engine.start();
  await vi.waitFor(() => expect(connection.engine.status().state).toBe('connected'), {
    timeout: 5_000,
  });
  const control = new DirectCallControl({
    connection: () => connection,
    settings: () => settings,
    logger,
  });
  const memberStatus = async (callId: string) =>
    (await connection.calls!.query({ callId }))[0]?.members.find((m) => m.number === me)?.status;
  return { sim, me, control, pops, memberStatus, settings };
}

describe('remote answer (uaCSTA) against the simulator', () => {
  it('one call ringing on the desk phone: Answer offered, and pressing it answers on the phone', async () => {
    const t = await rig();
    expect([...t.control.offered()].sort()).toEqual([
      'answer',
      'decline',
      'dial',
      'hangup',
      'transfer',
    ]);
    const callId = t.sim.ring({ from: '+14155550123', to: t.me });
    await vi.waitFor(() => expect(t.control.remoteAnswer(callId)).toEqual({ offered: true }));
    expect(await t.control.answer(callId)).toEqual({ ok: true, callId });
    await vi.waitFor(async () => expect(await t.memberStatus(callId)).toBe('ANSWER'));
    // Answered (the uaCSTA call is closed): no second answer.
    await vi.waitFor(() => expect(t.control.remoteAnswer(callId).offered).toBe(false));
  });

  it('Decline refuses the ringing call on the phone', async () => {
    const t = await rig();
    const callId = t.sim.ring({ from: '+14155550123', to: t.me });
    await vi.waitFor(() => expect(t.control.remoteAnswer(callId)).toEqual({ offered: true }));
    expect(await t.control.decline(callId)).toEqual({ ok: true, callId });
    await vi.waitFor(async () => expect(await t.memberStatus(callId)).not.toBe('RING'));
  });

  it('two calls ringing on the extension: no buttons on either, said why; a press sends nothing', async () => {
    const t = await rig();
    const a = t.sim.ring({ from: '+14155550123', to: t.me });
    const b = t.sim.ring({ from: '+14155550124', to: t.me });
    await vi.waitFor(() => expect(t.pops.map((p) => p.callId).sort()).toEqual([a, b].sort()));
    for (const id of [a, b]) {
      const offer = t.control.remoteAnswer(id);
      expect(offer.offered).toBe(false);
      expect(english(offer.words!)).toMatch(/more than one call rang on your extension/);
    }
    expect(await t.control.answer(a)).toMatchObject({ ok: false, refusal: 'refused' });
    expect(await t.memberStatus(a)).toBe('RING');
    expect(await t.memberStatus(b)).toBe('RING');
  });

  it('the press asks again: a second call that rang after the buttons were shown refuses it', async () => {
    const t = await rig();
    const a = t.sim.ring({ from: '+14155550123', to: t.me });
    await vi.waitFor(() => expect(t.control.remoteAnswer(a)).toEqual({ offered: true }));
    const b = t.sim.ring({ from: '+14155550124', to: t.me });
    await vi.waitFor(() => expect(t.pops.map((p) => p.callId)).toContain(b));
    const r = await t.control.decline(a);
    expect(r).toMatchObject({ ok: false, refusal: 'refused' });
    expect((r as { message: string }).message).toMatch(/more than one call rang/);
    expect(await t.memberStatus(a)).toBe('RING');
  });

  it('no uaCSTA report (a phone without uaCSTA): not offered, said why', async () => {
    const t = await rig({ uacstaPhone: false });
    const callId = t.sim.ring({ from: '+14155550123', to: t.me });
    await vi.waitFor(() => expect(t.pops.map((p) => p.callId)).toEqual([callId]));
    const offer = t.control.remoteAnswer(callId);
    expect(offer.offered).toBe(false);
    expect(english(offer.words!)).toMatch(/has not reported it ringing/);
    expect(await t.control.answer(callId)).toMatchObject({ ok: false, refusal: 'refused' });
  });

  it('another phone address than the reported one: not offered', async () => {
    const t = await rig({ address: '192.168.28.9' });
    const callId = t.sim.ring({ from: '+14155550123', to: t.me });
    await vi.waitFor(() =>
      expect(english(t.control.remoteAnswer(callId).words ?? [])).toMatch(/another address/),
    );
  });

  it('off by default: never offered, and a press is "not offered"', async () => {
    const t = await rig({ on: false });
    expect(t.control.offered().has('answer')).toBe(false);
    const callId = t.sim.ring({ from: '+14155550123', to: t.me });
    await vi.waitFor(() => expect(t.pops.map((p) => p.callId)).toEqual([callId]));
    expect(t.control.remoteAnswer(callId)).toEqual({ offered: false });
    expect(await t.control.answer(callId)).toMatchObject({ ok: false, refusal: 'not-offered' });
    expect(DEFAULT_SETTINGS.answerFromDeskPhone).toBe(false);
  });
});
