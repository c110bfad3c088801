/**
 * A link never dials by itself (issue 38): CallActions.openLink through the real parser, with a
 * CallControl built as a plain object (the port's far side).
 */
import { describe, expect, it } from 'vitest';
import { CallActions, type CallActionsDeps } from '../../src-main/core/calls/call-actions.ts';
import type { CallControl } from '../../src-main/core/ports/call-control.ts';
import { silentLogger } from '../../src-shared/process/log.ts';

function rig(over: Partial<CallActionsDeps> = {}) {
  const dialled: string[] = [];
  const asked: string[] = [];
  const control: CallControl = {
    offered: () => new Set(['dial']),
    dial: async (n) => (dialled.push(n), { ok: true, callId: 'c-9' }),
    transfer: async () => ({ ok: true }),
    hangup: async () => ({ ok: true }),
    answer: async () => ({ ok: true }),
    decline: async () => ({ ok: true }),
  };
  const calls = new CallActions({
    control: () => control,
    region: () => 'US',
    popupNumber: () => undefined,
    historyNumber: () => undefined,
    confirmDialLinks: () => true,
    confirm: async (shown) => (asked.push(shown), false),
    logger: silentLogger,
    ...over,
  });
  return { calls, dialled, asked };
}

describe('openLink', () => {
  it('asks first, showing the number; Cancel dials nothing', async () => {
    const t = rig();
    expect(await t.calls.openLink('tel:+19005550123')).toMatchObject({
      ok: false,
      refusal: 'cancelled',
    });
    expect(t.asked).toEqual(['(900) 555-0123']);
    expect(t.dialled).toEqual([]);
  });

  it('Call dials the number shown, in E.164 when written with +', async () => {
    const t = rig({ confirm: async () => true });
    expect(await t.calls.openLink('callto://+1 415 555 0123')).toEqual({ ok: true, callId: 'c-9' });
    expect(t.dialled).toEqual(['+14155550123']);
  });

  it('without a way to ask, a link is never dialled', async () => {
    const t = rig({ confirm: undefined });
    expect(await t.calls.openLink('tel:+14155550123')).toMatchObject({ refusal: 'cancelled' });
    expect(t.dialled).toEqual([]);
  });

  it('a confirmation that fails is a Cancel', async () => {
    const t = rig({
      confirm: async () => {
        throw new Error('no display');
      },
    });
    expect(await t.calls.openLink('tel:+14155550123')).toMatchObject({ refusal: 'cancelled' });
    expect(t.dialled).toEqual([]);
  });

  it('the policy can drop the confirmation (managed fleets)', async () => {
    const t = rig({ confirmDialLinks: () => false });
    expect(await t.calls.openLink('tel:+14155550123')).toMatchObject({ ok: true });
    expect(t.asked).toEqual([]);
    expect(t.dialled).toEqual(['+14155550123']);
  });

  it('a hostile link is refused before anyone is asked', async () => {
    const t = rig({ confirm: async () => true });
    for (const link of ['javascript:alert(1)', 'tel:+1415\u202e5550123', 'sip:user@host'])
      expect((await t.calls.openLink(link)).ok).toBe(false);
    expect(t.asked).toEqual([]);
    expect(t.dialled).toEqual([]);
  });

  it('a phone system that offers no dialling is said before anyone is asked', async () => {
    const t = rig();
    const none: CallControl = {
      offered: () => new Set(),
      dial: async () => {
        throw new Error('must not be called');
      },
      transfer: async () => ({ ok: true }),
      hangup: async () => ({ ok: true }),
      answer: async () => ({ ok: true }),
      decline: async () => ({ ok: true }),
    };
    const calls = new CallActions({
      control: () => none,
      region: () => 'US',
      popupNumber: () => undefined,
      historyNumber: () => undefined,
      confirmDialLinks: () => true,
      confirm: async (s) => (t.asked.push(s), true),
      logger: silentLogger,
    });
    expect(await calls.openLink('tel:+14155550123')).toMatchObject({ refusal: 'not-offered' });
    expect(t.asked).toEqual([]);
  });
});

describe('the dial box and Transfer: the one rule for what Screenpop dials', () => {
  it('a national number is dialled as the user’s phone would dial it, not turned into E.164', async () => {
    const t = rig();
    expect(await t.calls.dial('(415) 555-0123')).toEqual({ ok: true, callId: 'c-9' });
    expect(t.dialled).toEqual(['4155550123']);
  });

  it('without a region, a DID-shaped number is dialled as written (no region is needed)', async () => {
    const t = rig({ region: () => undefined });
    expect(await t.calls.dial('020 7946 0000')).toEqual({ ok: true, callId: 'c-9' });
    expect(t.dialled).toEqual(['02079460000']);
  });

  it('a link’s national number is confirmed as the region reads it and dialled as written', async () => {
    const t = rig({ confirm: async (shown) => (t.asked.push(shown), true) });
    expect(await t.calls.openLink('tel:415.555.0123')).toMatchObject({ ok: true });
    expect(t.asked).toEqual(['(415) 555-0123']);
    expect(t.dialled).toEqual(['4155550123']);
  });

  it('a transfer target follows the same rule', async () => {
    const sent: string[] = [];
    const control: CallControl = {
      offered: () => new Set(['transfer']),
      dial: async () => ({ ok: true }),
      transfer: async (_id, to) => (sent.push(to), { ok: true }),
      hangup: async () => ({ ok: true }),
      answer: async () => ({ ok: true }),
      decline: async () => ({ ok: true }),
    };
    const calls = new CallActions({
      control: () => control,
      region: () => 'US',
      popupNumber: () => undefined,
      historyNumber: () => undefined,
      confirmDialLinks: () => true,
      logger: silentLogger,
    });
    expect(await calls.transfer('1700000000.1', '(415) 555-0123')).toEqual({ ok: true });
    expect(await calls.transfer('1700000000.1', '+44 20 7946 0000')).toEqual({ ok: true });
    expect(sent).toEqual(['4155550123', '+442079460000']);
    expect(await calls.transfer('1700000000.1', '415\u200e5550123')).toMatchObject({
      refusal: 'hidden-characters',
    });
  });
});
