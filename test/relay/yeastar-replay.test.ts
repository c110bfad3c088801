/**
 * A Yeastar P-Series tenant's deliveries sent again (issue 33 item 7). The vendor's X-Signature is
 * an HMAC of the body alone, with no time in it ("Monitor Events via Webhook"), so anyone who
 * captured a delivery can send it again, signed, at any time; the relay stamps what it stores with
 * its own clock, so a copy would look new. The relay in-process on a fake clock (its store, its
 * dedupe and its memory of deliveries all run on it), real HTTP to it.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RelayServer } from '../../src-relay/server.ts';
import type { MemoryStore } from '../../src-relay/store/memory-store.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { relayConfig, startMemoryRelay } from '../../rigs/relay/helpers.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'yeastar-p-series');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8').trim();
/** A webhook Secret as the PBX generates it: 32 characters. */
const SECRET = 'qnIdTBxyGgn2LckZrFw7IVeTRMJf3XfM';
const HOUR = 3600_000;

/** The guide's 30010 report with another status (1 idle, 41 registration failed). */
function trunkReport(status: number): string {
  const frame = JSON.parse(fixture('event-30010-trunk-idle.json')) as { msg: string };
  const msg = JSON.parse(frame.msg) as Record<string, unknown>;
  return JSON.stringify({ ...frame, msg: JSON.stringify({ ...msg, status }) });
}

let relay: RelayServer | undefined;

afterEach(async () => {
  await relay?.close();
  relay = undefined;
});

async function start(options: { maxEvents?: number; failAppends?: number } = {}) {
  const clock = new FakeClock();
  const started = await startMemoryRelay(
    relayConfig(
      {
        pbx: { baseUrl: 'http://127.0.0.1:9', secrets: [SECRET], phoneSystem: 'yeastar-p-series' },
      },
      options.maxEvents ? { retention: { maxEvents: options.maxEvents } } : {},
    ),
    clock,
  );
  relay = started.relay;
  const store: MemoryStore = started.store;
  // A store that fails the next few appends, as a Redis outage does (the relay answers 503).
  let failing = options.failAppends ?? 0;
  const append = store.append.bind(store);
  store.append = (event) =>
    failing-- > 0 ? Promise.reject(new Error('store down')) : append(event);
  const deliver = async (body: string) => {
    const res = await fetch(started.relay.webhookUrl('pbx'), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Signature': createHmac('sha256', SECRET).update(body).digest('base64'),
      },
      body,
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const stored = async () =>
    (await store.readAfter('pbx', '0-0', 1_000)).events.map((e) => String(e.body));
  return { clock, store, deliver, stored, metrics: started.relay.metrics };
}

describe('relay: a Yeastar delivery sent again', { timeout: 30_000 }, () => {
  it("a copy of a ring sent after the store's 25-hour dedupe is acknowledged and stored as nothing", async () => {
    const { clock, deliver, stored, metrics } = await start();
    const ring = fixture('constructed-30011-inbound-rings-101.json');
    expect(await deliver(ring)).toMatchObject({ status: 200, json: { ok: true, stored: 1 } });
    // A day and more later, the store has forgotten the event and its id; the copy is still known.
    await clock.advance(26 * HOUR);
    const before = (await stored()).length;
    expect(await deliver(ring)).toEqual({ status: 200, json: { ok: true, duplicate: true } });
    expect(await stored()).toHaveLength(before);
    expect(metrics.copies).toBe(1);
  });

  it('a ring the relay could not store (503) is taken when the PBX sends it again', async () => {
    const { deliver, stored } = await start({ failAppends: 1 });
    const ring = fixture('constructed-30011-inbound-rings-101.json');
    expect((await deliver(ring)).status).toBe(503);
    expect(await deliver(ring)).toMatchObject({ status: 200, json: { ok: true, stored: 1 } });
    expect((await stored()).map((e) => JSON.parse(e).data.state)).toEqual(['ringing']);
  });

  it('400 copies of one trunk report are one event: they push no ring out of a retention of 300', async () => {
    const { deliver, stored } = await start({ maxEvents: 300 });
    const ring = fixture('constructed-30011-inbound-rings-101.json');
    expect((await deliver(ring)).status).toBe(200);
    const trunk = trunkReport(41);
    for (let i = 0; i < 400; i++) expect((await deliver(trunk)).status).toBe(200);
    const events = (await stored()).map((e) => JSON.parse(e) as { event: number });
    expect(events.map((e) => e.event)).toEqual([30011, 30007]);
  });

  it('a status that comes back after another is a change: down, up, down again are three events', async () => {
    const { clock, deliver, stored } = await start();
    for (const status of [41, 41, 1, 41, 41]) {
      expect((await deliver(trunkReport(status))).status).toBe(200);
      await clock.advance(60_000);
    }
    const events = (await stored()).map(
      (e) => JSON.parse(e) as { data: { vendor_status: number } },
    );
    expect(events.map((e) => e.data.vendor_status)).toEqual([41, 1, 41]);
  });
});
