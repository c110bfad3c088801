/**
 * Issue 38 item 2: the user's own dialled call never pops. With caller-first dialling
 * (docs/phone-systems/yeastar-p-series.md section 10) the PBX first reports the user's own
 * extension ringing with no caller; through the real Yeastar decoder and the pipeline, that ring
 * is the user's own call whether it arrives before or after the dial's answer, while a real
 * caller's ring during a dial still pops (delayed at most until the dial answers, or 5 s).
 */
import { describe, expect, it } from 'vitest';
import { EventPipeline, type Dismiss, type Pop } from '../../src-main/core/events/pipeline.ts';
import { OWN_DIAL_HOLD_MS, type OwnCall } from '../../src-main/core/events/own-dials.ts';
import { wireFor } from '../../src-shared/wire/index.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';

const USER = { extensions: ['1005'], dids: [], defaultRegion: 'US' };

function setup() {
  const clock = new FakeClock();
  const pipeline = new EventPipeline({ clock, logger: memoryLogger(), user: USER });
  const pops: Pop[] = [];
  const dismisses: Dismiss[] = [];
  const own: OwnCall[] = [];
  pipeline.onPop((p) => pops.push(p));
  pipeline.onDismiss((d) => dismisses.push(d));
  pipeline.onOwnCall((c) => own.push(c));
  const decoder = wireFor('yeastar-p-series').stream.decoder();
  /** A (30011) Call Status Changed report, shaped as the guide's tables (section 5). */
  const report = (callId: string, members: unknown[]) =>
    pipeline.ingest(
      JSON.stringify({ type: 30011, sn: 'SN1', msg: JSON.stringify({ call_id: callId, members }) }),
      { source: 'ws', receivedAt: clock.now() },
      decoder,
    );
  const ext = (number: string, status: string, channel: string) => ({
    extension: { number, channel_id: channel, member_status: status, call_path: '' },
  });
  const inbound = (from: string, status: string) => ({
    inbound: {
      from,
      to: '1005',
      trunk_name: 'SIP',
      channel_id: 'PJSIP/SIP-1',
      member_status: status,
    },
  });
  /** The caller-first ring of a dial: the user's extension rings alone, nobody calling. */
  const callerFirstRing = (callId: string) =>
    report(callId, [ext('1005', 'RING', `PJSIP/1005-${callId}`)]);
  return { clock, pipeline, pops, dismisses, own, report, ext, inbound, callerFirstRing };
}

describe("the user's own dialled call does not pop", () => {
  it('without a dial, that ring pops as an unknown caller (what the rule is for)', () => {
    const t = setup();
    t.callerFirstRing('1648627871.66');
    expect(t.pops).toMatchObject([{ callId: '1648627871.66', to: '1005', callerUnseen: true }]);
  });

  it('the ring arrives BEFORE the dial answers: held, then the own call, never a pop', async () => {
    const t = setup();
    const ticket = t.pipeline.expectOwnDial('5503301');
    t.callerFirstRing('1648627871.66');
    expect(t.pops).toEqual([]);
    ticket.answered('1648627871.66');
    expect(t.own).toEqual([
      {
        callId: '1648627871.66',
        number: '5503301',
        extension: '1005',
        startedAt: expect.any(Number),
      },
    ]);
    await t.clock.advance(OWN_DIAL_HOLD_MS * 2);
    expect(t.pops).toEqual([]);
    expect(t.clock.pendingTimers()).toBe(0);
  });

  it('the ring arrives AFTER the dial answers: the own call at once', () => {
    const t = setup();
    t.pipeline.expectOwnDial('5503301').answered('1648627871.66');
    t.callerFirstRing('1648627871.66');
    expect(t.pops).toEqual([]);
    expect(t.own).toEqual([
      {
        callId: '1648627871.66',
        number: '5503301',
        extension: '1005',
        startedAt: expect.any(Number),
      },
    ]);
    // Its end dismisses by call id (the UI closes "Calling…"); its second ring is not a pop.
    t.report('1648627871.66', [t.ext('1005', 'BYE', 'PJSIP/1005-1648627871.66')]);
    expect(t.dismisses).toMatchObject([{ callId: '1648627871.66' }]);
    expect(t.pipeline.stats()).toMatchObject({ pops: 0, ownCalls: 1 });
  });

  it("a real caller's ring during a dial pops when the dial answers with another call id", () => {
    const t = setup();
    const ticket = t.pipeline.expectOwnDial('5503301');
    t.report('1700000000.1', [t.inbound('+14155550199', 'ALERT')]);
    t.report('1700000000.1', [
      t.ext('1005', 'RING', 'PJSIP/1005-a'),
      t.inbound('+14155550199', 'ALERT'),
    ]);
    expect(t.pops).toEqual([]);
    ticket.answered('1648627871.66');
    expect(t.pops).toMatchObject([{ callId: '1700000000.1', from: '+14155550199' }]);
    expect(t.own).toEqual([]);
  });

  it('a failed dial pops what was held; so does the hold limit', async () => {
    const t = setup();
    t.pipeline.expectOwnDial('5503301').failed();
    const ticket = t.pipeline.expectOwnDial('5503301');
    t.callerFirstRing('1.1');
    ticket.failed();
    expect(t.pops.map((p) => p.callId)).toEqual(['1.1']);

    t.pipeline.expectOwnDial('5503302'); // never answers
    t.callerFirstRing('1.2');
    await t.clock.advance(OWN_DIAL_HOLD_MS - 1);
    expect(t.pops.map((p) => p.callId)).toEqual(['1.1']);
    await t.clock.advance(1);
    expect(t.pops.map((p) => p.callId)).toEqual(['1.1', '1.2']);
  });

  it('a held ring that ends before the dial answers shows nothing and dismisses nothing', () => {
    const t = setup();
    const ticket = t.pipeline.expectOwnDial('5503301');
    t.callerFirstRing('1.3');
    t.report('1.3', [t.ext('1005', 'BYE', 'PJSIP/1005-1.3')]);
    ticket.failed();
    expect(t.pops).toEqual([]);
    expect(t.dismisses).toEqual([]);
    expect(t.clock.pendingTimers()).toBe(0);
  });

  it('stop() clears the hold timers', () => {
    const t = setup();
    t.pipeline.expectOwnDial('5503301');
    t.callerFirstRing('1.4');
    expect(t.clock.pendingTimers()).toBe(1);
    t.pipeline.stop();
    expect(t.clock.pendingTimers()).toBe(0);
  });
});
