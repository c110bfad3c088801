/**
 * The matching rule of remote answer (src-main/core/calls/uacsta-match.ts): a popped ringing call
 * gets its uaCSTA call id only where the match is certain under every reading of the guide.
 */
import { describe, expect, it } from 'vitest';
import { UacstaCalls, UACSTA_GUARD_MS } from '../../src-main/core/calls/uacsta-match.ts';
import {
  decodeUacstaReport,
  type UacstaReport,
} from '../../src-shared/phone-systems/yeastar-uacsta.ts';
import { parseDeskPhoneAddress } from '../../src-shared/rules/desk-phone-address.ts';

const PHONE = parseDeskPhoneAddress('192.168.28.2')!;

function report(
  operation: string,
  callId: string,
  ip = '192.168.28.2:5060',
  extension = '2000',
): UacstaReport {
  const r = decodeUacstaReport(
    JSON.stringify({
      type: 30020,
      sn: 'x',
      msg: JSON.stringify({ operation, extension, call_id: callId, ip_address: ip }),
    }),
  );
  if (!r.ok) throw new Error(r.reason);
  return r.report;
}

function setup() {
  let t = 1_000_000;
  const calls = new UacstaCalls(() => t);
  return { calls, advance: (ms: number) => (t += ms) };
}

describe('remote answer: which uaCSTA call is the ringing call', () => {
  it('one call ringing and one uaCSTA start on the user phone: matched', () => {
    const { calls, advance } = setup();
    calls.noteRing('2000', '1648627871.65', true);
    advance(200);
    calls.noteReport(report('call_start', '32789'));
    expect(calls.match('1648627871.65', ['2000'], PHONE)).toEqual({
      ok: true,
      extension: '2000',
      uacstaCallId: '32789',
      ipAddress: '192.168.28.2:5060',
    });
  });

  it('the uaCSTA start may come just before the ring', () => {
    const { calls, advance } = setup();
    calls.noteReport(report('call_start', '32789'));
    advance(500);
    calls.noteRing('2000', 'c1', true);
    expect(calls.match('c1', ['2000'], PHONE)).toMatchObject({ ok: true, uacstaCallId: '32789' });
  });

  it('two calls ringing on the extension: not matched, for either', () => {
    const { calls, advance } = setup();
    calls.noteRing('2000', 'c1', true);
    calls.noteReport(report('call_start', '32789'));
    advance(1000);
    calls.noteRing('2000', 'c2', true);
    calls.noteReport(report('call_start', '32790'));
    expect(calls.match('c1', ['2000'], PHONE)).toEqual({ ok: false, reason: 'two-calls' });
    expect(calls.match('c2', ['2000'], PHONE)).toEqual({ ok: false, reason: 'two-calls' });
    // Still not once the other stops, within the guard: its uaCSTA call could be either.
    calls.noteRing('2000', 'c1', false);
    expect(calls.match('c2', ['2000'], PHONE)).toEqual({ ok: false, reason: 'two-calls' });
  });

  it('no 30020 at all: not matched', () => {
    const { calls } = setup();
    calls.noteRing('2000', 'c1', true);
    expect(calls.match('c1', ['2000'], PHONE)).toEqual({ ok: false, reason: 'no-report' });
  });

  it('a start from another phone only: not matched, said as such', () => {
    const { calls } = setup();
    calls.noteRing('2000', 'c1', true);
    calls.noteReport(report('call_start', '1', '192.168.28.9:5060'));
    expect(calls.match('c1', ['2000'], PHONE)).toEqual({ ok: false, reason: 'other-phone' });
  });

  it('two starts on the user phone for one ring, or a start long before the ring: not matched', () => {
    const { calls, advance } = setup();
    calls.noteRing('2000', 'c1', true);
    calls.noteReport(report('call_start', '1'));
    calls.noteReport(report('call_start', '2'));
    expect(calls.match('c1', ['2000'], PHONE)).toEqual({ ok: false, reason: 'two-reports' });

    const b = setup();
    b.calls.noteReport(report('call_start', '7'));
    b.advance(5_000);
    b.calls.noteRing('2000', 'c9', true);
    expect(b.calls.match('c9', ['2000'], PHONE)).toEqual({ ok: false, reason: 'two-reports' });
    void advance;
  });

  it('a uaCSTA call answered or ended is not offered again; a call no longer ringing is not', () => {
    const { calls } = setup();
    calls.noteRing('2000', 'c1', true);
    calls.noteReport(report('call_start', '32789'));
    calls.noteReport(report('call_over', '32789'));
    expect(calls.match('c1', ['2000'], PHONE)).toEqual({ ok: false, reason: 'no-report' });
    calls.noteRing('2000', 'c1', false);
    expect(calls.match('c1', ['2000'], PHONE)).toEqual({ ok: false, reason: 'not-ringing' });
  });

  it('matched again after a quiet guard: an earlier call long over does not count', () => {
    const { calls, advance } = setup();
    calls.noteRing('2000', 'c0', true);
    calls.noteReport(report('call_start', '10'));
    advance(2_000);
    calls.noteRing('2000', 'c0', false);
    advance(UACSTA_GUARD_MS + 1);
    calls.noteRing('2000', 'c1', true);
    calls.noteReport(report('call_start', '11'));
    expect(calls.match('c1', ['2000'], PHONE)).toMatchObject({ ok: true, uacstaCallId: '11' });
  });

  it('bounded: a flood of reports on many extensions keeps at most the limits', () => {
    const { calls } = setup();
    for (let i = 0; i < 5_000; i++) {
      calls.noteReport(report('call_start', String(i), '10.0.0.1', String(1000 + (i % 100))));
      calls.noteRing(String(1000 + (i % 100)), `c${i}`, true);
    }
    const held = (
      calls as unknown as { byExtension: Map<string, { rings: unknown[]; starts: unknown[] }> }
    ).byExtension;
    expect(held.size).toBeLessThanOrEqual(32);
    for (const e of held.values()) {
      expect(e.rings.length).toBeLessThanOrEqual(16);
      expect(e.starts.length).toBeLessThanOrEqual(16);
    }
  });
});
