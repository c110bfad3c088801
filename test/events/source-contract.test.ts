/**
 * The EventSource contract, held the same way by both sources (the direct WebSocket and the
 * relay): onStatus tells every change from the moment of subscribing and replays nothing
 * (status() reads the current status), and a listener that throws is logged while the other
 * listeners still hear, and the source carries on. Fake clock, scripted far side.
 */
import { describe, expect, it } from 'vitest';
import type {
  ConnectionStatus,
  EventSource,
  TokenSource,
} from '../../src-main/core/events/contracts.ts';
import type { CreateSocket } from '../../src-shared/stream/socket.ts';
import { WebSocketEventSource } from '../../src-main/core/events/ws-source.ts';
import { type Logger } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { RelayEventSource } from '../../src-main/core/relay-client/relay-source.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';

const EVENT = '{"event":30011,"timestamp":1,"tenant":"acme","data":{},"event_id":"e1"}';

/** A far side that accepts the first frame the source sends (topic_list, hello), then sends EVENT. */
function farSide(accept: string): CreateSocket {
  return (_url, _headers, cb) => {
    let answered = false;
    queueMicrotask(() => cb.open());
    return {
      send: () => {
        if (answered) return;
        answered = true;
        queueMicrotask(() => {
          cb.message(accept);
          cb.message(EVENT);
        });
      },
      close: (code, reason) => queueMicrotask(() => cb.closed(code, reason)),
      terminate: () => queueMicrotask(() => cb.closed(1006, '')),
    };
  };
}

const tokens = (clock: FakeClock): TokenSource => ({
  getToken: async () => ({ value: 'tok', expiresAt: clock.now() + 30 * 60_000 }),
  invalidate: () => {},
});

const SOURCES: Array<[string, (clock: FakeClock, logger: Logger) => EventSource]> = [
  [
    'WebSocketEventSource',
    (clock, logger) =>
      new WebSocketEventSource({
        baseUrl: 'https://acme.example.com',
        tokens: tokens(clock),
        topics: [30011],
        clock,
        logger,
        createSocket: farSide('{"errcode":0,"errmsg":"SUCCESS"}'),
      }),
  ],
  [
    'RelayEventSource',
    (clock, logger) =>
      new RelayEventSource({
        relayUrl: 'http://127.0.0.1:1',
        tenant: 'acme',
        tokens: tokens(clock),
        filter: { extensions: ['101'], dids: [], events: [] },
        clock,
        logger,
        createSocket: farSide(
          `relay ${JSON.stringify({ type: 'ready', session: 's', cursor: null, heartbeatMs: 25000, idleTimeoutMs: 60000 })}`,
        ),
      }),
  ],
];

describe.each(SOURCES)('%s keeps the EventSource contract', (_name, make) => {
  it('onStatus tells every change from now on and replays nothing; status() is the current one', async () => {
    const clock = new FakeClock();
    const source = make(clock, memoryLogger());
    const heard: ConnectionStatus[] = [];
    source.onStatus((s) => heard.push(s));
    expect(heard).toEqual([]);
    expect(source.status()).toMatchObject({ state: 'offline', reason: 'Not started.' });
    source.start();
    await flushMicrotasks();
    await clock.advance(0);
    expect(heard.at(-1)).toEqual({ state: 'connected' });
    expect(heard[0]?.state).toBe('connecting');
    const late: ConnectionStatus[] = [];
    source.onStatus((s) => late.push(s));
    expect(late).toEqual([]);
    expect(source.status()).toEqual({ state: 'connected' });
    await source.stop();
    expect(late.at(-1)?.state).toBe('offline');
  });

  it('a status or frame listener that throws is logged; the others still hear and the source carries on', async () => {
    const clock = new FakeClock();
    const logger = memoryLogger();
    const source = make(clock, logger);
    const statuses: string[] = [];
    const frames: string[] = [];
    source.onStatus(() => {
      throw new Error('status listener bug');
    });
    source.onFrame(() => {
      throw new Error('frame listener bug');
    });
    source.onStatus((s) => statuses.push(s.state));
    source.onFrame((text) => frames.push(text));
    source.start();
    await flushMicrotasks();
    await clock.advance(0);
    expect(statuses).toEqual(['connecting', 'connected']);
    expect(frames).toEqual([EVENT]);
    const errors = logger.records.filter((r) => r.level === 'error').map((r) => r.msg);
    expect(errors).toContain('status listener failed');
    expect(errors).toContain('frame listener failed');
    await source.stop();
  });
});
