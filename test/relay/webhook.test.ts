import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src-relay/signature.ts';
import { signBody } from '../../src-sim/webhook-signature.ts';
import type { RelayServer } from '../../src-relay/server.ts';
import type { MemoryStore } from '../../src-relay/store/memory-store.ts';
import {
  SECRET,
  TestClient,
  envelope,
  postWebhook,
  relayConfig,
  signed,
  startMemoryRelay,
  startTokenService,
} from '../../rigs/relay/helpers.ts';
import { sleepReal } from '../../rigs/wait.ts';

describe('signature scheme (docs/wire-protocol.md section 7)', () => {
  it('matches the known-answer vector', () => {
    expect(signBody(SECRET, 'Hello, World!')).toBe(
      'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    );
    const body = Buffer.from('Hello, World!');
    expect(
      verifySignature(
        body,
        'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
        [SECRET],
      ),
    ).toBe('valid');
    expect(
      verifySignature(
        body,
        'sha256=757107EA0EB2509FC211221CCE984B8A37570B6D7586C22C46F4379C8B043E17',
        [SECRET],
      ),
    ).toBe('valid');
  });

  it('classifies bad headers before comparing', () => {
    const body = Buffer.from('Hello, World!');
    expect(verifySignature(body, undefined, [SECRET])).toBe('missing');
    expect(
      verifySignature(
        body,
        'sha1=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
        [SECRET],
      ),
    ).toBe('malformed');
    expect(
      verifySignature(
        body,
        'sha256=zz7107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
        [SECRET],
      ),
    ).toBe('malformed');
    expect(
      verifySignature(
        body,
        'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e',
        [SECRET],
      ),
    ).toBe('malformed');
    expect(verifySignature(body, ['sha256=a', 'sha256=b'], [SECRET])).toBe('malformed');
    expect(verifySignature(body, signBody('another secret', 'Hello, World!'), [SECRET])).toBe(
      'mismatch',
    );
    expect(
      verifySignature(body, signBody('another secret', 'Hello, World!'), [
        SECRET,
        'another secret',
      ]),
    ).toBe('valid');
  });
});

describe('webhook endpoint', () => {
  let relay: RelayServer;
  let store: MemoryStore;
  let service: Awaited<ReturnType<typeof startTokenService>>;
  let client: TestClient;
  const NEW_SECRET = 'rotated-secret-2026';
  const RETIRED_SECRET = 'retired-secret-2025';

  beforeAll(async () => {
    service = await startTokenService(new Set(['token-acme']));
    // Rotation in progress: the old and new secrets are both accepted; the retired one is gone.
    ({ relay, store } = await startMemoryRelay(
      relayConfig(
        { acme: { baseUrl: service.baseUrl, secrets: [SECRET, NEW_SECRET] } },
        { maxBodyBytes: 4096 },
      ),
    ));
    client = await TestClient.connect(relay.clientUrl('acme'), 'token-acme', {
      extensions: ['101'],
      events: [30009],
    });
  });
  afterAll(async () => {
    await client.close();
    await relay.close();
    await store.close();
    await service.close();
  });

  it('accepts a signed envelope and forwards the exact original bytes', async () => {
    // Unusual spacing and key order: a re-serialising relay would change these bytes.
    const body =
      '{ "event_id":"e-bytes-1",  "event": 30011, "tenant":"acme", "timestamp":1763802000000, "data": {"to":"101","from":"+44 20 7123 4567","call_id":"c1","state":"ringing","x":"\\u00e9é"}, "extra":[1,2.50] }';
    const res = await postWebhook(relay.webhookUrl('acme'), body, signed(body));
    expect(res.status).toBe(200);
    await client.until(() => client.events.length >= 1);
    expect(client.events[0]).toBe(body);
  });

  it('accepts the rotated-in secret too', async () => {
    const body = envelope({ event_id: 'e-new-secret' });
    expect(
      (await postWebhook(relay.webhookUrl('acme'), body, signBody(NEW_SECRET, body))).status,
    ).toBe(200);
    await client.until(() => client.eventIds().includes('e-new-secret'));
  });

  it('answers 401 to missing, malformed, wrong-length, wrong and retired-secret signatures and forwards nothing', async () => {
    const before = client.events.length;
    const storedBefore = store.size().events;
    const cases: [string, string | undefined][] = [
      ['missing', undefined],
      ['malformed', 'sha256=not-hex-at-all-not-hex-at-all-not-hex-at-all-not-hex-at-all!!'],
      ['no prefix', '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17'],
      ['wrong length', 'sha256=757107ea0eb2509fc211221cce984b8a'],
      ['wrong', 'sha256=' + '0'.repeat(64)],
      ['retired secret', 'retired'],
    ];
    for (const [name, sig] of cases) {
      const body = envelope({ event_id: `e-bad-${name}` });
      const header = sig === 'retired' ? signBody(RETIRED_SECRET, body) : sig;
      const res = await postWebhook(relay.webhookUrl('acme'), body, header);
      expect(res.status, name).toBe(401);
    }
    // A signature over other bytes (body altered in transit) is also refused.
    const body = envelope({ event_id: 'e-tampered' });
    expect(
      (await postWebhook(relay.webhookUrl('acme'), body.replace('101', '102'), signed(body)))
        .status,
    ).toBe(401);
    await sleepReal(100);
    expect(client.events.length).toBe(before);
    expect(store.size().events).toBe(storedBefore);
    const metrics = await relay.metrics.render();
    expect(metrics).toMatch(/relay_webhooks_rejected_total\{reason="signature-missing"\} 1/);
    expect(metrics).toMatch(/relay_webhooks_rejected_total\{reason="signature-mismatch"\} 3/);
  });

  it('answers 413 to an oversized body, whatever its signature', async () => {
    const body = envelope({ event_id: 'e-big' }).replace(
      '"ringing"',
      `"ringing","pad":"${'x'.repeat(5000)}"`,
    );
    expect((await postWebhook(relay.webhookUrl('acme'), body, signed(body))).status).toBe(413);
  });

  it('answers 400 to malformed JSON with a valid signature, and to a non-envelope', async () => {
    const bad = '{"event_id":"e-broken", "event": 30011,';
    expect((await postWebhook(relay.webhookUrl('acme'), bad, signed(bad))).status).toBe(400);
    const notEnvelope = '{"hello":"world"}';
    expect(
      (await postWebhook(relay.webhookUrl('acme'), notEnvelope, signed(notEnvelope))).status,
    ).toBe(400);
    const otherTenant = envelope({ event_id: 'e-other-tenant', tenant: 'globex' });
    expect(
      (await postWebhook(relay.webhookUrl('acme'), otherTenant, signed(otherTenant))).status,
    ).toBe(400);
    const invalidUtf8 = Buffer.concat([
      Buffer.from('{"event_id":"e-utf8","event":30011,"tenant":"acme","data":{"to":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}'),
    ]);
    expect(
      (await postWebhook(relay.webhookUrl('acme'), invalidUtf8, signBody(SECRET, invalidUtf8)))
        .status,
    ).toBe(400);
  });

  it('answers an unknown tenant as a wrong signature (401), so tenants cannot be enumerated', async () => {
    const body = envelope({ event_id: 'e-unknown', tenant: 'nobody' });
    const unknown = await postWebhook(relay.url + '/webhook/nobody', body, signed(body));
    const wrong = await postWebhook(relay.webhookUrl('acme'), body, 'sha256=' + '0'.repeat(64));
    expect({ status: unknown.status, body: unknown.body }).toEqual({
      status: wrong.status,
      body: wrong.body,
    });
    expect(unknown.status).toBe(401);
  });

  it('delivers 1,000 duplicate deliveries of one event exactly once', async () => {
    const body = envelope({ event_id: 'e-dup-1000' });
    const sig = signed(body);
    const statuses: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const results = await Promise.all(
        Array.from({ length: 100 }, () => postWebhook(relay.webhookUrl('acme'), body, sig)),
      );
      statuses.push(...results.map((r) => r.status));
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    await sleepReal(200);
    expect(client.eventIds().filter((id) => id === 'e-dup-1000')).toHaveLength(1);
    expect(relay.metrics.duplicates).toBeGreaterThanOrEqual(999);
  });

  it('starts a client with an unknown (future) cursor live, with a gap notice', async () => {
    const late = await TestClient.connect(
      relay.clientUrl('acme'),
      'token-acme',
      { extensions: ['101'] },
      '9999999999999-0',
    );
    try {
      expect(late.controls.map((c) => c.type)).toEqual(['gap', 'ready']);
      const body = envelope({ event_id: 'e-after-future-cursor' });
      expect((await postWebhook(relay.webhookUrl('acme'), body, signed(body))).status).toBe(200);
      await late.until(() => late.events.length === 1);
      expect(late.eventIds()).toEqual(['e-after-future-cursor']);
    } finally {
      await late.close();
    }
  });

  it('advances an idle client past events for others, so its resume point stays current', async () => {
    const other = envelope({ event_id: 'e-for-102', to: '102' });
    const res = await postWebhook(relay.webhookUrl('acme'), other, signed(other));
    const cursor = (JSON.parse(res.body) as { cursor: string }).cursor;
    client.send(JSON.stringify({ type: 'heartbeat' }));
    await client.until(() =>
      client.controls.some((c) => c.type === 'heartbeat' && c.cursor === cursor),
    );
    expect(client.eventIds()).not.toContain('e-for-102');
  });

  it('serves health, readiness and metrics', async () => {
    expect((await fetch(relay.url + '/healthz')).status).toBe(200);
    const ready = await fetch(relay.url + '/readyz');
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(relay.url + '/metrics')).text();
    for (const name of [
      'relay_webhooks_received_total',
      'relay_webhooks_rejected_total',
      'relay_webhooks_duplicate_total',
      'relay_events_stored_total',
      'relay_events_delivered_total',
      'relay_connected_clients 1',
      'relay_delivery_lag_ms_bucket',
      'relay_store_handover_ms_bucket',
      'relay_fanout_ms_bucket',
    ])
      expect(metrics).toContain(name);
    // The tests above delivered events live: each step of the live path was timed.
    for (const step of ['relay_store_handover_ms', 'relay_fanout_ms'])
      expect(Number(new RegExp(`^${step}_count (\\d+)`, 'm').exec(metrics)?.[1])).toBeGreaterThan(
        0,
      );
  });
});

