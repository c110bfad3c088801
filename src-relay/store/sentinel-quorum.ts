import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Redis } from 'ioredis';
import type { RedisStorage } from './redis-connection.ts';

/** A sentinel's flags for the primary that mean it is down or being failed over (sentinel.c). */
const VETO_FLAGS = new Set(['s_down', 'o_down', 'failover_in_progress']);
/** The failover states in which the leader names the promoted replica (sentinel.c). */
const PROMOTED_STATES = new Set(['reconf_slaves', 'update_config']);

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
 *
 * A majority is not enough while a failover is under way: until the leader has promoted the replica
 * it chose (Sentinel's RECONF_SLAVES state), every sentinel, the leader too, still names the old
 * primary, and one restarted at once answers as a primary with a replica soon re-attached to it
 * (WAIT succeeds): what it acknowledges is thrown away when the promotion completes. Seen in the
 * failover test with the primary restarted 1.1 s after the kill: a webhook was stored on it and
 * handed to desktops 1.2 s after the kill, while the sentinels promoted the replica. So a sentinel
 * that sees the primary down (`s_down`, `o_down`) or a failover of it under way
 * (`failover_in_progress`, set on every sentinel that reached `o_down`, for the election and the
 * failover) vetoes: no server is the primary until it is over. One sentinel alone that cannot
 * reach the primary thus holds writes (503, retried) until it can again or the failover is done.
 *
 * Except for a leader past the promotion. Once the replica it chose answers as a primary, the
 * leader moves to `reconf_slaves` (its `failover-state`), names the promoted replica, and keeps
 * `s_down`, `o_down` and `failover_in_progress` on its entry for the OLD primary (the `ip` and
 * `port` of SENTINEL MASTER) until every other replica follows the new one: up to the
 * failover-timeout when one of them is down. Sentinel cannot abort a failover from that state
 * (sentinel.c aborts only up to `wait_promotion`), so the promotion is final: such a sentinel's
 * flags veto the server its entry describes, the old primary, not the promoted one it names.
 * Seen in the gateway soak (standard service, minReplicas 1, primaries killed 20 s apart): every
 * sentinel named the promoted replica for 1-4 s more while the leader's flags held every write,
 * and the phone system's retries stored the events of that window out of their order (an answer
 * before its ring: a ring never shown), 5-7 of ~300 rings in 20 minutes.
 */
export class SentinelQuorum {
  private readonly clients: Redis[];
  private readonly name: string;

  /** `now`: the store's clock (ms), for primaryAsOf. */
  private readonly now: () => number;

  constructor(storage: RedisStorage, timeoutMs: number, now: () => number) {
    this.now = now;
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

  /**
   * "host:port" of the primary a majority names (addresses resolved), or null, with the votes and
   * the flags of the sentinels that veto (a primary down or a failover under way).
   */
  async primary(): Promise<{
    primary: string | null;
    votes: Record<string, number>;
    vetoes: string[];
  }> {
    const answers = await Promise.all(this.clients.map((c) => this.ask(c)));
    const votes: Record<string, number> = {};
    for (const a of answers) if (a) votes[a.address] = (votes[a.address] ?? 0) + 1;
    const winner = Object.entries(votes).find(([, n]) => n >= this.majority)?.[0];
    // A veto holds every server, or, from a leader past the promotion, the old primary only.
    const vetoes = answers.flatMap((a) =>
      a?.veto && (a.veto === 'any' || a.veto === winner) ? [a.flags] : [],
    );
    return { primary: winner && vetoes.length === 0 ? winner : null, votes, vetoes };
  }

  /**
   * The answer of a check started at or after `since` (clock ms): concurrent callers (every
   * webhook acknowledged at once) share one round of questions.
   */
  primaryAsOf(since: number): ReturnType<SentinelQuorum['primary']> {
    if (this.latest && this.latest.startedAt >= since) return this.latest.answer;
    const startedAt = this.now();
    const answer = this.primary();
    this.latest = { startedAt, answer };
    return answer;
  }

  private latest: { startedAt: number; answer: ReturnType<SentinelQuorum['primary']> } | undefined;

  /**
   * One sentinel's answer: the address it names, its flags for its entry, and what they veto:
   * 'any' server, the server its entry still describes (a leader past the promotion), or none.
   */
  private async ask(
    c: Redis,
  ): Promise<{ address: string; flags: string; veto: 'any' | string | null } | null> {
    try {
      if (c.status === 'wait' || c.status === 'end' || c.status === 'close') await c.connect();
      const [reply, master] = await Promise.all([
        c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.name) as Promise<
          [string, string] | null
        >,
        c.call('SENTINEL', 'MASTER', this.name) as Promise<unknown[]>,
      ]);
      if (!Array.isArray(reply) || !Array.isArray(master)) return null;
      const field = (name: string): string => {
        const i = master.indexOf(name);
        return i >= 0 ? String(master[i + 1]) : '';
      };
      const flags = field('flags');
      const address = await resolved(reply[0], reply[1]);
      let veto: 'any' | string | null = null;
      if (flags.split(',').some((f) => VETO_FLAGS.has(f))) {
        const entry = await resolved(field('ip'), field('port'));
        veto = PROMOTED_STATES.has(field('failover-state')) && entry !== address ? entry : 'any';
      }
      return { address, flags, veto };
    } catch {
      c.disconnect();
      return null;
    }
  }

  close(): void {
    for (const c of this.clients) c.disconnect();
  }
}

/** "host:port" with the host resolved to its address (sentinels may announce host names). */
async function resolved(host: string, port: string): Promise<string> {
  return `${isIP(host) ? host : (await lookup(host)).address}:${port}`;
}
