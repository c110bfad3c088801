import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ownedByThisProcess } from '../support/owned-spawn.ts';
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

export interface SentinelGroup {
  /** The name the sentinels monitor. */
  name: string;
  primary: RedisProcess;
  replica: RedisProcess;
  /** The sentinels' "127.0.0.1:port". */
  sentinels: string[];
  /** The primary's address as the sentinels say it now. */
  currentPrimary(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A primary, a replica and `count` sentinels (quorum `quorum`, down after `downAfterMs`), all real
 * processes on 127.0.0.1 and free ports, returned once the replica is in sync and every sentinel
 * knows the replica and the other sentinels (so a failover can start as soon as the primary dies).
 */
export async function startSentinelGroup(
  options: { count?: number; quorum?: number; downAfterMs?: number } = {},
): Promise<SentinelGroup> {
  const name = 'relayha';
  const count = options.count ?? 3;
  const primary = await startRedis();
  const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  const dir = mkdtempSync(join(tmpdir(), 'relay-sentinel-'));
  const children: ChildProcess[] = [];
  const sentinels: string[] = [];
  const clients: Redis[] = [];
  const stop = async () => {
    for (const c of clients) c.disconnect();
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        await exited;
      }
    await replica.stop();
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
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${primary.port} ${options.quorum ?? 2}`,
          `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 300}`,
          `sentinel failover-timeout ${name} 3000`,
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
    const primaryInfo = new Redis({ port: replica.port, host: '127.0.0.1' });
    clients.push(primaryInfo);
    const ready = async () => {
      const link = (await primaryInfo.info('replication')).includes('master_link_status:up');
      if (!link) return false;
      for (const c of clients.slice(0, count)) {
        if (c.status === 'wait') await c.connect();
        const others = (await c.call('SENTINEL', 'SENTINELS', name)) as unknown[];
        const replicas = (await c.call('SENTINEL', 'REPLICAS', name)) as unknown[];
        if (others.length < count - 1 || replicas.length < 1) return false;
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
  return {
    name,
    primary,
    replica,
    sentinels,
    async currentPrimary() {
      const [host, port] = (await clients[0]!.call(
        'SENTINEL',
        'GET-MASTER-ADDR-BY-NAME',
        name,
      )) as [string, string];
      return `${host}:${port}`;
    },
    stop,
  };
}
