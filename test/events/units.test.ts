import { describe, expect, it } from 'vitest';
import { Backoff, STREAM_BACKOFF, TOKEN_BACKOFF } from '../../src-shared/kit/backoff.ts';
import { ClockOffsetEstimator } from '../../src-main/core/events/clock-offset.ts';
import { DedupeSet } from '../../src-main/core/events/dedupe.ts';
import { HeartbeatWatch } from '../../src-shared/stream/heartbeat-watch.ts';
import { Generation } from '../../src-shared/kit/generation.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { callStateData, parseEnvelope } from '../../src-shared/wire/envelope.ts';
import { UserNumberMatcher } from '../../src-main/core/events/numbers.ts';
import { combineStatuses } from '../../src-main/core/events/status.ts';
import { missingCodes } from '../../src-main/core/events/ws-source.ts';
import { subscribeUrl } from '../../src-shared/wire/standard.ts';

describe('envelope', () => {
  const base = {
    event: 30011,
    tenant: 'acme',
    data: { call_id: 'c', from: '', to: '101', state: 'ringing' },
    event_id: 'e1',
  };
  it('reads seconds below 1e11 and milliseconds above', () => {
    const s = parseEnvelope(JSON.stringify({ ...base, timestamp: 1_763_800_000 }));
    const ms = parseEnvelope(JSON.stringify({ ...base, timestamp: 1_763_800_000_123 }));
    expect(s.ok && s.envelope.timestamp).toBe(1_763_800_000_000);
    expect(ms.ok && ms.envelope.timestamp).toBe(1_763_800_000_123);
  });
  it('accepts an empty (anonymous) from but not a missing to', () => {
    const ok = parseEnvelope(JSON.stringify({ ...base, timestamp: 1 }));
    expect(ok.ok && callStateData(ok.envelope)).toMatchObject({ from: '' });
    const bad = parseEnvelope(
      JSON.stringify({
        ...base,
        timestamp: 1,
        data: { call_id: 'c', from: 'x', state: 'ringing' },
      }),
    );
    expect(bad.ok && callStateData(bad.envelope)).toBeUndefined();
  });
  it('rejects each broken field with a reason', () => {
    for (const [patch, detail] of [
      [{ event: 1.5 }, 'event'],
      [{ timestamp: 'now' }, 'timestamp'],
      [{ tenant: 7 }, 'tenant'],
      [{ data: [] }, 'data'],
      [{ event_id: '' }, 'event_id'],
    ] as const) {
      expect(parseEnvelope(JSON.stringify({ ...base, timestamp: 1, ...patch }))).toEqual({
        ok: false,
        reason: 'bad-field',
        detail,
      });
    }
    expect(parseEnvelope('null')).toEqual({ ok: false, reason: 'not-object' });
  });
});

describe('numbers', () => {
  it('extensions are exact digit strings, DIDs compare in E.164 in the default region', () => {
    const m = new UserNumberMatcher({
      extensions: [' 101 ', 'abc'],
      dids: ['020 7946 0018', 'nonsense'],
      defaultRegion: 'gb',
    });
    expect(m.rejected).toEqual(['abc', 'nonsense']);
    expect(m.matches('101')).toBe(true);
    expect(m.matches('0101')).toBe(false);
    expect(m.matches('+44 20 7946 0018')).toBe(true);
    expect(m.matches('00442079460018')).toBe(true);
    expect(m.matches('+1 207 946 0018')).toBe(false);
    expect(m.matches('<script>')).toBe(false);
  });
});

describe('dedupe', () => {
  it('forgets by count and by monotonic age', () => {
    const d = new DedupeSet({ maxIds: 3, windowMs: 1_000 });
    expect(['a', 'b', 'c', 'a'].map((id) => d.firstSeen(id, 0))).toEqual([true, true, true, false]);
    expect(d.firstSeen('d', 0)).toBe(true);
    expect(d.firstSeen('a', 0)).toBe(true); // pushed out by count
    expect(d.firstSeen('d', 1_000)).toBe(false);
    expect(d.firstSeen('d', 2_001)).toBe(true); // expired by age
  });
});

describe('clock offset', () => {
  it('takes a low quantile of recent samples and forgets old ones', () => {
    const e = new ClockOffsetEstimator({ windowMs: 1_000 });
    for (let i = 0; i < 30; i++) e.add(1_000_000 + i * 10, 500 + i * 10 + (i % 5) * 20);
    expect(e.estimate(800)).toBe(500 - 1_000_000);
    expect(e.ageOf(1_000_000 + 300 - 5_000, 800)).toBe(5_000);
    expect(e.estimate(10_000)).toBeUndefined();
  });
});

