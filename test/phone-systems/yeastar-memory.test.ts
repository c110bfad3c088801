/**
 * The Yeastar decoder's memory bound (doc section 5, rule 6): whatever the PBX (or a webhook
 * sender with the tenant's secret) sends, the bytes held stay under the stated budget, read from
 * the decoder's public counter; a call going on outlives the many short calls that end around it;
 * a call of many legs keeps its ringing legs before its ended ones. The heap itself is measured by
 * bench/yeastar-decoder-memory.ts (`npm run bench:yeastar-memory`).
 */
import { describe, expect, it } from 'vitest';
import {
  YEASTAR_ENDED_BYTES,
  YEASTAR_LIVE_BYTES,
  YEASTAR_MAX_LEGS,
  YeastarEventDecoder,
  type DecodeResult,
} from '../../src-shared/phone-systems/yeastar-p-series.ts';
import type { EventEnvelope } from '../../src-shared/wire/event-codes.ts';

const T0 = Date.UTC(2026, 10, 28, 9, 0, 0);
const pad = (s: string, n = 256) => (s + 'x'.repeat(n)).slice(0, n);
const frame = (type: number, msg: object) => JSON.stringify({ type, sn: 'SN1', msg });
const ext = (number: string, status: string, channel: string, path = '') => ({
  extension: { number, channel_id: channel, member_status: status, call_path: path },
});
const inbound = (from: string, status: string, channel: string, to = '0301234500') => ({
  inbound: { from, to, trunk_name: 'trunk', channel_id: channel, member_status: status },
});
const report = (callId: string, members: object[]) => frame(30011, { call_id: callId, members });

function ok(r: DecodeResult): EventEnvelope[] {
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r.envelopes;
}

describe('Yeastar decoder memory', () => {
  it('holds at most its byte budget of calls, ringing or ended, at the largest the wire allows', () => {
    const d = new YeastarEventDecoder();
    const budget = YEASTAR_LIVE_BYTES + YEASTAR_ENDED_BYTES;
    let most = 0;
    for (let i = 0; i < 800; i++) {
      const id = pad(`call-${i}-`);
      const members: object[] = [inbound(pad(`+49${i}`), 'ALERT', pad(`trunk-${i}-`), pad('l'))];
      for (let k = 0; k < 63; k++)
        members.push(ext(pad(`${k}-`), 'RING', pad(`ch-${i}-${k}-`), pad(`path-${k}-`)));
      ok(d.decode(report(id, members), T0 + i, i));
      // Every other call fails as a whole: its tombstone keeps the 64 `ended` of that report.
      if (i % 2 === 0) ok(d.decode(frame(30015, { call_id: id, members: null }), T0 + i, i));
      most = Math.max(most, d.heldBytes);
    }
    expect(most).toBeLessThanOrEqual(budget);
    expect(d.heldBytes).toBeGreaterThan(budget * 0.9); // the budget, not the call count, bound it
    expect(d.callsRemembered).toBeLessThan(800);
  });

  it('a call going on keeps its caller while thousands of short calls ring and end around it', () => {
    const d = new YeastarEventDecoder();
    ok(d.decode(report('long', [inbound('+4930999', 'ALERT', 'trunk-long')]), T0, 0));
    ok(d.decode(report('long', [ext('101', 'RING', 'ch-long')]), T0, 0));
    ok(d.decode(report('long', [ext('101', 'ANSWER', 'ch-long')]), T0, 0));
    for (let i = 0; i < 11_000; i++) {
      const t = 1_000 + i * 100; // 11,000 calls in 18 minutes: a busy centre
      ok(d.decode(report(`c${i}`, [inbound('+4930111', 'ALERT', `t${i}`)]), T0 + t, t));
      ok(d.decode(report(`c${i}`, [ext('102', 'RING', `e${i}`)]), T0 + t, t));
      ok(
        d.decode(
          report(`c${i}`, [ext('102', 'BYE', `e${i}`), inbound('+4930111', 'BYE', `t${i}`)]),
          T0 + t,
          t,
        ),
      );
    }
    // The colleague takes the customer over from 101: the new ring names the customer.
    const t = 1_000 + 11_000 * 100;
    const [ring] = ok(d.decode(report('long', [ext('103', 'RING', 'ch-long-103')]), T0 + t, t));
    expect(ring!.data).toMatchObject({
      to: '103',
      state: 'ringing',
      from: '+4930999',
      transferred_by: '101',
    });
  });

  it('past the leg cap, ended legs go before a leg that still rings', () => {
    const d = new YeastarEventDecoder();
    ok(d.decode(report('big', [inbound('+4930123', 'ALERT', 'trunk')]), T0, 0));
    ok(d.decode(report('big', [ext('101', 'RING', 'mine')]), T0, 0));
    // A huge ring group: colleagues ring and hang up, more legs than the cap, one report each.
    for (let k = 0; k < YEASTAR_MAX_LEGS + 10; k++) {
      ok(d.decode(report('big', [ext(`2${k}`, 'RING', `c${k}`)]), T0, 1));
      ok(d.decode(report('big', [ext(`2${k}`, 'BYE', `c${k}`)]), T0, 1));
    }
    // The caller gives up: my ring ends (it was still known).
    const out = ok(d.decode(frame(30015, { call_id: 'big', members: null }), T0, 2));
    expect(out.map((e) => [e.data.to, e.data.state])).toEqual([['101', 'ended']]);
  });
});
