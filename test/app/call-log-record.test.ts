/**
 * One call, one record (issue 39): the popup's note card, the History fallback (a card closed while
 * it rang) and the runner (RunnerCallLog) build what is sent for a call with the one builder
 * (core/call-log/record.ts), so the same call gives the same record whichever path logs it.
 * Each call rings with a server timestamp 5 s behind this computer's clock (a skewed PBX): the
 * record's times are this computer's.
 */
import { describe, expect, it } from 'vitest';
import { presenterHarness, RecordingCallLog } from '../../rigs/app-harness.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { RunnerCallLog } from '../../src-main/headless/call-logging.ts';
import type { CallLogCalls } from '../../src-shared/rules/call-log-rule.ts';

const T0 = 1_700_000_000_000;
const SKEW_MS = 5_000;

/** The call played to the presenter: ring, then each [state, to, ms after the last]. */
function presenterPath(
  calls: CallLogCalls,
  steps: Array<[state: string, to: string, afterMs: number]>,
  closeWhileRinging = false,
) {
  const clock = new FakeClock(T0);
  const log = new RecordingCallLog();
  const t = presenterHarness({
    clock,
    callLog: log,
    isUserNumber: (n) => n === '101',
    settings: { callLogCalls: calls, callNoteSec: 0, popupLingerSec: 0 },
  });
  return async () => {
    t.presenter.handlePop(t.pop('c1', '+14155550123', '101', clock.now() - SKEW_MS));
    if (closeWhileRinging) t.presenter.dismiss('c1');
    for (const [state, to, ms] of steps) {
      await clock.advance(ms);
      if (state === 'hangup') t.presenter.handleHangup(t.dismiss('c1', 'ended', to));
      else t.presenter.handleDismiss(t.dismiss('c1', state, to));
    }
    await clock.advance(1_000);
    return log.records;
  };
}

/** The same call played to the runner's call log (pipeline pop, dismiss, hang-up). */
async function runnerPath(
  calls: CallLogCalls,
  steps: Array<[state: string, to: string, afterMs: number]>,
) {
  const clock = new FakeClock(T0);
  const log = new RecordingCallLog();
  const runner = new RunnerCallLog(calls, ['101'], log, clock, (e) => {
    throw e;
  });
  let n = 0;
  runner.pop({
    callId: 'c1',
    from: '+14155550123',
    to: '101',
    eventId: `e${++n}`,
    timestamp: clock.now() - SKEW_MS,
    receivedAt: clock.now(),
    source: 'direct',
  });
  for (const [state, to, ms] of steps) {
    await clock.advance(ms);
    const event = { callId: 'c1', state, to, eventId: `e${++n}` };
    if (state === 'hangup') await runner.hangup({ ...event, state: 'ended' });
    else runner.dismiss(event);
  }
  await clock.advance(1_000);
  await runner.stop();
  return log.records;
}

describe('the call-log record: one builder for every path', () => {
  it('an answered call: the note card and the runner send the same record', async () => {
    const steps: Array<[string, string, number]> = [
      ['answered', '101', 2_000],
      ['hangup', '101', 60_000],
    ];
    const card = await presenterPath('answered', steps)();
    const runner = await runnerPath('answered', steps);
    expect(card).toEqual([
      {
        callId: 'c1',
        direction: 'inbound',
        from: '+14155550123',
        to: '101',
        extension: '101',
        startedAt: T0,
        answeredAt: T0 + 2_000,
        endedAt: T0 + 62_000,
        durationMs: 60_000,
        outcome: 'answered',
      },
    ]);
    expect(runner).toEqual(card);
  });

  it('a missed call: the card, the History fallback and the runner send the same record', async () => {
    const steps: Array<[string, string, number]> = [['ended', '101', 8_000]];
    const card = await presenterPath('answered-and-missed', steps)();
    const history = await presenterPath('answered-and-missed', steps, true)();
    const runner = await runnerPath('answered-and-missed', steps);
    expect(card).toEqual([
      {
        callId: 'c1',
        direction: 'inbound',
        from: '+14155550123',
        to: '101',
        extension: '101',
        startedAt: T0,
        endedAt: T0 + 8_000,
        durationMs: 0,
        outcome: 'missed',
      },
    ]);
    expect(history).toEqual(card);
    expect(runner).toEqual(card);
  });

  it('a call the agent dialled: the app and the runner send the same OUTBOUND record from its PBX record', async () => {
    const own = { callId: 'd1', number: '+14155550199', extension: '101', startedAt: T0 };
    const record = { callId: 'd1', to: '101', status: 'ANSWERED', talkSec: 42 };
    const clockA = new FakeClock(T0);
    const app = new RecordingCallLog();
    const t = presenterHarness({
      clock: clockA,
      callLog: app,
      isUserNumber: (n) => n === '101',
      settings: { callLogCalls: 'answered' },
    });
    t.presenter.handleOwnCall(own);
    await clockA.advance(50_000);
    t.presenter.handleRecord(record);
    t.presenter.handleRecord(record); // a second record of the same call: still once

    const clockB = new FakeClock(T0);
    const runnerLog = new RecordingCallLog();
    const runner = new RunnerCallLog('answered', ['101'], runnerLog, clockB, (e) => {
      throw e;
    });
    runner.own(own);
    await clockB.advance(50_000);
    runner.record(record);
    runner.record(record);
    await clockB.advance(0);

    expect(app.records).toEqual([
      {
        callId: 'd1',
        direction: 'outbound',
        from: '101',
        to: '+14155550199',
        extension: '101',
        startedAt: T0,
        answeredAt: T0 + 8_000,
        endedAt: T0 + 50_000,
        durationMs: 42_000,
        outcome: 'answered',
      },
    ]);
    expect(runnerLog.records).toEqual(app.records);
  });
});
