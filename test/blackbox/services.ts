/**
 * The four shipped processes of a black-box run, each started with its documented command line:
 * - the simulator, `node src-sim/cli.ts --control` (src-sim/README.md), driven through `/_sim/`;
 * - the headless runner as it ships, `node bin/screenpop-headless.js` (src-main/headless/README.md),
 *   built first when the sources changed, observed through its stdout JSON lines only;
 * - the relay, `node dist-relay/screenpop-relay.cjs --config <file>`, built first (src-relay/README.md);
 * - `redis-server`, for the relay's Redis backend.
 * Each can be stopped, killed and started again on the same port (and, for Redis, the same data).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { join } from 'node:path';
import { RingLedger } from './ledger.ts';
import {
  ensureRelayBuilt,
  ensureRunnerBuilt,
  envWithout,
  freePort,
  NODE,
  RELAY,
  until,
  type ProcessGroup,
  type Spawned,
} from '../../rigs/processes.ts';

const START_MS = 20_000;

// ---- simulator ----

export interface SimOptions {
  seed?: number;
  extensions?: number;
  /** Real ms of client silence before the simulator closes a socket with 4000; default 60000. */
  idleTimeoutMs?: number;
  /** Background traffic among the extensions (events per second). */
  traffic?: number;
  /** Extensions the background traffic never rings. */
  exclude?: string[];
  /** Serve https/wss with this certificate; `caFile` is what this test trusts for /_sim/. */
  tls?: { certFile: string; keyFile: string; caFile: string };
  env?: NodeJS.ProcessEnv;
  /** `--phone-system`: the wire format the simulator speaks (standard by default). */
  phoneSystem?: 'standard' | 'yeastar-p-series';
  /** `--report-style`: how a Yeastar P-Series simulator shapes its call reports (member by default). */
  reportStyle?: 'snapshot' | 'member' | 'mixed';
  /** `--token-lifetime`: access token lifetime in seconds (default 1800). */
  tokenLifetimeSec?: number;
  /** --token-one-sign-in: each get_token ends the application's earlier tokens. */
  tokenOneSignIn?: boolean;
  /** --token-limit: refuse a token past this many valid ones per API application (Yeastar: 8). */
  tokenLimit?: number;
  /** `--tenant`: the tenant's id (default acme), e.g. two simulators behind one relay. */
  tenant?: string;
}

export class SimProcess {
  proc!: Spawned;
  port = 0;
  baseUrl = '';
  key = '';
  secret = '';
  tenant = '';
  private readonly group: ProcessGroup;
  private readonly options: SimOptions;

  private readonly fetch: typeof fetch;

  constructor(group: ProcessGroup, options: SimOptions) {
    this.group = group;
    this.options = options;
    // Over TLS, the test trusts the simulator's private CA for its control calls (Node's own
    // fetch cannot be given a CA): the app's transport, going direct.
    this.fetch = options.tls
      ? transportFor(
          { proxyMode: 'none', proxyUrl: '', caFile: options.tls.caFile },
          {
            logger: silentLogger,
            secrets: new SecretRegistry(),
            readFile: (path) => readFileSync(path, 'utf8'),
          },
        ).fetch
      : globalThis.fetch;
  }

  /** Starts the simulator (on the same port as before, when it ran already). */
  async start(): Promise<this> {
    const o = this.options;
    const args = ['src-sim/cli.ts', '--control', '--port', String(this.port || (await freePort()))];
    args.push('--seed', String(o.seed ?? 1), '--extensions', String(o.extensions ?? 20));
    if (o.idleTimeoutMs !== undefined) args.push('--idle-timeout', String(o.idleTimeoutMs));
    if (o.traffic !== undefined) args.push('--traffic', String(o.traffic));
    if (o.exclude?.length) args.push('--exclude', o.exclude.join(','));
    if (o.tls) args.push('--tls-cert', o.tls.certFile, '--tls-key', o.tls.keyFile);
    if (o.phoneSystem) args.push('--phone-system', o.phoneSystem);
    if (o.reportStyle) args.push('--report-style', o.reportStyle);
    if (o.tokenLifetimeSec) args.push('--token-lifetime', String(o.tokenLifetimeSec));
    if (o.tokenOneSignIn) args.push('--token-one-sign-in');
    if (o.tokenLimit !== undefined) args.push('--token-limit', String(o.tokenLimit));
    if (o.tenant !== undefined) args.push('--tenant', o.tenant);
    const proc = this.group.spawn('simulator', NODE, args, o.env ? { env: o.env } : {});
    this.proc = proc;
    await until(
      () => proc.stdout.some((l) => l.text.startsWith('Press Ctrl+C')) || !proc.running(),
      'the simulator to start',
      START_MS,
      () => proc.describe(),
    );
    if (!proc.running()) throw new Error(`the simulator did not start\n${proc.describe()}`);
    const field = (label: string) =>
      proc.stdout
        .find((l) => l.text.trim().startsWith(`${label}:`))
        ?.text.split(/:\s+/, 2)[1]
        ?.trim() ?? '';
    this.baseUrl = field('Base URL');
    this.key = field('API key');
    this.secret = field('API secret');
    this.tenant = field('Tenant');
    this.port = Number(new URL(this.baseUrl).port);
    return this;
  }

