/**
 * Which calls the user's app logs, and the note card's log (issue 39 items 2 and 5), through the
 * call presenter with a recording CallLogSink (the far side: the durable queue): answered only,
 * answered and missed, none; a colleague's call never; Enter logs once, a change and Enter again
 * updates the same call; the time running out logs what is there.
 */
import { describe, expect, it } from 'vitest';
import { presenterHarness, RecordingCallLog } from '../../rigs/app-harness.ts';
import { shouldLogCall, type CallLogCalls } from '../../src-shared/rules/call-log-rule.ts';
import { CALL_OUTCOMES } from '../../src-shared/ui/call-outcome.ts';

function setup(calls: CallLogCalls, callNoteSec = 120) {
  const log = new RecordingCallLog();
  const t = presenterHarness({
    callLog: log,
    isUserNumber: (n) => n === '101',
    settings: { callLogCalls: calls, callNoteSec, callLogChoices: ['Resolved', 'Follow-up'] },
  });
  /** One call: rings on 101, then each state in turn (its `to`), a second apart. */
  const call = async (id: string, states: Array<[state: string, to: string]>) => {
    t.presenter.handlePop(t.pop(id));
    for (const [state, to] of states) {
      await t.clock.advance(1000);
      if (state === 'hangup') t.presenter.handleHangup(t.dismiss(id, 'ended', to));
      else t.presenter.handleDismiss(t.dismiss(id, state, to));
    }
  };
  return { ...t, log, call };
}

const ANSWERED: Array<[string, string]> = [
  ['answered', '101'],
  ['hangup', '101'],
];

describe('which calls are logged', () => {
  it('the rule, every outcome by every setting', () => {
    const table = Object.fromEntries(
      (['answered', 'answered-and-missed', 'none'] as const).map((c) => [
        c,
        CALL_OUTCOMES.filter((o) => shouldLogCall(c, o)),
      ]),
    );
    expect(table).toEqual({
      answered: ['answered'],
      'answered-and-missed': ['answered', 'missed', 'voicemail', 'declined'],
      none: [],
    });
  });

  for (const [calls, expected] of [
    ['answered', ['mine']],
    ['answered-and-missed', ['mine', 'missed', 'vm']],
    ['none', []],
  ] as const)
    it(`${calls}: ${expected.join(', ') || 'nothing'}; a colleague’s call never`, async () => {
      const t = setup(calls);
      await t.call('mine', ANSWERED);
      await t.call('missed', [['ended', '101']]);
      await t.call('vm', [['voicemail', '101']]);
      await t.call('colleague', [
        ['answered', '205'],
        ['ended', '205'],
      ]);
      await t.clock.advance(10 * 60_000);
      expect(t.log.records.map((r) => r.callId).sort()).toEqual([...expected].sort());
      expect(t.presenter.cards()).toEqual([]);
    });
});

