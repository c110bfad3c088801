import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { EventPipeline, type Dismiss, type Pop } from '../../src-main/core/events/pipeline.ts';
import { DEFAULT_STALE_RING_MS, maxTrackedCalls } from '../../src-main/core/events/call-tracker.ts';
import type { EventSource } from '../../src-main/core/events/contracts.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const MAX_TRACKED_CALLS = maxTrackedCalls(DEFAULT_STALE_RING_MS);

const USER = { extensions: ['101'], dids: ['(415) 555-0100'], defaultRegion: 'US' };

function setup(opts: { staleRingMs?: number; maxIds?: number } = {}) {
  const clock = new FakeClock();
  const logger = memoryLogger();
  const pipeline = new EventPipeline({
    clock,
    logger,
    user: USER,
    ...(opts.staleRingMs ? { staleRingMs: opts.staleRingMs } : {}),
    ...(opts.maxIds ? { dedupe: { maxIds: opts.maxIds } } : {}),
  });
  const pops: Pop[] = [];
  const dismisses: Dismiss[] = [];
  pipeline.onPop((p) => pops.push(p));
  pipeline.onDismiss((d) => dismisses.push(d));
  let seq = 0;
  /** A 30011 frame stamped `agoMs` before the fake wall clock. */
  const call = (
    callId: string,
    state: string,
    to = '101',
    opts2: { agoMs?: number; id?: string; from?: string; seconds?: boolean } = {},
  ) => {
    const ts = clock.now() - (opts2.agoMs ?? 0);
    return JSON.stringify({
      event: 30011,
      timestamp: opts2.seconds ? Math.floor(ts / 1000) : ts,
      tenant: 'acme',
      event_id: opts2.id ?? `e${++seq}`,
      data: { call_id: callId, from: opts2.from ?? '+14155550199', to, state },
    });
  };
  const feed = (text: string, source = 'direct') =>
    pipeline.ingest(text, { source, receivedAt: clock.now() });
  return { clock, logger, pipeline, pops, dismisses, call, feed };
}

