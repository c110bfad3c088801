/**
 * Yeastar P-Series calls as real PBXs report them (issue 32, doc section 5): one member per 30011
 * report, an inbound member's BYE alone, `"members":null` on a failed call (30015), a 30012 call
 * record at the end. Driven through the public surface: the vendor's frames into the app's
 * pipeline with the Yeastar wire's decoder, pops, dismisses and notices out; and the decoder alone
 * for the snapshot/member equivalence.
 */
import { describe, expect, it } from 'vitest';
import {
  EventPipeline,
  type CallRecord,
  type Dismiss,
  type Notice,
  type Pop,
} from '../../src-main/core/events/pipeline.ts';
import {
  YEASTAR_MAX_LEGS,
  YeastarEventDecoder,
  type DecodeResult,
} from '../../src-shared/phone-systems/yeastar-p-series.ts';
import { YEASTAR_P_SERIES_WIRE } from '../../src-shared/wire/yeastar-p-series.ts';
import type { EventEnvelope } from '../../src-shared/wire/event-codes.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const SN = '3633D2199067';
const CUSTOMER = '+4930123456';

type Kind = 'extension' | 'inbound' | 'outbound';
interface M {
  kind: Kind;
  number?: string;
  from?: string;
  to?: string;
  channel?: string;
  status: string;
  path?: string;
}

const ext = (number: string, status: string, channel = `PJSIP/${number}-0000001a`, path = '') =>
  ({ kind: 'extension', number, status, channel, path }) as M;
const inbound = (status: string, from = CUSTOMER) =>
  ({ kind: 'inbound', from, to: '5503301', channel: 'PJSIP/trunk-00000001', status }) as M;

function member(m: M): Record<string, unknown> {
  const info: Record<string, unknown> =
    m.kind === 'extension'
      ? {
          number: m.number,
          channel_id: m.channel,
          member_status: m.status,
          call_path: m.path ?? '',
        }
      : {
          from: m.from,
          to: m.to,
          trunk_name: 'SIP-Main',
          channel_id: m.channel,
          member_status: m.status,
          call_path: m.path ?? '',
        };
  return { [m.kind]: info };
}

/** A 30011 report as the PBX sends it: `msg` a JSON-encoded string. */
const report = (callId: string, members: M[]) =>
  JSON.stringify({
    type: 30011,
    sn: SN,
    msg: JSON.stringify({ call_id: callId, members: members.map(member) }),
  });
const failed = (callId: string) =>
  JSON.stringify({
    type: 30015,
    sn: SN,
    msg: JSON.stringify({ call_id: callId, reason: 'NOT found', members: null }),
  });
const record = (callId: string, status: string, to = '101') =>
  JSON.stringify({
    type: 30012,
    sn: SN,
    msg: JSON.stringify({
      call_id: callId,
      time_start: '2023-12-11 11:05:25',
      call_from: CUSTOMER,
      call_to: to,
      call_duration: 31,
      talk_duration: 0,
      src_trunk_name: 'SIP-Main',
      dst_trunk_name: '',
      pin_code: '',
      status,
      type: 'Inbound',
      recording: '',
      did_number: '5503301',
      agent_ring_time: 0,
    }),
  });

/** The app's pipeline for a user on extension `mine`, fed through the Yeastar wire's decoder. */
function app(mine = '101') {
  const clock = new FakeClock();
  const pipeline = new EventPipeline({
    clock,
    user: { extensions: [mine], dids: [], defaultRegion: 'DE' },
  });
  const decode = YEASTAR_P_SERIES_WIRE.stream.decoder();
  const pops: Pop[] = [];
  const dismisses: Dismiss[] = [];
  const notices: Notice[] = [];
  pipeline.onPop((p) => pops.push(p));
  pipeline.onDismiss((d) => dismisses.push(d));
  pipeline.onNotice((n) => notices.push(n));
  const records: CallRecord[] = [];
  pipeline.onRecord((r) => records.push(r));
  const feed = async (...frames: string[]) => {
    for (const f of frames) {
      pipeline.ingest(f, { source: 'direct', receivedAt: clock.now() }, decode);
      await clock.advance(300);
    }
  };
  return { pipeline, pops, dismisses, notices, records, feed };
}

