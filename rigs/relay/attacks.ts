/**
 * Hostile clients of the relay, each bounded (a count or a deadline) and on 127.0.0.1 only. The
 * adversarial tests (test/relay/adversarial*.test.ts) run them against the real relay process and
 * assert that it holds; `npm run bench:relay-abuse` runs them at full size and
 * prints what each did to the relay.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { WebSocket } from 'ws';
import { sampleRss } from './relay-process.ts';
import { envelope, signed } from './helpers.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function streamUrl(relayUrl: string, tenant = 'acme'): string {
  return relayUrl.replace(/^http/, 'ws') + `/v1/stream/${tenant}`;
}

/** Opens a client WebSocket; resolves once open, or with the HTTP status that refused it. */
export function openSocket(
  url: string,
  token: string,
  localAddress?: string,
): Promise<{ ws: WebSocket } | { status: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, {
      headers: { Authorization: `Bearer ${token}` },
      perMessageDeflate: false,
      ...(localAddress ? { localAddress } : {}),
    });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('error', () => resolve({ status: 0 }));
  });
}

export function hello(cursor: string | null, extensions = ['101']): string {
  return JSON.stringify({
    type: 'hello',
    v: 1,
    filter: { extensions, dids: [], events: [] },
    cursor,
  });
}

/** Stops reading a client socket (its receive window fills and the relay's send buffer grows). */
export function stopReading(ws: WebSocket): void {
  (ws as unknown as { _socket: net.Socket })._socket.pause();
}

export interface FloodResult {
  framesSent: number;
  /** How the flood ended: the relay closed the socket, or the deadline came first. */
  ended: 'closed-by-relay' | 'deadline';
  afterMs: number;
  startMiB: number;
  peakMiB: number;
}

/**
 * Item 1: an authenticated client that never reads, sending `heartbeat` frames as fast as it can
 * (before any hello unless `hello` is set). Every frame asks for a reply the client never reads.
 */
export async function heartbeatFlood(o: {
  relayUrl: string;
  pid: number;
  token: string;
  seconds: number;
  hello?: boolean;
}): Promise<FloodResult> {
  const opened = await openSocket(streamUrl(o.relayUrl), o.token);
  if (!('ws' in opened)) throw new Error(`handshake refused: ${opened.status}`);
  const { ws } = opened;
  if (o.hello) ws.send(hello(null));
  stopReading(ws);
  let closed = false;
  ws.on('close', () => (closed = true));
  ws.on('error', () => (closed = true));
  const rss = sampleRss(o.pid);
  const t0 = performance.now();
  const deadline = t0 + o.seconds * 1000;
  const frame = JSON.stringify({ type: 'heartbeat' });
  let framesSent = 0;
  while (!closed && performance.now() < deadline) {
    for (let i = 0; i < 500 && !closed; i++) {
      ws.send(frame);
      framesSent++;
    }
    // Bound our own send buffer: the point is the relay's memory, not this process's.
    while (!closed && ws.bufferedAmount > 1 << 20 && performance.now() < deadline) await sleep(1);
    await new Promise<void>((r) => setImmediate(r));
  }
  const afterMs = Math.round(performance.now() - t0);
  const { startMiB, peakMiB } = rss.stop();
  ws.terminate();
  return { framesSent, ended: closed ? 'closed-by-relay' : 'deadline', afterMs, startMiB, peakMiB };
}

/** Posts `count` signed webhooks of about `bodyBytes` each (for a backlog to replay). */
export async function fillBacklog(
  relayUrl: string,
  count: number,
  bodyBytes: number,
  concurrency = 16,
): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const padding = 'x'.repeat(Math.max(0, bodyBytes - 200));
  let next = 0;
  let stored = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const body = envelope({ event_id: `backlog-${i}`, to: '101', from: padding });
        const status = await postRaw(relayUrl + '/webhook/acme', body, signed(body), agent);
        if (status === 200) stored++;
      }
    }),
  );
  agent.destroy();
  return stored;
}

export function postRaw(
  url: string,
  body: string,
  signature: string,
  agent?: http.Agent,
): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'X-Service-Signature': signature,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

export interface HoardResult {
  clients: number;
  admitted: number;
  refused: Record<string, number>;
  /** Sockets the relay closed while they hoarded. */
  closedByRelay: number;
  startMiB: number;
  peakMiB: number;
}

/**
 * Item 4: `clients` sockets each resume from cursor 0-0 (replay everything held) and never read,
 * for `holdSeconds`. `token(i)` picks each socket's token (one shared token, or one each).
 */
