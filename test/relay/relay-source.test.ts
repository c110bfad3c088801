import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import type { ConnectionStatus } from '../../src-main/core/events/contracts.ts';
import { RelayEventSource, relayStreamUrl } from '../../src-main/core/relay-client/relay-source.ts';
import type { CreateSocket } from '../../src-shared/stream/socket.ts';
import {
  fileCursorStore,
  type CursorStore,
} from '../../src-main/core/relay-client/cursor-store.ts';
import { startRelay, type RelayServer } from '../../src-relay/server.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SECRET,
  TestClient,
  envelope,
  listTokenSource,
  postWebhook,
  relayConfig,
  signed,
  startTokenService,
} from '../../rigs/relay/helpers.ts';
import { waitFor } from '../../rigs/wait.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

interface Harness {
  clock: FakeClock;
  relay: RelayServer;
  store: MemoryStore;
  service: Awaited<ReturnType<typeof startTokenService>>;
  sources: RelayEventSource[];
}

let h: Harness | undefined;

async function setup(
  opts: {
    maxEvents?: number;
    tokens?: Set<string>;
    blocked?: Set<string>;
    authMaxAgeMs?: number;
  } = {},
): Promise<Harness> {
  const clock = new FakeClock();
  const service = await startTokenService(opts.tokens ?? new Set(['tok-1']), opts.blocked);
  const config = relayConfig({ acme: { baseUrl: service.baseUrl, secrets: [SECRET] } });
  if (opts.maxEvents) config.retention.maxEvents = opts.maxEvents;
  if (opts.authMaxAgeMs) config.clients.authMaxAgeMs = opts.authMaxAgeMs;
  const store = new MemoryStore({ clock, retention: config.retention });
  const relay = await startRelay({ config, store, clock, logger: silentLogger });
  h = { clock, relay, store, service, sources: [] };
  return h;
}

function source(
  harness: Harness,
  tokens: string[] = ['tok-1'],
  extra: Partial<ConstructorParameters<typeof RelayEventSource>[0]> = {},
) {
  const frames: string[] = [];
  const statuses: ConnectionStatus[] = [];
  const tokenSource = listTokenSource(tokens);
  const src = new RelayEventSource({
    relayUrl: harness.relay.url,
    tenant: 'acme',
    tokens: tokenSource,
    filter: { extensions: ['101'], dids: ['+44 20 7946 0000'], events: [] },
    clock: harness.clock,
    random: () => 0.5,
    createSocket: directTransport().createSocket,
    ...extra,
  });
  src.onFrame((t) => frames.push(t));
  src.onStatus((s) => statuses.push(s));
  harness.sources.push(src);
  return {
    src,
    frames,
    statuses,
    tokenSource,
    ids: () => frames.map((f) => (JSON.parse(f) as { event_id: string }).event_id),
  };
}

/** Posts a signed webhook; resolves with the cursor the relay stored it at. */
async function post(harness: Harness, body: string): Promise<string> {
  const res = await postWebhook(harness.relay.webhookUrl('acme'), body, signed(body));
  expect(res.status).toBe(200);
  return (JSON.parse(res.body) as { cursor: string }).cursor;
}

afterEach(async () => {
  if (!h) return;
  for (const s of h.sources) await s.stop();
  await h.relay.close();
  await h.store.close();
  await h.service.close();
  h = undefined;
});

