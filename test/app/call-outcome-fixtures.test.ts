/**
 * A call's one outcome (src-shared/ui/call-outcome.ts callOutcomeOf), from what each phone system
 * says, through the app's own pipeline, call presenter and history: the standard service's 30011
 * states (docs/wire-protocol.md section 6) and Yeastar P-Series' frames (the captures of a real
 * P570 and the frames built from the guide's tables, test/fixtures/yeastar-p-series/README.md),
 * reported one member a report as the captures show. The call log gets what History says, with
 * the talk time of the record (*(30012) New CDR*'s `talk_duration`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventPipeline } from '../../src-main/core/events/pipeline.ts';
import { YEASTAR_P_SERIES_WIRE } from '../../src-shared/wire/yeastar-p-series.ts';
import type { CallOutcome } from '../../src-shared/ui/call-outcome.ts';
import { presenterHarness, RecordingCallLog } from '../../rigs/app-harness.ts';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'yeastar-p-series');
const fixture = (name: string) => readFileSync(join(DIR, name), 'utf8');

type Step = string | { wait: number };

/** One call's frames through pipeline -> presenter -> history, for the user's extension `me`. */
async function play(
  me: string,
  steps: Step[],
  options: { yeastar: boolean; calls?: 'answered' | 'answered-and-missed' | 'none' },
) {
  const log = new RecordingCallLog();
  const h = presenterHarness({
    callLog: log,
    isUserNumber: (n) => n === me,
    settings: { callLogCalls: options.calls ?? 'answered-and-missed', callNoteSec: 120 },
  });
  const pipeline = new EventPipeline({
    clock: h.clock,
    user: { extensions: [me], dids: [], defaultRegion: 'US' },
  });
  pipeline.onPop((p) => h.presenter.handlePop(p));
  pipeline.onDismiss((d) => h.presenter.handleDismiss(d));
  pipeline.onHangup((d) => h.presenter.handleHangup(d));
  pipeline.onRecord((r) => h.presenter.handleRecord(r));
  const decode = options.yeastar ? YEASTAR_P_SERIES_WIRE.stream.decoder() : undefined;
  for (const step of steps) {
    if (typeof step !== 'string') {
      await h.clock.advance(step.wait);
      continue;
    }
    const text = step.endsWith('.json') ? fixture(step) : step;
    pipeline.ingest(text, { source: 'direct', receivedAt: h.clock.now() }, decode);
    await h.clock.advance(1000);
  }
  // Past every linger and note window: each card is gone, each call logged as the rule says.
  await h.clock.advance(10 * 60_000);
  const entries = h.history.list().filter((e) => e.kind === 'call');
  return { entries, log: log.records, h };
}

let eventSeq = 0;
/** A standard-service 30011 frame (docs/wire-protocol.md section 6). */
function std(callId: string, to: string, state: string, from = '+14155550123'): string {
  return JSON.stringify({
    event: 30011,
    timestamp: Date.UTC(2026, 10, 28, 9, 0, ++eventSeq),
    tenant: 'acme',
    event_id: `ev-${eventSeq}`,
    data: { call_id: callId, from, to, state },
  });
}

describe('one outcome per call, from the standard service’s 30011 states', () => {
  const cases: Array<[string, string[], CallOutcome]> = [
    ['ringing, answered here, ended', ['ringing', 'answered', 'ended'], 'answered'],
    ['ringing, the caller hangs up', ['ringing', 'ended'], 'missed'],
  ];
  for (const [name, states, outcome] of cases)
    it(name, async () => {
      const { entries } = await play(
        '101',
        states.map((s) => std('s1', '101', s)),
        { yeastar: false },
      );
      expect(entries.map((e) => e.outcome)).toEqual([outcome]);
    });

  it('ringing on two extensions, a colleague answers: answered by a colleague, never logged', async () => {
    const { entries, log } = await play(
      '101',
      [std('s2', '101', 'ringing'), std('s2', '102', 'ringing'), std('s2', '102', 'answered')],
      { yeastar: false },
    );
    expect(entries.map((e) => e.outcome)).toEqual(['answered-elsewhere']);
    expect(log).toEqual([]);
  });

  it('an answered call: answer and hang-up times, the talk time from them', async () => {
    const { log } = await play(
      '101',
      [
        std('s3', '101', 'ringing'),
        { wait: 4000 },
        std('s3', '101', 'answered'),
        { wait: 60_000 },
        std('s3', '101', 'ended'),
      ],
      { yeastar: false },
    );
    expect(log).toHaveLength(1);
    const r = log[0]!;
    expect(r).toMatchObject({ callId: 's3', outcome: 'answered', from: '+14155550123', to: '101' });
    expect(r.answeredAt! - r.startedAt).toBe(5000);
    expect(r.endedAt - r.answeredAt!).toBe(61_000);
    expect(r.durationMs).toBe(61_000);
  });
});

