import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { systemClock, type Clock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import {
  decodeControl,
  type ControlFrame,
  type RelayFilter,
} from '../../src-shared/relay/relay-protocol.ts';
import { parseConfig, type RelayConfig, type RelayConfigInput } from '../../src-relay/config.ts';
import { startRelay, type RelayServer } from '../../src-relay/server.ts';
import { signBody } from '../../src-sim/webhook-signature.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import { RedisStore } from '../../src-relay/store/redis-store.ts';
import type { EventStore } from '../../src-relay/store/types.ts';
import { sleepReal } from '../wait.ts';
import { ownedByThisProcess } from '../owned-spawn.ts';

export const SECRET = "It's a Secret to Everybody";

/**
 * The far side of the token check: a stand-in for a tenant's service that answers extension/list
 * for the tokens it knows (docs/wire-protocol.md sections 3 and 4). End-to-end tests use the simulator instead.
 */
export async function startTokenService(
  /** Tokens the service accepts (a Set, or anything with `has`, e.g. a prefix rule). */
  validTokens: Pick<Set<string>, 'has'>,
  /** Tokens of a key whose IP allowlist excludes this caller: 403 with errcode 10004. */
  blockedTokens: Pick<Set<string>, 'has'> = new Set(),
  /** A path the tenant's base address ends in (`/t/acme`): the API lives under it. */
  basePath = '',
  /** How long each answer takes (a service across the Internet answers in tens of ms). */
  options: { delayMs?: number } = {},
): Promise<{ baseUrl: string; calls: () => number; close: () => Promise<void> }> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    calls += 1;
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const path = req.url?.startsWith(`${basePath}/openapi/v1.0/extension/list`);
    const [status, body] =
      path && validTokens.has(token)
        ? [200, { errcode: 0, errmsg: 'SUCCESS', total_number: 0, data: [] }]
        : path && blockedTokens.has(token)
          ? [403, { errcode: 10004, errmsg: 'IP NOT ALLOWED' }]
          : [401, { errcode: 10002, errmsg: 'TOKEN EXPIRED' }];
    const answer = () => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (options.delayMs) setTimeout(answer, options.delayMs);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}${basePath}`,
    calls: () => calls,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** A checked config (the relay's schema fills the defaults) on 127.0.0.1, a free port. */
export function relayConfig(
  tenants: RelayConfigInput['tenants'],
  overrides: Partial<RelayConfigInput> = {},
): RelayConfig {
  return parseConfig({ host: '127.0.0.1', port: 0, tenants, ...overrides });
}

export async function startMemoryRelay(
  config: RelayConfig,
  clock: Clock = systemClock,
): Promise<{ relay: RelayServer; store: MemoryStore }> {
  const store = new MemoryStore({ clock, retention: config.retention });
  const relay = await startRelay({ config, store, clock, logger: silentLogger });
  return { relay, store };
}

export function envelope(fields: {
  event_id: string;
  tenant?: string;
  event?: number;
  to?: string;
  from?: string;
  state?: string;
  call_id?: string;
}): string {
  return JSON.stringify({
    event: fields.event ?? 30011,
    timestamp: 1763802000000,
    tenant: fields.tenant ?? 'acme',
    data: {
      call_id: fields.call_id ?? `call-${fields.event_id}`,
      from: fields.from ?? '+442071234567',
      to: fields.to ?? '101',
      state: fields.state ?? 'ringing',
    },
    event_id: fields.event_id,
  });
}

export async function postWebhook(
  url: string,
  body: string | Buffer,
  signature: string | undefined,
): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (signature !== undefined) headers['X-Service-Signature'] = signature;
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, body: await res.text() };
}

export function signed(body: string, secret = SECRET): string {
  return signBody(secret, body);
}

/** A raw protocol client: records event frames and control frames separately. */
export class TestClient {
  readonly events: string[] = [];
  /** When each of `events` arrived (Date.now()). */
  readonly arrivals: number[] = [];
  readonly controls: ControlFrame[] = [];
  closeCode: number | null = null;
  private readonly ws: WebSocket;
  private readonly waiters: (() => void)[] = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => {
      const text = data.toString();
      const control = decodeControl(text);
      if (control) this.controls.push(control);
      else {
        this.events.push(text);
        this.arrivals.push(Date.now());
      }
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on('close', (code) => {
      this.closeCode = code;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static async connect(
    url: string,
    token: string,
    filter: Partial<RelayFilter>,
    cursor: string | null = null,
  ): Promise<TestClient> {
    const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) =>
        reject(new Error(`handshake refused: ${res.statusCode}`)),
      );
      ws.once('error', reject);
    });
    const client = new TestClient(ws);
    ws.send(
      JSON.stringify({
        type: 'hello',
        v: 1,
        filter: { extensions: [], dids: [], events: [], ...filter },
        cursor,
      }),
    );
    await client.until(() => client.controls.some((c) => c.type === 'ready'), 5_000);
    return client;
  }

  get cursor(): string | null {
    let c: string | null = null;
    for (const f of this.controls)
      if ((f.type === 'cursor' || f.type === 'ready') && f.cursor) c = f.cursor;
    return c;
  }

  send(text: string): void {
    this.ws.send(text);
  }

  /** Stops reading from the socket (a client that cannot keep up), or reads again. */
  pauseReading(paused: boolean): void {
    const socket = (this.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    if (paused) socket.pause();
    else socket.resume();
  }

  eventIds(): string[] {
    return this.events.map((e) => (JSON.parse(e) as { event_id: string }).event_id);
  }

  async until(predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error('timed out waiting');
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50).unref();
      });
    }
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((r) => {
      this.ws.once('close', () => r());
      this.ws.close();
      setTimeout(() => {
        this.ws.terminate();
        r();
      }, 1000).unref();
    });
  }
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export const REDIS_BIN = '/usr/bin/redis-server';

/**
 * Whether Redis tests can run; on CI a missing redis-server is a failure, not a skip. Locally,
 * `file` (the test file) is named in a warning saying it was skipped and what to install.
 *
 * A file that starts redis-server has "redis" in its name: redis-server cannot start under
 * libfaketime, and CI's run at a future date leaves such files out by that name (.ci/run). A
 * fifth file listed by hand was missed there once and failed CI.
 */
export function redisAvailable(file: string): boolean {
  if (!/redis[^/]*\.test\.ts$/.test(file))
    throw new Error(
      `${file} starts redis-server, so its name must contain "redis" (CI's run at a future date leaves those files out by name)`,
    );
  const ok = existsSync(REDIS_BIN);
  if (!ok && process.env.CI === 'true')
    throw new Error(
      `redis-server not found at ${REDIS_BIN}; CI must install it (.ci/run installs redis-server)`,
    );
  if (!ok)
    console.warn(`${file} skipped: ${REDIS_BIN} is not installed (apt-get install redis-server)`);
  return ok;
}

