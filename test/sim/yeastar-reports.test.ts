/**
 * The simulator's Yeastar P-Series call reports in both styles (src-sim/yeastar-calls.ts), read as
 * the frames it sends and held against the frames a real P570 was captured sending
 * (test/fixtures/yeastar-p-series/captured-*, issue 32): `member` (the default: the members that
 * changed, the caller beside each ring), `snapshot` (every member in every report), `mixed`; the
 * "(30012) New CDR" records, one per extension rung, and the "(30015) Call Failed" reports.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src-sim/index.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Frame {
  type: number;
  sn: string;
  msg: Record<string, unknown>;
}

async function yeastar(options: SimulatorOptions = {}) {
  const clock = new FakeClock(Date.UTC(2026, 10, 28, 9, 30, 0));
  const sim = await startSimulator({
    clock,
    phoneSystem: 'yeastar-p-series',
    extensions: 10,
    instanceId: 'a1b2',
    ...options,
  });
  cleanups.push(() => sim.close());
  const frames: Frame[] = [];
  sim.onSent((_envelope, text) => {
    const frame = JSON.parse(text) as { type: number; sn: string; msg: string };
    // The vendor's frame: msg is the payload as a JSON string.
    expect(typeof frame.msg).toBe('string');
    frames.push({ ...frame, msg: JSON.parse(frame.msg) as Record<string, unknown> });
  });
  return { sim, clock, frames };
}

/** Each 30011 report as `status:who` lists (who: an extension's number, or `in:<from>`). */
function reports(frames: Frame[]): string[][] {
  return frames
    .filter((f) => f.type === 30011)
    .map((f) =>
      (f.msg.members as Array<Record<string, Record<string, string>>>).map((m) =>
        m.inbound
          ? `${m.inbound.member_status}:in:${m.inbound.from}`
          : `${m.extension!.member_status}:${m.extension!.number}`,
      ),
    );
}

const cdrOf = (frames: Frame[]) => frames.filter((f) => f.type === 30012).map((f) => f.msg);

/** A ring group of 101 and 102 from outside; 102 answers after 8 s, talks 30 s, hangs up. */
async function ringGroupAnsweredBy102(sim: Simulator, clock: FakeClock): Promise<string> {
  const callId = sim.ring({ from: '+4930123456', to: ['101', '102'] });
  await clock.advance(8_000);
  sim.setCallState(callId, 'answered', { to: '102' });
  // As the traffic generator and the demo do: every other party is ended too.
  sim.setCallState(callId, 'ended', { to: '101' });
  await clock.advance(30_000);
  sim.setCallState(callId, 'ended', { to: '102' });
  return callId;
}

const FIXTURES = new URL('../fixtures/yeastar-p-series/', import.meta.url);
const captured = (name: string): Frame => {
  const frame = JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Frame & {
    msg: string;
  };
  return { ...frame, msg: JSON.parse(frame.msg) as Record<string, unknown> };
};

/** A frame's shape: its type, and each member as `status:kind` (the 30015 reason too). */
function shape(f: Frame): string {
  const members = (f.msg.members as Array<Record<string, Record<string, string>>> | null) ?? null;
  const list =
    members === null
      ? 'null'
      : members
          .map((m) =>
            m.inbound ? `${m.inbound.member_status}:in` : `${m.extension!.member_status}:ext`,
          )
          .join(',');
  if (f.type === 30012) return `30012 ${String(f.msg.status)} ${String(f.msg.type)}`;
  if (f.type === 30015) return `30015 ${String(f.msg.reason)} [${list}]`;
  return `${f.type} [${list}]`;
}

/** Each key of an object with the type of its value, in order. */
const keysAndTypes = (o: Record<string, unknown>) =>
  Object.entries(o).map(([k, v]) => `${k}:${typeof v}`);