describe('one outcome per call, from Yeastar P-Series frames (one member a report)', () => {
  it('captured A: the caller hangs up while 700 rings: missed', async () => {
    const { entries, log } = await play(
      '700',
      [
        'captured-30011-A1-inbound-alert-only.json',
        'captured-30011-A3-ext-ring-with-inbound-alert.json',
        'captured-30011-A5-ext-ring-with-inbound-bye.json',
        'captured-30011-A7-ext-bye-alone.json',
        'captured-30015-A8-487-one-member-bye.json',
      ],
      { yeastar: true },
    );
    expect(entries.map((e) => e.outcome)).toEqual(['missed']);
    expect(log.map((r) => [r.outcome, r.durationMs])).toEqual([['missed', 0]]);
  });

  it('captured B: the 487 failure, then the NO ANSWER record: missed', async () => {
    const { entries } = await play(
      '700',
      [
        'captured-30011-B1-inbound-alert-only.json',
        'captured-30011-B3-ext-ring-with-inbound-alert.json',
        'captured-30011-B5-ext-ring-with-inbound-bye.json',
        'captured-30015-B6-487-ring-and-inbound-bye.json',
        'captured-30011-B8-ext-bye-alone.json',
        'captured-30012-B9-inbound-no-answer.json',
      ],
      { yeastar: true },
    );
    expect(entries.map((e) => e.outcome)).toEqual(['missed']);
  });

  it('101 answers, hangs up, then the ANSWERED record: answered, 87 s talked (the record’s)', async () => {
    const { entries, log } = await play(
      '101',
      [
        'constructed-30011-inbound-rings-101.json',
        'constructed-30011-101-answer-alone.json',
        { wait: 30_000 },
        'constructed-30011-101-bye-alone.json',
        'constructed-30012-answered-by-101.json',
      ],
      { yeastar: true },
    );
    expect(entries.map((e) => [e.outcome, e.talkSec])).toEqual([['answered', 87]]);
    expect(log.map((r) => [r.outcome, r.durationMs, r.from])).toEqual([
      ['answered', 87_000, '+4930123456'],
    ]);
  });

  it('the ring ends, then the VOICEMAIL record: voicemail, not missed', async () => {
    const { entries, log } = await play(
      '101',
      [
        'constructed-30011-inbound-rings-101.json',
        'constructed-30011-101-bye-alone.json',
        'constructed-30012-voicemail-to-101.json',
      ],
      { yeastar: true },
    );
    expect(entries.map((e) => e.outcome)).toEqual(['voicemail']);
    expect(log.map((r) => r.outcome)).toEqual(['voicemail']);
  });

  it('the VOICEMAIL record long after the card went (the message was left): the same call updated to voicemail', async () => {
    const { entries, log } = await play(
      '101',
      [
        'constructed-30011-inbound-rings-101.json',
        'constructed-30011-101-bye-alone.json',
        { wait: 40_000 },
        'constructed-30012-voicemail-to-101.json',
      ],
      { yeastar: true },
    );
    expect(entries.map((e) => e.outcome)).toEqual(['voicemail']);
    expect(log.map((r) => [r.callId, r.outcome])).toEqual([
      ['1700000001.11', 'missed'],
      ['1700000001.11', 'voicemail'],
    ]);
  });

  it('captured E2: 700’s phone answers 486 Busy Here to its ring: declined', async () => {
    const { entries } = await play(
      '700',
      [
        'constructed-30011-700-ring-alone-E.json',
        'captured-30015-E2-486-busy-here-one-member.json',
      ],
      { yeastar: true },
    );
    expect(entries.map((e) => e.outcome)).toEqual(['declined']);
  });

  it('a ring group rings 101 and 102, 102 answers: answered by a colleague on 101, never logged', async () => {
    const { entries, log } = await play(
      '101',
      [
        'constructed-30011-ring-group-rings-101-102.json',
        'constructed-30011-ring-group-answered-by-102.json',
      ],
      { yeastar: true },
    );
    expect(entries.map((e) => e.outcome)).toEqual(['answered-elsewhere']);
    expect(log).toEqual([]);
  });
});