describe('the note card of a call I answered', () => {
  it('has a note while I talk and for callNoteSec after; the time running out logs it once', async () => {
    const t = setup('answered', 120);
    await t.call('c1', [['answered', '101']]);
    expect(t.presenter.cards()[0]?.note).toEqual({
      text: '',
      disposition: null,
      choices: ['Resolved', 'Follow-up'],
      closesAt: null,
      logged: false,
    });
    // Typed while talking: kept, not logged (the call is not over).
    expect(t.presenter.saveNote('c1', 'Wants a quote', 'Follow-up', true)).toBe(true);
    expect(t.log.records).toEqual([]);
    await t.clock.advance(5 * 60_000); // a long call: the card stays
    t.presenter.handleHangup(t.dismiss('c1', 'ended', '101'));
    expect(t.presenter.cards()[0]?.note?.closesAt).toBe(t.clock.now() + 120_000);
    await t.clock.advance(119_000);
    expect(t.log.records).toEqual([]);
    await t.clock.advance(1000);
    expect(t.log.records).toMatchObject([
      { callId: 'c1', outcome: 'answered', note: 'Wants a quote', disposition: 'Follow-up' },
    ]);
    expect(t.presenter.cards()).toEqual([]);
  });

  it('Enter after the call logs at once; Enter again without a change does not; after a change it updates the same call', async () => {
    const t = setup('answered');
    await t.call('c2', ANSWERED);
    t.presenter.saveNote('c2', 'First', null, true);
    t.presenter.saveNote('c2', 'First', null, true);
    expect(t.log.records.map((r) => [r.callId, r.note])).toEqual([['c2', 'First']]);
    expect(t.presenter.cards()[0]?.note?.logged).toBe(true);
    // History keeps the note beside the call (the only place besides the queue).
    expect(t.history.get('c2')).toMatchObject({ note: 'First', outcome: 'answered' });
    t.presenter.saveNote('c2', 'First, then second', 'Resolved', true);
    await t.clock.advance(10 * 60_000); // the window closes: nothing new to log
    expect(t.log.records.map((r) => [r.callId, r.note, r.disposition])).toEqual([
      ['c2', 'First', undefined],
      ['c2', 'First, then second', 'Resolved'],
    ]);
  });

  it('refuses a note over 2,000 characters or an outcome not in the list, and keeps the text plain', async () => {
    const t = setup('answered');
    await t.call('c3', ANSWERED);
    expect(t.presenter.saveNote('c3', 'x'.repeat(2001), null, true)).toBe(false);
    expect(t.presenter.saveNote('c3', 'ok', 'Invented', true)).toBe(false);
    expect(t.presenter.saveNote('nope', 'ok', null, true)).toBe(false);
    expect(t.log.records).toEqual([]);
    expect(t.presenter.saveNote('c3', 'line one\r\nline\u202e two\u0007', null, true)).toBe(true);
    expect(t.log.records[0]?.note).toBe('line one\nline two');
  });

  it('closing the note card while talking: the hang-up logs the call at once; after it, closing logs it', async () => {
    const t = setup('answered');
    await t.call('c6', [['answered', '101']]);
    t.presenter.saveNote('c6', 'typed', null, false);
    t.presenter.dismiss('c6');
    expect(t.log.records).toEqual([]);
    expect(t.presenter.cards()).toEqual([]); // out of sight
    await t.clock.advance(1000);
    t.presenter.handleHangup(t.dismiss('c6', 'ended', '101'));
    expect(t.log.records.map((r) => [r.callId, r.note])).toEqual([['c6', 'typed']]);
    expect(t.presenter.cards()).toEqual([]);
    await t.call('c7', ANSWERED);
    t.presenter.dismiss('c7');
    expect(t.log.records.map((r) => r.callId)).toEqual(['c6', 'c7']);
  });

  it('paused or reconfigured (clear): a call being talked and a missed call that lingers are logged, a ringing one is not', async () => {
    const t = setup('answered-and-missed');
    await t.call('talking', [['answered', '101']]);
    t.presenter.saveNote('talking', 'half a note', null, false);
    await t.call('gone', [['ended', '101']]);
    t.presenter.handlePop(t.pop('ringing'));
    t.presenter.clear();
    expect(t.log.records.map((r) => [r.callId, r.outcome, r.note])).toEqual([
      ['talking', 'answered', 'half a note'],
      ['gone', 'missed', undefined],
    ]);
  });

  it('no note card when nothing logs answered calls, nor on a colleague’s call', async () => {
    const none = setup('none');
    await none.call('c4', [['answered', '101']]);
    expect(none.presenter.cards()[0]?.note).toBeUndefined();
    const t = setup('answered');
    await t.call('c5', [['answered', '205']]);
    expect(t.presenter.cards()[0]?.note).toBeUndefined();
    expect(t.presenter.saveNote('c5', 'mine?', null, true)).toBe(false);
  });
});
