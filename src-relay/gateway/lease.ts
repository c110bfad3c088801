/**
 * One upstream per tenant (issue 40 item 2; docs/relay-protocol.md 2.4.1): in gateway mode with
 * the Redis store, several relay instances share one tenant, and exactly one of them keeps the
 * tenant's stream to the phone system. It holds a lease in Redis (the scheme of Redis's own
 * "Distributed locks with Redis" page for a single instance: SET NX PX with a token, renewed by a
 * compare-and-extend script, given back by a compare-and-delete), with the fencing Kleppmann's
 * "How to do distributed locking" asks for: each term's token carries a number from a counter that
 * only grows, and the one place the holder's work lands, the append of the events it stores,
 * checks in the same script that the lease still holds that token (redis-store.ts
 * appendFenced). A holder paused past its lease (SIGSTOP, a long GC pause, a partition from
 * Redis) can therefore store nothing once it lost the lease, whatever it believes.
 *
 * The holder cannot know it was paused, so it stops acting on its own clock before the lease ends
 * in Redis: a term measured from when the acquire or extend was SENT (Redis counts from when it
 * received it, later) lasts `ttlMs * (1 - driftRate) - marginMs` on the holder's monotonic clock.
 * The assumption (written down, as the scheme needs one): the monotonic clocks of the relay hosts
 * and of Redis run at rates within `driftRate` (1 %: NTP-disciplined clocks drift by parts per
 * million) of each other; no assumption about their wall clocks. With the defaults (10 s lease,
 * renewed every 2 s) the holder acts for at most 8.9 s after its last successful renewal was sent
 * and Redis keeps the lease 10 s after it received it: another instance, which asks every 2 s,
 * takes over within 12 s of a holder's death or partition, 2 s of its clean stop.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Clock, TimerHandle } from '../../src-shared/process/clock.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import { SampledLog } from '../log-sampler.ts';

/** Where leases are kept: the Redis store (redis-store.ts), through its connection. */
export interface LeaseBackend {
  /** Takes the tenant's lease for `ttlMs` when nobody holds it: the term's token, else null. */
  acquireLease(tenant: string, owner: string, ttlMs: number): Promise<string | null>;
  /** Renews the lease for `ttlMs` if `token` still holds it. */
  extendLease(tenant: string, token: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease back if `token` still holds it. */
  releaseLease(tenant: string, token: string): Promise<void>;
}

export interface LeaseTimings {
  /** The lease's time in Redis. */
  ttlMs: number;
  /** How often the holder renews it and the others ask for it. */
  renewMs: number;
  /** The most the clocks' rates may differ (0.01: 1 %). */
  driftRate: number;
  /** Stopped this much before the lease's end on the holder's clock, beyond the drift. */
  marginMs: number;
}

export const LEASE_TIMINGS: LeaseTimings = leaseTimings(10_000);

/** The timings of a lease of `ttlMs` (the config's storage.upstreamLeaseMs). */
export function leaseTimings(ttlMs: number): LeaseTimings {
  return { ttlMs, renewMs: ttlMs / 5, driftRate: 0.01, marginMs: ttlMs / 10 };
}

/** This process among the relay instances: host, pid and a random part (a restart differs). */
export function leaseOwnerId(): string {
  return `${hostname().slice(0, 64)}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export interface LeaseDeps {
  tenant: string;
  owner: string;
  backend: LeaseBackend;
  clock: Clock;
  logger: Logger;
  timings?: Partial<LeaseTimings>;
  /** The lease was taken: start acting (the upstream). Runs while the lease is renewed. */
  acquired(token: string): Promise<void>;
  /** The lease is lost or given back: stop acting. */
  lost(): Promise<void>;
}

/**
 * A tenant's upstream lease as one instance sees it: asked for every `renewMs` while not held,
 * renewed as often while held, and let go (lost()) as soon as a renewal is refused or the term
 * runs out on this instance's clock, whichever comes first.
 */
export class UpstreamLease {
  private readonly deps: LeaseDeps;
  private readonly timings: LeaseTimings;
  private readonly errors: SampledLog;
  private held: { token: string; until: number } | undefined;
  private timer: TimerHandle | undefined;
  private deadline: TimerHandle | undefined;
  /** Starting and stopping the work, one after the other. */
  private transitions: Promise<void> = Promise.resolve();
  private stopped = false;
  private busy = false;

  constructor(deps: LeaseDeps) {
    this.deps = deps;
    this.timings = { ...LEASE_TIMINGS, ...deps.timings };
    this.errors = new SampledLog(deps.logger, 'warn', 'upstream lease not renewed', deps.clock, {
      perWindow: 3,
      windowMs: 60_000,
    });
  }

  /** The token while the lease holds on this instance's clock, else undefined. */
  holds(): string | undefined {
    const held = this.held;
    if (!held) return undefined;
    if (this.deps.clock.monotonic() >= held.until) {
      this.lose('expired on this instance clock');
      return undefined;
    }
    return held.token;
  }

  /** One ask (or renewal) now; then every renewMs. Resolves after the first ask's work started. */
  async start(): Promise<void> {
    await this.tick();
    await this.transitions;
    this.schedule();
  }

  /** Stops asking; the work is stopped and the lease given back (a failure here is only logged). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.deps.clock.clearTimeout(this.timer);
    const held = this.held;
    this.lose('stopping');
    await this.transitions;
    if (held)
      await this.deps.backend.releaseLease(this.deps.tenant, held.token).catch((err: unknown) => {
        this.deps.logger.warn('upstream lease not given back', { error: err });
      });
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimeout(() => {
      void this.tick().finally(() => this.schedule());
    }, this.timings.renewMs);
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.busy) return;
    this.busy = true;
    const { backend, tenant, clock } = this.deps;
    const { ttlMs } = this.timings;
    const sentAt = clock.monotonic();
    try {
      const held = this.held;
      if (held) {
        if (await backend.extendLease(tenant, held.token, ttlMs)) this.renewed(held, sentAt);
        else if (this.held === held) this.lose('taken by another instance');
      } else {
        const token = await backend.acquireLease(tenant, this.deps.owner, ttlMs);
        if (token && !this.stopped) this.gained(token, sentAt);
      }
    } catch (err) {
      this.errors.write({ error: err });
      this.holds(); // a term that ran out meanwhile ends here
    } finally {
      this.busy = false;
    }
  }

  /** Until when a term whose ask was sent at `sentAt` is safe to act on, on this clock. */
  private until(sentAt: number): number {
    const { ttlMs, driftRate, marginMs } = this.timings;
    return sentAt + ttlMs * (1 - driftRate) - marginMs;
  }

  private renewed(held: { token: string; until: number }, sentAt: number): void {
    if (this.held !== held) return;
    if (this.deps.clock.monotonic() >= held.until) {
      // The answer came after this term's safe end: acting on it could overlap a successor.
      this.lose('renewed too late');
      return;
    }
    held.until = this.until(sentAt);
    this.armDeadline();
  }

  private gained(token: string, sentAt: number): void {
    const until = this.until(sentAt);
    if (this.deps.clock.monotonic() >= until) return; // the answer took longer than a term
    this.held = { token, until };
    this.armDeadline();
    this.deps.logger.info('upstream lease taken', {
      fence: token.slice(token.lastIndexOf('#') + 1),
    });
    const { acquired } = this.deps;
    this.transitions = this.transitions.then(() =>
      acquired(token).catch((err: unknown) => {
        this.deps.logger.error('upstream not started', { error: err });
      }),
    );
  }

  /** A timer at the term's end: acting stops then even if no answer comes. */
  private armDeadline(): void {
    const held = this.held;
    if (!held) return;
    this.deps.clock.clearTimeout(this.deadline);
    const wait = Math.max(0, held.until - this.deps.clock.monotonic());
    this.deadline = this.deps.clock.setTimeout(() => this.holds(), wait);
  }

  private lose(why: string): void {
    if (!this.held) return;
    this.held = undefined;
    this.deps.clock.clearTimeout(this.deadline);
    if (why !== 'stopping') this.deps.logger.warn('upstream lease lost', { why });
    const { lost } = this.deps;
    this.transitions = this.transitions.then(() =>
      lost().catch((err: unknown) => {
        this.deps.logger.error('upstream not stopped', { error: err });
      }),
    );
  }
}
