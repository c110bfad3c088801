/**
 * The durable call-log queue (src-main/core/call-log/) writing to the fake HubSpot (rigs/
 * fake-hubspot.ts, its calls built from HubSpot's Calls guide) over real HTTPS through the app's
 * one transport, and to a signed generic receiver. The queue's time is a fake clock (back-off,
 * rate-limit pauses, request time-outs); the far side is real I/O, let through between the clock's
 * steps (advanceWithRealIo). Every call must end in the CRM exactly once.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CallLogQueue, type CallLoggedEvent } from '../../src-main/core/call-log/queue.ts';
import {
  CALLS_WRITE_SCOPE,
  HubSpotCallWriter,
} from '../../src-main/core/call-log/hubspot-calls.ts';
import { GenericCallWriter, callLogSignature } from '../../src-main/core/call-log/generic-log.ts';
import type { CallLogRecord } from '../../src-main/core/ports/call-log.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { certToolsAvailable, makeTestCa, type CertFiles, type TestCa } from '../../rigs/certs.ts';
import { startFakeHubSpot, type FakeHubSpot } from '../../rigs/fake-hubspot.ts';
import { FakeClock, advanceWithRealIo } from '../../rigs/fake-clock.ts';

const canRun = certToolsAvailable('test/crm/call-log.test.ts');
const WRITER = 'pat-na1-calls-writer';
const READ_ONLY = 'pat-na1-lookup-only';

let ca: TestCa;
let cert: CertFiles;
let caDir = '';
const cleanup: Array<() => unknown> = [];

beforeAll(() => {
  if (!canRun) return;
  caDir = mkdtempSync(join(tmpdir(), 'call-log-ca-'));
  ca = makeTestCa(caDir);
  cert = ca.issue('hubspot');
});
afterAll(() => {
  if (caDir) rmSync(caDir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function record(n: number, extra: Partial<CallLogRecord> = {}): CallLogRecord {
  return {
    callId: `call-${n}`,
    direction: 'inbound',
    from: '+12025550100',
    to: '+12025550199',
    extension: '1001',
    startedAt: Date.UTC(2026, 10, 22, 9, 0, n),
    answeredAt: Date.UTC(2026, 10, 22, 9, 0, n + 5),
    endedAt: Date.UTC(2026, 10, 22, 9, 2, n),
    durationMs: 115_000,
    outcome: 'answered',
    ...extra,
  };
}

async function fakeHubSpot(
  options: Parameters<typeof startFakeHubSpot>[0] extends infer O ? Partial<O> : never = {},
) {
  const fake = await startFakeHubSpot({
    cert: readFileSync(cert.certFile),
    key: readFileSync(cert.keyFile),
    tokens: {
      [WRITER]: ['crm.objects.contacts.read', 'crm.objects.contacts.write'],
      [READ_ONLY]: ['crm.objects.contacts.read'],
    },
    ...options,
  });
  cleanup.push(() => fake.close());
  return fake;
}

/**
 * Requests sent through `transport()` still waiting for their answer. `until` lets no big step of
 * the fake clock pass while one is out: under load an answer may take longer than the real pause
 * between steps, and a 60 s step would fire the queue's 15 s time-out on it (fake time) while the
 * fake HubSpot is still answering; the aborted request then reached the fake late and took the
 * faults queued for the next call (CI: "expected 1 to be 4", the 503s never met call 6).
 */
const open = { requests: 0 };

function transport() {
  const t = transportFor(
    { proxyMode: 'none', proxyUrl: '', caFile: ca.caFile },
    {
      logger: silentLogger,
      secrets: new SecretRegistry(),
      readFile: (p) => readFileSync(p, 'utf8'),
    },
  );
  const fetch: typeof t.fetch = async (input, init) => {
    open.requests++;
    try {
      return await t.fetch(input, init);
    } finally {
      open.requests--;
    }
  };
  return { fetch };
}

function hubspotQueue(
  fake: FakeHubSpot,
  folder: string,
  clock: FakeClock,
  token = { value: WRITER },
) {
  const logged: CallLoggedEvent[] = [];
  const queue = new CallLogQueue({
    folder,
    clock,
    logger: silentLogger,
    random: () => 0,
    writer: new HubSpotCallWriter({
      fetch: transport().fetch,
      clock,
      secrets: new SecretRegistry(),
      token: async () => token.value,
      apiBase: fake.url,
    }),
    onLogged: (e) => logged.push(e),
  });
  cleanup.push(() => queue.close());
  return { queue, logged };
}

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'call-log-q-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'queue');
}