export async function replayHoard(o: {
  relayUrl: string;
  pid: number;
  clients: number;
  token: (i: number) => string;
  holdSeconds: number;
  localAddress?: string;
}): Promise<HoardResult> {
  const rss = sampleRss(o.pid);
  const sockets: WebSocket[] = [];
  const refused: Record<string, number> = {};
  let closedByRelay = 0;
  for (let i = 0; i < o.clients; i += 25) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(25, o.clients - i) }, (_, j) =>
        openSocket(streamUrl(o.relayUrl), o.token(i + j), o.localAddress),
      ),
    );
    for (const r of batch) {
      if ('ws' in r) {
        r.ws.on('error', () => {});
        r.ws.send(hello('0-0'));
        stopReading(r.ws);
        sockets.push(r.ws);
        const socket = (r.ws as unknown as { _socket: net.Socket })._socket;
        socket.once('close', () => closedByRelay++);
      } else refused[r.status] = (refused[r.status] ?? 0) + 1;
    }
  }
  await sleep(o.holdSeconds * 1000);
  const { startMiB, peakMiB } = rss.stop();
  for (const ws of sockets) ws.terminate();
  return {
    clients: o.clients,
    admitted: sockets.length,
    refused,
    closedByRelay,
    startMiB,
    peakMiB,
  };
}

/**
 * A WebSocket handshake with a made-up token, as raw HTTP: resolves with the status of the refusal
 * (101 if it was upgraded, 0 if the connection failed).
 */
export function rawHandshake(
  relayUrl: string,
  token: string,
  localAddress?: string,
): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(relayUrl + '/v1/stream/acme', {
      agent: false,
      ...(localAddress ? { localAddress } : {}),
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        Authorization: `Bearer ${token}`,
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.setTimeout(30_000, () => req.destroy());
  });
}

/** Runs `count` handshakes, `concurrency` at a time, stopping at the deadline; counts by status. */
export async function handshakeFlood(o: {
  relayUrl: string;
  count: number;
  concurrency: number;
  seconds: number;
  token: (i: number) => string;
  localAddress?: string;
}): Promise<{ sent: number; statuses: Record<string, number>; elapsedMs: number }> {
  const statuses: Record<string, number> = {};
  let next = 0;
  const t0 = performance.now();
  const deadline = t0 + o.seconds * 1000;
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.count && performance.now() < deadline) {
        const status = await rawHandshake(o.relayUrl, o.token(next++), o.localAddress);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { sent: next, statuses, elapsedMs: Math.round(performance.now() - t0) };
}

/**
 * Item 8: a request body streamed to `path` for up to `seconds`, as fast as the relay takes it.
 * Returns how many bytes it took before it closed the connection (or the deadline).
 */
export async function streamBody(
  relayUrl: string,
  path: string,
  seconds: number,
): Promise<{ bytes: number; ended: 'closed-by-relay' | 'deadline'; status: number }> {
  const url = new URL(relayUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  await new Promise<void>((r, j) => socket.once('connect', r).once('error', j));
  let closed = false;
  let status = 0;
  socket.on('data', (d: Buffer) => {
    const m = /^HTTP\/1\.1 (\d+)/.exec(d.toString('latin1'));
    if (m) status = Number(m[1]);
  });
  socket.on('close', () => (closed = true));
  socket.on('error', () => (closed = true));
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const framed = Buffer.concat([
    Buffer.from(chunk.length.toString(16) + '\r\n'),
    chunk,
    Buffer.from('\r\n'),
  ]);
  let bytes = 0;
  const deadline = performance.now() + seconds * 1000;
  while (!closed && performance.now() < deadline) {
    if (!socket.write(framed)) {
      await Promise.race([new Promise((r) => socket.once('drain', r)), sleep(50)]);
    }
    bytes += chunk.length;
    if (bytes % (16 * chunk.length) === 0) await new Promise<void>((r) => setImmediate(r));
  }
  socket.destroy();
  return {
    bytes: bytes - socket.writableLength,
    ended: closed ? 'closed-by-relay' : 'deadline',
    status,
  };
}

/**
 * Item 8: a connection that sends half a request line and then nothing; resolves with how long the
 * relay kept it open (ms), or `giveUpMs` if it was still open then.
 */
export async function slowHeaders(relayUrl: string, giveUpMs: number): Promise<number> {
  const url = new URL(relayUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  await new Promise<void>((r, j) => socket.once('connect', r).once('error', j));
  socket.on('data', () => {});
  socket.on('error', () => {});
  const t0 = performance.now();
  socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
  const ms = await Promise.race([
    new Promise<number>((r) => socket.once('close', () => r(performance.now() - t0))),
    sleep(giveUpMs).then(() => giveUpMs),
  ]);
  socket.destroy();
  return Math.round(ms);
}

/** Item 8: `count` clients close their sockets, each with its own close code (3000 + i). */
export async function closeCodeSeries(
  relayUrl: string,
  token: string,
  count: number,
): Promise<number> {
  for (let i = 0; i < count; i++) {
    const r = await openSocket(streamUrl(relayUrl), token);
    if (!('ws' in r)) continue;
    await new Promise<void>((resolve) => {
      r.ws.once('close', () => resolve());
      r.ws.close(3000 + i, 'bye');
    });
  }
  await sleep(100);
  const text = await (await fetch(relayUrl + '/metrics')).text();
  return text.split('\n').filter((l) => l.startsWith('relay_clients_closed_total{')).length;
}

/** Times one request; resolves with its status (0 = no answer within `giveUpMs`) and duration. */
export async function timed(
  run: (signal: AbortSignal) => Promise<number>,
  giveUpMs: number,
): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const status = await run(AbortSignal.timeout(giveUpMs)).catch(() => 0);
  return { status, ms: Math.round(performance.now() - t0) };
}
