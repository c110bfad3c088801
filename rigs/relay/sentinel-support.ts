import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ownedByThisProcess } from '../owned-spawn.ts';
import { freePort, startRedis, type RedisProcess } from './helpers.ts';

export const SENTINEL_BIN = '/usr/bin/redis-sentinel';

/** Whether redis-sentinel is here; on CI its absence is a failure (.ci/run installs it). */
export function sentinelAvailable(file: string): boolean {
  const ok = existsSync(SENTINEL_BIN);
  if (!ok && process.env.CI === 'true')
    throw new Error(
      `${SENTINEL_BIN} not found; CI must install it (.ci/run installs redis-sentinel)`,
    );
  if (!ok)
    console.warn(
      `${file} skipped: ${SENTINEL_BIN} is not installed (apt-get install redis-sentinel)`,
    );
  return ok;
}

/**
 * How long the sentinels take at most to make a primary that was restarted after a failover (it
 * says "role: master") a replica of the promoted one: Redis Sentinel (sentinel.c) converts it only
 * after it has reported that role for 4 publish periods (4 x 2 s), and asks a replica's INFO every
 * 10 s (SENTINEL_INFO_PERIOD), so 8 s to 18 s after the restart, then the replica's full sync.
 */
export const SENTINEL_DEMOTION_MS = 4 * 2_000 + 10_000;

