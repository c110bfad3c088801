/**
 * Attended transfers under way, kept by main (issue 38 follow-up: a reloaded popup still offers
 * Complete transfer and Cancel transfer): the Consultations table on the fake clock (bounded by
 * count and age, a listener that throws stops nothing), and CallActions keeping it as the phone
 * system answers, with a CallControl built as a plain object (the port's far side) whose refusals
 * come from the app's own mapping of the PBX's errors (callRefusalOf).
 */
import { describe, expect, it } from 'vitest';
import { CallActions } from '../../src-main/core/calls/call-actions.ts';
import { Consultations } from '../../src-main/core/calls/consultations.ts';
import type { CallControl, CallControlResult } from '../../src-main/core/ports/call-control.ts';
import type { ConsultationView } from '../../src-main/core/ports/views.ts';
import { callRefusal, callRefusalOf } from '../../src-shared/api/call-api.ts';
import { ServiceError } from '../../src-shared/api/service-errors.ts';
import { english } from '../../src-shared/i18n/phrase.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';

const HOUR = 60 * 60_000;

describe('Consultations', () => {
  it('keeps "call X consults Y since T" until it ends; says each change', async () => {
    const clock = new FakeClock();
    const t = new Consultations({ clock, logger: silentLogger });
    const seen: ConsultationView[][] = [];
    t.onChange((list) => seen.push(list));
    const start = clock.now();
    t.begin('call-1', '204', 'Bob Stone');
    await clock.advance(5_000);
    t.begin('call-2', '07700900123', null);
    expect(t.list()).toEqual([
      { callId: 'call-1', target: '204', targetName: 'Bob Stone', since: start },
      { callId: 'call-2', target: '07700900123', targetName: null, since: start + 5_000 },
    ]);
    expect(t.get('call-1')?.target).toBe('204');
    t.end('call-1');
    t.end('call-1'); // nothing held: nothing said
    t.end('never');
    expect(t.list().map((c) => c.callId)).toEqual(['call-2']);
    expect(seen.map((l) => l.map((c) => c.callId))).toEqual([
      ['call-1'],
      ['call-1', 'call-2'],
      ['call-2'],
    ]);
    // What it hands out is a copy: the page's view cannot change main's table.
    t.list()[0]!.target = 'changed';
    expect(t.get('call-2')?.target).toBe('07700900123');
  });

  it('a second consultation of the same call replaces the first, and is the newest', async () => {
    const clock = new FakeClock();
    const t = new Consultations({ clock, logger: silentLogger });
    t.begin('a', '204', null);
    t.begin('b', '205', null);
    await clock.advance(1_000);
    t.begin('a', '206', 'Cy');
    expect(t.list().map((c) => `${c.callId}>${c.target}`)).toEqual(['b>205', 'a>206']);
  });

  it('holds at most `max` calls, forgetting the oldest first', () => {
    const t = new Consultations({ clock: new FakeClock(), logger: silentLogger, max: 3 });
    for (let i = 1; i <= 5; i++) t.begin(`call-${i}`, '204', null);
    expect(t.list().map((c) => c.callId)).toEqual(['call-3', 'call-4', 'call-5']);
  });

  it('forgets a consultation older than maxAgeMs (a call whose end was never heard), and says so', async () => {
    const clock = new FakeClock();
    const t = new Consultations({ clock, logger: silentLogger });
    const seen: string[][] = [];
    t.onChange((list) => seen.push(list.map((c) => c.callId)));
    t.begin('old', '204', null);
    await clock.advance(3 * HOUR);
    t.begin('new', '205', null);
    await clock.advance(HOUR);
    expect(t.list().map((c) => c.callId)).toEqual(['old', 'new']); // exactly 4 h: kept
    await clock.advance(1);
    expect(t.get('old')).toBeUndefined();
    expect(t.list().map((c) => c.callId)).toEqual(['new']);
    expect(seen.at(-1)).toEqual(['new']);
    // A wall clock set back by hours: the distance counts, not its sign.
    clock.skewWall(-8 * HOUR);
    expect(t.list()).toEqual([]);
  });

  it('retain keeps only the calls still going on', () => {
    const t = new Consultations({ clock: new FakeClock(), logger: silentLogger });
    let said = 0;
    t.onChange(() => said++);
    t.begin('a', '204', null);
    t.begin('b', '205', null);
    said = 0;
    t.retain(() => true);
    expect(said).toBe(0);
    t.retain((id) => id === 'b');
    expect(t.list().map((c) => c.callId)).toEqual(['b']);
    expect(said).toBe(1);
  });

  it('a listener that throws is logged; the others and the caller go on', () => {
    const logger = memoryLogger();
    const t = new Consultations({ clock: new FakeClock(), logger });
    const heard: number[] = [];
    t.onChange(() => {
      throw new Error('page gone');
    });
    t.onChange((list) => heard.push(list.length));
    expect(() => t.begin('a', '204', null)).not.toThrow();
    expect(heard).toEqual([1]);
    expect(logger.records.some((r) => r.msg === 'consultations listener failed')).toBe(true);
  });
});