describe('EventPipeline', () => {
  it('the hang-up of a call the user answered: only on the number that answered, once, not before the answer, not a hold', async () => {
    const t = setup();
    const hangups: Dismiss[] = [];
    t.pipeline.onHangup((h) => hangups.push(h));
    t.feed(t.call('a', 'ringing'));
    await t.clock.advance(1000);
    t.feed(t.call('a', 'answered'));
    await t.clock.advance(1000);
    t.feed(t.call('a', 'hold'));
    t.feed(t.call('a', 'ended', '205')); // a colleague's leg of the same call
    t.feed(t.call('a', 'ended', '101', { agoMs: 5000 })); // stamped before the answer
    expect(hangups).toEqual([]);
    t.feed(t.call('a', 'ended'));
    t.feed(t.call('a', 'ended'));
    expect(hangups.map((h) => [h.callId, h.to, h.state])).toEqual([['a', '101', 'ended']]);
    // A colleague's answer: no hang-up of the user's is ever reported for it.
    t.feed(t.call('b', 'ringing'));
    t.feed(t.call('b', 'answered', '205'));
    t.feed(t.call('b', 'ended', '205'));
    t.feed(t.call('b', 'ended', '101'));
    expect(hangups).toHaveLength(1);
    expect(t.pipeline.stats().callsTracked).toBeGreaterThan(0);
  });

  it('pops a ring to an extension or to a DID in another format, and nothing else', () => {
    const t = setup();
    t.feed(t.call('a', 'ringing', '101'));
    t.feed(t.call('b', 'ringing', '+1 415-555-0100'));
    t.feed(t.call('c', 'ringing', '14155550100'));
    t.feed(t.call('d', 'ringing', '102'));
    t.feed(t.call('e', 'ringing', '1010'));
    t.feed(t.call('f', 'ringing', '+14155550101'));
    expect(t.pops.map((p) => p.callId)).toEqual(['a', 'b', 'c']);
    expect(t.pops[0]).toMatchObject({ from: '+14155550199', to: '101', source: 'direct' });
  });

  it('a caller ID longer than 256 characters still pops, cut to 256 and flagged', () => {
    const t = setup();
    const long = `+1415555${'9'.repeat(400)}`;
    t.feed(t.call('long', 'ringing', '101', { from: long }));
    t.feed(t.call('emoji', 'ringing', '101', { from: '\u{1F4DE}'.repeat(300) }));
    t.feed(t.call('short', 'ringing', '101', { from: '+14155550123' }));
    expect(t.pops.map((p) => p.callId)).toEqual(['long', 'emoji', 'short']);
    expect(t.pops[0]).toMatchObject({ from: long.slice(0, 256), fromTruncated: true });
    // Cut by code points: no half of a surrogate pair is left at the end.
    expect(Array.from(t.pops[1]!.from)).toEqual(Array(256).fill('\u{1F4DE}'));
    expect(t.pops[2]?.fromTruncated).toBeUndefined();
    expect(t.pipeline.stats().rejected['bad-call-data']).toBe(0);
  });

  it('dismisses on any later non-ringing state, once, and never pops that call again', () => {
    const t = setup();
    t.feed(t.call('a', 'ringing'));
    t.feed(t.call('a', 'ringing', '+14155550100')); // the same call on the user's DID: no second pop
    t.feed(t.call('a', 'voicemail-greeting')); // a state the protocol does not list
    t.feed(t.call('a', 'ended'));
    t.feed(t.call('a', 'ringing', '101', { agoMs: 1 }));
    expect(t.pops).toHaveLength(1);
    expect(t.dismisses).toEqual([
      { callId: 'a', state: 'voicemail-greeting', eventId: expect.any(String), to: '101' },
    ]);
  });

  it('does not pop a ring that arrives after a later state (out of order), even in whole seconds', () => {
    const t = setup();
    t.feed(t.call('a', 'answered', '101', { seconds: true }));
    t.feed(t.call('a', 'ringing', '101', { seconds: true }));
    t.feed(t.call('b', 'answered', '102'));
    t.feed(t.call('b', 'ringing', '101', { agoMs: 500 }));
    expect(t.pops).toEqual([]);
    expect(t.pipeline.stats().lateRings).toBe(2);
  });

  it('pops again for a newer ring of the same call (e.g. transferred back)', async () => {
    const t = setup();
    t.feed(t.call('a', 'ringing'));
    await t.clock.advance(2_000);
    t.feed(t.call('a', 'answered', '102'));
    await t.clock.advance(2_000);
    t.feed(t.call('a', 'ringing'));
    expect(t.pops).toHaveLength(2);
    expect(t.dismisses).toHaveLength(1);
  });

  it('a hunt group in whole seconds: the colleague ending in the same second as our ring still pops', () => {
    const t = setup();
    t.feed(t.call('h', 'ringing', '102', { seconds: true }));
    t.feed(t.call('h', 'ended', '102', { seconds: true })); // 102 gave up; the group moves on
    t.feed(t.call('h', 'ringing', '101', { seconds: true }));
    t.feed(t.call('h', 'ended', '102', { seconds: true, id: 'late-copy' })); // a retry arriving late
    expect(t.pops.map((p) => p.callId)).toEqual(['h']);
    expect(t.dismisses).toEqual([]);
    // A colleague answering strictly later still closes our popup ("answered elsewhere").
    t.clock.skewWall(1_000);
    t.feed(t.call('h', 'answered', '103', { seconds: true }));
    expect(t.dismisses.map((d) => d.state)).toEqual(['answered']);
  });

  it('our own party ending in the same second as its ring means that ring is over', () => {
    const t = setup();
    t.feed(t.call('s', 'ended', '101', { seconds: true }));
    t.feed(t.call('s', 'ringing', '101', { seconds: true }));
    expect(t.pops).toEqual([]);
  });

  it('a colleague whose ring stops later (declined, a leg ended) does not dismiss ours; their answer does', async () => {
    const t = setup();
    t.feed(t.call('g', 'ringing', '101'));
    t.feed(t.call('g', 'ringing', '102'));
    await t.clock.advance(1_000);
    t.feed(t.call('g', 'ended', '102'));
    t.feed(t.call('g', 'busy', '103'));
    expect(t.dismisses).toEqual([]);
    await t.clock.advance(1_000);
    t.feed(t.call('g', 'answered', '104'));
    expect(t.dismisses.map((d) => [d.to, d.state])).toEqual([['104', 'answered']]);
  });

  it('an older non-ringing state of another party does not dismiss a newer ring', () => {
    const t = setup();
    t.feed(t.call('a', 'ringing', '101'));
    t.feed(t.call('a', 'ended', '102', { agoMs: 5_000 }));
    expect(t.dismisses).toEqual([]);
  });

  it('removes duplicates across sources and counts them', () => {
    const t = setup();
    const frame = t.call('a', 'ringing');
    for (let i = 0; i < 1_000; i++) t.feed(frame, i % 2 ? 'relay' : 'direct');
    expect(t.pops).toHaveLength(1);
    expect(t.pipeline.stats()).toMatchObject({ duplicates: 999, events: 1, pops: 1 });
  });

  it('never pops one call twice even after its event id left the dedupe window', () => {
    const t = setup({ maxIds: 10 });
    const frame = t.call('a', 'ringing');
    t.feed(frame);
    for (let i = 0; i < 50; i++) t.feed(t.call(`other${i}`, 'ringing', '555'));
    t.feed(frame);
    expect(t.pipeline.stats().dedupeSize).toBe(10);
    expect(t.pops).toHaveLength(1);
  });

  it('a ring older than staleRingMs does not pop; age is judged against recent events', async () => {
    const t = setup({ staleRingMs: 45_000 });
    for (const id of ['x', 'y', 'z']) t.feed(t.call(id, 'answered', '555'));
    t.feed(t.call('old', 'ringing', '101', { agoMs: 46_000 }));
    t.feed(t.call('recent', 'ringing', '101', { agoMs: 44_000 }));
    expect(t.pops.map((p) => p.callId)).toEqual(['recent']);
    expect(t.pipeline.stats().staleRings).toBe(1);
  });

  it('a desktop clock minutes off changes nothing: the offset is estimated from the events', async () => {
    const t = setup();
    t.clock.skewWall(-7 * 60_000); // the desktop is 7 minutes behind the server
    const serverNow = () => t.clock.now() + 7 * 60_000;
    const frame = (callId: string, to: string, ago: number) =>
      JSON.stringify({
        event: 30011,
        timestamp: serverNow() - ago,
        tenant: 'acme',
        event_id: callId,
        data: { call_id: callId, from: '1', to, state: 'ringing' },
      });
    for (let i = 0; i < 20; i++) {
      t.feed(frame(`bg${i}`, '555', 0));
      await t.clock.advance(100);
    }
    t.feed(frame('fresh', '101', 0));
    t.feed(frame('stale', '101', 60_000));
    expect(t.pops.map((p) => p.callId)).toEqual(['fresh']);
    expect(t.pipeline.stats().clockOffsetMs).toBeCloseTo(-7 * 60_000, -2);
  });

  it('one event with a bogus future timestamp does not make the following rings stale', async () => {
    const t = setup();
    for (let i = 0; i < 20; i++) t.feed(t.call(`bg${i}`, 'answered', '555'));
    t.feed(t.call('future', 'answered', '555', { agoMs: -3_600_000 }));
    await t.clock.advance(1_000);
    t.feed(t.call('a', 'ringing'));
    expect(t.pops).toHaveLength(1);
  });

  it('one event stamped hours ahead, before any other sample or server-clock reference, suppresses no ring', async () => {
    for (const future of [1, 2]) {
      const t = setup();
      // One server node's clock is 3 hours ahead: its events come first (one of them rejected).
      t.feed(t.call('x'.repeat(300), 'ringing', '101', { agoMs: -3 * 3_600_000 }));
      for (let i = 0; i < future; i++)
        t.feed(t.call(`future${i}`, 'answered', '555', { agoMs: -3 * 3_600_000 }));
      await t.clock.advance(1_000);
      t.feed(t.call('a', 'ringing'));
      await t.clock.advance(1_000);
      t.feed(t.call('b', 'ringing'));
      t.feed(t.call('c', 'ringing', '101', { agoMs: 2_000 }));
      expect(t.pops.map((p) => p.callId)).toEqual(['a', 'b', 'c']);
      expect(t.pipeline.stats().staleRings).toBe(0);
    }
  });

  it('after a sleep (wall jumps, monotonic does not) fresh rings still pop', async () => {
    const t = setup();
    for (let i = 0; i < 5; i++) t.feed(t.call(`bg${i}`, 'answered', '555'));
    t.clock.sleep(3 * 60 * 60_000);
    t.feed(t.call('a', 'ringing'));
    expect(t.pops).toHaveLength(1);
  });

  it('with a server-clock reference, the very first event can already be judged stale (relay replay)', () => {
    const t = setup();
    t.clock.skewWall(5 * 60_000); // and the desktop clock is 5 minutes ahead
    const serverNow = () => t.clock.now() - 5 * 60_000;
    t.pipeline.noteServerTime(serverNow(), t.clock.monotonic());
    const ring = (id: string, ago: number) =>
      JSON.stringify({
        event: 30011,
        timestamp: serverNow() - ago,
        tenant: 'a',
        event_id: id,
        data: { call_id: id, from: '1', to: '101', state: 'ringing' },
      });
    t.feed(ring('replayed-10-min-old', 10 * 60_000));
    t.feed(ring('live', 50));
    expect(t.pops.map((p) => p.callId)).toEqual(['live']);
  });

  it('a burst of replayed old events does not outvote the server-clock reference', () => {
    const t = setup();
    t.pipeline.noteServerTime(t.clock.now(), t.clock.monotonic());
    // The relay replays what it held while we were away: 60 events from 2-3 minutes ago...
    for (let i = 0; i < 60; i++)
      t.feed(t.call(`missed${i}`, 'answered', '555', { agoMs: 180_000 - i * 1_000 }), 'relay');
    // ...and among them a ring to us from a minute ago: stale, whatever the replay says.
    t.feed(t.call('missed-ring', 'ringing', '101', { agoMs: 60_000 }), 'relay');
    t.feed(t.call('live', 'ringing', '101'), 'direct');
    expect(t.pops.map((p) => p.callId)).toEqual(['live']);
    expect(t.pipeline.stats().staleRings).toBe(1);
  });

  it('after a sleep the old samples are dropped and a new reference is asked for', async () => {
    const clock = new FakeClock();
    let asked = 0;
    const pipeline = new EventPipeline({ clock, user: USER, onClockJump: () => asked++ });
    const pops: Pop[] = [];
    pipeline.onPop((p) => pops.push(p));
    const frame = (id: string, ts: number, to = '555') =>
      JSON.stringify({
        event: 30011,
        timestamp: ts,
        tenant: 'a',
        event_id: id,
        data: { call_id: id, from: '1', to, state: 'ringing' },
      });
    for (let i = 0; i < 30; i++)
      pipeline.ingest(frame(`bg${i}`, clock.now()), { source: 'direct', receivedAt: clock.now() });
    clock.sleep(60 * 60_000); // an hour asleep: server time moved on, monotonic did not
    pipeline.noteServerTime(clock.now(), clock.monotonic()); // the engine's probe after the wake
    expect(asked).toBe(1);
    // Rings missed during the sleep, replayed by the relay: 20 and 50 minutes old.
    pipeline.ingest(frame('missed-50', clock.now() - 50 * 60_000, '101'), {
      source: 'relay',
      receivedAt: clock.now(),
    });
    pipeline.ingest(frame('missed-20', clock.now() - 20 * 60_000, '101'), {
      source: 'relay',
      receivedAt: clock.now(),
    });
    pipeline.ingest(frame('now', clock.now(), '101'), {
      source: 'direct',
      receivedAt: clock.now(),
    });
    expect(pops.map((p) => p.callId)).toEqual(['now']);
  });

  it('after a sleep, rings replayed before any new server-clock reference are judged on the old one', async () => {
    const clock = new FakeClock();
    const pipeline = new EventPipeline({ clock, user: USER });
    const pops: Pop[] = [];
    pipeline.onPop((p) => pops.push(p));
    pipeline.noteServerTime(clock.now(), clock.monotonic());
    const ring = (id: string, ts: number) =>
      JSON.stringify({
        event: 30011,
        timestamp: ts,
        tenant: 'a',
        event_id: id,
        data: { call_id: id, from: '1', to: '101', state: 'ringing' },
      });
    await clock.advance(60_000);
    clock.sleep(60 * 60_000); // an hour asleep; the wake's probe failed (Wi-Fi not back yet)
    await clock.advance(5_000);
    // The relay reconnects and replays a ring missed 20 minutes ago, then a live one arrives.
    for (const [id, ts] of [
      ['missed-20', clock.now() - 20 * 60_000],
      ['live', clock.now()],
    ] as const)
      pipeline.ingest(ring(id, ts), { source: 'relay', receivedAt: clock.now() });
    expect(pops.map((p) => p.callId)).toEqual(['live']);
  });

  it('a clock set ahead by hand: the shifted samples give way to the next server-clock reference', async () => {
    const t = setup();
    for (let i = 0; i < 5; i++) t.feed(t.call(`bg${i}`, 'answered', '555'));
    t.clock.skewWall(5 * 60_000); // the user sets the desktop clock 5 minutes ahead
    const serverNow = () => t.clock.now() - 5 * 60_000;
    t.pipeline.noteServerTime(serverNow(), t.clock.monotonic()); // the probe after the jump
    t.feed(
      JSON.stringify({
        event: 30011,
        timestamp: serverNow(),
        tenant: 'a',
        event_id: 'fresh',
        data: { call_id: 'fresh', from: '1', to: '101', state: 'ringing' },
      }),
    );
    expect(t.pops.map((p) => p.callId)).toEqual(['fresh']);
  });

  it('counts malformed and oversized frames, logs them without their content, and keeps going', () => {
    const t = setup();
    const secretish = 'caller-data-that-must-not-be-logged';
    t.feed('not json ' + secretish);
    t.feed('[1,2,3]');
    t.feed(JSON.stringify({ event: '30011', timestamp: 1, tenant: 'a', data: {}, event_id: 'x' }));
    t.feed(
      JSON.stringify({
        event: 30011,
        timestamp: t.clock.now(),
        tenant: 'a',
        data: { call_id: 'c', to: 101, from: 'x', state: 'ringing' },
        event_id: 'y',
      }),
    );
    t.feed('{"pad":"' + 'x'.repeat(70 * 1024) + secretish + '"}');
    t.feed(
      JSON.stringify({
        event: 1,
        timestamp: t.clock.now(),
        tenant: 'a',
        data: {},
        event_id: 'z'.repeat(129),
      }),
    );
    t.feed(t.call('a', 'ringing'));
    expect(t.pops).toHaveLength(1);
    expect(t.pipeline.stats().rejected).toEqual({
      oversized: 1,
      'not-json': 1,
      'not-object': 1,
      'bad-field': 2,
      'bad-call-data': 1,
      'bad-notice-data': 0,
    });
    expect(JSON.stringify(t.logger.records)).not.toContain(secretish);
    expect(
      t.logger.records.filter((r) => r.msg === 'frame rejected').length,
    ).toBeGreaterThanOrEqual(4);
  });

  it('passes unknown codes and extra fields through as opaque data', () => {
    const t = setup();
    const seen: unknown[] = [];
    t.pipeline.onEvent((e) => seen.push(e));
    t.feed(
      JSON.stringify({
        event: 39999,
        timestamp: 1_700_000_000,
        tenant: 'acme',
        data: { anything: [1, { deep: true }] },
        event_id: 'u1',
        extra: 'ignored',
      }),
    );
    expect(seen).toEqual([
      {
        event: 39999,
        timestamp: 1_700_000_000_000,
        tenant: 'acme',
        data: { anything: [1, { deep: true }] },
        event_id: 'u1',
      },
    ]);
  });

  it('a listener that throws does not stop other listeners or later events', () => {
    const t = setup();
    t.pipeline.onPop(() => {
      throw new Error('boom');
    });
    t.feed(t.call('a', 'ringing'));
    t.feed(t.call('b', 'ringing'));
    expect(t.pops).toHaveLength(2);
  });

  it('setUser changes whose rings pop', () => {
    const t = setup();
    t.pipeline.setUser({ extensions: ['102'], dids: [], defaultRegion: 'US' });
    t.feed(t.call('a', 'ringing', '101'));
    t.feed(t.call('b', 'ringing', '102'));
    expect(t.pops.map((p) => p.callId)).toEqual(['b']);
  });

  it('attach() merges a source before dedupe and detaches', () => {
    const t = setup();
    let emit: (text: string, at: number) => void = () => {};
    const source: EventSource = {
      name: 'relay',
      start() {},
      async stop() {},
      wake() {},
      onFrame(l) {
        emit = l;
        return () => {
          emit = () => {};
        };
      },
      onStatus: () => () => {},
      status: () => ({ state: 'connected' }),
    };
    const detach = t.pipeline.attach(source);
    const frame = t.call('a', 'ringing');
    emit(frame, 123);
    t.feed(frame, 'direct');
    expect(t.pops).toEqual([expect.objectContaining({ source: 'relay', receivedAt: 123 })]);
    detach();
    emit(t.call('b', 'ringing'), 1);
    expect(t.pops).toHaveLength(1);
  });

  it('keeps memory bounded under a long stream of distinct calls', () => {
    const t = setup({ maxIds: 1_000 });
    for (let i = 0; i < 50_000; i++) t.feed(t.call(`c${i}`, i % 2 ? 'ended' : 'ringing', '555'));
    const s = t.pipeline.stats();
    expect(s.dedupeSize).toBe(1_000);
    // The tenant's calls, at the bound sized for them (was 50,000: 25,000 were held here).
    expect(s.callsTracked).toBe(MAX_TRACKED_CALLS);
  });

  it('remembers a colleague’s answer as long as the stale-ring limit the user chose', () => {
    // --stale-ring-sec 600: a ring up to 10 minutes old may still pop, so a colleague's answer
    // must be remembered that long, however many calls the tenant has meanwhile. With the bound
    // fixed for the 45 s default (2,500 calls), the answer below was pushed out and the late ring
    // popped a call a colleague had answered.
    const t = setup({ staleRingMs: 600_000 });
    t.feed(t.call('late', 'answered', '102', { agoMs: 0 }));
    for (let i = 0; i < MAX_TRACKED_CALLS * 2; i++) t.feed(t.call(`other-${i}`, 'ended', '555'));
    t.feed(t.call('late', 'ringing', '101', { agoMs: 5 * 60_000 }));
    expect(t.pops).toEqual([]);
  });

  it("dismisses the user's popup after more tenant calls than the tenant bound holds", () => {
    const t = setup();
    t.feed(t.call('mine', 'ringing'));
    expect(t.pops).toHaveLength(1);
    for (let i = 0; i < MAX_TRACKED_CALLS * 2; i++) t.feed(t.call(`other-${i}`, 'ended', '555'));
    t.feed(t.call('mine', 'answered'));
    expect(t.dismisses).toEqual([expect.objectContaining({ callId: 'mine' })]);
  });
});