describe('Yeastar P-Series call reports', () => {
  it('member style (the default) sends a caller who hangs up while it rings as the captured calls A and B', async () => {
    const { sim, clock, frames } = await yeastar();
    const callId = sim.ring({ from: '0815550100', to: '103' });
    await clock.advance(14_000);
    sim.setCallState(callId, 'ended');
    const order = JSON.parse(
      readFileSync(new URL('captured-sequences.json', FIXTURES), 'utf8'),
    ) as { order_of_arrival: Record<string, string[]> };
    const callA = Object.entries(order.order_of_arrival).find(([k]) => k.startsWith('A-'))![1];
    // Call A as captured, less the codes the app does not subscribe (30008, 30016), then the
    // record that call B shows last (the log of A ends before its record).
    const expected = [
      ...callA.filter((f) => !/30008|30016/.test(f)),
      'captured-30012-B9-inbound-no-answer.json',
    ].map((f) => shape(captured(f)));
    expect(frames.map(shape)).toEqual(expected);
    expect(expected).toEqual([
      '30011 [ALERT:in]',
      '30011 [RING:ext,ALERT:in]',
      '30011 [RING:ext,BYE:in]',
      '30011 [BYE:ext]',
      '30015 487 Request Terminated [BYE:ext]',
      '30012 NO ANSWER Inbound',
    ]);
    // Field for field as captured: the member's keys in order, channel ids in the captured format,
    // every value a string; the record's keys and value types.
    const a3 = captured('captured-30011-A3-ext-ring-with-inbound-alert.json').msg.members as Array<
      Record<string, Record<string, unknown>>
    >;
    const ring = frames[1]!.msg.members as Array<Record<string, Record<string, unknown>>>;
    expect(keysAndTypes(ring[0]!.extension!)).toEqual(keysAndTypes(a3[0]!.extension!));
    expect(keysAndTypes(ring[1]!.inbound!)).toEqual(keysAndTypes(a3[1]!.inbound!));
    expect(ring[0]!.extension!.channel_id).toMatch(/^PJSIP\/103-[0-9a-f]{8}$/);
    expect(ring[1]!.inbound!.channel_id).toMatch(/^PJSIP\/trunk-SIP-Main-endpoint-[0-9a-f]{8}$/);
    const b9 = captured('captured-30012-B9-inbound-no-answer.json').msg;
    const record = frames.at(-1)!.msg;
    expect(keysAndTypes(record)).toEqual(keysAndTypes(b9));
    expect(record).toEqual({
      call_id: callId,
      time_start: '2026-11-28 09:30:00',
      call_from: '0815550100',
      call_to: '103',
      call_duration: 14,
      talk_duration: 0,
      src_trunk_name: 'SIP-Main',
      dst_trunk_name: '',
      pin_code: '',
      status: 'NO ANSWER',
      type: 'Inbound',
      recording: '',
      did_number: '',
      agent_ring_time: 0,
    });
    expect(() => sim.setCallState(callId, 'ended')).toThrow(/unknown call/);
  });

  it('member style: a ring group rings each extension beside the caller; a record per extension, the first before the last BYE', async () => {
    const { sim, clock, frames } = await yeastar();
    const callId = await ringGroupAnsweredBy102(sim, clock);
    expect(reports(frames)).toEqual([
      ['ALERT:in:+4930123456'],
      ['RING:101', 'ALERT:in:+4930123456'],
      ['RING:102', 'ALERT:in:+4930123456'],
      ['ANSWER:102', 'ANSWERED:in:+4930123456'],
      ['BYE:101'],
      ['BYE:102'],
      ['BYE:in:+4930123456'],
    ]);
    expect(frames.map((f) => f.type)).toEqual([
      30011, 30011, 30011, 30011, 30011, 30012, 30011, 30011, 30012,
    ]);
    expect(cdrOf(frames)).toEqual([
      expect.objectContaining({
        call_id: callId,
        call_to: '101',
        status: 'NO ANSWER',
        call_duration: 8,
        talk_duration: 0,
      }),
      expect.objectContaining({
        call_id: callId,
        call_to: '102',
        status: 'ANSWERED',
        call_duration: 38,
        talk_duration: 30,
      }),
    ]);
  });

  it('snapshot style lists every member in every report, as before', async () => {
    const { sim, clock, frames } = await yeastar({ reportStyle: 'snapshot' });
    await ringGroupAnsweredBy102(sim, clock);
    expect(reports(frames)).toEqual([
      ['ALERT:in:+4930123456', 'RING:101', 'RING:102'],
      ['ANSWERED:in:+4930123456', 'ANSWER:102'],
      ['BYE:in:+4930123456', 'BYE:102'],
    ]);
    expect(cdrOf(frames).map((r) => [r.call_to, r.status])).toEqual([
      ['101', 'NO ANSWER'],
      ['102', 'ANSWERED'],
    ]);
  });

  it('a call through a queue or ring group carries its number as call_path on the extensions rung', async () => {
    const { sim, frames } = await yeastar();
    const callId = sim.ring({ from: '+4930123456', to: ['101', '102'], via: '6400' });
    sim.setCallState(callId, 'answered', { to: '101' });
    const paths = frames
      .filter((f) => f.type === 30011)
      .flatMap((f) => f.msg.members as Array<Record<string, Record<string, string>>>)
      .map((m) =>
        m.inbound
          ? `in:${m.inbound.call_path}`
          : `${m.extension!.number}:${m.extension!.call_path}`,
      );
    expect(new Set(paths)).toEqual(new Set(['in:', '101:6400', '102:6400']));
  });

  it('two devices of one extension: two channels ring; one stops alone, the other answers for it', async () => {
    const { sim, clock, frames } = await yeastar();
    // 104 has a desk phone and Linkus (every fourth extension from 104 by default).
    const callId = sim.ring({ from: '+4930123456', to: '104' });
    await clock.advance(3_000);
    sim.setCallState(callId, 'ended', { to: '104', device: 2 });
    sim.setCallState(callId, 'answered', { to: '104' });
    await clock.advance(10_000);
    sim.setCallState(callId, 'ended');
    const legs = frames
      .filter((f) => f.type === 30011)
      .map((f) =>
        (f.msg.members as Array<Record<string, Record<string, string>>>)
          .filter((m) => m.extension)
          .map((m) => `${m.extension!.member_status}:${m.extension!.channel_id}`),
      )
      .filter((l) => l.length > 0);
    const [a, b] = [...new Set(legs.flat().map((l) => l.split(':')[1]!))];
    expect(a).toMatch(/^PJSIP\/104-[0-9a-f]{8}$/);
    expect(b).toMatch(/^PJSIP\/104-[0-9a-f]{8}$/);
    expect(legs).toEqual([
      [`RING:${a}`],
      [`RING:${b}`],
      [`BYE:${b}`],
      [`ANSWER:${a}`],
      [`BYE:${a}`],
    ]);
    // One record for the extension, when its last leg ended.
    expect(cdrOf(frames)).toEqual([
      expect.objectContaining({ call_to: '104', status: 'ANSWERED', talk_duration: 10 }),
    ]);
    // Both ring; the desk phone answers: the other device's leg stops ringing (BYE alone).
    frames.length = 0;
    const second = sim.ring({ from: '+4930123456', to: '108', devices: 2 });
    sim.setCallState(second, 'answered', { to: '108', device: 2 });
    expect(reports(frames).slice(3)).toEqual([
      ['ANSWER:108', 'ANSWERED:in:+4930123456'],
      ['BYE:108'],
    ]);
  });

  it('a call that goes to voicemail: every leg BYE, the caller BYE, and a VOICEMAIL record for the extension', async () => {
    for (const reportStyle of ['member', 'snapshot'] as const) {
      const { sim, clock, frames } = await yeastar({ reportStyle });
      const callId = sim.ring({ from: '+14155550123', to: ['101', '102'] });
      await clock.advance(20_000);
      sim.setCallState(callId, 'voicemail', { to: '101' });
      if (reportStyle === 'member')
        expect(reports(frames).slice(3)).toEqual([
          ['BYE:101'],
          ['BYE:102'],
          ['BYE:in:+14155550123'],
        ]);
      expect(
        cdrOf(frames).map((r) => [r.call_to, r.status, r.call_duration]),
        reportStyle,
      ).toEqual([
        ['101', 'VOICEMAIL', 20],
        ['102', 'NO ANSWER', 20],
      ]);
      expect(() => sim.setCallState(callId, 'ended')).toThrow(/unknown call/);
    }
  });

  it('member style: an internal call reports the calling extension (ALERT) alone, then beside the ring', async () => {
    const { sim, frames } = await yeastar();
    const callId = sim.ring({ from: '103', to: '101' });
    sim.setCallState(callId, 'answered');
    sim.setCallState(callId, 'hold', { to: '101' });
    sim.setCallState(callId, 'answered', { to: '101' });
    sim.setCallState(callId, 'ended');
    expect(reports(frames)).toEqual([
      ['ALERT:103'],
      ['RING:101', 'ALERT:103'],
      ['ANSWER:101', 'ANSWERED:103'],
      ['HOLD:101', 'ANSWERED:103'],
      ['ANSWER:101', 'ANSWERED:103'],
      ['BYE:101'],
      ['BYE:103'],
    ]);
    expect(cdrOf(frames)).toEqual([
      expect.objectContaining({
        call_from: '103',
        call_to: '101',
        type: 'Internal',
        src_trunk_name: '',
        did_number: '',
      }),
    ]);
  });

  it("a failed call is a 30015 report with a reason and members null, then its record; it's over", async () => {
    for (const reportStyle of ['snapshot', 'member'] as const) {
      const { sim, frames } = await yeastar({ reportStyle });
      const callId = sim.ring({ from: '+14155550123', to: '101' });
      sim.setCallState(callId, 'failed');
      const after = frames.filter((f) => f.type !== 30011);
      expect(
        after.map((f) => f.type),
        reportStyle,
      ).toEqual([30015, 30012]);
      expect(after[0]!.msg).toEqual({ call_id: callId, reason: 'User Busy', members: null });
      expect(after[1]!.msg).toMatchObject({ call_id: callId, status: 'BUSY', talk_duration: 0 });
      expect(() => sim.setCallState(callId, 'ended')).toThrow(/unknown call/);
    }
  });

  it('a blind transfer: the answering extension BYE and a new RING in the same call, in either style', async () => {
    const expected = {
      member: [
        ['ALERT:in:+4930123456'],
        ['RING:102', 'ALERT:in:+4930123456'],
        ['ANSWER:102', 'ANSWERED:in:+4930123456'],
        ['BYE:102'],
        ['RING:101', 'ANSWERED:in:+4930123456'],
        ['ANSWER:101', 'ANSWERED:in:+4930123456'],
        ['BYE:101'],
        ['BYE:in:+4930123456'],
      ],
      snapshot: [
        ['ALERT:in:+4930123456', 'RING:102'],
        ['ANSWERED:in:+4930123456', 'ANSWER:102'],
        ['ANSWERED:in:+4930123456', 'BYE:102', 'RING:101'],
        ['ANSWERED:in:+4930123456', 'ANSWER:101'],
        ['BYE:in:+4930123456', 'BYE:101'],
      ],
    };
    for (const reportStyle of ['member', 'snapshot'] as const) {
      const { sim, frames } = await yeastar({ reportStyle });
      const callId = sim.ring({ from: '+4930123456', to: '102' });
      sim.setCallState(callId, 'answered', { to: '102' });
      sim.transfer(callId, { from: '102', to: '101' });
      sim.setCallState(callId, 'answered', { to: '101' });
      sim.setCallState(callId, 'ended');
      expect(reports(frames), reportStyle).toEqual(expected[reportStyle]);
      expect(cdrOf(frames).map((r) => [r.call_to, r.status])).toEqual([
        ['102', 'ANSWERED'],
        ['101', 'ANSWERED'],
      ]);
      expect(() => sim.transfer(callId, { from: '101', to: '103' })).toThrow(/unknown call/);
    }
  });

  it('an attended transfer: the colleague holds, the user rings beside the caller, answers, and the colleague leaves', async () => {
    const { sim, clock, frames } = await yeastar();
    const callId = sim.ring({ from: '+4930123456', to: '102' });
    sim.setCallState(callId, 'answered', { to: '102' });
    await clock.advance(20_000);
    sim.transfer(callId, { from: '102', to: '101', attended: true });
    await clock.advance(5_000);
    sim.setCallState(callId, 'answered', { to: '101' });
    await clock.advance(5_000);
    sim.setCallState(callId, 'ended', { to: '102' });
    await clock.advance(60_000);
    sim.setCallState(callId, 'ended');
    expect(reports(frames).slice(3)).toEqual([
      ['HOLD:102', 'ANSWERED:in:+4930123456'],
      ['RING:101', 'ANSWERED:in:+4930123456'],
      ['ANSWER:101', 'ANSWERED:in:+4930123456'],
      ['BYE:102'],
      ['BYE:101'],
      ['BYE:in:+4930123456'],
    ]);
    expect(cdrOf(frames).map((r) => [r.call_to, r.status, r.talk_duration])).toEqual([
      ['102', 'ANSWERED', 30],
      ['101', 'ANSWERED', 65],
    ]);
  });

  it('mixed: each call one style or the other, the same for the same seed', async () => {
    const styles = async () => {
      const { sim, frames } = await yeastar({ reportStyle: 'mixed', seed: 7 });
      const shapes: string[] = [];
      for (let i = 0; i < 30; i++) {
        const before = frames.length;
        const callId = sim.ring({ from: '+14155550123', to: ['101', '102'] });
        // The first report of a call: the caller alone (member) or every member (snapshot).
        shapes.push((frames[before]!.msg.members as unknown[]).length > 1 ? 'snapshot' : 'member');
        sim.setCallState(callId, 'ended');
      }
      return { shapes, frames: frames.map((f) => JSON.stringify(f)) };
    };
    const a = await styles();
    expect(new Set(a.shapes)).toEqual(new Set(['snapshot', 'member']));
    const b = await styles();
    expect(b.shapes).toEqual(a.shapes);
    expect(b.frames).toEqual(a.frames);
  });

  it("the traffic sends calls through the PBX's ring group and queues, and rings two-device extensions twice", async () => {
    const { sim, clock, frames } = await yeastar({ extensions: 20, seed: 5 });
    sim.startTraffic({ ratePerSec: 20 });
    await clock.advance(60_000);
    sim.stopTraffic();
    type M = Record<string, Record<string, string>>;
    const rings = frames
      .filter((f) => f.type === 30011)
      .flatMap((f) => f.msg.members as M[])
      .filter((m) => m.extension?.member_status === 'RING')
      .map((m) => m.extension!);
    expect(new Set(rings.map((r) => r.call_path))).toEqual(new Set(['', '6300', '6400', '6401']));
    // 104 has two devices: each of its rings is a pair of channels.
    const of104 = new Set(rings.filter((r) => r.number === '104').map((r) => r.channel_id));
    expect(of104.size).toBeGreaterThan(0);
    expect(of104.size % 2).toBe(0);
    const of103 = new Set(rings.filter((r) => r.number === '103').map((r) => r.channel_id));
    expect(of103.size).toBeGreaterThan(0);
    const records = cdrOf(frames);
    expect(new Set(records.map((r) => r.status))).toEqual(new Set(['ANSWERED', 'NO ANSWER']));
  });

  it('refuses a report style for the standard service, and an unknown one', async () => {
    await expect(startSimulator({ reportStyle: 'member' })).rejects.toThrow(/yeastar-p-series/);
    await expect(
      startSimulator({
        phoneSystem: 'yeastar-p-series',
        reportStyle: 'members' as unknown as 'member',
      }),
    ).rejects.toThrow(/snapshot, member, mixed/);
  });
});