export interface RedisProcess {
  url: string;
  port: number;
  dir: string;
  /** The redis-server process (to pause it with SIGSTOP, as a hung server). */
  pid: number;
  /** Stops the server; its data folder is removed unless `keepData` (for a restart). */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

/** Starts a private redis-server on a free 127.0.0.1 port with AOF (fsync always) in a temp dir. */
export async function startRedis(
  opts: { dir?: string; port?: number; args?: string[] } = {},
): Promise<RedisProcess> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'relay-redis-'));
  const port = opts.port ?? (await freePort());
  // Killed by the kernel if this test worker dies before stop() (rigs/owned-spawn.ts).
  const child: ChildProcess = spawn(
    ...ownedByThisProcess(REDIS_BIN, [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--dir',
      dir,
      ...(opts.args ?? []),
    ]),
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1');
      c.once('connect', () => {
        c.destroy();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL'); // never leave a half-started server behind
      throw new Error('redis-server did not start');
    }
    await sleepReal(50);
  }
  return {
    url,
    port,
    dir,
    pid: child.pid!,
    async stop(options = {}) {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(child.pid!, 'SIGCONT'); // a paused server cannot act on SIGTERM
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        await exited;
      }
      if (!options.keepData) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function openRedisStore(
  url: string,
  tenants: string[],
  retention?: ConstructorParameters<typeof RedisStore>[0]['retention'],
): Promise<RedisStore> {
  const store = new RedisStore({
    url,
    tenants,
    clock: systemClock,
    logger: silentLogger,
    retention,
    blockMs: 500,
  });
  await store.open();
  return store;
}

export async function startRedisRelay(
  config: RelayConfig,
  url: string,
): Promise<{ relay: RelayServer; store: EventStore }> {
  const store = await openRedisStore(url, Object.keys(config.tenants), config.retention);
  const relay = await startRelay({ config, store, clock: systemClock, logger: silentLogger });
  return { relay, store };
}

/** A TokenSource over a fixed list of tokens: each invalidate() moves on to the next one. */
export function listTokenSource(tokens: string[]): {
  getToken(): Promise<{ value: string; expiresAt: number }>;
  invalidate(value: string): void;
  invalidated: string[];
} {
  let i = 0;
  const invalidated: string[] = [];
  return {
    invalidated,
    async getToken() {
      return { value: tokens[Math.min(i, tokens.length - 1)]!, expiresAt: Date.now() + 1_800_000 };
    },
    invalidate(value: string) {
      invalidated.push(value);
      if (tokens[i] === value) i += 1;
    },
  };
}
