/**
 * The WebSocket source's timing paths on the fake clock, with a scripted far side (the socket
 * factory): back-off, heartbeat and dead-socket detection, sleep detection, wake, 401/403.
 */
import { describe, expect, it } from 'vitest';
import type {
  AccessToken,
  ConnectionStatus,
  TokenSource,
} from '../../src-main/core/events/contracts.ts';
import type { CreateSocket, SocketCallbacks } from '../../src-shared/stream/socket.ts';
import { WebSocketEventSource } from '../../src-main/core/events/ws-source.ts';
import { delay } from '../../src-shared/process/clock.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';

interface FakeSocket {
  url: string;
  headers: Record<string, string>;
  cb: SocketCallbacks;
  sent: string[];
  closed: boolean;
  terminated: boolean;
  /** The far side answers `heartbeat` (a live server); false models a half-open connection. */
  alive: boolean;
}

function setup(opts: { expiresInMs?: number; tokenDelayMs?: number } = {}) {
  const clock = new FakeClock();
  const sockets: FakeSocket[] = [];
  const createSocket: CreateSocket = (url, headers, cb) => {
    const s: FakeSocket = {
      url,
      headers,
      cb,
      sent: [],
      closed: false,
      terminated: false,
      alive: true,
    };
    sockets.push(s);
    return {
      send: (text) => {
        s.sent.push(text);
        if (text === 'heartbeat' && s.alive) queueMicrotask(() => cb.message('heartbeat response'));
      },
      close: (code, reason) => {
        s.closed = true;
        queueMicrotask(() => cb.closed(code, reason));
      },
      terminate: () => {
        s.terminated = true;
        queueMicrotask(() => cb.closed(1006, ''));
      },
    };
  };
  let n = 0;
  const invalidated: string[] = [];
  /** What the source told the token source, in order: `invalidate:<token>` / `lost`. */
  const told: string[] = [];
  const tokens: TokenSource = {
    async getToken(): Promise<AccessToken> {
      if (opts.tokenDelayMs) await delay(clock, opts.tokenDelayMs);
      n++;
      return {
        value: `token-value-${n}`,
        expiresAt: clock.now() + (opts.expiresInMs ?? 30 * 60_000),
      };
    },
    invalidate: (v) => {
      invalidated.push(v);
      told.push(`invalidate:${v}`);
    },
    connectionLost: () => told.push('lost'),
  };
  const statuses: ConnectionStatus[] = [];
  const source = new WebSocketEventSource({
    baseUrl: 'https://acme.example.com',
    tokens,
    topics: [30011],
    clock,
    createSocket,
    random: () => 0.5,
  });
  source.onStatus((s) => statuses.push(s));
  /** Completes the handshake and subscription of socket `i`. */
  const accept = async (i: number) => {
    sockets[i]!.cb.open();
    sockets[i]!.cb.message('{"errcode":0,"errmsg":"SUCCESS"}');
    await flushMicrotasks();
  };
  return { clock, sockets, source, statuses, invalidated, told, accept };
}