/**
 * Lets real I/O land (polling `done()` for a few real ms), then moves the fake clock one step;
 * until `done()` or `maxMs` of fake time. `done()` is checked before every step, so what the
 * queue decided at an instant (a pause's end) is seen before the clock moves on.
 */
async function until(clock: FakeClock, done: () => boolean, maxMs = 60_000, step = 250) {
  const settle = async () => {
    for (let i = 0; i < 10 && !done(); i++) await new Promise((r) => setTimeout(r, 2));
    // A request still out: its answer first (a while), and then at most 1 s of fake time per step,
    // so only a request out for 15 steps (a hang the test asks for) meets the time-out.
    for (let i = 0; i < 50 && open.requests > 0 && !done(); i++)
      await new Promise((r) => setTimeout(r, 2));
  };
  for (let t = 0; t <= maxMs;) {
    await settle();
    if (done()) return;
    const s = open.requests > 0 ? Math.min(step, 1_000) : step;
    await clock.advance(s);
    t += s;
  }
  // Real I/O may still be landing after the last step.
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
}

describe.skipIf(!canRun)('call log to HubSpot', () => {
  it('creates one Calls engagement with HubSpot’s properties, then a note is a PATCH of it', async () => {
    const fake = await fakeHubSpot();
    const clock = new FakeClock();
    const { queue, logged } = hubspotQueue(fake, folder(), clock);
    await queue.log(
      record(1, { contactId: '51', disposition: 'Connected', note: 'Refund <b>&</b> "ok"\nbye' }),
    );
    await until(clock, () => logged.length === 1);
    expect(fake.calls.size).toBe(1);
    const call = [...fake.calls.values()][0]!;
    expect(call.properties).toMatchObject({
      hs_timestamp: '2026-11-22T09:00:01.000Z',
      hs_call_direction: 'INBOUND',
      hs_call_duration: '115000',
      hs_call_status: 'COMPLETED',
      hs_call_disposition: 'f240bbac-87c9-4f6e-bf70-924b57d47db7',
    });
    expect(call.properties.hs_call_body).toContain(
      'Refund &lt;b&gt;&amp;&lt;/b&gt; &quot;ok&quot;<br>bye',
    );
    expect(call.associations).toEqual([
      {
        to: { id: '51' },
        types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 194 }],
      },
    ]);
    expect(logged[0]).toMatchObject({ callId: 'call-1', crmId: call.id, how: 'created' });

    // A note added later: the journal's id is updated, no second call.
    await queue.log(record(1, { contactId: '51', note: 'Called back' }));
    await until(clock, () => logged.length === 2);
    expect(fake.calls.size).toBe(1);
    expect(call.properties.hs_call_body).toContain('Called back');
    expect(logged[1]).toMatchObject({ crmId: call.id, how: 'updated' });
    expect(fake.callRequests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
  });

  it('a disposition the account does not have is never sent as a word', async () => {
    const fake = await fakeHubSpot();
    const clock = new FakeClock();
    const { queue, logged } = hubspotQueue(fake, folder(), clock);
    await queue.log(record(2, { disposition: 'Very happy', outcome: 'missed', durationMs: 0 }));
    await until(clock, () => logged.length === 1);
    const call = [...fake.calls.values()][0]!;
    expect(call.properties.hs_call_disposition).toBeUndefined();
    expect(call.properties.hs_call_status).toBe('NO_ANSWER');
  });

  it('stops on 401 and on 403 (the read-only token lacks the write scope) until resumed', async () => {
    const fake = await fakeHubSpot();
    const clock = new FakeClock();
    const token = { value: 'pat-na1-unknown' };
    const { queue, logged } = hubspotQueue(fake, folder(), clock, token);
    await queue.log(record(3));
    await until(clock, () => queue.status().stopped !== undefined, 5_000);
    expect(queue.status()).toMatchObject({ stopped: 'auth', pending: 1 });
    token.value = READ_ONLY;
    queue.resume();
    await until(clock, () => queue.status().stopped !== undefined, 5_000);
    expect(queue.status()).toMatchObject({
      stopped: 'forbidden',
      lastFailure: { kind: 'forbidden', status: 403 },
    });
    expect(CALLS_WRITE_SCOPE).toBe('crm.objects.contacts.write');
    const before = fake.callRequests.length;
    await advanceWithRealIo(clock, 60_000, 5_000);
    expect(fake.callRequests.length).toBe(before); // stopped: nothing asked
    token.value = WRITER;
    queue.resume();
    await until(clock, () => logged.length === 1);
    expect(fake.calls.size).toBe(1);
  });

  it('honours HubSpot’s secondly and daily limits and rides out 5xx, logging once', async () => {
    const fake = await fakeHubSpot();
    const clock = new FakeClock();
    const { queue, logged } = hubspotQueue(fake, folder(), clock);
    fake.failNext(1, 'limit-secondly');
    await queue.log(record(4));
    await until(clock, () => queue.status().lastFailure?.kind === 'rate-limited', 5_000);
    const secondly = queue.status().pausedUntil! - clock.now();
    expect(secondly).toBeGreaterThan(0);
    expect(secondly).toBeLessThanOrEqual(1_000);
    // The status tells a short limit from the daily quota (Settings says which).
    expect(queue.status().lastFailure?.daily).toBeUndefined();
    await until(clock, () => logged.length === 1);

    fake.failNext(1, 'limit-daily');
    await queue.log(record(5));
    await until(clock, () => queue.status().lastFailure?.kind === 'rate-limited', 5_000);
    const daily = queue.status().pausedUntil! - clock.now();
    expect(daily).toBeGreaterThan(30 * 60_000);
    expect(queue.status().lastFailure).toMatchObject({ kind: 'rate-limited', daily: true });
    await advanceWithRealIo(clock, 30 * 60_000, 60_000);
    expect(logged).toHaveLength(1); // still waiting for the daily quota
    await until(clock, () => logged.length === 2, 40 * 60_000, 60_000);

    fake.failNext(3, 503);
    await queue.log(record(6));
    await until(clock, () => logged.length === 3);
    expect(fake.calls.size).toBe(3);
    expect(logged[2]!.attempts).toBe(4);
  });

  it('a time-out after HubSpot wrote the call: found by its marker, not created twice', async () => {
    const fake = await fakeHubSpot();
    const clock = new FakeClock();
    const { queue, logged } = hubspotQueue(fake, folder(), clock);
    fake.failNext(1, 'write-then-hang');
    await queue.log(record(7, { note: 'first' }));
    await until(clock, () => logged.length === 1, 120_000, 1_000);
    expect(fake.calls.size).toBe(1);
    expect(logged[0]).toMatchObject({ how: 'found' });
    expect(fake.callRequests.map((r) => r.path.endsWith('/search'))).toContain(true);

    fake.failNext(1, 'write-then-drop');
    await queue.log(record(8));
    await until(clock, () => logged.length === 2, 120_000, 1_000);
    expect(fake.calls.size).toBe(2);
  });

  it('the app stops while HubSpot is writing the call: the next start finds it, no second call', async () => {
    const fake = await fakeHubSpot();
    const clock = new FakeClock();
    const dir = folder();
    const first = hubspotQueue(fake, dir, clock);
    fake.failNext(1, 'write-then-hang');
    await first.queue.log(record(30));
    await until(clock, () => fake.calls.size === 1, 5_000);
    first.queue.close(); // the app quits (or dies) with the create unanswered
    expect(first.logged).toHaveLength(0);
    const second = hubspotQueue(fake, dir, clock);
    await second.queue.start();
    await until(clock, () => second.logged.length === 1);
    expect(fake.calls.size).toBe(1);
    expect(second.logged[0]).toMatchObject({ callId: 'call-30', how: 'found' });
  });

  it('a call HubSpot refuses (400) fails for good, visible, never retried; a full queue refuses more', async () => {
    const fake = await fakeHubSpot();
    const clock = new FakeClock();
    const { queue } = hubspotQueue(fake, folder(), clock);
    fake.failNext(1, 400);
    await queue.log(record(40));
    await until(clock, () => queue.status().failed === 1, 5_000);
    const asked = fake.callRequests.length + fake.requests;
    await advanceWithRealIo(clock, 60_000, 10_000);
    expect(fake.callRequests.length + fake.requests).toBe(asked);
    expect(queue.status()).toMatchObject({ failed: 1, pending: 0, logged: 0 });

    // Bounded: logged and failed calls make room; calls still to log never do.
    const held = new CallLogQueue({
      folder: folder(),
      clock,
      logger: silentLogger,
      maxEntries: 2,
      writer: {
        kind: 'hubspot',
        create: () => new Promise<string>(() => {}),
        update: () => new Promise<void>(() => {}),
        find: () => Promise.resolve(null),
      },
    });
    cleanup.push(() => held.close());
    await held.log(record(41));
    await held.log(record(42));
    await expect(held.log(record(43))).rejects.toThrow(/full/);
    await held.log(record(42, { note: 'a later revision of a queued call still fits' }));
  });

  it('keeps a call 7 days: an unlogged one older than that is removed and counted as expired', async () => {
    const fake = await fakeHubSpot();
    const clock = new FakeClock();
    const dir = folder();
    const first = hubspotQueue(fake, dir, clock, { value: 'pat-na1-unknown' });
    await first.queue.log(record(50));
    await until(clock, () => first.queue.status().stopped === 'auth', 5_000);
    first.queue.close();
    clock.sleep(7 * 24 * 60 * 60_000 + 60_000); // the machine was off for a week
    const second = hubspotQueue(fake, dir, clock);
    await second.queue.start();
    expect(second.queue.status()).toMatchObject({ pending: 0, expired: 1 });
    expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(0);
    expect(fake.calls.size).toBe(0);
  });

  it('survives a restart: the queue and the journal are read again from the folder', async () => {
    const fake = await fakeHubSpot();
    const clock = new FakeClock();
    const dir = folder();
    const first = hubspotQueue(fake, dir, clock);
    fake.failNext(50, 503);
    for (let n = 10; n < 15; n++) await first.queue.log(record(n));
    await advanceWithRealIo(clock, 2_000, 250);
    first.queue.close();
    expect(fake.calls.size).toBe(0);
    expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(5);
    // The files hold neither numbers nor notes in their names.
    expect(readdirSync(dir).join(' ')).not.toMatch(/call-|\+1/);
    fake.failNext(0, 503);
    const second = hubspotQueue(fake, dir, clock);
    await second.queue.start();
    await until(
      clock,
      () => second.logged.length === 5 && fake.calls.size === 5,
      30 * 60_000,
      5_000,
    );
    expect(second.logged.length).toBeGreaterThanOrEqual(5);
    expect(fake.calls.size).toBe(5);
    second.queue.close();

    const third = hubspotQueue(fake, dir, clock);
    await third.queue.log(record(12, { note: 'after restart' }));
    await until(clock, () => third.logged.length === 1);
    expect(third.logged[0]).toMatchObject({ how: 'updated' });
    expect(fake.calls.size).toBe(5);
    const diag = JSON.stringify(third.queue.diagnostics());
    expect(diag).not.toMatch(/after restart|2025550|call-12/);
  });
});