export interface SentinelGroup {
  /** The name the sentinels monitor. */
  name: string;
  /** The sentinels' down-after-milliseconds and failover-timeout. */
  downAfterMs: number;
  failoverTimeoutMs: number;
  primary: RedisProcess;
  replicas: RedisProcess[];
  /** The sentinels' "127.0.0.1:port". */
  sentinels: string[];
  /**
   * Starts the killed primary again on its port and data (as its supervisor would): the sentinels
   * make it a replica of the promoted one.
   */
  restartPrimary(): Promise<void>;
  /** The primary's address as the sentinels say it now. */
  currentPrimary(): Promise<string>;
  /**
   * SIGKILLs the data node the sentinels name as the primary now (the first one or one promoted
   * since): returns its "127.0.0.1:port". Unlike `restartPrimary`, repeatable: `restartKilled`
   * starts it again.
   */
  killCurrentPrimary(): Promise<string>;
  /** Starts every node `killCurrentPrimary` killed again on its port and data: the sentinels make it a replica. */
  restartKilled(): Promise<void>;
  /** What each data node says of its replication (role, its primary, link, replicas), and the last lines of the first sentinel's log: for a failing wait's report. */
  state(): Promise<{ nodes: Record<string, string>; sentinelLog: string[] }>;
  /** The entries of a stream on the current primary, as "<entry id> <event_id>". */
  streamOf(key: string): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * A primary, `replicas` replicas (1 by default) and `count` sentinels (quorum `quorum`, down after
 * `downAfterMs`: 1,000 ms by default, since with less (300 ms) the sentinels of Redis 7.0 took the
 * replica they had just promoted for down too, before their first ping to it as the primary had
 * its answer, and failed over again: their logs, sentinel-<n>.log in the group's folder, showed
 * +switch-master then +sdown of the new primary 300 ms later), all real
 * processes on 127.0.0.1 and free ports, returned once the replica is in sync and every sentinel
 * knows the replica and the other sentinels (so a failover can start as soon as the primary dies).
 */
export async function startSentinelGroup(
  options: {
    count?: number;
    quorum?: number;
    downAfterMs?: number;
    replicas?: number;
    /** The sentinels' failover-timeout (3,000 ms by default). */
    failoverTimeoutMs?: number;
    /** More arguments of each replica's redis-server. */
    replicaArgs?: string[];
  } = {},
): Promise<SentinelGroup> {
  const name = 'relayha';
  const count = options.count ?? 3;
  const downAfterMs = options.downAfterMs ?? 1000;
  const failoverTimeoutMs = options.failoverTimeoutMs ?? 3000;
  const primary = await startRedis();
  const replicas: RedisProcess[] = [];
  for (let i = 0; i < (options.replicas ?? 1); i++)
    replicas.push(
      await startRedis({
        args: ['--replicaof', '127.0.0.1', String(primary.port), ...(options.replicaArgs ?? [])],
      }),
    );
  const dir = mkdtempSync(join(tmpdir(), 'relay-sentinel-'));
  const children: ChildProcess[] = [];
  const sentinels: string[] = [];
  const clients: Redis[] = [];
  const restarted: RedisProcess[] = [];
  /** The data nodes running, by port; and those killed, to start again. */
  const live = new Map<number, RedisProcess>();
  const killed: RedisProcess[] = [];
  const stop = async () => {
    for (const c of clients) c.disconnect();
    for (const r of restarted) await r.stop({ keepData: true });
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        await exited;
      }
    for (const r of replicas) await r.stop();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          `logfile ${join(dir, `sentinel-${i}.log`)}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${primary.port} ${options.quorum ?? 2}`,
          `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
          `sentinel failover-timeout ${name} ${failoverTimeoutMs}`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      children.push(spawn(...ownedByThisProcess(SENTINEL_BIN, [conf]), { stdio: 'ignore' }));
      sentinels.push(`127.0.0.1:${port}`);
      clients.push(
        new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 100 }),
      );
    }
    const replicaInfo = replicas.map((r) => new Redis({ port: r.port, host: '127.0.0.1' }));
    clients.push(...replicaInfo);
    // A node killed on purpose (killCurrentPrimary) refuses these clients' reconnections: not an
    // error to print ("[ioredis] Unhandled error event"), they retry.
    for (const c of clients) c.on('error', () => {});
    const ready = async () => {
      for (const r of replicaInfo)
        if (!(await r.info('replication')).includes('master_link_status:up')) return false;
      for (const c of clients.slice(0, count)) {
        if (c.status === 'wait') await c.connect();
        const others = (await c.call('SENTINEL', 'SENTINELS', name)) as unknown[];
        const known = (await c.call('SENTINEL', 'REPLICAS', name)) as unknown[];
        if (others.length < count - 1 || known.length < replicas.length) return false;
      }
      return true;
    };
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (await ready().catch(() => false)) break;
      if (Date.now() > deadline)
        throw new Error('the sentinels did not find each other and the replica');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  for (const node of [primary, ...replicas]) live.set(node.port, node);
  const currentPrimary = async () => {
    const [host, port] = (await clients[0]!.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as [
      string,
      string,
    ];
    return `${host}:${port}`;
  };
  return {
    name,
    downAfterMs,
    failoverTimeoutMs,
    primary,
    replicas,
    sentinels,
    async restartPrimary() {
      const again = await startRedis({ dir: primary.dir, port: primary.port });
      restarted.push(again);
    },
    currentPrimary,
    async killCurrentPrimary() {
      const address = await currentPrimary();
      const port = Number(address.split(':')[1]);
      const node = live.get(port);
      if (!node) throw new Error(`the sentinels name ${address}, not a node of this group running`);
      process.kill(node.pid, 'SIGKILL');
      await node.stop({ keepData: true }); // waits for its exit
      live.delete(port);
      killed.push(node);
      return address;
    },
    async restartKilled() {
      for (const node of killed.splice(0)) {
        const again = await startRedis({ dir: node.dir, port: node.port });
        live.set(again.port, again);
        restarted.push(again);
      }
    },
    async state() {
      const nodes: Record<string, string> = {};
      for (const port of [primary.port, ...replicas.map((r) => r.port)]) {
        const r = new Redis({
          host: '127.0.0.1',
          port,
          lazyConnect: true,
          retryStrategy: () => null,
        });
        r.on('error', () => {});
        nodes[port] = await r
          .connect()
          .then(() => r.info('replication'))
          .then((text) =>
            text
              .split('\r\n')
              .filter((l) =>
                /^(role|master_port|master_link_status|connected_slaves|master_repl_offset):/.test(
                  l,
                ),
              )
              .join(' '),
          )
          .catch((e: Error) => e.message);
        r.disconnect();
      }
      let sentinelLog: string[] = [];
      try {
        sentinelLog = readFileSync(join(dir, 'sentinel-0.log'), 'utf8')
          .trim()
          .split('\n')
          .slice(-15);
      } catch {
        // no log yet
      }
      return { nodes, sentinelLog };
    },
    async streamOf(key: string) {
      const [host, port] = (await clients[0]!.call(
        'SENTINEL',
        'GET-MASTER-ADDR-BY-NAME',
        name,
      )) as [string, string];
      const r = new Redis({ host, port: Number(port), lazyConnect: true });
      try {
        await r.connect();
        const entries = (await r.xrange(key, '-', '+')) as [string, string[]][];
        return entries.map(([id, f]) => `${id} ${f[f.indexOf('id') + 1]}`);
      } finally {
        r.disconnect();
      }
    },
    stop,
  };
}

/**
 * One more sentinel, alone, that monitors `port` under `name`: a sentinel that names another
 * server than the group's (as one not yet told of a failover does). Returns its "127.0.0.1:port".
 */
export async function startLoneSentinel(
  name: string,
  port: number,
): Promise<{ address: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-sentinel-lone-'));
  const own = await freePort();
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${own}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${port} 1`,
      '',
    ].join('\n'),
  );
  const child = spawn(...ownedByThisProcess(SENTINEL_BIN, [conf]), { stdio: 'ignore' });
  const probe = new Redis({
    port: own,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => 100,
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await probe
      .connect()
      .then(() => probe.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name))
      .then((r) => Array.isArray(r))
      .catch(() => false);
    if (ok) break;
    probe.disconnect();
    if (Date.now() > deadline) throw new Error('the lone sentinel did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  probe.disconnect();
  return {
    address: `127.0.0.1:${own}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
