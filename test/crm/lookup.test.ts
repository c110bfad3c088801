/**
 * The lookup service's shared rules on the fake clock, with a scripted connector standing in for
 * the CRM's side of the wire: time-out, caches and their expiry, one request per number, the
 * queue, pauses after a 429 and after failures in a row, and answers made inert.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  CrmError,
  type CrmAnswer,
  type CrmConnector,
  type CrmQuery,
} from '../../src-main/core/crm/connector.ts';
import { CrmLookup, crmQuery, percentile } from '../../src-main/core/crm/lookup.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';

type Reply = CrmAnswer | CrmError | 'hang';

/** A CRM whose every answer the test decides, after `delayMs` on the fake clock. */
class ScriptedCrm implements CrmConnector {
  readonly kind = 'generic' as const;
  asked: CrmQuery[] = [];
  aborted = 0;
  delayMs = 100;
  reply: (q: CrmQuery) => Reply = () => ({ found: false });
  private readonly clock: FakeClock;
  constructor(clock: FakeClock) {
    this.clock = clock;
  }

  lookup(query: CrmQuery, signal: AbortSignal): Promise<CrmAnswer> {
    this.asked.push(query);
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => {
        this.aborted++;
        reject(new CrmError('timeout', 'aborted'));
      });
      this.clock.setTimeout(() => {
        const r = this.reply(query);
        if (r === 'hang') return;
        if (r instanceof CrmError) reject(r);
        else resolve(r);
      }, this.delayMs);
    });
  }
}

const found = (name: string, extra: Partial<{ company: string; recordUrl: string }> = {}) =>
  ({ found: true, record: { name, company: '', recordUrl: '', ...extra } }) as const;

const open: CrmLookup[] = [];
afterEach(() => open.splice(0).forEach((l) => l.close()));

function setup(timeoutMs?: number) {
  const clock = new FakeClock();
  const crm = new ScriptedCrm(clock);
  const lookup = new CrmLookup({
    clock,
    logger: silentLogger,
    connector: crm,
    region: () => 'US',
    allowedSchemes: () => ['https', 'salesforce'],
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  });
  open.push(lookup);
  return { clock, crm, lookup };
}

/** Starts a lookup and lets the fake clock run `ms`. */
async function settle<T>(clock: FakeClock, work: Promise<T>, ms = 200): Promise<T> {
  await clock.advance(ms);
  await flushMicrotasks();
  return work;
}

describe('crmQuery', () => {
  it('gives the E.164 and national forms, and nothing for extensions or text', () => {
    expect(crmQuery('(415) 555-0123', 'US')).toEqual({
      e164: '+14155550123',
      national: '4155550123',
      raw: '(415) 555-0123',
      region: 'US',
    });
    expect(crmQuery('+44 20 7946 0958', 'US')?.national).toBe('2079460958');
    expect(crmQuery('101', 'US')).toBeNull();
    expect(crmQuery('anonymous', 'US')).toBeNull();
    expect(crmQuery('\u202E+1 415 555 0123', 'US')?.e164).toBe('+14155550123');
  });

  it('computes percentiles by rank', () => {
    expect(percentile([], 50)).toBeNull();
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(
      percentile(
        [...Array(100).keys()].map((i) => i + 1),
        99,
      ),
    ).toBe(99);
  });
});

