import { describe, expect, it } from 'vitest';
import { TokenValidator, tokenKey } from '../../src-relay/auth.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

/**
 * The relay's cache of the service's answers about tokens (src-relay/auth.ts): the far side is the
 * tenant's extension/list as docs/wire-protocol.md describes it (200 with errcode 0 for a working
 * token, 401 with errcode 10002 for an expired one), answered in process; time is a fake clock.
 */
function service() {
  const valid = new Set<string>();
  const asked: string[] = [];
  const fetch = (async (_url: URL, init: { headers: Record<string, string> }) => {
    const token = init.headers.Authorization!.replace(/^Bearer /, '');
    asked.push(token);
    const ok = valid.has(token);
    return new Response(
      JSON.stringify(ok ? { errcode: 0, errmsg: 'SUCCESS', data: [] } : { errcode: 10002 }),
      { status: ok ? 200 : 401, headers: { 'Content-Type': 'application/json' } },
    );
  }) as unknown as typeof globalThis.fetch;
  return { valid, asked, fetch };
}

const BASE = 'https://pbx.example';

function validator(options: { maxEntries?: number } = {}) {
  const svc = service();
  const clock = new FakeClock();
  const logger = memoryLogger();
  const v = new TokenValidator({
    fetch: svc.fetch,
    clock,
    logger,
    positiveTtlMs: 60_000,
    negativeTtlMs: 10_000,
    ...options,
  });
  return { v, svc, clock, logger };
}

describe('token answer cache', () => {
  it('answers a token seen within the positive lifetime without asking the service again', async () => {
    const { v, svc, clock } = validator();
    svc.valid.add('tok-a');
    expect(await v.validate('acme', BASE, 'tok-a')).toEqual({ ok: true });
    await clock.advance(59_000);
    expect(await v.validate('acme', BASE, 'tok-a')).toEqual({ ok: true });
    expect(svc.asked).toEqual(['tok-a']);
    // Another tenant's answer is its own.
    await v.validate('other', BASE, 'tok-a');
    expect(svc.asked).toEqual(['tok-a', 'tok-a']);
  });

  it('asks again once the answer expired, and a 401 then revokes the token at once', async () => {
    const { v, svc, clock } = validator();
    svc.valid.add('tok-a');
    await v.validate('acme', BASE, 'tok-a');
    svc.valid.delete('tok-a'); // the key was revoked in the admin console
    await clock.advance(60_001);
    expect(await v.validate('acme', BASE, 'tok-a')).toMatchObject({ ok: false, status: 401 });
    expect(await v.validate('acme', BASE, 'tok-a')).toMatchObject({ ok: false, status: 401 });
    expect(svc.asked).toEqual(['tok-a', 'tok-a']);
  });

  it('remembers a refusal for the negative lifetime only, then asks again', async () => {
    const { v, svc, clock } = validator();
    expect(await v.validate('acme', BASE, 'tok-b')).toMatchObject({ status: 401 });
    await clock.advance(9_000);
    await v.validate('acme', BASE, 'tok-b');
    expect(svc.asked).toHaveLength(1);
    svc.valid.add('tok-b');
    await clock.advance(1_001);
    expect(await v.validate('acme', BASE, 'tok-b')).toEqual({ ok: true });
    expect(svc.asked).toHaveLength(2);
  });

  it('keeps its lifetimes on the monotonic clock: turning the wall clock back does not stretch them', async () => {
    const { v, svc, clock } = validator();
    svc.valid.add('tok-a');
    await v.validate('acme', BASE, 'tok-a');
    clock.skewWall(-3_600_000); // NTP or an administrator sets the time an hour back
    svc.valid.delete('tok-a');
    await clock.advance(60_001);
    expect(await v.validate('acme', BASE, 'tok-a')).toMatchObject({ ok: false, status: 401 });
    expect(svc.asked).toHaveLength(2);
  });

  it('holds at most maxEntries answers, dropping the oldest first', async () => {
    const { v, svc } = validator({ maxEntries: 2 });
    for (const t of ['t1', 't2', 't3']) svc.valid.add(t);
    for (const t of ['t1', 't2', 't3']) await v.validate('acme', BASE, t);
    expect(v.cachedAnswers).toBe(2);
    await v.validate('acme', BASE, 't2'); // hits
    await v.validate('acme', BASE, 't3');
    expect(svc.asked).toEqual(['t1', 't2', 't3']);
    await v.validate('acme', BASE, 't1'); // t1 was dropped: asked again, and t2 goes
    await v.validate('acme', BASE, 't2');
    expect(svc.asked).toEqual(['t1', 't2', 't3', 't1', 't2']);
  });

  it('replaces an answer asked again in its own place, dropping no other answer', async () => {
    const { v, svc, clock } = validator({ maxEntries: 2 });
    svc.valid.add('t1');
    await v.validate('acme', BASE, 't1');
    await clock.advance(1_000);
    expect(await v.validate('acme', BASE, 't2')).toMatchObject({ status: 401 });
    svc.valid.add('t2'); // the user fixed what was wrong
    await clock.advance(10_001);
    expect(await v.validate('acme', BASE, 't2')).toEqual({ ok: true });
    expect(await v.validate('acme', BASE, 't1')).toEqual({ ok: true }); // still cached
    expect(svc.asked).toEqual(['t1', 't2', 't2']);
  });

  it('never writes a token, or its key, to the log', async () => {
    const { svc, clock, logger } = validator();
    const down = new TokenValidator({
      fetch: (async () => {
        throw new TypeError('fetch failed');
      }) as unknown as typeof fetch,
      clock,
      logger,
    });
    expect(await down.validate('acme', BASE, 'secret-token-1')).toMatchObject({ status: 503 });
    expect(logger.records.length).toBeGreaterThan(0);
    const logged = JSON.stringify(logger.records);
    expect(logged).not.toContain('secret-token-1');
    expect(logged).not.toContain(tokenKey('secret-token-1'));
    expect(svc.asked).toEqual([]);
  });
});
