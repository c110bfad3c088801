import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { startRedis, type RedisProcess } from './helpers.ts';

export const REDIS_CLI = '/usr/bin/redis-cli';

export interface RedisClusterNodes {
  /** Every node started, primaries first as redis-cli --cluster create was given them. */
  nodes: RedisProcess[];
  /** "127.0.0.1:port" of every node (for storage.cluster.nodes). */
  addresses: string[];
  /** The cluster-node-timeout the nodes run with (ms): a primary is failed over after about it. */
  nodeTimeoutMs: number;
  /** The slot of a key (CLUSTER KEYSLOT, asked of a node that answers). */
  keyslot(key: string): Promise<number>;
  /** The port of the node serving `slot` as primary now (CLUSTER SLOTS, asked of a live node). */
  primaryOf(slot: number): Promise<number>;
  /** The port of a replica of the primary on `port` (CLUSTER NODES, asked of a live node). */
  replicaOf(port: number): Promise<number>;
  /** Each live node's connected_clients (INFO clients), by port: this rig's own one included. */
  clients(): Promise<Record<number, number>>;
  /** Every key of every primary (SCAN on each), with its slot. */
  keys(): Promise<{ key: string; slot: number; port: number }[]>;
  /** Kills the node on `port` (SIGKILL): its replica is promoted after nodeTimeoutMs. */
  kill(port: number): void;
  /**
   * Starts the killed node again on its port and data (as its supervisor would): it rejoins as a
   * replica of the primary promoted in its place (its nodes.conf keeps its identity).
   */
  restart(port: number): Promise<void>;
  /** Whether every live node says cluster_state:ok and `slot`'s primary is not `notPort`. */
  settled(slot: number, notPort: number): Promise<boolean>;
  /** What each node says (cluster_state, its role): for a failing wait's report. */
  state(): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

/**
 * A Redis Cluster of real redis-server processes on 127.0.0.1 and free ports (each started by
 * helpers.ts' startRedis, with cluster-enabled), `primaries` primaries sharing the 16,384 slots in
 * equal ranges and `replicasEach` replicas of each (redis-cli --cluster create), returned once
 * every node says cluster_state:ok and each replica's link to its primary is up (so a failover
 * can start as soon as a primary dies). Every wait is bounded.
 */
export async function startRedisCluster(
  options: { primaries?: number; replicasEach?: number; nodeTimeoutMs?: number } = {},
): Promise<RedisClusterNodes> {
  const primaries = options.primaries ?? 3;
  const replicasEach = options.replicasEach ?? 0;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1_000;
  const nodes: RedisProcess[] = [];
  const clusterArgs = ['--cluster-enabled', 'yes', '--cluster-node-timeout', String(nodeTimeoutMs)];
  const admins = new Map<number, Redis>();
  const admin = (port: number) => {
    let r = admins.get(port);
    if (!r) {
      r = new Redis({
        host: '127.0.0.1',
        port,
        lazyConnect: true,
        enableOfflineQueue: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => 100,
        connectTimeout: 500,
        commandTimeout: 1_000,
      });
      r.on('error', () => {});
      admins.set(port, r);
    }
    return r;
  };
  const killed = new Set<number>();
  const live = () => nodes.filter((n) => !killed.has(n.port));
  /** The first live node's answer. */
  const ask = async (...args: string[]): Promise<unknown> => {
    let last: unknown;
    for (const n of live()) {
      try {
        return await admin(n.port).call(args[0]!, ...args.slice(1));
      } catch (err) {
        last = err;
      }
    }
    throw last instanceof Error ? last : new Error('no node of the cluster answers');
  };
  const stop = async () => {
    for (const r of admins.values()) r.disconnect();
    for (const n of nodes) await n.stop();
  };
  try {
    for (let i = 0; i < primaries * (1 + replicasEach); i++)
      nodes.push(await startRedis({ args: clusterArgs }));
    const created = spawnSync(
      REDIS_CLI,
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        String(replicasEach),
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (created.status !== 0)
      throw new Error(`redis-cli --cluster create: ${created.stdout}${created.stderr}`);
    const ready = async () => {
      for (const n of nodes) {
        const info = String(await admin(n.port).call('CLUSTER', 'INFO'));
        if (!info.includes('cluster_state:ok')) return false;
        const replication = await admin(n.port).info('replication');
        if (replication.includes('role:slave') && !replication.includes('master_link_status:up'))
          return false;
      }
      return true;
    };
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (await ready().catch(() => false)) break;
      if (Date.now() > deadline) throw new Error('the cluster did not reach cluster_state:ok');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const primaryOf = async (slot: number) => {
    const ranges = (await ask('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`no node serves slot ${slot}`);
    return Number(range[2][1]);
  };
  return {
    nodes,
    addresses: nodes.map((n) => `127.0.0.1:${n.port}`),
    nodeTimeoutMs,
    async keyslot(key) {
      return Number(await ask('CLUSTER', 'KEYSLOT', key));
    },
    primaryOf,
    async replicaOf(port) {
      const lines = String(await ask('CLUSTER', 'NODES'))
        .trim()
        .split('\n')
        .map((l) => l.split(' '));
      const primary = lines.find((f) => f[1]!.startsWith(`127.0.0.1:${port}@`));
      const replica = lines.find((f) => primary && f[3] === primary[0] && /slave/.test(f[2]!));
      if (!replica) throw new Error(`no replica of the primary on port ${port}`);
      return Number(replica[1]!.split('@')[0]!.split(':')[1]);
    },
    async clients() {
      const out: Record<number, number> = {};
      for (const n of live())
        out[n.port] = Number(
          (await admin(n.port).info('clients')).match(/connected_clients:(\d+)/)?.[1],
        );
      return out;
    },
    async keys() {
      const out: { key: string; slot: number; port: number }[] = [];
      for (const n of live()) {
        const r = admin(n.port);
        if ((await r.info('replication')).includes('role:slave')) continue;
        let cursor = '0';
        do {
          const [next, keys] = await r.scan(cursor, 'COUNT', 500);
          cursor = next;
          for (const key of keys)
            out.push({ key, slot: Number(await r.call('CLUSTER', 'KEYSLOT', key)), port: n.port });
        } while (cursor !== '0');
      }
      return out;
    },
    kill(port) {
      const node = nodes.find((n) => n.port === port);
      if (!node) throw new Error(`no node on port ${port}`);
      killed.add(port);
      admins.get(port)?.disconnect();
      admins.delete(port);
      process.kill(node.pid, 'SIGKILL');
    },
    async restart(port) {
      const i = nodes.findIndex((n) => n.port === port);
      if (i < 0 || !killed.has(port)) throw new Error(`no killed node on port ${port}`);
      nodes[i] = await startRedis({ dir: nodes[i]!.dir, port, args: clusterArgs });
      killed.delete(port);
    },
    async settled(slot, notPort) {
      for (const n of live())
        if (!String(await admin(n.port).call('CLUSTER', 'INFO')).includes('cluster_state:ok'))
          return false;
      return (await primaryOf(slot)) !== notPort;
    },
    async state() {
      const out: Record<string, string> = {};
      for (const n of nodes) {
        if (killed.has(n.port)) {
          out[n.port] = 'killed';
          continue;
        }
        try {
          const info = String(await admin(n.port).call('CLUSTER', 'INFO'));
          const role = (await admin(n.port).info('replication')).match(/role:(\w+)/)?.[1];
          out[n.port] = `${info.match(/cluster_state:\w+/)?.[0]} role:${role}`;
        } catch (err) {
          out[n.port] = (err as Error).message;
        }
      }
      return out;
    },
    stop,
  };
}
