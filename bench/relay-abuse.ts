/**
 * `npm run bench:relay-abuse`: the adversarial probe (test/relay/attacks.ts), attack by attack, against the real relay
 * process (`node dist-relay/screenpop-relay.cjs`, memory and Redis backends) on 127.0.0.1. It prints what each
 * abuse did to the relay (memory, time to answer, calls made at the service, log lines, bytes
 * taken), as a table and as JSON. The same attacks (test/relay/attacks.ts) run in `npm test` at a
 * smaller size, as assertions (test/relay/adversarial*.test.ts).
 *
 * Bounded: every attack stops at a count or a deadline, every process it starts it stops.
 * BENCH_ONLY=1,4,6 runs some items only.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  closeCodeSeries,
  fillBacklog,
  handshakeFlood,
  heartbeatFlood,
  hello,
  openSocket,
  postRaw,
  replayHoard,
  slowHeaders,
  streamBody,
  streamUrl,
  timed,
} from '../rigs/relay/attacks.ts';
import { envelope, signed, SECRET, startRedis, startTokenService } from '../rigs/relay/helpers.ts';
import { spawnRelay, type RelayProcess } from '../rigs/relay/relay-process.ts';
import { WebSocketServer } from 'ws';
import { systemClock } from '../src-shared/process/clock.ts';
import { RelayEventSource } from '../src-main/core/relay-client/relay-source.ts';
import { directTransport } from '../rigs/direct-transport.ts';

const only = process.env.BENCH_ONLY?.split(',').map(Number);
const want = (item: number) => !only || only.includes(item);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const results: Record<string, unknown>[] = [];
const lines: string[] = [];

function report(item: string, what: string, figures: Record<string, unknown>): void {
  results.push({ item, what, ...figures });
  const text = Object.entries(figures)
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join('  ');
  lines.push(`${item.padEnd(4)} ${what.padEnd(46)} ${text}`);
  process.stderr.write(`${item} ${what}: ${text}\n`);
}

const tenantEnv = (baseUrl: string) => ({
  RELAY_TENANT_ACME_SECRETS: SECRET,
  RELAY_TENANT_ACME_BASE_URL: baseUrl,
});

async function withRelay<T>(
  opts: Parameters<typeof spawnRelay>[0],
  run: (relay: RelayProcess) => Promise<T>,
): Promise<T> {
  const relay = await spawnRelay(opts);
  try {
    return await run(relay);
  } finally {
    await relay.stop(5_000);
  }
}

async function item1(): Promise<void> {
  const service = await startTokenService(new Set(['tok']));
  for (const backend of ['memory', 'redis'] as const) {
    const redis = backend === 'redis' ? await startRedis() : undefined;
    await withRelay(
      {
        env: {
          ...tenantEnv(service.baseUrl),
          RELAY_LOG_LEVEL: 'warn',
          ...(redis ? { RELAY_REDIS_URL: redis.url } : {}),
        },
      },
      async (relay) => {
        const r = await heartbeatFlood({
          relayUrl: relay.url,
          pid: relay.pid,
          token: 'tok',
          seconds: backend === 'memory' ? 12 : 6,
        });
        report('1', `heartbeat flood, not reading (${backend})`, {
          rssMiB: `${r.startMiB} -> ${r.peakMiB}`,
          ended: r.ended,
          afterMs: r.afterMs,
          frames: r.framesSent,
        });
      },
    );
    await redis?.stop();
  }
  await service.close();
}

async function item2(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-abuse-'));
  const service = await startTokenService(new Set(['tok']));
  const snapshot = join(dir, 'snapshot.json');
  const env = {
    ...tenantEnv(service.baseUrl),
    RELAY_STORAGE: 'memory',
    RELAY_SNAPSHOT_FILE: snapshot,
  };
  const relay = await spawnRelay({ env });
  let acknowledged = 0;
  for (let i = 0; i < 20; i++) {
    const body = envelope({ event_id: `snap-${i}` });
    if ((await postRaw(relay.url + '/webhook/acme', body, signed(body))) === 200) acknowledged++;
  }
  const end = await relay.stop(30_000);
  const lastLog = relay.logLines().at(-1)?.msg;
  const written = existsSync(snapshot);
  // Restart on the same snapshot: how many acknowledged events does a client resuming from the
  // start get back?
  const again = await spawnRelay({ env });
  let replayed = 0;
  const opened = await openSocket(streamUrl(again.url), 'tok');
  if ('ws' in opened) {
    opened.ws.on('message', (d) => {
      if (!d.toString().startsWith('relay ')) replayed++;
    });
    opened.ws.send(hello('0-1'));
    await sleep(1000);
    opened.ws.terminate();
  }
  await again.stop();
  report('2', 'SIGTERM with a snapshot file (memory)', {
    exit: end.code ?? end.signal,
    lastLogLine: lastLog,
    snapshotWritten: written,
    recoveredAfterRestart: `${replayed}/${acknowledged}`,
  });
  await service.close();
  rmSync(dir, { recursive: true, force: true });
}

async function item3(): Promise<void> {
  // One service address answering for two tenants (as the simulator does): a globex token is
  // valid there, so asking "is this token valid at acme's base URL" admits it to acme's stream.
  const service = await startTokenService(new Set(['acme-token', 'globex-token']));
  let relay: RelayProcess | undefined;
  let outcome: Record<string, unknown>;
  try {
    relay = await spawnRelay({
      env: {
        ...tenantEnv(service.baseUrl),
        RELAY_TENANT_GLOBEX_SECRETS: 'globex-secret',
        RELAY_TENANT_GLOBEX_BASE_URL: service.baseUrl,
      },
    });
    const opened = await openSocket(streamUrl(relay.url, 'acme'), 'globex-token');
    let got = 0;
    if ('ws' in opened) {
      opened.ws.on('message', (d) => {
        if (!d.toString().startsWith('relay ')) got++;
      });
      opened.ws.send(hello(null));
      await sleep(300);
      const body = envelope({ event_id: 'acme-ring', tenant: 'acme' });
      await postRaw(relay.url + '/webhook/acme', body, signed(body));
      await sleep(500);
      opened.ws.terminate();
    }
    outcome = {
      relayStarted: true,
      globexTokenOnAcmeStream: 'ws' in opened ? 'admitted' : `refused ${opened.status}`,
      acmeRingsReceived: got,
    };
  } catch (err) {
    outcome = { relayStarted: false, refusal: String((err as Error).message).split('\n')[1] };
  } finally {
    await relay?.stop();
  }
  report('3', 'two tenants on one base URL', outcome);
  await service.close();
}

async function item4(): Promise<void> {
  const service = await startTokenService({ has: (t: string) => t.startsWith('tok') });
  for (const tokens of ['one token', 'a token each'] as const) {
    await withRelay(
      { env: { ...tenantEnv(service.baseUrl), RELAY_LOG_LEVEL: 'warn' } },
      async (relay) => {
        const stored = await fillBacklog(relay.url, 3000, 2048);
        const r = await replayHoard({
          relayUrl: relay.url,
          pid: relay.pid,
          clients: 300,
          token: tokens === 'one token' ? () => 'tok' : (i) => `tok-${i}`,
          holdSeconds: 10,
        });
        const t0 = performance.now();
        const end = await relay.stop(70_000);
        report('4', `300 clients resume from 0-0, not reading (${tokens})`, {
          backlog: stored,
          admitted: r.admitted,
          refused: r.refused,
          closedByRelay: r.closedByRelay,
          rssMiB: `${r.startMiB} -> ${r.peakMiB}`,
          drainSec: Math.round((performance.now() - t0) / 100) / 10,
          exit: end.code ?? end.signal,
        });
      },
    );
  }
  await service.close();
}

async function item5(): Promise<void> {
  const service = await startTokenService(new Set(['tok']));
  const redis = await startRedis();
  await withRelay(
    { env: { ...tenantEnv(service.baseUrl), RELAY_REDIS_URL: redis.url } },
    async (relay) => {
      process.kill(redis.pid, 'SIGSTOP');
      const body = envelope({ event_id: 'hung-1' });
      const [webhook, ready] = await Promise.all([
        timed(
          (signal) =>
            fetch(relay.url + '/webhook/acme', {
              method: 'POST',
              headers: { 'X-Service-Signature': signed(body) },
              body,
              signal,
            }).then((r) => r.status),
          45_000,
        ),
        timed((signal) => fetch(relay.url + '/readyz', { signal }).then((r) => r.status), 45_000),
      ]);
      process.kill(redis.pid, 'SIGCONT');
      report('5', 'Redis paused (SIGSTOP)', {
        webhook: `${webhook.status || 'no answer'} after ${webhook.ms} ms`,
        readyz: `${ready.status || 'no answer'} after ${ready.ms} ms`,
      });
    },
  );
  await redis.stop();
  await service.close();
}

async function item6(): Promise<void> {
  const service = await startTokenService(new Set(['good-token']));
  await withRelay({ env: { ...tenantEnv(service.baseUrl) } }, async (relay) => {
    const before = service.calls();
    const linesBefore = relay.logLines().length;
    const r = await handshakeFlood({
      relayUrl: relay.url,
      count: 1_000_000,
      concurrency: 64,
      seconds: 10,
      token: (i) => `garbage-${i}-${Math.random()}`,
    });
    report('6', 'garbage-token handshakes for 10 s', {
      handshakes: r.sent,
      statuses: r.statuses,
      serviceCalls: service.calls() - before,
      logLines: relay.logLines().length - linesBefore,
    });
  });
  await service.close();
  // The same at once, against a service that takes 50 ms to answer; ten real desktops (new valid
  // tokens, from another address) connect while it lasts.
  const slowish = await startTokenService(
    { has: (t: string) => t.startsWith('good-') },
    new Set(),
    '',
    { delayMs: 50 },
  );
  await withRelay({ env: { ...tenantEnv(slowish.baseUrl) } }, async (relay) => {
    const before = slowish.calls();
    const flood = handshakeFlood({
      relayUrl: relay.url,
      count: 1500,
      concurrency: 1500,
      seconds: 20,
      token: (i) => `garbage-${i}`,
    });
    const legit: Record<string, number> = {};
    for (let i = 0; i < 10; i++) {
      await sleep(20);
      const r = await handshakeFlood({
        relayUrl: relay.url,
        count: 1,
        concurrency: 1,
        seconds: 20,
        token: () => `good-${i}`,
        localAddress: '127.0.0.2',
      });
      for (const [k, v] of Object.entries(r.statuses)) legit[k] = (legit[k] ?? 0) + v;
    }
    const r = await flood;
    report('6', '1,500 garbage handshakes at once + 10 real ones', {
      statuses: r.statuses,
      serviceCalls: slowish.calls() - before,
      realDesktops: legit,
    });
  });
  await slowish.close();
  // A relay restart: every desktop reconnects at once, each with its own valid token, and the
  // service takes 200 ms to answer a check (a service across the Internet).
  const slow = await startTokenService(
    { has: (t: string) => t.startsWith('valid-') },
    new Set(),
    '',
    {
      delayMs: 200,
    },
  );
  await withRelay(
    { env: { ...tenantEnv(slow.baseUrl), RELAY_LOG_LEVEL: 'warn' } },
    async (relay) => {
      const r = await handshakeFlood({
        relayUrl: relay.url,
        count: 1000,
        concurrency: 1000,
        seconds: 30,
        token: (i) => `valid-${i}`,
      });
      report('6', 'restart storm: 1,000 valid distinct tokens at once', {
        statuses: r.statuses,
        elapsedMs: r.elapsedMs,
      });
    },
  );
  await slow.close();
}

async function item7(): Promise<void> {
  const service = await startTokenService(new Set(['tok']));
  const redis = await startRedis();
  const relay = await spawnRelay({
    env: { ...tenantEnv(service.baseUrl), RELAY_REDIS_URL: redis.url },
  });
  await redis.stop();
  await sleep(1000);
  const t0 = performance.now();
  relay.child.kill('SIGTERM');
  const end = await Promise.race([relay.exited, sleep(25_000).then(() => null)]);
  const ms = Math.round(performance.now() - t0);
  const draining = relay.logLines().some((l) => l.msg === 'relay draining');
  if (!end) relay.child.kill('SIGKILL');
  await relay.exited;
  report('7', 'SIGTERM with its Redis shut down', {
    exited: end ? `code ${end.code ?? end.signal} after ${ms} ms` : 'still running after 25 s',
    drainingLine: draining,
  });
  await service.close();
}

async function item8(): Promise<void> {
  const service = await startTokenService(new Set(['tok']));
  await withRelay(
    { env: { ...tenantEnv(service.baseUrl), RELAY_LOG_LEVEL: 'warn' } },
    async (relay) => {
      for (const path of ['/webhook/nosuch', '/nothing-here', '/webhook/acme']) {
        const r = await streamBody(relay.url, path, 6);
        report('8', `body streamed to ${path} for 6 s`, {
          acceptedMiB: Math.round(r.bytes / 1048576),
          ended: r.ended,
          status: r.status,
        });
      }
      const ms = await slowHeaders(relay.url, 45_000);
      report('8', 'half a request, then silence (headersTimeout 10 s)', {
        closedAfterMs: ms,
      });
      const series = await closeCodeSeries(relay.url, 'tok', 50);
      report('8', '50 clients close with codes 3000-3049', { closeCodeSeries: series });
    },
  );
  await service.close();
}

async function item9(): Promise<void> {
  // A relay that closes every session with 4002 the moment it is ready; the desktop's relay
  // source against it for 3 s of real time.
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  let connections = 0;
  wss.on('connection', (ws) => {
    connections++;
    ws.on('message', () => {
      ws.send(
        'relay ' +
          JSON.stringify({
            type: 'ready',
            session: 's',
            cursor: '1-0',
            heartbeatMs: 25000,
            idleTimeoutMs: 60000,
          }),
      );
      ws.close(4002, 'authorisation expired');
    });
  });
  const src = new RelayEventSource({
    relayUrl: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    tenant: 'acme',
    tokens: {
      getToken: async () => ({ value: 'tok', expiresAt: Date.now() + 1_800_000 }),
      invalidate: () => {},
    },
    filter: { extensions: ['101'], dids: [], events: [] },
    clock: systemClock,
    createSocket: directTransport().createSocket,
  });
  src.start();
  await sleep(3000);
  await src.stop();
  await new Promise<void>((r) => wss.close(() => r()));
  report('9', 'desktop vs a relay closing every session (4002)', {
    connectionsIn3s: connections,
  });
}

async function main(): Promise<void> {
  const started = performance.now();
  const items = [item1, item2, item3, item4, item5, item6, item7, item8, item9];
  for (const [i, run] of items.entries()) if (want(i + 1)) await run();
  const head = `relay abuse probe (${new Date().toISOString()}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`;
  process.stdout.write(
    [head, ...lines, `total ${Math.round((performance.now() - started) / 1000)} s`, ''].join('\n') +
      '\n' +
      JSON.stringify(results, null, 2) +
      '\n',
  );
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`bench:relay-abuse failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