  /** SIGKILL, then a new simulator on the same port: same seed (same key and secret), no tokens, no sockets. */
  async restart(downMs = 0): Promise<void> {
    this.proc.signal('SIGKILL');
    await this.proc.exit;
    if (downMs > 0) await new Promise((done) => setTimeout(done, downMs));
    await this.start();
  }

  /** One `/_sim/` control route; throws on an answer that is not errcode 0. */
  async control<T = Record<string, unknown>>(
    method: 'GET' | 'POST' | 'DELETE',
    route: string,
    body?: unknown,
  ): Promise<T> {
    const res = await this.fetch(`${this.baseUrl}/_sim/${route}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      signal: AbortSignal.timeout(5_000),
    });
    const json = (await res.json()) as { errcode: number; errmsg: string } & T;
    if (json.errcode !== 0) throw new Error(`/_sim/${route}: ${json.errcode} ${json.errmsg}`);
    return json;
  }

  async ring(from: string, to: string | string[]): Promise<string> {
    return (await this.control<{ call_id: string }>('POST', 'ring', { from, to })).call_id;
  }

  async setState(callId: string, state: string, to?: string): Promise<void> {
    await this.control('POST', 'state', { callId, state, ...(to !== undefined ? { to } : {}) });
  }
}

// ---- headless runner ----

export interface RunnerLine {
  type: string;
  at: number;
  [field: string]: unknown;
}

export class RunnerProcess {
  readonly proc: Spawned;
  readonly lines: RunnerLine[] = [];
  /** stdout lines that were not JSON objects (the interface allows none). */
  readonly badLines: string[] = [];

  constructor(proc: Spawned) {
    this.proc = proc;
    proc.onLine(({ text, at }) => {
      try {
        const value = JSON.parse(text) as unknown;
        if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error();
        this.lines.push({ ...(value as { type: string }), at });
      } catch {
        this.badLines.push(text);
      }
    });
  }

  statuses(): RunnerLine[] {
    return this.lines.filter((l) => l.type === 'status');
  }

  pops(): RunnerLine[] {
    return this.lines.filter((l) => l.type === 'pop');
  }

  /** The state of the last status line, or undefined before the first. */
  state(): string | undefined {
    return this.statuses().at(-1)?.state as string | undefined;
  }

  /** Waits until the last status line says `state` (connected by default). */
  async waitForState(state = 'connected', timeoutMs = 30_000): Promise<void> {
    await this.waitFor(() => this.state() === state, `runner status ${state}`, timeoutMs);
  }

  /** Polls `check`; fails with the runner's last lines and stderr, at once if the runner exited. */
  async waitFor(check: () => boolean, what: string, timeoutMs: number): Promise<void> {
    await until(
      check,
      what,
      timeoutMs,
      () => this.explain(),
      () => !this.proc.running(),
    );
  }

  /** Waits for a status line, after the first `after` lines, that leaves `connected`. */
  async waitForDrop(after: number, timeoutMs = 30_000): Promise<void> {
    await this.waitFor(
      () => this.lines.slice(after).some((l) => l.type === 'status' && l.state !== 'connected'),
      'the runner to notice the fault',
      timeoutMs,
    );
  }

  explain(): string {
    const tail = this.lines.slice(-12).map((l) => JSON.stringify(l));
    return `runner lines (last 12):\n${tail.join('\n')}\n${this.proc.describe()}`;
  }
}

export interface RunnerOptions {
  baseUrl: string;
  key: string;
  secret: string;
  extension?: string;
  /** More flags, e.g. ['--heartbeat-sec', '5']. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Spawn through `npm run -s headless --` instead of `node bin/screenpop-headless.js`. */
  viaNpm?: boolean;
  /** `--phone-system` (the runner's default, standard, when absent). */
  phoneSystem?: 'standard' | 'yeastar-p-series';
}

export function startRunner(group: ProcessGroup, o: RunnerOptions): RunnerProcess {
  const flags = ['--base-url', o.baseUrl, '--extension', o.extension ?? '101', ...(o.args ?? [])];
  if (o.phoneSystem) flags.push('--phone-system', o.phoneSystem);
  const env = {
    ...(o.env ?? process.env),
    SCREENPOP_API_KEY: o.key,
    SCREENPOP_API_SECRET: o.secret,
  };
  if (o.viaNpm) ensureRunnerBuilt(); // npm runs bin/screenpop-headless.js
  const proc = o.viaNpm
    ? group.spawn('runner (npm)', 'npm', ['run', '-s', 'headless', '--', ...flags], { env })
    : group.spawnRunner('runner', flags, { env });
  return new RunnerProcess(proc);
}

// ---- redis-server ----

export const REDIS_BIN = '/usr/bin/redis-server';

export class RedisProcess {
  proc!: Spawned;
  port = 0;
  readonly dir: string;
  private readonly group: ProcessGroup;

  constructor(group: ProcessGroup) {
    this.group = group;
    this.dir = group.tempDir('blackbox-redis-');
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /**
   * Starts redis-server with AOF (fsync always), as src-relay/README.md asks, on the same port and
   * data folder as before when it ran already. A preloaded fake clock (libfaketime) is not passed
   * on: it cannot start redis-server (jemalloc clash).
   */
  async start(): Promise<this> {
    this.port ||= await freePort();
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', ''];
    args.push('--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.dir);
    const proc = this.group.spawn('redis-server', REDIS_BIN, args, {
      env: envWithout(['LD_PRELOAD', 'FAKETIME']),
    });
    this.proc = proc;
    await until(
      () =>
        proc.stdout.some((l) => l.text.includes('Ready to accept connections')) || !proc.running(),
      'redis-server to start',
      START_MS,
      () => proc.describe() + proc.stdout.map((l) => l.text).join('\n'),
    );
    if (!proc.running()) throw new Error(`redis-server did not start\n${proc.describe()}`);
    return this;
  }

  async kill(): Promise<void> {
    this.proc.signal('SIGKILL');
    await this.proc.exit;
  }
}

// ---- relay ----

export interface RelayOptions {
  tenant: string;
  /** The tenant's service base URL (the relay checks desktops' tokens there). */
  serviceUrl: string;
  /** Redis storage at this URL; else the memory store. */
  redisUrl?: string;
  /** Redis storage through these sentinels (`storage.sentinel`) instead of `redisUrl`. */
  sentinel?: { name: string; nodes: string[] };
  /** With Redis: `storage.minReplicas` (a webhook is answered once that many replicas have it). */
  minReplicas?: number;
  /** With Redis in gateway mode: `storage.upstreamLeaseMs` (the upstream lease). */
  upstreamLeaseMs?: number;
  /** The memory store's snapshot file. */
  snapshotFile?: string;
  /** Serve https/wss with this certificate. */
  tls?: { certFile: string; keyFile: string };
  env?: NodeJS.ProcessEnv;
  /** Organisation mode: the tenant admits the relay's users (kept in this file), and single sign-on. */
  users?: { file: string; oidc?: { issuer: string; clientId: string }; codeKeyFile?: string };
  /** The tenant's phone system (its webhooks' body and signature, how tokens are checked). */
  phoneSystem?: 'standard' | 'yeastar-p-series';
  /**
   * Gateway mode: the relay holds the API key and secret, read from these environment variables
   * (give them in `env`), and keeps its own stream (unless `stream: false`).
   */
  gateway?: { apiKeyEnv: string; secretEnv: string; stream?: boolean };
}

export class RelayProcess {
  proc!: Spawned;
  port = 0;
  /** 32 characters, as a Yeastar P-Series PBX generates its webhook Secrets. */
  readonly webhookSecret = 'whsec-blackbox-1-0123456789abcde';
  private readonly configFile: string;
  private readonly group: ProcessGroup;
  private readonly options: RelayOptions;

  constructor(group: ProcessGroup, options: RelayOptions) {
    this.group = group;
    this.options = options;
    this.configFile = join(group.tempDir('blackbox-relay-'), 'relay.json');
  }

  get url(): string {
    return `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${this.port}`;
  }

  webhookUrl(): string {
    return `${this.url}/webhook/${this.options.tenant}`;
  }

  /** The config file the relay was started with, as written. */
  configText(): string {
    return readFileSync(this.configFile, 'utf8');
  }

  /** `node dist-relay/screenpop-relay.cjs users <args...> --config <file>`, as the administrator runs it: its stdout. */
  async users(...args: string[]): Promise<string> {
    ensureRelayBuilt();
    const proc = this.group.spawn('relay users', NODE, [
      RELAY,
      'users',
      ...args,
      '--config',
      this.configFile,
    ]);
    const exit = await proc.exit;
    if (exit.code !== 0)
      throw new Error(`relay users ${args.join(' ')} failed\n${proc.describe()}`);
    return proc.stdout.map((l) => l.text).join('\n');
  }

  /** Starts `node dist-relay/screenpop-relay.cjs --config <file>` (on the same port as before, when it ran already). */
  async start(): Promise<this> {
    this.port ||= await freePort();
    const {
      tenant,
      serviceUrl,
      redisUrl,
      sentinel,
      snapshotFile,
      tls,
      users,
      phoneSystem,
      gateway,
    } = this.options;
    writeFileSync(
      this.configFile,
      JSON.stringify({
        host: '127.0.0.1',
        port: this.port,
        tenants: {
          [tenant]: {
            baseUrl: serviceUrl,
            secrets: [this.webhookSecret],
            ...(users && { access: 'users', ...(users.oidc && { oidc: users.oidc }) }),
            ...(phoneSystem && { phoneSystem }),
            ...(gateway && { gateway }),
          },
        },
        ...(users && {
          users: { file: users.file, ...(users.codeKeyFile && { codeKeyFile: users.codeKeyFile }) },
        }),
        storage:
          redisUrl || sentinel
            ? {
                kind: 'redis',
                ...(sentinel ? { sentinel } : { url: redisUrl }),
                ...(this.options.minReplicas && { minReplicas: this.options.minReplicas }),
                ...(this.options.upstreamLeaseMs && {
                  upstreamLeaseMs: this.options.upstreamLeaseMs,
                }),
              }
            : { kind: 'memory', ...(snapshotFile ? { snapshotFile } : {}) },
        shutdownGraceMs: 2_000,
        ...(tls && { tls }),
      }),
    );
    ensureRelayBuilt();
    const proc = this.group.spawn(
      'relay',
      NODE,
      [RELAY, '--config', this.configFile],
      this.options.env ? { env: this.options.env } : {},
    );
    this.proc = proc;
    await until(
      () => proc.stdout.some((l) => l.text.startsWith('relay listening')) || !proc.running(),
      'the relay to start',
      START_MS,
      () => proc.describe(),
    );
    if (!proc.running()) throw new Error(`the relay did not start\n${proc.describe()}`);
    return this;
  }
}

/** The runner's flags for reading `relay`'s stream of `tenant`. */
export function relayArgs(
  relay: RelayProcess,
  tenant: string,
  eventSource: 'auto' | 'relay',
): string[] {
  const url = relay.url.replace(/^http/, 'ws');
  return ['--relay-url', url, '--relay-tenant', tenant, '--event-source', eventSource];
}

// ---- all four: the runner in auto mode ----

export interface AutoModeRig {
  redis: RedisProcess;
  sim: SimProcess;
  relay: RelayProcess;
  runner: RunnerProcess;
  ledger: RingLedger;
}

/**
 * redis-server, the simulator (background traffic away from 101, webhooks to the relay), the relay
 * on Redis, and the runner for extension 101 with `--relay-url ... --event-source auto`; resolves
 * once the runner says `connected` (both streams up). `phoneSystem`: all three speak that system
 * (the simulator's wire, the relay tenant's webhooks and token checks, the runner's client).
 */
export async function startAutoMode(
  group: ProcessGroup,
  options: {
    seed?: number;
    runnerArgs?: string[];
    phoneSystem?: 'standard' | 'yeastar-p-series';
    /** The simulator's `--report-style` (Yeastar P-Series only). */
    reportStyle?: 'snapshot' | 'member' | 'mixed';
  } = {},
): Promise<AutoModeRig> {
  const { phoneSystem, reportStyle } = options;
  const redis = await new RedisProcess(group).start();
  const sim = await new SimProcess(group, {
    traffic: 3,
    exclude: ['101'],
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(phoneSystem && { phoneSystem }),
    ...(reportStyle && { reportStyle }),
  }).start();
  const relay = await new RelayProcess(group, {
    tenant: sim.tenant,
    serviceUrl: sim.baseUrl,
    redisUrl: redis.url,
    ...(phoneSystem && { phoneSystem }),
  }).start();
  await sim.control('POST', 'webhooks', { url: relay.webhookUrl(), secret: relay.webhookSecret });
  const runner = await startRunner(group, {
    baseUrl: sim.baseUrl,
    key: sim.key,
    secret: sim.secret,
    args: [...(options.runnerArgs ?? []), ...relayArgs(relay, sim.tenant, 'auto')],
    ...(phoneSystem && { phoneSystem }),
  });
  await runner.waitForState('connected', 60_000);
  return { redis, sim, relay, runner, ledger: new RingLedger(runner) };
}
