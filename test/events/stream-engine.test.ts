/**
 * The reconnect engine (src-shared/stream/stream-engine.ts) as both sources use it: each behaviour
 * that had drifted apart between the direct WebSocket and the relay source, now one, pinned for
 * both on the fake clock with a scripted far side.
 *
 * - connect time-out: 15 s for both (the direct stream waited for its silence check, 50-62.5 s);
 * - heartbeat: one per interval for both (the relay sent one per half interval);
 * - sleep: a wall-clock jump replaces the connection for both (the relay did not notice);
 * - at once, once: the retry at once counts as a failure for both (the direct stream's did not,
 *   so the next refusal waited the first step again);
 * - a connection found silent: back-off for both (the relay reconnected at once).
 */
import { describe, expect, it } from 'vitest';
import type {
  ConnectionStatus,
  EventSource,
  TokenSource,
} from '../../src-main/core/events/contracts.ts';
import type { CreateSocket, SocketCallbacks } from '../../src-shared/stream/socket.ts';
import { WebSocketEventSource } from '../../src-main/core/events/ws-source.ts';
import { RelayEventSource } from '../../src-main/core/relay-client/relay-source.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';

interface FarSocket {
  cb: SocketCallbacks;
  sent: string[];
  closed: boolean;
  terminated: boolean;
}

/** What differs between the two far sides: the first answer, and the heartbeat and its answer. */
interface Dialect {
  accept: string;
  isHeartbeat(text: string): boolean;
  heartbeatAnswer: string;
}

const DIRECT: Dialect = {
  accept: '{"errcode":0,"errmsg":"SUCCESS"}',
  isHeartbeat: (text) => text === 'heartbeat',
  heartbeatAnswer: 'heartbeat response',
};
const RELAY: Dialect = {
  accept: `relay ${JSON.stringify({ type: 'ready', session: 's', cursor: null, heartbeatMs: 25000, idleTimeoutMs: 60000 })}`,
  isHeartbeat: (text) => text === '{"type":"heartbeat"}',
  heartbeatAnswer: 'relay {"type":"heartbeat"}',
};

interface FarSide {
  createSocket: CreateSocket;
  sockets: FarSocket[];
  /** What the far side does with the next connection attempts. */
  mode: 'accept' | 'never-open' | 'refuse-401';
  /** False: heartbeats go unanswered (a half-open connection). */
  answers: boolean;
}

function farSide(dialect: Dialect): FarSide {
  const far: FarSide = { createSocket: undefined!, sockets: [], mode: 'accept', answers: true };
  far.createSocket = (_url, _headers, cb) => {
    const s: FarSocket = { cb, sent: [], closed: false, terminated: false };
    far.sockets.push(s);
    const mode = far.mode;
    queueMicrotask(() => {
      if (mode === 'accept') cb.open();
      else if (mode === 'refuse-401') {
        cb.rejected(401, '{"errcode":10002,"errmsg":"TOKEN EXPIRED"}');
        cb.closed(1006, '');
      }
    });
    return {
      send(text) {
        s.sent.push(text);
        if (dialect.isHeartbeat(text)) {
          if (far.answers) queueMicrotask(() => cb.message(dialect.heartbeatAnswer));
        } else if (s.sent.length === 1) queueMicrotask(() => cb.message(dialect.accept));
      },
      close(code, reason) {
        s.closed = true;
        queueMicrotask(() => cb.closed(code, reason));
      },
      terminate() {
        s.terminated = true;
        queueMicrotask(() => cb.closed(1006, ''));
      },
    };
  };
  return far;
}

const tokens = (clock: FakeClock): TokenSource => {
  let n = 0;
  return {
    getToken: async () => ({ value: `tok-${++n}`, expiresAt: clock.now() + 24 * 3600_000 }),
    invalidate: () => {},
  };
};

type Make = (clock: FakeClock, createSocket: CreateSocket) => EventSource;