describe('Yeastar P-Series: one member per report', () => {
  it('a ring group where a colleague’s leg ends first: my popup stays until my own leg says so', async () => {
    const t = app();
    await t.feed(
      report('c1', [inbound('ALERT')]),
      report('c1', [ext('101', 'RING')]),
      report('c1', [ext('102', 'RING')]),
      report('c1', [ext('102', 'BYE')]),
    );
    expect(t.pops.map((p) => [p.callId, p.from])).toEqual([['c1', CUSTOMER]]);
    expect(t.dismisses).toEqual([]);
    await t.feed(report('c1', [ext('101', 'ANSWER')]));
    expect(t.dismisses.map((d) => [d.to, d.state])).toEqual([['101', 'answered']]);
  });

  it('a colleague’s answer reported alone dismisses my popup as answered elsewhere', async () => {
    const t = app();
    await t.feed(
      report('c2', [inbound('ALERT')]),
      report('c2', [ext('101', 'RING')]),
      report('c2', [ext('102', 'RING')]),
      report('c2', [ext('102', 'ANSWER')]),
    );
    expect(t.pops.map((p) => p.from)).toEqual([CUSTOMER]);
    expect(t.dismisses.map((d) => [d.to, d.state])).toEqual([['102', 'answered']]);
  });

  it('the caller reported before the ring: the pop names the caller and the line', async () => {
    const t = app();
    await t.feed(report('c3', [inbound('ALERT')]), report('c3', [ext('101', 'RING')]));
    expect(t.pops).toMatchObject([{ callId: 'c3', from: CUSTOMER, line: '5503301', to: '101' }]);
    expect(t.pops[0]!.transferredBy).toBeUndefined();
  });

  it('an attended transfer: the new ring names the customer, transferred by the colleague', async () => {
    const t = app('103');
    await t.feed(
      report('c4', [inbound('ALERT')]),
      report('c4', [ext('101', 'RING')]),
      report('c4', [ext('101', 'ANSWER')]),
      report('c4', [inbound('ANSWERED')]),
      report('c4', [ext('101', 'HOLD')]), // 101 holds the customer and consults 103
      report('c4', [ext('103', 'RING', 'PJSIP/103-0000002b', 'ivr:6500,queue:6400')]),
    );
    expect(t.pops).toMatchObject([
      { from: CUSTOMER, to: '103', transferredBy: '101', callPath: 'ivr:6500,queue:6400' },
    ]);
  });

  it('a blind transfer: the colleague leaves, the new ring still names the customer', async () => {
    const t = app('103');
    await t.feed(
      report('c5', [inbound('ALERT')]),
      report('c5', [ext('101', 'RING')]),
      report('c5', [ext('101', 'ANSWER')]),
      report('c5', [ext('101', 'BYE')]),
      report('c5', [ext('103', 'RING')]),
    );
    expect(t.pops).toMatchObject([{ from: CUSTOMER, to: '103', transferredBy: '101' }]);
    // The same as one snapshot-shaped report after the colleague left.
    const s = app('103');
    await s.feed(
      report('c5', [inbound('ALERT'), ext('101', 'RING')]),
      report('c5', [inbound('ANSWERED'), ext('101', 'ANSWER')]),
      report('c5', [inbound('ANSWERED'), ext('101', 'BYE'), ext('103', 'RING')]),
    );
    expect(s.pops).toMatchObject([{ from: CUSTOMER, to: '103', transferredBy: '101' }]);
  });

  it('two legs of one extension (desk phone and Linkus): it rings until the last leg stops', async () => {
    const t = app();
    await t.feed(
      report('c6', [inbound('ALERT')]),
      report('c6', [ext('101', 'RING', 'PJSIP/101-00000001')]),
      report('c6', [ext('101', 'RING', 'PJSIP/101-00000002')]),
      report('c6', [ext('101', 'BYE', 'PJSIP/101-00000001')]),
    );
    expect(t.pops).toHaveLength(1);
    expect(t.dismisses).toEqual([]);
    await t.feed(report('c6', [ext('101', 'BYE', 'PJSIP/101-00000002')]));
    expect(t.dismisses.map((d) => [d.to, d.state])).toEqual([['101', 'ended']]);
  });

  it('an answer on one leg is the extension’s answer while the other leg still rings', async () => {
    const t = app();
    await t.feed(
      report('c7', [inbound('ALERT')]),
      report('c7', [ext('101', 'RING', 'PJSIP/101-00000001')]),
      report('c7', [ext('101', 'RING', 'PJSIP/101-00000002')]),
      report('c7', [ext('101', 'ANSWER', 'PJSIP/101-00000002')]),
    );
    expect(t.dismisses.map((d) => d.state)).toEqual(['answered']);
  });

  it('"members":null (30015, call failed) ends every ring of the call', async () => {
    const t = app();
    await t.feed(report('c8', [inbound('ALERT')]), report('c8', [ext('101', 'RING')]));
    expect(t.pops).toHaveLength(1);
    await t.feed(failed('c8'));
    expect(t.dismisses.map((d) => [d.to, d.state])).toEqual([['101', 'ended']]);
    expect(t.pipeline.stats().rejected['bad-field']).toBe(0);
    // Of a call never seen ringing: valid, and nothing to end.
    const d = new YeastarEventDecoder();
    expect(d.decode(failed('unknown'), 1_000, 0)).toEqual({ ok: true, envelopes: [] });
  });

  it('a 30012 record ends the ring of the extension it names whose last leg report was lost', async () => {
    const t = app();
    await t.feed(
      report('c9', [inbound('ALERT')]),
      report('c9', [ext('101', 'RING')]),
      report('c9', [ext('102', 'RING')]),
    );
    expect(t.dismisses).toEqual([]); // 102's ring says nothing about 101's
    // 101's BYE and the caller's never arrived.
    await t.feed(record('c9', 'NO ANSWER'));
    expect(t.dismisses.map((d) => [d.to, d.state])).toEqual([['101', 'ended']]);
    expect(t.notices).toEqual([]);
    // A record saying the callee answered (its ANSWER report lost) or was busy says so.
    const u = app();
    await u.feed(report('c12', [inbound('ALERT')]), report('c12', [ext('101', 'RING')]));
    await u.feed(record('c12', 'ANSWERED'));
    const v = app();
    await v.feed(report('c13', [inbound('ALERT')]), report('c13', [ext('101', 'RING')]));
    await v.feed(record('c13', 'BUSY'));
    expect([...u.dismisses, ...v.dismisses].map((d) => d.state)).toEqual(['answered', 'busy']);
    // The record itself, for History's talk time.
    expect(u.records).toMatchObject([{ callId: 'c12', to: '101', status: 'ANSWERED', talkSec: 0 }]);
  });

  it('a record or a failure of another extension’s segment does not end my ring', async () => {
    // One call id may get several records while the call goes on (captured: three 30012 for
    // 1694541708.49), and a 486 Busy Here may list one member alone.
    const busy = (callId: string, number: string) =>
      JSON.stringify({
        type: 30015,
        sn: SN,
        msg: JSON.stringify({
          call_id: callId,
          reason: '486 Busy Here',
          members: [member(ext(number, 'BYE'))],
        }),
      });
    const t = app();
    await t.feed(
      report('c11', [inbound('ALERT')]),
      report('c11', [ext('101', 'RING')]),
      report('c11', [ext('102', 'RING')]),
      record('c11', 'NO ANSWER', '102'),
      busy('c11', '103'),
    );
    expect(t.pops).toHaveLength(1);
    expect(t.dismisses).toEqual([]);
    // 486 Busy Here is the phone refusing the call (its Decline): the ring ends declined.
    await t.feed(busy('c11', '101'));
    expect(t.dismisses.map((d) => [d.to, d.state])).toEqual([['101', 'declined']]);
  });

  it('a 30012 record with status VOICEMAIL is a voicemail notice for the extension called', async () => {
    const t = app();
    await t.feed(
      report('c10', [inbound('ALERT')]),
      report('c10', [ext('101', 'RING')]),
      record('c10', 'VOICEMAIL'),
      record('c10', 'VOICEMAIL'), // a retried delivery: one notice
    );
    // The ring ends in the record's words: History says "Ended" (it went to voicemail), not
    // "Missed" (call-presenter.ts outcomeOf).
    expect(t.dismisses.map((d) => d.state)).toEqual(['voicemail']);
    expect(t.notices).toMatchObject([
      { type: 'voicemail', voicemailId: 'c10', extension: '101', from: CUSTOMER, notify: true },
    ]);
  });

  it('the legs of one call are bounded: the oldest go first, and it never throws', () => {
    const d = new YeastarEventDecoder();
    for (let i = 0; i < YEASTAR_MAX_LEGS * 4; i++) {
      const r = d.decode(report('big', [ext('101', 'RING', `PJSIP/101-${i}`)]), 1_000 + i, i);
      expect(r.ok).toBe(true);
    }
    // Every leg remembered is ended at the end of the call: one `ended` for 101 whatever the count.
    const end = d.decode(record('big', 'NO ANSWER'), 5_000, 5_000) as Extract<
      DecodeResult,
      { ok: true }
    >;
    expect(
      end.envelopes.filter((e) => e.event === 30011).map((e) => [e.data.to, e.data.state]),
    ).toEqual([['101', 'ended']]);
  });
});