describe('RelayEventSource', () => {
  it('refuses a plain-text relay address that is not on this computer', () => {
    expect(() => relayStreamUrl('http://relay.example.org', 'acme')).toThrow(/https/);
    expect(relayStreamUrl('https://relay.example.org/base/', 'acme')).toBe(
      'wss://relay.example.org/base/v1/stream/acme',
    );
    expect(relayStreamUrl('http://127.0.0.1:8080', 'acme')).toBe(
      'ws://127.0.0.1:8080/v1/stream/acme',
    );
  });

  it('connects, receives only events for its extensions and DIDs, as the original text', async () => {
    const harness = await setup();
    const c = source(harness);
    c.src.start();
    await waitFor(() => c.statuses.at(-1)?.state === 'connected', 'connected', { timeoutMs: 5000 });
    const mine = envelope({ event_id: 'e1', to: '101' });
    const did = envelope({ event_id: 'e2', to: '+442079460000' });
    const other = envelope({ event_id: 'e3', to: '102' });
    const presence = envelope({ event_id: 'e4', event: 30009 });
    for (const b of [mine, other, presence, did]) await post(harness, b);
    await waitFor(() => c.frames.length >= 2, 'two frames', { timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 100));
    expect(c.frames).toEqual([mine, did]);
  });

  it('resumes after two minutes offline and receives exactly what it missed', async () => {
    const harness = await setup();
    const c = source(harness);
    c.src.start();
    await waitFor(() => c.statuses.at(-1)?.state === 'connected', 'connected');
    const stored = await post(harness, envelope({ event_id: 'before', to: '101' }));
    await waitFor(
      () => c.frames.length === 1 && c.src.position !== null,
      'the first frame and a position',
    );
    await waitFor(() => c.src.position === stored, 'the position at the stored event');
    await c.src.stop();
    for (let i = 0; i < 5; i++) {
      await post(harness, envelope({ event_id: `missed-${i}`, to: i % 2 === 0 ? '101' : '102' }));
      await harness.clock.advance(24_000);
    }
    c.src.start();
    await waitFor(() => c.frames.length >= 4, 'replay', { timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 100));
    expect(c.ids()).toEqual(['before', 'missed-0', 'missed-2', 'missed-4']);
    expect(c.statuses.at(-1)?.state).toBe('connected');
  });

  it('reports a gap (degraded, with reason) when its cursor is older than the relay retains', async () => {
    const harness = await setup({ maxEvents: 3 });
    const c = source(harness);
    c.src.start();
    await waitFor(() => c.statuses.at(-1)?.state === 'connected', 'connected');
    const stored = await post(harness, envelope({ event_id: 'g0', to: '101' }));
    await waitFor(
      () => c.src.position !== null && c.frames.length === 1,
      'a position and the first frame',
    );
    await waitFor(() => c.src.position === stored, 'the position at the stored event');
    await c.src.stop();
    for (let i = 1; i <= 6; i++) await post(harness, envelope({ event_id: `g${i}`, to: '101' }));
    c.src.start();
    await waitFor(() => c.frames.length >= 4, 'replay', { timeoutMs: 5000 });
    expect(c.ids()).toEqual(['g0', 'g4', 'g5', 'g6']);
    const last = c.statuses.at(-1)!;
    expect(last.state).toBe('degraded');
    expect(last.reason).toMatch(/missed/);
    await harness.clock.advance(5 * 60_000 + 1);
    expect(c.statuses.at(-1)?.state).toBe('connected');
  });

  it('reconnects with back-off on its clock after the relay restarts (1012) and loses nothing', async () => {
    const harness = await setup();
    const c = source(harness);
    c.src.start();
    await waitFor(() => c.statuses.at(-1)?.state === 'connected', 'connected');
    const stored = await post(harness, envelope({ event_id: 'r0', to: '101' }));
    await waitFor(() => c.frames.length === 1, 'the first frame');
    await waitFor(() => c.src.position === stored, 'the position at the stored event');
    const port = harness.relay.port;
    await harness.relay.close();
    await waitFor(() => c.statuses.at(-1)?.state === 'offline', 'offline', { timeoutMs: 5000 });
    // Same store, same port: a restarted relay. Events arrive before the desktop is back.
    const config = relayConfig(
      { acme: { baseUrl: harness.service.baseUrl, secrets: [SECRET] } },
      { port },
    );
    harness.relay = await startRelay({
      config,
      store: harness.store,
      clock: harness.clock,
      logger: silentLogger,
    });
    await post(harness, envelope({ event_id: 'r1', to: '101' }));
    await post(harness, envelope({ event_id: 'r2', to: '101' }));
    // random() = 0.5 and a 500 ms base: the first retry is due after 250 ms of the source's clock.
    await new Promise((r) => setTimeout(r, 200));
    expect(c.frames.length).toBe(1);
    await harness.clock.advance(250);
    await waitFor(() => c.frames.length === 3, 'resume', { timeoutMs: 5000 });
    expect(c.ids()).toEqual(['r0', 'r1', 'r2']);
    expect(c.statuses.at(-1)?.state).toBe('connected');
  });

  it('invalidates a refused token and reconnects at once with a fresh one', async () => {
    const harness = await setup({ tokens: new Set(['good']) });
    const c = source(harness, ['stale', 'good']);
    c.src.start();
    await waitFor(() => c.tokenSource.invalidated.length === 1, 'the token invalidated');
    await harness.clock.advance(0);
    await waitFor(
      () => c.statuses.at(-1)?.state === 'connected',
      'connected with the fresh token',
      { timeoutMs: 5000 },
    );
    expect(c.tokenSource.invalidated).toEqual(['stale']);
  });

  it('needs the user when the service refuses the token with 10004, and retries on wake("user")', async () => {
    const harness = await setup({ tokens: new Set(['tok-1']), blocked: new Set(['blocked']) });
    const c = source(harness, ['blocked', 'tok-1']);
    c.src.start();
    await waitFor(() => c.statuses.at(-1)?.state === 'needs-attention', 'needs-attention', {
      timeoutMs: 5000,
    });
    expect(c.statuses.at(-1)).toMatchObject({ errcode: 10004 });
    await harness.clock.advance(120_000); // no retries while the user must act
    await new Promise((r) => setTimeout(r, 100));
    expect(c.statuses.at(-1)?.state).toBe('needs-attention');
    expect(harness.service.calls()).toBe(1);
    c.tokenSource.invalidate('blocked'); // the user fixed the allowlist; the app hands out a new token
    c.src.wake('user');
    await harness.clock.advance(0);
    await waitFor(() => c.statuses.at(-1)?.state === 'connected', 'connected after the fix', {
      timeoutMs: 5000,
    });
  });

  it('abandons a connection attempt that never opens and retries with back-off', async () => {
    const harness = await setup();
    // The far side swallows packets: the socket never opens (closed follows terminate, as with ws).
    const attempts: string[] = [];
    const createSocket: CreateSocket = (url, _headers, callbacks) => {
      attempts.push(url);
      return { send() {}, close() {}, terminate: () => callbacks.closed(1006, '') };
    };
    const c = source(harness, ['tok-1'], { createSocket, connectTimeoutMs: 15_000 });
    c.src.start();
    await harness.clock.advance(0);
    expect(attempts).toHaveLength(1);
    await harness.clock.advance(14_999);
    expect(attempts).toHaveLength(1);
    await harness.clock.advance(1);
    expect(c.statuses.at(-1)?.state).toBe('offline');
    await harness.clock.advance(250); // back-off: random 0.5 x 500 ms
    expect(attempts).toHaveLength(2);
  });

  it('relay side: a client that sends nothing for 60 s is closed with 4000', async () => {
    const harness = await setup();
    const silent = await TestClient.connect(harness.relay.clientUrl('acme'), 'tok-1', {
      extensions: ['101'],
    });
    await harness.clock.advance(55_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(silent.closeCode).toBeNull();
    await harness.clock.advance(10_000);
    await waitFor(() => silent.closeCode !== null, 'silent client closed', { timeoutMs: 5000 });
    expect(silent.closeCode).toBe(4000);
  });

  it('an old session is closed with 4002 and the source comes straight back with a fresh token', async () => {
    const harness = await setup({ authMaxAgeMs: 30_000 });
    const c = source(harness);
    c.src.start();
    await waitFor(() => c.statuses.at(-1)?.state === 'connected', 'connected');
    // Advance in steps so that heartbeats (every 12.5 s) are answered over the real socket.
    for (let i = 0; i < 36 && !/code="4002"/.test(await harness.relay.metrics.render()); i++) {
      await harness.clock.advance(1000);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await harness.relay.metrics.render()).toMatch(
      /relay_clients_closed_total\{code="4002"\} 1/,
    );
    await harness.clock.advance(0); // reconnect at once: no back-off
    await waitFor(
      () => c.statuses.at(-1)?.state === 'connected' && harness.relay.clientCount() === 1,
      'source back',
      { timeoutMs: 5000 },
    );
    expect(c.statuses.some((s) => s.state === 'offline' && s.reason !== 'Not started.')).toBe(
      false,
    );
  });

  it('replaces a socket that went silent (heartbeat) and resumes', async () => {
    const harness = await setup();
    // The far side goes quiet without closing (half-open TCP): frames stop arriving.
    let stalled = false;
    let created = 0;
    const createSocket: CreateSocket = (url, headers, callbacks) => {
      const first = ++created === 1;
      return directTransport().createSocket(url, headers, {
        ...callbacks,
        message: (text) => (stalled && first ? undefined : callbacks.message(text)),
      });
    };
    const c = source(harness, ['tok-1'], { heartbeatMs: 1000, createSocket });
    c.src.start();
    await waitFor(() => c.statuses.at(-1)?.state === 'connected', 'connected');
    // Heartbeats are answered, so time passing on the clock alone does not drop the socket.
    for (let i = 0; i < 6; i++) {
      await harness.clock.advance(500);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(c.statuses.filter((s) => s.state === 'connecting')).toHaveLength(1);
    stalled = true;
    for (let i = 0; i < 6; i++) await harness.clock.advance(500);
    await waitFor(() => c.statuses.some((s) => s.reason?.includes('silent')), 'replaced', {
      timeoutMs: 5000,
    });
    await harness.clock.advance(0);
    await waitFor(() => c.statuses.at(-1)?.state === 'connected', 'reconnected', {
      timeoutMs: 5000,
    });
    expect(created).toBe(2);
  });

  it('keeps its cursor in a file so a restarted app resumes', async () => {
    const harness = await setup();
    const dir = mkdtempSync(join(tmpdir(), 'relay-cursor-'));
    try {
      const cursorStore = fileCursorStore(join(dir, 'relay-cursor.json'));
      const a = source(harness, ['tok-1'], { cursorStore });
      a.src.start();
      await waitFor(() => a.statuses.at(-1)?.state === 'connected', 'connected');
      const stored = await post(harness, envelope({ event_id: 'f0', to: '101' }));
      await waitFor(() => a.frames.length === 1, 'the first frame');
      await waitFor(() => a.src.position === stored, 'the position at the stored event');
      await a.src.stop();
      await post(harness, envelope({ event_id: 'f1', to: '101' }));
      const b = source(harness, ['tok-1'], { cursorStore });
      b.src.start();
      await waitFor(() => b.frames.length === 1, 'replayed from the saved cursor', {
        timeoutMs: 5000,
      });
      expect(b.ids()).toEqual(['f1']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A far side for the source that follows a script instead of a relay: it answers each hello with
 * `onHello`. Connections past 100 never open, so a reconnect loop ends (and fails the test).
 */
function scriptedRelay(
  onHello: (
    hello: { cursor: string | null },
    peer: { send(text: string): void; close(code: number, reason: string): void },
  ) => void,
) {
  const hellos: { cursor: string | null }[] = [];
  const createSocket: CreateSocket = (_url, _headers, cb) => {
    if (hellos.length >= 100) return { send() {}, close() {}, terminate() {} };
    let closed = false;
    const peer = {
      send: (text: string) => {
        if (!closed) queueMicrotask(() => cb.message(text));
      },
      close: (code: number, reason: string) => {
        if (closed) return;
        closed = true;
        queueMicrotask(() => cb.closed(code, reason));
      },
    };
    queueMicrotask(() => cb.open());
    return {
      send(text) {
        const msg = JSON.parse(text) as { type: string; cursor: string | null };
        if (msg.type !== 'hello') return;
        hellos.push(msg);
        onHello(msg, peer);
      },
      close: (code, reason) => peer.close(code, reason),
      terminate: () => peer.close(1006, ''),
    };
  };
  return { createSocket, hellos };
}

const ready = (cursor: string | null) =>
  `relay ${JSON.stringify({ type: 'ready', session: 's', cursor, heartbeatMs: 25000, idleTimeoutMs: 60000 })}`;

describe('RelayEventSource against a misbehaving relay (fake clock)', () => {
  const make = (createSocket: CreateSocket, clock: FakeClock, cursorStore?: CursorStore) => {
    const src = new RelayEventSource({
      relayUrl: 'http://127.0.0.1:1',
      tenant: 'acme',
      tokens: listTokenSource(['tok']),
      filter: { extensions: ['101'], dids: [], events: [] },
      clock,
      random: () => 0.5,
      createSocket,
      ...(cursorStore ? { cursorStore } : {}),
    });
    return src;
  };

  it('backs off when the relay closes every session with 4002 at once (at once only after a stable session)', async () => {
    const clock = new FakeClock();
    const relay = scriptedRelay((_hello, peer) => {
      peer.send(ready('1-0'));
      peer.close(4002, 'authorisation expired');
    });
    const src = make(relay.createSocket, clock);
    src.start();
    await clock.advance(3_000);
    // The first 4002 reconnects at once; then 0.5 x 1 s, 0.5 x 2 s, ... (random fixed at 0.5).
    expect(relay.hellos.length).toBeLessThanOrEqual(4);
    await src.stop();
  });

  // Issue 34 item 5: the relay ends a single sign-on session at its maximum age after the ID token
  // was issued, whatever the token's own expiry (Auth0's last 10 h); reconnecting with the same
  // token would be refused as too old, so the source asks for a renewed one. A device credential
  // has no renewal: it is presented again.
  it('asks for a renewed ID token when the relay ends a single sign-on session (4002), not a device credential', async () => {
    const identity = (via: string) => ({
      user: 'alice',
      via,
      extensions: ['101'],
      dids: [],
      expiresAt: null,
    });
    for (const [via, tokens] of [
      ['oidc', ['id-1', 'id-2']],
      ['device', ['sprd_x', 'sprd_y']],
    ] as const) {
      const clock = new FakeClock();
      const used: string[] = [];
      const relay = scriptedRelay((_hello, peer) => {
        peer.send(
          `relay ${JSON.stringify({ type: 'ready', session: 's', cursor: null, heartbeatMs: 25000, idleTimeoutMs: 60000, identity: identity(via) })}`,
        );
        if (relay.hellos.length === 1) peer.close(4002, 'authorisation expired');
      });
      const tokenSource = listTokenSource([...tokens]);
      const src = new RelayEventSource({
        relayUrl: 'http://127.0.0.1:1',
        tenant: 'acme',
        tokens: tokenSource,
        filter: { extensions: ['101'], dids: [], events: [] },
        clock,
        random: () => 0.5,
        createSocket: (url, headers, cb) => {
          used.push(headers.Authorization!);
          return relay.createSocket(url, headers, cb);
        },
      });
      src.start();
      await clock.advance(1_000);
      await src.stop();
      expect(used, via).toEqual(
        via === 'oidc' ? ['Bearer id-1', 'Bearer id-2'] : ['Bearer sprd_x', 'Bearer sprd_x'],
      );
      expect(tokenSource.invalidated, via).toEqual(via === 'oidc' ? ['id-1'] : []);
    }
  });

  // The gateway soak with Redis Sentinel on 2026-11-28 (yeastar-p-series, seed 40544): the phone
  // system restarted (forgetting every token) while the runner read only the relay, then the
  // relay it reads was killed; back, the relay refused the runner's token (10002, 124 s old). A
  // young token refused counts as another computer taking it (sign-in-guard.ts) unless the
  // connection was lost first: twice in 10 minutes held every sign-in for 5 minutes, and the rings
  // of those minutes never popped. The relay is such a desktop's only far side: losing it is a loss.
  it('a relay lost (dropped) is said lost before a token it refuses on return', async () => {
    const clock = new FakeClock();
    const told: string[] = [];
    const tokens = {
      getToken: async () => ({ value: 'tok', expiresAt: Date.now() + 1_800_000 }),
      invalidate: (v: string) => void told.push(`invalidate:${v}`),
      connectionLost: () => void told.push('lost'),
    };
    let n = 0;
    const createSocket: CreateSocket = (_url, _headers, cb) => {
      const i = n++;
      queueMicrotask(() => {
        if (i === 1) {
          // Back after the drop: the relay asks the phone system, which forgot the token.
          cb.rejected(401, '{"errcode":10002,"errmsg":"TOKEN EXPIRED"}');
          cb.closed(1006, '');
          return;
        }
        cb.open();
      });
      return {
        send(text) {
          if ((JSON.parse(text) as { type: string }).type !== 'hello') return;
          queueMicrotask(() => {
            cb.message(ready(null));
            if (i === 0) cb.closed(1006, ''); // the first session drops: the relay killed
          });
        },
        close: (code, reason) => queueMicrotask(() => cb.closed(code, reason)),
        terminate: () => queueMicrotask(() => cb.closed(1006, '')),
      };
    };
    const src = new RelayEventSource({
      relayUrl: 'http://127.0.0.1:1',
      tenant: 'acme',
      tokens,
      filter: { extensions: ['101'], dids: [], events: [] },
      clock,
      random: () => 0.5,
      createSocket,
    });
    src.start();
    await clock.advance(5_000);
    await src.stop();
    expect(told.slice(0, 2)).toEqual(['lost', 'invalidate:tok']);
  });

  it('takes only cursors in the cursor format, from the relay and from its store', async () => {
    const clock = new FakeClock();
    let n = 0;
    const relay = scriptedRelay((_hello, peer) => {
      n += 1;
      peer.send(ready(`${n}000-0`));
      peer.send('relay {"type":"cursor","cursor":"not a cursor"}');
      peer.send('relay {"type":"heartbeat","cursor":42}');
      peer.close(1012, 'restarting');
    });
    const src = make(relay.createSocket, clock, {
      load: async () => 'garbage from disk',
      save: async () => {},
    });
    src.start();
    await clock.advance(2_000);
    expect(relay.hellos[0]!.cursor).toBeNull();
    expect(relay.hellos[1]!.cursor).toBe('1000-0');
    expect(src.position).toMatch(/^\d+000-0$/);
    await src.stop();
  });

  it('drops a cursor the relay refuses in the hello, instead of being refused for ever', async () => {
    const clock = new FakeClock();
    const relay = scriptedRelay((hello, peer) => {
      if (hello.cursor !== null) peer.close(4400, 'cursor malformed');
      else peer.send(ready('5-0'));
    });
    const src = make(relay.createSocket, clock, {
      load: async () => '99999999999999-0',
      save: async () => {},
    });
    src.start();
    await clock.advance(5_000);
    expect(relay.hellos.map((h) => h.cursor)).toEqual(['99999999999999-0', null]);
    expect(src.position).toBe('5-0');
    await src.stop();
  });
});

describe('RelayEventSource and a relay that is not there (real clock, real sockets)', () => {
  it('names the relay host and port it could not reach, and why', async () => {
    // A port where nothing listens. Before: "The relay connection dropped; reconnecting."
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((done) => server.close(() => done()));
    const statuses: ConnectionStatus[] = [];
    const src = new RelayEventSource({
      relayUrl: `http://127.0.0.1:${port}`,
      tenant: 'acme',
      tokens: listTokenSource(['tok']),
      filter: { extensions: ['101'], dids: [], events: [] },
      clock: systemClock,
      random: () => 0.5,
      createSocket: directTransport().createSocket,
    });
    src.onStatus((s) => statuses.push(s));
    src.start();
    try {
      await waitFor(() => statuses.some((s) => s.state === 'offline'), 'offline');
      expect(statuses.find((s) => s.state === 'offline')).toMatchObject({
        reason: `127.0.0.1:${port} cannot be reached: the connection was refused (nothing listens on that port, or a firewall refuses it).`,
      });
    } finally {
      await src.stop();
    }
  });
});