/** A Yeastar-like CallControl: every action answers `next` (done unless a test says). */
function rig() {
  const clock = new FakeClock();
  const consultations = new Consultations({ clock, logger: silentLogger });
  const answers: { next: CallControlResult } = { next: { ok: true } };
  const control: CallControl = {
    offered: () => new Set(['dial', 'transfer', 'hangup']),
    dial: async () => answers.next,
    transfer: async () => answers.next,
    hangup: async () => answers.next,
    completeTransfer: async () => answers.next,
    cancelTransfer: async () => answers.next,
    answer: async () => answers.next,
    decline: async () => answers.next,
  };
  const calls = new CallActions({
    control: () => control,
    region: () => 'GB',
    popupNumber: () => undefined,
    historyNumber: () => undefined,
    confirmDialLinks: () => true,
    consultations,
    nameOf: (ext) => (ext === '204' ? 'Bob Stone' : null),
    logger: silentLogger,
  });
  const held = () => calls.consultations().map((c) => `${c.callId}>${c.target}`);
  return { clock, calls, answers, held, consultations };
}

/** What the PBX answers a second request without a transfer under way (the simulator's 40002). */
const pbxRefused = () =>
  callRefusalOf(
    new ServiceError({ kind: 'bad-request', errcode: 40002, message: 'PARAMETER ERROR' }),
  );

