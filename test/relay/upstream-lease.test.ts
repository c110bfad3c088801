/**
 * The gateway's upstream lease (src-relay/gateway/lease.ts) on the fake clock, against a far side
 * that keeps leases as Redis documents SET NX PX, PEXPIRE and key expiry (on the same clock, so a
 * lease's end in "Redis" and the holders' clocks can be compared exactly). Several instances ask
 * for one tenant's lease: one holds it at a time, never two at any moment, and a holder cut off
 * from Redis stops acting on its own clock before Redis lets another take over.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src-shared/process/log.ts';
import { LEASE_TIMINGS, UpstreamLease, type LeaseBackend } from '../../src-relay/gateway/lease.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

/** Redis's side: one key per tenant with a PX expiry, a counter, and a partition switch per client. */
class FakeRedis {
  private lease: { token: string; expiresAt: number } | undefined;
  private counter = 0;
  readonly clock: FakeClock;
  constructor(clock: FakeClock) {
    this.clock = clock;
  }
  holder(): string | undefined {
    if (this.lease && this.clock.monotonic() >= this.lease.expiresAt) this.lease = undefined;
    return this.lease?.token;
  }
  client(partitioned: () => boolean): LeaseBackend {
    // A partitioned client's commands time out after 2 s, as ioredis's commandTimeout does.
    const call = <T>(f: () => T): Promise<T> =>
      partitioned()
        ? new Promise((_, reject) =>
            this.clock.setTimeout(() => reject(new Error('Command timed out')), 2_000),
          )
        : Promise.resolve(f());
    return {
      acquireLease: (_tenant, owner, ttlMs) =>
        call(() => {
          if (this.holder() !== undefined) return null;
          const token = `${owner}#${++this.counter}`;
          this.lease = { token, expiresAt: this.clock.monotonic() + ttlMs };
          return token;
        }),
      extendLease: (_tenant, token, ttlMs) =>
        call(() => {
          if (this.holder() !== token) return false;
          this.lease!.expiresAt = this.clock.monotonic() + ttlMs;
          return true;
        }),
      releaseLease: (_tenant, token) =>
        call(() => {
          if (this.holder() === token) this.lease = undefined;
        }),
    };
  }
}

function instances(n: number) {
  const clock = new FakeClock();
  const redis = new FakeRedis(clock);
  const cut = new Set<number>();
  const acting = new Set<number>();
  const log: string[] = [];
  const leases = Array.from({ length: n }, (_, i) => {
    return new UpstreamLease({
      tenant: 'acme',
      owner: `relay-${i}`,
      backend: redis.client(() => cut.has(i)),
      clock,
      logger: silentLogger,
      acquired: async () => {
        acting.add(i);
        log.push(`${clock.monotonic()} ${i} acts`);
      },
      lost: async () => {
        acting.delete(i);
        log.push(`${clock.monotonic()} ${i} stops`);
      },
    });
  });
  /** Instances that would store an event now: holds() on their own clock. */
  const storing = () => leases.flatMap((l, i) => (l.holds() !== undefined ? [i] : []));
  return { clock, redis, cut, acting, leases, storing, log };
}

describe('the gateway upstream lease', () => {
  it('one of three instances holds the lease, renews it, and the others stay out', async () => {
    const { clock, leases, acting, storing } = instances(3);
    await Promise.all(leases.map((l) => l.start()));
    for (let t = 0; t < 120; t++) {
      await clock.advance(500);
      expect(storing()).toHaveLength(1);
    }
    expect(acting.size).toBe(1);
  });

  it('a holder cut off from Redis stops before another takes over, within 1.2 leases', async () => {
    const { clock, redis, cut, leases, storing, log } = instances(3);
    await Promise.all(leases.map((l) => l.start()));
    await clock.advance(5_000);
    const [holder] = storing();
    expect(holder).toBeDefined();
    cut.add(holder!); // a partition (or SIGSTOP): its renewals get no answer
    const cutAt = clock.monotonic();
    let stoppedAt: number | undefined;
    let takenAt: number | undefined;
    for (let t = 0; t < 300; t++) {
      await clock.advance(100);
      const now = storing();
      // Never two at once: the old holder's own clock ends its term before Redis's does.
      expect(now.length).toBeLessThanOrEqual(1);
      if (stoppedAt === undefined && !now.includes(holder!)) stoppedAt = clock.monotonic();
      if (takenAt === undefined && now.length === 1 && now[0] !== holder)
        takenAt = clock.monotonic();
    }
    expect(stoppedAt).toBeDefined();
    expect(takenAt).toBeDefined();
    expect(redis.holder()).not.toContain(`relay-${holder}#`);
    expect(stoppedAt!).toBeLessThan(takenAt!);
    expect(takenAt! - cutAt).toBeLessThanOrEqual(1.2 * LEASE_TIMINGS.ttlMs);
    // Acting stopped (lost()) no later than the term's end on its clock.
    expect(log.some((l) => l.endsWith(`${holder} stops`))).toBe(true);
  });

  it('a stop gives the lease back: another instance takes over at its next ask', async () => {
    const { clock, leases, storing } = instances(2);
    await Promise.all(leases.map((l) => l.start()));
    const [holder] = storing();
    await leases[holder!]!.stop();
    const stoppedAt = clock.monotonic();
    while (storing().length === 0) await clock.advance(100);
    expect(storing()).toEqual([1 - holder!]);
    expect(clock.monotonic() - stoppedAt).toBeLessThanOrEqual(LEASE_TIMINGS.renewMs);
  });
});