/** Each report's members, one report each (the caller first, as a PBX reports it). */
function asMembers(reports: [string, M[]][]): [string, M[]][] {
  return reports.flatMap(([id, ms]) => ms.map((m): [string, M[]] => [id, [m]]));
}

function decodeAll(reports: [string, M[]][]): Pick<EventEnvelope, 'event_id' | 'data'>[] {
  const d = new YeastarEventDecoder();
  return reports.flatMap(([id, ms], i) => {
    const r = d.decode(report(id, ms), 1_000 + i, i);
    if (!r.ok) throw new Error(`not decoded: ${r.reason}`);
    return r.envelopes.map((e) => ({ event_id: e.event_id, data: e.data }));
  });
}

describe('Yeastar P-Series: snapshot-shaped and member-shaped reports decode alike', () => {
  const scenarios: Record<string, [string, M[]][]> = {
    'a ring group answered by a colleague, then hung up': [
      ['s1', [inbound('ALERT'), ext('101', 'RING'), ext('102', 'RING')]],
      ['s1', [inbound('ANSWERED'), ext('101', 'BYE'), ext('102', 'ANSWER')]],
      ['s1', [inbound('BYE'), ext('102', 'BYE')]],
    ],
    'an internal call, missed': [
      ['s2', [ext('102', 'ALERT'), ext('101', 'RING')]],
      ['s2', [ext('102', 'BYE'), ext('101', 'BYE')]],
    ],
    'a blind transfer': [
      ['s3', [inbound('ALERT'), ext('101', 'RING')]],
      ['s3', [inbound('ANSWERED'), ext('101', 'ANSWER')]],
      ['s3', [inbound('ANSWERED'), ext('101', 'BYE'), ext('103', 'RING')]],
      ['s3', [inbound('ANSWERED'), ext('103', 'ANSWER')]],
      ['s3', [inbound('BYE'), ext('103', 'BYE')]],
    ],
    'two legs of one extension, then a queue moving on': [
      ['s4', [inbound('ALERT'), ext('101', 'RING', 'A'), ext('101', 'RING', 'B')]],
      [
        's4',
        [inbound('ALERT'), ext('101', 'BYE', 'A'), ext('101', 'BYE', 'B'), ext('104', 'RING')],
      ],
      ['s4', [inbound('BYE'), ext('104', 'BYE')]],
    ],
    'without channel ids: a second ring of the same extension': [
      ['s5', [inbound('ALERT'), ext('101', 'RING', '')]],
      ['s5', [inbound('ALERT'), ext('101', 'BYE', '')]],
      ['s5', [inbound('ALERT'), ext('101', 'RING', '')]],
      ['s5', [inbound('BYE'), ext('101', 'BYE', '')]],
    ],
  };
  for (const [name, reports] of Object.entries(scenarios))
    it(name, () => {
      const snapshot = decodeAll(reports);
      expect(snapshot.length).toBeGreaterThan(0);
      expect(decodeAll(asMembers(reports))).toEqual(snapshot);
    });
});

describe('Yeastar P-Series: the equivalence over random calls', () => {
  it('200 random calls (seeded): snapshot-shaped and member-shaped reports give the same envelopes', () => {
    let seed = 32;
    const rnd = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const statuses = ['RING', 'ANSWER', 'HOLD', 'BYE', 'RING', 'BYE'];
    for (let c = 0; c < 200; c++) {
      const id = `r${c}`;
      const reports: [string, M[]][] = [];
      const steps = 2 + rnd(6);
      for (let s = 0; s < steps; s++) {
        const members: M[] = [];
        if (rnd(2)) members.push(inbound(s === steps - 1 ? 'BYE' : 'ALERT'));
        const count = 1 + rnd(4);
        for (let m = 0; m < count; m++) {
          const number = String(101 + rnd(4));
          const channel = rnd(4) ? `PJSIP/${number}-${rnd(2)}` : '';
          members.push(ext(number, statuses[rnd(statuses.length)]!, channel));
        }
        reports.push([id, members]);
      }
      expect(decodeAll(asMembers(reports)), id).toEqual(decodeAll(reports));
    }
  });
});
