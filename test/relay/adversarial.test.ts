/**
 * The adversarial probe (attacks.ts) as tests: each abuse is run against the real relay process
 * (`node dist-relay/screenpop-relay.cjs`, memory store) on 127.0.0.1, with bounded loops, and must leave the
 * relay within its limits. Memory ceilings are on the relay's resident set (VmRSS) while the
 * abuse lasts, above what it was when the abuse began; each is stated where it is asserted, and
 * each limit has a line in src-relay/README.md ("Limits"). The Redis-backed items are in
 * adversarial-redis.test.ts. `npm run bench:relay-abuse` runs the same attacks at the probe's size.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { useTempDir } from '../support/temp-dir.ts';
import { waitFor } from '../../rigs/wait.ts';
import {
  closeCodeSeries,
  fillBacklog,
  handshakeFlood,
  hello,
  openSocket,
  postRaw,
  replayHoard,
  slowHeaders,
  streamBody,
  streamUrl,
} from '../../rigs/relay/attacks.ts';
import { expectFloodCut, FLOOD_TEST_MS } from './adversarial-support.ts';
import { SECRET, envelope, signed, startTokenService } from '../../rigs/relay/helpers.ts';
import { spawnRelay, type RelayProcess } from '../../rigs/relay/relay-process.ts';

type Service = Awaited<ReturnType<typeof startTokenService>>;

const tenants = (baseUrl: string) => ({ acme: { baseUrl, secrets: [SECRET] } });

/** Valid tokens: anything starting with `tok` (each desktop has its own). */
const TOKENS = { has: (t: string) => t.startsWith('tok') };

describe('item 1: a client flooding heartbeats without reading', () => {
  let service: Service;
  let relay: RelayProcess;
  beforeAll(async () => {
    service = await startTokenService(TOKENS);
    relay = await spawnRelay({ config: { tenants: tenants(service.baseUrl), logLevel: 'warn' } });
  });
  afterAll(async () => {
    await relay?.stop();
    await service?.close();
  });

  it(
    'is closed before any hello, and the relay stays within 64 MiB of where it was',
    async () => {
      await expectFloodCut(relay, 'tok');
    },
    FLOOD_TEST_MS,
  );

  it(
    'after its hello too (a frame rate limit), within 64 MiB',
    async () => {
      await expectFloodCut(relay, 'tok-2', { hello: true });
    },
    FLOOD_TEST_MS,
  );

  it('a heartbeat before the hello closes the socket with 4400; a burst of them after it too', async () => {
    const early = await openSocket(streamUrl(relay.url), 'tok-3');
    if (!('ws' in early)) throw new Error('refused');
    early.ws.send(JSON.stringify({ type: 'heartbeat' }));
    expect(await closeCode(early.ws)).toBe(4400);
    const burst = await openSocket(streamUrl(relay.url), 'tok-4');
    if (!('ws' in burst)) throw new Error('refused');
    burst.ws.send(hello(null));
    // A desktop sends one every 12.5 s; 40 at once is past the burst of 20 allowed.
    for (let i = 0; i < 40; i++) burst.ws.send(JSON.stringify({ type: 'heartbeat' }));
    expect(await closeCode(burst.ws)).toBe(4400);
  });
});

describe('item 1: replies go through the send-buffer check as events do', () => {
  it(
    'a client that does not read its heartbeat answers is dropped at maxBufferedBytes (RSS within 64 MiB)',
    async () => {
      const service = await startTokenService(TOKENS);
      // No frame rate limit here, so the only bound left is the one on what the relay queues.
      const relay = await spawnRelay({
        config: {
          tenants: tenants(service.baseUrl),
          logLevel: 'warn',
          clients: { maxFramesPerMinute: 1_000_000_000, maxBufferedBytes: 256 * 1024 },
        },
      });
      try {
        await expectFloodCut(relay, 'tok', { hello: true });
      } finally {
        await relay.stop();
        await service.close();
      }
    },
    FLOOD_TEST_MS,
  );
});