describe('heartbeat watch', () => {
  it('asks for one heartbeat per interval and calls a socket dead after two silent intervals', async () => {
    const clock = new FakeClock();
    const watch = new HeartbeatWatch(clock, 1000);
    await clock.advance(500);
    expect(watch.heartbeatDue()).toBe(false);
    await clock.advance(250);
    expect(watch.heartbeatDue()).toBe(true);
    expect(watch.heartbeatDue()).toBe(false); // counted as sent
    await clock.advance(1250); // 2000 ms since anything arrived
    expect(watch.silent()).toBe(false);
    await clock.advance(1);
    expect(watch.silent()).toBe(true);
    watch.heard();
    expect(watch.silent()).toBe(false);
  });
});

describe('generation', () => {
  it('a ticket is live until the next bump', () => {
    const generation = new Generation();
    const first = generation.ticket();
    expect(first()).toBe(true);
    generation.bump();
    const second = generation.ticket();
    expect([first(), second()]).toEqual([false, true]);
  });
});

describe('backoff', () => {
  it('is full jitter under an exponential ceiling with a cap, and resets', () => {
    const b = new Backoff({ baseMs: 100, capMs: 1_000, floorMs: 0 }, () => 0.999);
    expect([1, 2, 3, 4, 5, 6].map(() => b.next())).toEqual([99, 199, 399, 799, 999, 999]);
    expect(b.attempts).toBe(6);
    b.reset();
    expect(b.next()).toBe(99);
  });

  it('retries a stream at once when the draw is 0, a token request never sooner than 250 ms', () => {
    expect(new Backoff(STREAM_BACKOFF, () => 0).next()).toBe(0);
    expect(new Backoff(TOKEN_BACKOFF, () => 0).next()).toBe(250);
    expect(new Backoff(TOKEN_BACKOFF, () => 1).next()).toBe(1000);
    const stream = new Backoff(STREAM_BACKOFF, () => 1);
    expect(Array.from({ length: 10 }, () => stream.next()).at(-1)).toBe(10_000);
  });

  it("never comes back sooner than the server's Retry-After", () => {
    expect(new Backoff(TOKEN_BACKOFF, () => 0.5).next(90_000)).toBe(90_000);
    expect(new Backoff(TOKEN_BACKOFF, () => 0.5).next(10)).toBe(500);
  });
});

describe('status', () => {
  const s = (
    name: string,
    state: Parameters<typeof combineStatuses>[0][number]['status']['state'],
    reason?: string,
  ) => ({
    name,
    status: { state, ...(reason ? { reason } : {}) },
  });
  it('combines sources: any up source keeps pops working', () => {
    expect(combineStatuses([s('direct', 'connected'), s('relay', 'connected')])).toEqual({
      state: 'connected',
    });
    expect(combineStatuses([s('direct', 'connected'), s('relay', 'offline', 'down')])).toEqual({
      state: 'degraded',
      reason: 'relay: down',
    });
    expect(
      combineStatuses([s('direct', 'needs-attention', 'ip'), s('relay', 'connecting')]).state,
    ).toBe('needs-attention');
    expect(combineStatuses([s('direct', 'offline'), s('relay', 'connecting')]).state).toBe(
      'connecting',
    );
    expect(combineStatuses([s('direct', 'offline', 'x')])).toEqual({
      state: 'offline',
      reason: 'x',
    });
    expect(combineStatuses([]).state).toBe('offline');
  });
});

describe('ws-source helpers', () => {
  it('builds the subscribe URL from the base address', () => {
    expect(subscribeUrl('https://acme.example.com/')).toBe(
      'wss://acme.example.com/openapi/v1.0/subscribe',
    );
    expect(subscribeUrl('http://127.0.0.1:8080')).toBe(
      'ws://127.0.0.1:8080/openapi/v1.0/subscribe',
    );
    expect(() => subscribeUrl('ftp://x')).toThrow();
  });
  it('reads the codes a 10003 names', () => {
    expect(missingCodes('INSUFFICIENT SCOPE FOR 30009,30031', [30011, 30009, 30031])).toEqual([
      30009, 30031,
    ]);
    expect(missingCodes('INSUFFICIENT SCOPE', [30011])).toEqual([30011]);
  });
});