describe('WebSocketEventSource timing (fake clock)', () => {
  it('sends the token only in the Authorization header and subscribes with the topic list', async () => {
    const t = setup();
    t.source.start();
    await flushMicrotasks();
    expect(t.sockets[0]!.url).toBe('wss://acme.example.com/openapi/v1.0/subscribe');
    expect(t.sockets[0]!.url).not.toContain('token');
    expect(t.sockets[0]!.headers).toMatchObject({
      Authorization: 'Bearer token-value-1',
      'User-Agent': expect.stringMatching(/^Screenpop\//),
    });
    await t.accept(0);
    expect(t.sockets[0]!.sent).toEqual(['{"topic_list":[30011]}']);
    expect(t.source.status().state).toBe('connected');
  });

  it('heartbeats every interval and drops a socket silent for two intervals', async () => {
    const t = setup();
    t.source.start();
    await flushMicrotasks();
    await t.accept(0);
    await t.clock.advance(25_000);
    expect(t.sockets[0]!.sent.filter((f) => f === 'heartbeat')).toHaveLength(1);
    await t.clock.advance(5 * 25_000);
    expect(t.sockets[0]!.sent.filter((f) => f === 'heartbeat')).toHaveLength(6);
    expect(t.sockets[0]!.terminated).toBe(false);
    t.sockets[0]!.alive = false; // half-open from here on
    await t.clock.advance(50_000);
    expect(t.sockets[0]!.terminated).toBe(false);
    await t.clock.advance(12_500); // > 2 intervals since the last response
    expect(t.sockets[0]!.terminated).toBe(true);
    expect(t.statuses.at(-1)).toMatchObject({
      state: 'connecting',
      reason: expect.stringMatching(/silent/),
    });
  });

  it('backs off with full jitter on repeated failures and resets after a stable connection', async () => {
    const t = setup();
    t.source.start();
    await flushMicrotasks();
    const delays: number[] = [];
    for (let k = 0; k < 6; k++) {
      const before = t.sockets.length;
      t.sockets.at(-1)!.cb.closed(1006, 'refused');
      let waited = 0;
      while (t.sockets.length === before) {
        await t.clock.advance(10);
        waited += 10;
      }
      delays.push(waited);
    }
    // random() = 0.5: half of 500, 1000, 2000, 4000, 8000, then the 10 s cap
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 5000]);
    expect(t.source.status().state).toBe('offline');
    await t.accept(6);
    await t.clock.advance(30_000); // stable: the back-off starts again from its base
    t.sockets[6]!.cb.closed(1012, 'restart');
    await t.clock.advance(240);
    expect(t.sockets).toHaveLength(7);
    await t.clock.advance(20);
    expect(t.sockets).toHaveLength(8);
  });

  it('reconnects at once on wake, make-before-break, without waiting for the back-off', async () => {
    const t = setup();
    t.source.start();
    await flushMicrotasks();
    await t.accept(0);
    t.source.wake('online');
    await flushMicrotasks();
    expect(t.sockets).toHaveLength(2);
    expect(t.sockets[0]!.closed).toBe(false); // the old one stays until the new one is subscribed
    await t.accept(1);
    expect(t.sockets[0]!.closed).toBe(true);
    expect(t.statuses.map((s) => s.state)).toEqual(['connecting', 'connected']);
  });

  it('notices a sleep from the wall clock jumping ahead of the monotonic clock', async () => {
    const t = setup();
    t.source.start();
    await flushMicrotasks();
    await t.accept(0);
    t.clock.sleep(2 * 60 * 60_000);
    await t.clock.advance(12_500); // the next check
    expect(t.sockets).toHaveLength(2);
    await t.accept(1);
    expect(t.sockets[0]!.closed).toBe(true);
  });

  it('rotates before the token expires: new socket subscribed first, then the old one closed', async () => {
    const t = setup({ expiresInMs: 10 * 60_000 });
    t.source.start();
    await flushMicrotasks();
    await t.accept(0);
    await t.clock.advance(9 * 60_000 - 1);
    expect(t.sockets).toHaveLength(1);
    await t.clock.advance(1);
    expect(t.sockets).toHaveLength(2);
    expect(t.sockets[1]!.headers.Authorization).toBe('Bearer token-value-2');
    expect(t.sockets[0]!.closed).toBe(false);
    await t.accept(1);
    expect(t.sockets[0]!.closed).toBe(true);
  });

  it('401 (10002) invalidates the token and retries at once, once; then backs off', async () => {
    // The retry at once counts as a failure (src-shared/stream/stream-engine.ts): the second
    // refusal waits the back-off's second step, 0.5 x 1 s (random fixed at 0.5), so a service that
    // refuses every new token at once never gets a loop.
    const t = setup();
    t.source.start();
    await flushMicrotasks();
    for (let k = 0; k < 2; k++) {
      t.sockets.at(-1)!.cb.rejected(401, '{"errcode":10002,"errmsg":"TOKEN EXPIRED"}');
      t.sockets.at(-1)!.cb.closed(1006, '');
      await t.clock.advance(0);
    }
    expect(t.invalidated).toEqual(['token-value-1', 'token-value-2']);
    expect(t.sockets).toHaveLength(2); // the second refusal waits for the back-off
    await t.clock.advance(499);
    expect(t.sockets).toHaveLength(2);
    await t.clock.advance(1);
    expect(t.sockets).toHaveLength(3);
  });

  it('a socket the service dropped (a restart forgets every token) is said lost before its token is refused; a token refused on the socket is not a loss', async () => {
    // The sign-in rule (sign-in-guard.ts) counts a young token refused as another computer
    // taking it, unless the connection was lost first (token-lifecycle.ts connectionLost).
    const t = setup();
    t.source.start();
    await flushMicrotasks();
    await t.accept(0);
    t.sockets[0]!.cb.closed(1006, ''); // the phone system went away
    await t.clock.advance(10_000);
    t.sockets[1]!.cb.rejected(401, '{"errcode":10002,"errmsg":"TOKEN EXPIRED"}');
    t.sockets[1]!.cb.closed(1006, '');
    await t.clock.advance(0);
    expect(t.told).toEqual(['lost', 'invalidate:token-value-2']);

    // Another computer took the token: refused on a live socket, never said lost.
    t.told.length = 0;
    await t.clock.advance(1_000);
    expect(t.sockets).toHaveLength(3);
    await t.accept(2);
    t.sockets[2]!.cb.message('{"errcode":10002,"errmsg":"TOKEN EXPIRED"}');
    t.sockets[2]!.cb.closed(1000, '');
    await t.clock.advance(0);
    expect(t.told).toContain('invalidate:token-value-3');
    expect(t.told).not.toContain('lost');
  });

  it('403 (10004) needs attention: no retries until wake("user")', async () => {
    const t = setup();
    t.source.start();
    await flushMicrotasks();
    t.sockets[0]!.cb.rejected(403, '{"errcode":10004,"errmsg":"IP NOT ALLOWED"}');
    t.sockets[0]!.cb.closed(1006, '');
    await t.clock.advance(60 * 60_000);
    expect(t.sockets).toHaveLength(1);
    expect(t.source.status()).toMatchObject({ state: 'needs-attention', errcode: 10004 });
    t.source.wake('online');
    await flushMicrotasks();
    expect(t.sockets).toHaveLength(1);
    t.source.wake('user');
    await flushMicrotasks();
    expect(t.sockets).toHaveLength(2);
  });

  it('start() after a stop() that came while a token was being fetched connects again', async () => {
    const t = setup({ tokenDelayMs: 1_000 });
    t.source.start();
    await flushMicrotasks();
    await t.source.stop(); // the first token fetch is still on its way
    t.source.start();
    await t.clock.advance(5_000);
    expect(t.sockets).toHaveLength(1);
    await t.accept(0);
    expect(t.source.status().state).toBe('connected');
  });

  it('stop() closes the socket and stops every timer', async () => {
    const t = setup();
    t.source.start();
    await flushMicrotasks();
    await t.accept(0);
    await t.source.stop();
    expect(t.sockets[0]!.closed).toBe(true);
    expect(t.clock.pendingTimers()).toBe(0);
    expect(t.source.status().state).toBe('offline');
  });
});
