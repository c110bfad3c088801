/**
 * The simulator's Yeastar P-Series call reports in both styles (src-sim/yeastar-calls.ts), read as
 * the frames it sends: `snapshot` (every member in every report), `member` (one member per report,
 * as real PBXs were captured sending them, issue 32 item 1), `mixed`, the "(30012) New CDR" record
 * at the end of every call and the "(30015) Call Failed" report with `members: null`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../support/fake-clock.ts';
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

describe('Yeastar P-Series call reports', () => {
  it('member style: one member per report, the caller first, the others stop ringing one by one', async () => {
    const { sim, clock, frames } = await yeastar({ reportStyle: 'member' });
    const callId = await ringGroupAnsweredBy102(sim, clock);
    expect(reports(frames)).toEqual([
      ['ALERT:in:+4930123456'],
      ['RING:101'],
      ['RING:102'],
      ['ANSWER:102'],
      ['ANSWERED:in:+4930123456'],
      ['BYE:101'],
      ['BYE:102'],
      ['BYE:in:+4930123456'],
    ]);
    const first = frames[0]!;
    expect(first).toMatchObject({ type: 30011, sn: 'SIMACME', msg: { call_id: callId } });
    expect((first.msg.members as unknown[])[0]).toEqual({
      inbound: {
        from: '+4930123456',
        to: '5550100',
        trunk_name: 'SIP-Main',
        channel_id: expect.stringMatching(/^PJSIP\/SIP-Main-[0-9a-f]{8}$/),
        member_status: 'ALERT',
        call_path: '',
      },
    });
    // Every leg keeps its channel from its RING to its BYE.
    const channels = (n: string) =>
      new Set(
        frames
          .filter((f) => f.type === 30011)
          .flatMap((f) => f.msg.members as Array<{ extension?: Record<string, string> }>)
          .filter((m) => m.extension?.number === n)
          .map((m) => m.extension!.channel_id),
      );
    expect(channels('101').size).toBe(1);
    expect(channels('102').size).toBe(1);
    expect(() => sim.setCallState(callId, 'ended')).toThrow(/unknown call/);
  });

  it('snapshot style (the default) lists every member in every report, as before', async () => {
    const { sim, clock, frames } = await yeastar();
    await ringGroupAnsweredBy102(sim, clock);
    expect(reports(frames)).toEqual([
      ['ALERT:in:+4930123456', 'RING:101', 'RING:102'],
      ['ANSWERED:in:+4930123456', 'ANSWER:102'],
      // The traffic's end of 101 after it left: a leg of its own, BYE once.
      ['ANSWERED:in:+4930123456', 'ANSWER:102', 'BYE:101'],
      ['BYE:in:+4930123456', 'BYE:102'],
    ]);
  });

  it('ends every call with a 30012 call record: answered, with talk time and the line', async () => {
    for (const reportStyle of ['snapshot', 'member'] as const) {
      const { sim, clock, frames } = await yeastar({ reportStyle });
      const callId = await ringGroupAnsweredBy102(sim, clock);
      expect(frames.at(-1)!.type, reportStyle).toBe(30012);
      expect(cdrOf(frames), reportStyle).toEqual([
        {
          call_id: callId,
          time_start: '2026-11-28 09:30:00',
          call_from: '+4930123456',
          call_to: '102',
          call_duration: 38,
          talk_duration: 30,
          src_trunk_name: 'SIP-Main',
          dst_trunk_name: ' ',
          pin_code: ' ',
          status: 'ANSWERED',
          type: 'Inbound',
          recording: '',
          did_number: '5550100',
          agent_ring_time: 0,
        },
      ]);
    }
  });

  it('member style: a missed call ends with the extension BYE, then the caller BYE, then NO ANSWER', async () => {
    const { sim, clock, frames } = await yeastar({ reportStyle: 'member' });
    const callId = sim.ring({ from: '+14155550123', to: '101' });
    await clock.advance(12_000);
    sim.setCallState(callId, 'ended');
    expect(reports(frames)).toEqual([
      ['ALERT:in:+14155550123'],
      ['RING:101'],
      ['BYE:101'],
      ['BYE:in:+14155550123'],
    ]);
    expect(cdrOf(frames)).toEqual([
      expect.objectContaining({
        call_to: '101',
        status: 'NO ANSWER',
        call_duration: 12,
        talk_duration: 0,
      }),
    ]);
  });

  it('member style: an internal call reports the calling extension (ALERT) alone before the ring', async () => {
    const { sim, frames } = await yeastar({ reportStyle: 'member' });
    const callId = sim.ring({ from: '103', to: '101' });
    sim.setCallState(callId, 'answered');
    sim.setCallState(callId, 'hold', { to: '101' });
    sim.setCallState(callId, 'answered', { to: '101' });
    sim.setCallState(callId, 'ended');
    expect(reports(frames)).toEqual([
      ['ALERT:103'],
      ['RING:101'],
      ['ANSWER:101'],
      ['ANSWERED:103'],
      ['HOLD:101'],
      ['ANSWER:101'],
      ['BYE:101'],
      ['BYE:103'],
    ]);
    expect(cdrOf(frames)).toEqual([
      expect.objectContaining({
        call_from: '103',
        call_to: '101',
        type: 'Internal',
        src_trunk_name: ' ',
        did_number: ' ',
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
        ['RING:102'],
        ['ANSWER:102'],
        ['ANSWERED:in:+4930123456'],
        ['BYE:102'],
        ['RING:101'],
        ['ANSWER:101'],
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
      expect(cdrOf(frames)).toEqual([
        expect.objectContaining({ call_id: callId, status: 'ANSWERED' }),
      ]);
      expect(() => sim.transfer(callId, { from: '101', to: '103' })).toThrow(/unknown call/);
    }
  });

  it('mixed: each call one style or the other, the same for the same seed', async () => {
    const styles = async () => {
      const { sim, frames } = await yeastar({ reportStyle: 'mixed', seed: 7 });
      const shapes: string[] = [];
      for (let i = 0; i < 30; i++) {
        const before = frames.length;
        const callId = sim.ring({ from: '+14155550123', to: ['101', '102'] });
        shapes.push(
          frames.slice(before).some((f) => (f.msg.members as unknown[]).length > 1)
            ? 'snapshot'
            : 'member',
        );
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