describe('a client that cannot keep up', () => {
  it('is closed with 4008 and, resuming from its cursor, gets everything (the replay paced by the socket)', async () => {
    const service = await startTokenService(new Set(['tok']));
    const config = relayConfig(
      { acme: { baseUrl: service.baseUrl, secrets: [SECRET] } },
      { maxBodyBytes: 128 * 1024 },
    );
    config.clients.maxBufferedBytes = 64 * 1024;
    const { relay, store } = await startMemoryRelay(config);
    try {
      const slow = await TestClient.connect(relay.clientUrl('acme'), 'tok', {
        extensions: ['101'],
      });
      expect(slow.cursor).not.toBeNull(); // even on an empty relay there is a position to resume from
      slow.pauseReading(true);
      const ids: string[] = [];
      const pad = 'p'.repeat(60_000);
      // Post until the relay has given up on the client. The paused client cannot read the close
      // frame, so ask the relay: posting on after it closed outlasted, on a busy machine, the
      // grace the relay gives a close frame, and the socket was cut (1006) instead.
      const dropped = () => (relay.metrics.clientsClosed.get('4008') ?? 0) > 0;
      for (let i = 0; i < 600 && !dropped(); i++) {
        const body = envelope({ event_id: `slow-${i}` }).replace(
          '"ringing"',
          `"ringing","pad":"${pad}"`,
        );
        expect((await postWebhook(relay.webhookUrl('acme'), body, signed(body))).status).toBe(200);
        ids.push(`slow-${i}`);
      }
      slow.pauseReading(false);
      await slow.until(() => slow.closeCode !== null, 10_000);
      expect(slow.closeCode).toBe(4008);
      expect(slow.events.length).toBeLessThan(ids.length);
      // Resume from the last cursor it was given: the rest arrives, paced by the socket.
      const resumed = await TestClient.connect(
        relay.clientUrl('acme'),
        'tok',
        { extensions: ['101'] },
        slow.cursor,
      );
      const seen = () => new Set([...slow.eventIds(), ...resumed.eventIds()]);
      await resumed.until(() => seen().size === ids.length, 10_000);
      expect([...seen()].sort()).toEqual([...ids].sort());
      const resumedIds = resumed.eventIds();
      expect(resumedIds).toEqual(ids.slice(ids.indexOf(resumedIds[0]!)));
      await resumed.close();
    } finally {
      await relay.close();
      await store.close();
      await service.close();
    }
  });
});