describe('CallActions keeps the consultations', () => {
  it('an attended transfer accepted is kept, named by the directory; Complete ends it', async () => {
    const t = rig();
    const since = t.clock.now();
    expect(await t.calls.transfer('call-9', '204', 'attended')).toEqual({ ok: true });
    expect(t.calls.consultations()).toEqual([
      { callId: 'call-9', target: '204', targetName: 'Bob Stone', since },
    ]);
    // A number typed: kept as the dial rule reads it, with no name.
    await t.calls.transfer('call-8', '07700 900123', 'attended');
    expect(t.held()).toEqual(['call-9>204', 'call-8>07700900123']);
    expect(t.calls.consultations()[1]!.targetName).toBeNull();
    expect(await t.calls.completeTransfer('call-9')).toEqual({ ok: true });
    expect(t.held()).toEqual(['call-8>07700900123']);
  });

  it('Cancel, Hang up and a blind transfer end it', async () => {
    const t = rig();
    for (const id of ['a', 'b', 'c']) await t.calls.transfer(id, '204', 'attended');
    await t.calls.cancelTransfer('a');
    await t.calls.hangup('b');
    await t.calls.transfer('c', '205', 'blind');
    expect(t.held()).toEqual([]);
  });

  it('nothing is kept when the first step is refused, or the number is not one', async () => {
    const t = rig();
    t.answers.next = callRefusal('permission');
    await t.calls.transfer('call-9', '204', 'attended');
    t.answers.next = { ok: true };
    await t.calls.transfer('call-9', 'javascript:alert(1)', 'attended');
    expect(t.held()).toEqual([]);
  });

  it('stale (the phone system has no consultation any more): Complete says the PBX’s refusal in words and keeps the state; Cancel refused ends it', async () => {
    const t = rig();
    await t.calls.transfer('call-9', '204', 'attended');
    t.answers.next = pbxRefused();
    const r = await t.calls.completeTransfer('call-9');
    expect(r).toMatchObject({ ok: false, refusal: 'refused' });
    // The existing words (the popup's status line says them in the user's language).
    expect(english(r.ok ? [] : r.words)).toMatch(/^The phone system refused/);
    // Refused may also mean "not yet" (the colleague still rings): the buttons stay.
    expect(t.held()).toEqual(['call-9>204']);
    // Cancel is the way out: refused too (nothing to abort), the card gets Transfer and Hang up back.
    expect(await t.calls.cancelTransfer('call-9')).toMatchObject({ refusal: 'refused' });
    expect(t.held()).toEqual([]);
  });

  it('no-such-call from any step ends it; a refusal that is not the PBX’s own (unreachable, uncertain) keeps it', async () => {
    const t = rig();
    await t.calls.transfer('call-9', '204', 'attended');
    for (const id of ['unreachable', 'uncertain', 'rate-limited'] as const) {
      t.answers.next = callRefusal(id);
      await t.calls.cancelTransfer('call-9');
      await t.calls.completeTransfer('call-9');
      await t.calls.hangup('call-9');
    }
    expect(t.held()).toEqual(['call-9>204']);
    t.answers.next = callRefusal('no-such-call');
    expect(await t.calls.completeTransfer('call-9')).toMatchObject({ refusal: 'no-such-call' });
    expect(t.held()).toEqual([]);
  });

  it('a CallControl that throws at Complete is a refusal in words, the state kept; a nameOf that throws names no one', async () => {
    const t = rig();
    const calls = new CallActions({
      control: () => ({
        offered: () => new Set(['transfer']),
        dial: async () => ({ ok: true }),
        transfer: async () => ({ ok: true }),
        hangup: async () => ({ ok: true }),
        completeTransfer: async () => {
          throw new TypeError('boom');
        },
        answer: async () => ({ ok: true }),
        decline: async () => ({ ok: true }),
      }),
      region: () => 'GB',
      popupNumber: () => undefined,
      historyNumber: () => undefined,
      confirmDialLinks: () => true,
      consultations: t.consultations,
      nameOf: () => {
        throw new Error('directory broken');
      },
      logger: silentLogger,
    });
    await calls.transfer('call-9', '204', 'attended');
    expect(calls.consultations()[0]!.targetName).toBeNull();
    expect(await calls.completeTransfer('call-9')).toMatchObject({ ok: false, refusal: 'refused' });
    // No cancelTransfer on this port: not offered, in words; the state stays.
    expect(await calls.cancelTransfer('call-9')).toMatchObject({ refusal: 'not-offered' });
    expect(calls.consultations()).toHaveLength(1);
  });

  it('without a table, nothing is kept and the list is empty', async () => {
    const calls = new CallActions({
      control: () => ({
        offered: () => new Set(['transfer']),
        dial: async () => ({ ok: true }),
        transfer: async () => ({ ok: true }),
        hangup: async () => ({ ok: true }),
        answer: async () => ({ ok: true }),
        decline: async () => ({ ok: true }),
      }),
      region: () => 'GB',
      popupNumber: () => undefined,
      historyNumber: () => undefined,
      confirmDialLinks: () => true,
      logger: silentLogger,
    });
    expect(await calls.transfer('call-9', '204', 'attended')).toEqual({ ok: true });
    expect(calls.consultations()).toEqual([]);
  });
});