describe('CrmLookup', () => {
  it('asks once per number while a request is running, then answers from the cache for 15 minutes', async () => {
    const { clock, crm, lookup } = setup();
    crm.reply = () => found('Ada Lovelace', { company: 'Analytical Engines' });
    const first = lookup.lookup('+14155550123');
    const second = lookup.lookup('(415) 555-0123'); // the same number, written otherwise
    expect(await settle(clock, first)).toMatchObject({ status: 'found', cached: false });
    expect(await second).toMatchObject({ status: 'found', cached: false });
    expect(crm.asked).toHaveLength(1);
    await clock.advance(15 * 60_000 - 1_000);
    expect(await lookup.lookup('+14155550123')).toMatchObject({ cached: true });
    await clock.advance(2_000);
    const again = lookup.lookup('+14155550123');
    expect(await settle(clock, again)).toMatchObject({ cached: false });
    expect(crm.asked).toHaveLength(2);
  });

  it('remembers "no one by that number" for 5 minutes', async () => {
    const { clock, crm, lookup } = setup();
    expect(await settle(clock, lookup.lookup('+14155550123'))).toEqual({
      status: 'not-found',
      cached: false,
    });
    await clock.advance(4 * 60_000);
    expect(await lookup.lookup('+14155550123')).toEqual({ status: 'not-found', cached: true });
    await clock.advance(61_000);
    await settle(clock, lookup.lookup('+14155550123'));
    expect(crm.asked).toHaveLength(2);
  });

  it('gives up after the time-out and aborts the request', async () => {
    const { clock, crm, lookup } = setup(3_000);
    crm.reply = () => 'hang';
    const asking = lookup.lookup('+14155550123');
    await clock.advance(2_999);
    await flushMicrotasks();
    expect(crm.aborted).toBe(0);
    expect(await settle(clock, asking, 1)).toEqual({ status: 'failed', kind: 'timeout' });
    expect(crm.aborted).toBe(1);
    expect(lookup.stats().failures).toEqual({ timeout: 1 });
  });

  it('runs two at a time; the others wait within the same time-out, and a full queue is skipped', async () => {
    const { clock, crm, lookup } = setup(3_500);
    crm.delayMs = 1_000;
    crm.reply = (q) => found(q.e164);
    const all = Array.from({ length: 22 }, (_, i) => lookup.lookup(`+1415555${String(1000 + i)}`));
    // 2 running + 20 waiting; the 23rd is turned away at once.
    expect(await lookup.lookup('+14155559999')).toEqual({ status: 'skipped', reason: 'busy' });
    for (let t = 0; t < 3_500; t += 100) await clock.advance(100);
    await flushMicrotasks();
    const results = await Promise.all(all);
    expect(results.filter((r) => r.status === 'found')).toHaveLength(6); // 2 per second, 3.5 s
    expect(results.filter((r) => r.status === 'failed')).toHaveLength(16);
    expect(crm.asked.length).toBeLessThanOrEqual(8);
  });

  it('pauses every lookup as long as a 429 asked, at most an hour', async () => {
    const { clock, crm, lookup } = setup();
    crm.reply = () =>
      new CrmError('rate-limited', 'slow down', { status: 429, retryAfterMs: 30_000 });
    expect(await settle(clock, lookup.lookup('+14155550123'))).toEqual({
      status: 'failed',
      kind: 'rate-limited',
    });
    crm.reply = () => found('Ada');
    await clock.advance(29_000);
    expect(await lookup.lookup('+14155550124')).toEqual({ status: 'skipped', reason: 'paused' });
    await clock.advance(1_000);
    expect(await settle(clock, lookup.lookup('+14155550124'))).toMatchObject({ name: 'Ada' });
    crm.reply = () =>
      new CrmError('rate-limited', 'daily', { status: 429, retryAfterMs: 24 * 3_600_000 });
    await settle(clock, lookup.lookup('+14155550125'));
    // Asked at now - 200, answered 100 ms later: paused an hour from the answer.
    expect(lookup.stats().pausedUntil).toBe(clock.now() - 100 + 3_600_000);
  });

  it('pauses 30 s after three failures in a row, doubling while the CRM stays down', async () => {
    const { clock, crm, lookup } = setup();
    crm.reply = () => new CrmError('server', 'down', { status: 503 });
    for (let i = 0; i < 3; i++) await settle(clock, lookup.lookup(`+1415555012${i}`));
    expect(await lookup.lookup('+14155550130')).toEqual({ status: 'skipped', reason: 'paused' });
    await clock.advance(30_000);
    for (let i = 0; i < 3; i++) await settle(clock, lookup.lookup(`+1415555014${i}`));
    await clock.advance(59_000);
    expect(await lookup.lookup('+14155550150')).toEqual({ status: 'skipped', reason: 'paused' });
    crm.reply = () => found('Back');
    await clock.advance(1_000);
    expect(await settle(clock, lookup.lookup('+14155550150'))).toMatchObject({ name: 'Back' });
    expect(crm.asked).toHaveLength(7);
  });

  it('makes answers inert and lets a record link through only the URL gate', async () => {
    const { clock, crm, lookup } = setup();
    const answers: Record<string, CrmAnswer> = {
      '+14155550001': found('\u202Eevil\u202C\u0007 Name', { recordUrl: 'javascript:alert(1)' }),
      '+14155550002': found('Ada', { recordUrl: 'https://user:pw@crm.example.com/r/1' }),
      '+14155550003': found('Ada', { recordUrl: 'salesforce://record/003' }),
      '+14155550004': found('Ada', { recordUrl: 'https://crm.example.com/r/1?x=<b>' }),
      '+14155550005': found('\u200B\u200E  '),
    };
    crm.reply = (q) => answers[q.e164] ?? { found: false };
    const get = (n: string) => settle(clock, lookup.lookup(n));
    expect(await get('+14155550001')).toMatchObject({ name: 'evil Name', recordUrl: null });
    expect(await get('+14155550002')).toMatchObject({ recordUrl: null });
    expect(await get('+14155550003')).toMatchObject({ recordUrl: 'salesforce://record/003' });
    expect(await get('+14155550004')).toMatchObject({
      recordUrl: 'https://crm.example.com/r/1?x=%3Cb%3E',
    });
    // A name of invisible characters only is no name.
    expect(await get('+14155550005')).toEqual({ status: 'not-found', cached: false });
  });

  it('does not ask about extensions, and stops for good after refused credentials until reset', async () => {
    const { clock, crm, lookup } = setup();
    expect(await lookup.lookup('205')).toEqual({ status: 'skipped', reason: 'not-a-number' });
    crm.reply = () => new CrmError('auth', 'refused', { status: 401 });
    await settle(clock, lookup.lookup('+14155550123'));
    expect(await lookup.lookup('+14155550124')).toEqual({ status: 'skipped', reason: 'refused' });
    lookup.reset();
    crm.reply = () => found('Ada');
    expect(await settle(clock, lookup.lookup('+14155550124'))).toMatchObject({ name: 'Ada' });
    expect(crm.asked).toHaveLength(2);
    expect(lookup.stats()).toMatchObject({
      skipped: { 'not-a-number': 1, refused: 1 },
      failures: { auth: 1 },
      lastFailure: { kind: 'auth' },
    });
  });

  it('keeps at most 1,000 numbers, forgetting the least recently used', async () => {
    const { clock, crm, lookup } = setup();
    crm.delayMs = 0;
    crm.reply = (q) => found(q.e164);
    for (let i = 0; i < 1_001; i++)
      await settle(clock, lookup.lookup(`+1415${String(5550000 + i)}`), 0);
    expect(crm.asked).toHaveLength(1_001);
    await settle(clock, lookup.lookup('+14155551000'), 0); // the newest: cached
    expect(crm.asked).toHaveLength(1_001);
    await settle(clock, lookup.lookup('+14155550000'), 0); // the oldest: forgotten
    expect(crm.asked).toHaveLength(1_002);
  });
});