describe.skipIf(!canRun)('call log to the generic HTTPS connector', () => {
  it('one signed POST per call with a timestamp and the idempotency key', async () => {
    const seen: Array<{ headers: Record<string, unknown>; body: string }> = [];
    const server: Server = createServer(
      { cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(seen.length === 1 ? 503 : 204).end();
        });
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => server.close(r)));
    const clock = new FakeClock();
    const logged: CallLoggedEvent[] = [];
    const queue = new CallLogQueue({
      folder: folder(),
      clock,
      logger: silentLogger,
      random: () => 0,
      writer: new GenericCallWriter({
        fetch: transport().fetch,
        clock,
        secrets: new SecretRegistry(),
        url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/calls`,
        secret: async () => 'shared-secret',
      }),
      onLogged: (e) => logged.push(e),
    });
    cleanup.push(() => queue.close());
    const queuedAt = clock.now();
    await queue.log(record(20, { note: 'hello' }));
    await until(clock, () => logged.length === 1);
    expect(seen).toHaveLength(2);
    const last = seen[1]!;
    const ts = Number(last.headers['x-screenpop-timestamp']);
    // Signed when sent: on the queue's clock, between the first log() and now.
    expect(ts).toBeGreaterThanOrEqual(Math.floor(queuedAt / 1000));
    expect(ts).toBeLessThanOrEqual(Math.floor(clock.now() / 1000));
    expect(last.headers['x-screenpop-signature']).toBe(
      callLogSignature('shared-secret', ts, last.body),
    );
    expect(last.headers['idempotency-key']).toBe('call-20');
    expect(JSON.parse(last.body)).toMatchObject({
      version: 1,
      callId: 'call-20',
      direction: 'inbound',
      durationMs: 115_000,
      outcome: 'answered',
      note: 'hello',
      startedAt: '2026-11-22T09:00:20.000Z',
    });
  });
});