describe('item 2: SIGTERM with a snapshot file', () => {
  const dir = useTempDir('relay-sigterm-');

  it('drains, writes the snapshot, exits 0, and a restarted relay replays every acknowledged event', async () => {
    const service = await startTokenService(TOKENS);
    const snapshotFile = join(dir.path, 'snapshot.json');
    const config = {
      tenants: tenants(service.baseUrl),
      storage: { kind: 'memory', snapshotFile },
    };
    try {
      const relay = await spawnRelay({ config });
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const body = envelope({ event_id: `kept-${i}` });
        expect(await postRaw(relay.url + '/webhook/acme', body, signed(body))).toBe(200);
        ids.push(`kept-${i}`);
      }
      const end = await relay.stop(20_000);
      expect(end).toEqual({ code: 0, signal: null });
      expect(relay.logLines().map((l) => l.msg)).toEqual(
        expect.arrayContaining(['relay draining', 'relay closed', 'relay stopped']),
      );
      expect(existsSync(snapshotFile)).toBe(true);
      expect(readFileSync(snapshotFile, 'utf8')).toContain('kept-9');

      const again = await spawnRelay({ config });
      try {
        const opened = await openSocket(streamUrl(again.url), 'tok');
        if (!('ws' in opened)) throw new Error('refused');
        const got: string[] = [];
        opened.ws.on('message', (d) => {
          const text = d.toString();
          if (!text.startsWith('relay '))
            got.push((JSON.parse(text) as { event_id: string }).event_id);
        });
        opened.ws.send(hello('0-1'));
        await waitFor(() => got.length === ids.length, 'the replay after the restart');
        expect(got).toEqual(ids);
        opened.ws.terminate();
      } finally {
        await again.stop();
      }
    } finally {
      await service.close();
    }
  });
});

describe('item 3: two tenants behind one base URL', () => {
  it('is a configuration the relay refuses to start with, naming both tenants', async () => {
    const service = await startTokenService(TOKENS);
    try {
      const err = await spawnRelay({
        config: {
          tenants: {
            acme: { baseUrl: service.baseUrl, secrets: [SECRET] },
            globex: { baseUrl: service.baseUrl + '/', secrets: ['globex-secret'] },
          },
        },
      }).then(
        async (relay) => {
          await relay.stop();
          return null;
        },
        (e: Error) => e,
      );
      expect(err?.message).toMatch(/exited with 1/);
      expect(err?.message).toMatch(/tenants acme and globex have the same baseUrl/);
    } finally {
      await service.close();
    }
  });
});

describe('item 4: limits on sessions and on what they hold', () => {
  let service: Service;
  beforeAll(async () => {
    service = await startTokenService(TOKENS);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('caps sessions per token (8) and per address (maxSessionsPerAddress), with 429', async () => {
    const relay = await spawnRelay({
      config: { tenants: tenants(service.baseUrl), clients: { maxSessionsPerAddress: 12 } },
    });
    const sockets: WebSocket[] = [];
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await openSocket(streamUrl(relay.url), 'tok-shared');
        if ('ws' in r) sockets.push(r.ws);
        statuses.push('ws' in r ? 101 : r.status);
      }
      expect(statuses).toEqual([...Array(8).fill(101), 429, 429]);
      for (let i = 0; i < 6; i++) {
        const r = await openSocket(streamUrl(relay.url), `tok-own-${i}`);
        if ('ws' in r) sockets.push(r.ws);
        statuses.push('ws' in r ? 101 : r.status);
      }
      expect(statuses.slice(10)).toEqual([101, 101, 101, 101, 429, 429]);
      // Another address is not affected; a closed session frees its place.
      const other = await openSocket(streamUrl(relay.url), 'tok-other', '127.0.0.2');
      expect('ws' in other).toBe(true);
      if ('ws' in other) sockets.push(other.ws);
      sockets[0]!.close();
      await waitFor(
        () => relay.logLines().some((l) => l.msg === 'client disconnected'),
        'a session closed',
      );
      const again = await openSocket(streamUrl(relay.url), 'tok-shared');
      expect('ws' in again).toBe(true);
      if ('ws' in again) sockets.push(again.ws);
    } finally {
      for (const ws of sockets) ws.terminate();
      await relay.stop();
    }
  });

  it('100 clients (a token each) resuming a 12 MB backlog without reading: RSS within 120 MiB, and SIGTERM still exits 0 at once', async () => {
    const relay = await spawnRelay({
      config: { tenants: tenants(service.baseUrl), logLevel: 'warn' },
    });
    try {
      expect(await fillBacklog(relay.url, 1500, 8192)).toBe(1500);
      const r = await replayHoard({
        relayUrl: relay.url,
        pid: relay.pid,
        clients: 100,
        token: (i) => `tok-${i}`,
        holdSeconds: 3,
      });
      expect(r.admitted).toBe(100);
      // Unsent bytes of all clients are held to clients.sendBudgetBytes (64 MiB).
      expect(r.peakMiB - r.startMiB).toBeLessThan(120);
      const t0 = performance.now();
      expect(await relay.stop(20_000)).toEqual({ code: 0, signal: null });
      expect(performance.now() - t0).toBeLessThan(10_000);
    } finally {
      await relay.stop();
    }
  });
});