const SOURCES: Array<[string, Dialect, Make]> = [
  [
    'the direct stream',
    DIRECT,
    (clock, createSocket) =>
      new WebSocketEventSource({
        baseUrl: 'https://acme.example.com',
        tokens: tokens(clock),
        topics: [30011],
        clock,
        logger: memoryLogger(),
        createSocket,
        random: () => 0.5,
      }),
  ],
  [
    'the relay source',
    RELAY,
    (clock, createSocket) =>
      new RelayEventSource({
        relayUrl: 'http://127.0.0.1:1',
        tenant: 'acme',
        tokens: tokens(clock),
        filter: { extensions: ['101'], dids: [], events: [] },
        clock,
        logger: memoryLogger(),
        createSocket,
        random: () => 0.5,
      }),
  ],
];

async function started(dialect: Dialect, make: Make, mode: FarSide['mode'] = 'accept') {
  const clock = new FakeClock();
  const far = farSide(dialect);
  far.mode = mode;
  const source = make(clock, far.createSocket);
  const statuses: ConnectionStatus[] = [];
  source.onStatus((s) => statuses.push(s));
  source.start();
  await flushMicrotasks();
  await clock.advance(0);
  return { clock, far, source, statuses };
}

const heartbeats = (s: FarSocket, dialect: Dialect) => s.sent.filter(dialect.isHeartbeat).length;

describe.each(SOURCES)('the reconnect engine, as %s uses it', (_name, dialect, make) => {
  it('abandons a connection that does not open within 15 s, then backs off', async () => {
    const t = await started(dialect, make, 'never-open');
    expect(t.far.sockets).toHaveLength(1);
    await t.clock.advance(14_999);
    expect(t.far.sockets[0]!.terminated).toBe(false);
    await t.clock.advance(1);
    expect(t.far.sockets[0]!.terminated).toBe(true);
    expect(t.source.status().state).toBe('offline');
    await t.clock.advance(249); // back-off: 0.5 x 500 ms
    expect(t.far.sockets).toHaveLength(1);
    await t.clock.advance(1);
    expect(t.far.sockets).toHaveLength(2);
    await t.source.stop();
  });

  it('sends one heartbeat per interval, and finds a silent connection after two intervals', async () => {
    const t = await started(dialect, make);
    expect(t.source.status()).toEqual({ state: 'connected' });
    const socket = t.far.sockets[0]!;
    await t.clock.advance(25_000);
    expect(heartbeats(socket, dialect)).toBe(1);
    await t.clock.advance(4 * 25_000);
    expect(heartbeats(socket, dialect)).toBe(5);
    expect(socket.terminated).toBe(false);
    t.far.answers = false; // half-open from here on
    await t.clock.advance(50_000);
    expect(socket.terminated).toBe(false);
    await t.clock.advance(12_500);
    expect(socket.terminated).toBe(true);
    expect(t.source.status().state).toBe('connecting');
    // Found dead is a failure like any other: the back-off, not a reconnect at once.
    expect(t.far.sockets).toHaveLength(1);
    await t.clock.advance(250);
    expect(t.far.sockets).toHaveLength(2);
    await t.source.stop();
  });

  it('notices a sleep (the wall clock jumped ahead) and replaces the connection', async () => {
    const t = await started(dialect, make);
    t.clock.sleep(2 * 3600_000);
    await t.clock.advance(12_500); // the next check
    expect(t.far.sockets).toHaveLength(2);
    await flushMicrotasks();
    expect(t.far.sockets[0]!.closed || t.far.sockets[0]!.terminated).toBe(true);
    expect(t.source.status()).toEqual({ state: 'connected' });
    await t.source.stop();
  });

  it('reconnects at once after a refused token once; the next refusal waits the second step', async () => {
    const t = await started(dialect, make, 'refuse-401');
    await t.clock.advance(0);
    expect(t.far.sockets).toHaveLength(2); // at once
    await t.clock.advance(499); // 0.5 x 1 s: the retry at once was counted
    expect(t.far.sockets).toHaveLength(2);
    await t.clock.advance(1);
    expect(t.far.sockets).toHaveLength(3);
    await t.source.stop();
  });

  it('stop() closes the connection and leaves no timer behind', async () => {
    const t = await started(dialect, make);
    await t.clock.advance(60_000);
    await t.source.stop();
    expect(t.far.sockets.every((s) => s.closed || s.terminated)).toBe(true);
    expect(t.clock.pendingTimers()).toBe(0);
    expect(t.source.status().state).toBe('offline');
  });
});
