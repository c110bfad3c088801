import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Redis } from 'ioredis';
import type { RedisStorage } from './redis-connection.ts';

/**
 * The primary a majority of the sentinels name, asked of every sentinel at once.
 *
 * ioredis connects to the primary the FIRST sentinel that answers names, and checks only that the
 * server says it is a primary. After a failover both can be wrong at once: a sentinel that has not
 * yet heard of the promotion (the others learn it from the leader's hello messages, every 2 s)
 * names the old primary, and an old primary restarted at once (by its supervisor, with its data)
 * says it is a primary until the sentinels demote it (Redis Sentinel waits 8 s of "role: master"
 * before it converts it, and polls a replica's INFO every 10 s). A replica not yet moved to the new
 * primary re-attaches to the restarted old one, so a Redis WAIT there succeeds: a webhook
 * acknowledged on it was later thrown away by the demotion (the old primary resynchronises from
 * the new one), acknowledged and lost. The store therefore writes only to a primary a majority of
 * the sentinels name (the same majority that authorises a failover).
 */
export class SentinelQuorum {
  private readonly clients: Redis[];
  private readonly name: string;

  constructor(storage: RedisStorage, timeoutMs: number) {
    const sentinel = storage.sentinel!;
    this.name = sentinel.name;
    this.clients = sentinel.nodes.map((node) => {
      const i = node.lastIndexOf(':');
      return new Redis({
        host: node.slice(0, i).replace(/^\[(.*)\]$/, '$1'),
        port: Number(node.slice(i + 1)),
        lazyConnect: true,
        enableOfflineQueue: true,
        maxRetriesPerRequest: 0,
        connectTimeout: timeoutMs,
        commandTimeout: timeoutMs,
        retryStrategy: () => null,
        ...(sentinel.password ? { password: sentinel.password } : {}),
      });
    });
    // A sentinel that is away is only a missing vote; its errors are the answer (null).
    for (const c of this.clients) c.on('error', () => {});
  }

  /** How many sentinels must agree. */
  get majority(): number {
    return Math.floor(this.clients.length / 2) + 1;
  }

  /** "host:port" of the primary a majority names (addresses resolved), or null with the votes. */
  async primary(): Promise<{ primary: string | null; votes: Record<string, number> }> {
    const answers = await Promise.all(this.clients.map((c) => this.ask(c)));
    const votes: Record<string, number> = {};
    for (const a of answers) if (a) votes[a] = (votes[a] ?? 0) + 1;
    const winner = Object.entries(votes).find(([, n]) => n >= this.majority);
    return { primary: winner ? winner[0] : null, votes };
  }

  private async ask(c: Redis): Promise<string | null> {
    try {
      if (c.status === 'wait' || c.status === 'end' || c.status === 'close') await c.connect();
      const reply = (await c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.name)) as
        [string, string] | null;
      if (!Array.isArray(reply)) return null;
      const host = isIP(reply[0]) ? reply[0] : (await lookup(reply[0])).address;
      return `${host}:${reply[1]}`;
    } catch {
      c.disconnect();
      return null;
    }
  }

  close(): void {
    for (const c of this.clients) c.disconnect();
  }
}