describe('item 6: handshakes with made-up tokens', () => {
  it('cost at most a few dozen calls at the service and ten log lines, and a real desktop still gets in', async () => {
    const service = await startTokenService(TOKENS);
    const relay = await spawnRelay({ config: { tenants: tenants(service.baseUrl) } });
    try {
      const before = service.calls();
      const flood = handshakeFlood({
        relayUrl: relay.url,
        count: 1500,
        concurrency: 50,
        seconds: 20,
        token: (i) => `garbage-${i}`,
      });
      const real = await openSocket(streamUrl(relay.url), 'tok-real', '127.0.0.2');
      const r = await flood;
      expect(r.sent).toBe(1500);
      expect('ws' in real).toBe(true);
      if ('ws' in real) real.ws.terminate();
      // 20 refusals per address per minute, and at most 50 checks were already in flight.
      expect(service.calls() - before).toBeLessThanOrEqual(75);
      expect(r.statuses['429']).toBeGreaterThan(1350);
      // "client refused": at most 10 lines per 10 s (plus one saying how many more).
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(
        relay.logLines().filter((l) => l.msg.startsWith('client refused')).length,
      ).toBeLessThanOrEqual(11);
      const metrics = await (await fetch(relay.url + '/metrics')).text();
      expect(metrics).toMatch(/relay_handshakes_refused_total\{reason="rate-limited"\} \d{4}/);
    } finally {
      await relay.stop();
      await service.close();
    }
  });

  it('a restart storm: 400 desktops with tokens of their own at once, the service taking 100 ms, are all admitted', async () => {
    const service = await startTokenService(TOKENS, new Set(), '', { delayMs: 100 });
    const relay = await spawnRelay({
      config: { tenants: tenants(service.baseUrl), logLevel: 'warn' },
    });
    try {
      const r = await handshakeFlood({
        relayUrl: relay.url,
        count: 400,
        concurrency: 400,
        seconds: 30,
        token: (i) => `tok-storm-${i}`,
      });
      expect(r.statuses).toEqual({ 101: 400 });
    } finally {
      await relay.stop();
      await service.close();
    }
  });
});

describe('item 8: bodies, slow requests and metric labels', () => {
  let service: Service;
  let relay: RelayProcess;
  beforeAll(async () => {
    service = await startTokenService(TOKENS);
    relay = await spawnRelay({
      config: {
        tenants: tenants(service.baseUrl),
        logLevel: 'warn',
        http: { headersTimeoutMs: 1000, requestTimeoutMs: 2000 },
      },
    });
  });
  afterAll(async () => {
    await relay?.stop();
    await service?.close();
  });

  // The relay reads at most maxBodyBytes + 64 KiB of it; the rest of what the sender counts is
  // what the kernel buffered on the way before the connection was cut. (/webhook/acme was bounded
  // from the start; the other two once took gigabytes.)
  it.each(['/webhook/nosuch', '/nothing-here', '/webhook/acme'])(
    'a body streamed to %s is cut at once (the sender gets less than 16 MiB out)',
    async (path) => {
      const r = await streamBody(relay.url, path, 4);
      expect(r.ended).toBe('closed-by-relay');
      expect(r.bytes).toBeLessThan(16 * 1024 * 1024);
    },
  );

  // Issue 20, item 10: /metrics answered 200 while 64 MiB streamed in (it wrote its answer without
  // reply(), so nothing bounded the rest); now every path but the two that take a body answers 413
  // before its handler runs. (A sender that keeps streaming may lose the answer to the reset.)
  const noBody = ['/metrics', '/healthz', '/readyz', '/v1/org/acme', '/nothing-here'];
  it.each(noBody)('a body streamed to %s, which takes none, is cut at once', async (path) => {
    const r = await streamBody(relay.url, path, 4);
    expect(r.status).not.toBe(200);
    expect(r.ended).toBe('closed-by-relay');
    expect(r.bytes).toBeLessThan(16 * 1024 * 1024);
  });

  it('a body sent to any path that takes none is refused with 413, before its handler runs', async () => {
    for (const path of noBody) {
      const r = await fetch(relay.url + path, { method: 'POST', body: '{"a":1}' });
      expect(r.status, path).toBe(413);
      expect(await r.json(), path).toEqual({ ok: false, error: 'this path takes no request body' });
    }
  });

  it('a request without a body keeps its connection (only unread bodies close it)', async () => {
    for (const path of ['/healthz', '/nothing-here'])
      expect((await fetch(relay.url + path)).headers.get('connection')).toBe('keep-alive');
  });

  it('a request whose headers never finish is cut at headersTimeoutMs (1 s here), not 30 s later', async () => {
    expect(await slowHeaders(relay.url, 6000)).toBeLessThan(2500);
  });

  it('close codes a client chooses all count as one "other" series', async () => {
    expect(await closeCodeSeries(relay.url, 'tok', 20)).toBe(1);
    const metrics = await (await fetch(relay.url + '/metrics')).text();
    expect(metrics).toMatch(/relay_clients_closed_total\{code="other"\} 20/);
  });
});

/** The code the socket was closed with, or -1 if it was still open after 5 s. */
function closeCode(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      ws.terminate();
      resolve(-1);
    }, 5_000);
    ws.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}
