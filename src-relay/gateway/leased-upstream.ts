/**
 * A tenant's upstream run only while this instance holds the tenant's lease (lease.ts): several
 * relay instances on one Redis keep one stream to the phone system between them, and so at most
 * two of the API application's tokens (the holder's, and during a rotation the next one; the
 * holder that lets go gives its own back with del_token, gateway/upstream.ts stop(), and the
 * tokens a killed or frozen holder left are revoked by the next term before it signs in,
 * term-tokens.ts).
 *
 * Each term runs a fresh GatewayUpstream (its own tokens, its own stream), stopped when the term
 * ends; what it stores goes through the fenced append (redis-store.ts appendFenced, and
 * appendAllFenced for a frame's events together), refused once the lease is no longer this term's. The same surface as GatewayUpstream for the server, the
 * directory and /healthz: while another instance holds the lease the state is `standby`, and a
 * token asked of it (the e-mail directory) is refused as the network's fault, "retry later".
 */
import { ServiceError } from '../../src-shared/api/service-errors.ts';
import type { UpstreamState } from '../metrics.ts';
import { FencedError, type AppendResult, type EventStore, type NewEvent } from '../store/types.ts';
import type { SharedCallMemory } from '../store/call-memory-redis.ts';
import { UpstreamLease, type LeaseBackend, type LeaseTimings } from './lease.ts';
import { isTermTokenBackend, TermTokens } from './term-tokens.ts';
import { GatewayUpstream, type UpstreamDeps } from './upstream.ts';

/** The Redis store: events, and the leases beside them. */
export type LeaseStore = EventStore &
  LeaseBackend & {
    appendFenced(e: NewEvent, token: string): Promise<AppendResult>;
    appendAllFenced(events: readonly NewEvent[], token: string): Promise<AppendResult[]>;
  };

export function isLeaseStore(store: EventStore): store is LeaseStore {
  return 'acquireLease' in store && 'appendFenced' in store;
}

export interface LeasedUpstreamDeps extends Omit<UpstreamDeps, 'store'> {
  store: LeaseStore;
  /** This instance among the relay's instances (lease.ts leaseOwnerId). */
  owner: string;
  lease?: Partial<LeaseTimings>;
}

export class LeasedUpstream {
  readonly tenant: string;
  private readonly deps: LeasedUpstreamDeps;
  private readonly lease: UpstreamLease;
  private current: GatewayUpstream | undefined;
  /** The standby state's start (when no term runs here). */
  private standbySince: number;
  private readonly standbyClient: GatewayUpstream['client'];
  private firstTerm = true;
  /**
   * The tokens the terms replaced or held, still registered as secrets: one list for all the
   * terms, so that each term's leave the registry a few generations on (token-lifecycle.ts).
   */
  private readonly retired: string[] = [];

  constructor(deps: LeasedUpstreamDeps) {
    this.deps = deps;
    this.tenant = deps.tenant;
    this.standbySince = deps.clock.now();
    this.lease = new UpstreamLease({
      tenant: deps.tenant,
      owner: deps.owner,
      backend: deps.store,
      clock: deps.clock,
      logger: deps.logger,
      ...(deps.lease && { timings: deps.lease }),
      acquired: (token) => this.run(token),
      lost: () => this.halt(),
    });
    // Built once for the directory's `client` while nothing runs here (it asks tokens first).
    this.standbyClient = this.make('').client;
  }

  get client(): GatewayUpstream['client'] {
    return this.current?.client ?? this.standbyClient;
  }

  /** The running term's tokens; while another instance holds the lease, none to be had here. */
  get tokens(): Pick<GatewayUpstream['tokens'], 'get'> {
    return (
      this.current?.tokens ?? {
        get: () =>
          Promise.reject(
            new ServiceError({
              kind: 'network',
              message: 'the gateway stream is held by another relay instance',
            }),
          ),
      }
    );
  }

  /** This instance's lease term while it holds the lease and runs the stream; else undefined. */
  term(): string | undefined {
    return this.current ? this.lease.holds() : undefined;
  }

  state(): { state: UpstreamState; since: number } {
    return this.current?.state() ?? { state: 'standby', since: this.standbySince };
  }

  /**
   * Asks for the lease once, and starts the stream here if it got it (the first token then a
   * startup check, as without a lease: a refused key stops the relay's start); else stands by.
   * From then on asks (or renews) every few seconds.
   */
  async start(_stream?: boolean): Promise<void> {
    await this.lease.start();
    this.firstTerm = false;
    const failed = this.startFailure;
    if (failed) {
      this.startFailure = undefined;
      await this.lease.stop();
      throw failed;
    }
  }

  async stop(): Promise<void> {
    await this.lease.stop();
  }

  private startFailure: unknown;

  private async run(token: string): Promise<void> {
    const term = this.termTokens(token);
    const upstream = this.make(token, term);
    this.current = upstream;
    try {
      // The tokens earlier terms left (a holder killed or frozen) revoked before signing in.
      await term?.revokeEarlier(upstream.client);
      // A takeover does not stop at a first token refused: the stream's engine asks again.
      await upstream.start(true, { firstTokenRequired: this.firstTerm });
    } catch (err) {
      this.current = undefined;
      await upstream.stop();
      if (this.firstTerm) this.startFailure = err;
      else throw err;
    }
  }

  private async halt(): Promise<void> {
    const upstream = this.current;
    this.current = undefined;
    this.standbySince = this.deps.clock.now();
    // The stream closed and its tokens given back (del_token) before another term may start here.
    await upstream?.stop();
  }

  private make(token: string, term?: TermTokens): GatewayUpstream {
    const { owner: _owner, lease: _timings, store, ...deps } = this.deps;
    return new GatewayUpstream({
      ...deps,
      store: fencedStore(store, () => this.holding(token)),
      retired: this.retired,
      ...(term && { term }),
    });
  }

  /** The term's tokens written down beside the lease (term-tokens.ts), where the store can. */
  private termTokens(token: string): TermTokens | undefined {
    const { store, tenant, clock, logger, secrets, credential } = this.deps;
    if (!isTermTokenBackend(store)) return undefined;
    return new TermTokens({
      tenant,
      term: token,
      backend: store,
      apiSecret: credential.secret,
      clock,
      logger,
      secrets,
    });
  }

  /** This term's token while the lease is still its own (on this clock), else undefined. */
  private holding(token: string): string | undefined {
    const now = this.lease.holds();
    return now !== undefined && now === token ? token : undefined;
  }
}

/**
 * The store, its append and its call memory's writes fenced by the lease: refused here once the
 * term ended, else in Redis.
 */
export function fencedStore(store: LeaseStore, token: () => string | undefined): EventStore {
  const calls = store.callMemory;
  const append = (e: NewEvent): Promise<AppendResult> => {
    const t = token();
    if (t === undefined) return Promise.reject(new FencedError());
    return store.appendFenced(e, t);
  };
  return {
    kind: store.kind,
    // The Yeastar call memory every instance shares, its writes fenced as the appends are: the
    // next holder goes on from the memory this term left.
    ...(calls && { callMemory: fencedCallMemory(calls, token) }),
    append,
    // A frame's events by one script, refused whole once the term ended.
    appendAll(events) {
      const t = token();
      if (t === undefined) return Promise.reject(new FencedError());
      return store.appendAllFenced(events, t);
    },
    readAfter: (tenant, cursor, limit) => store.readAfter(tenant, cursor, limit),
    latest: (tenant) => store.latest(tenant),
    subscribe: (listener) => store.subscribe(listener),
    published: (ms) => store.published(ms),
    ping: () => store.ping(),
    close: () => Promise.resolve(),
  };
}

/** A call memory whose writes land only while `token` (the term's) still holds the lease. */
function fencedCallMemory(
  calls: SharedCallMemory,
  token: () => string | undefined,
): SharedCallMemory {
  return {
    read: (tenant, callId) => calls.read(tenant, callId),
    write(tenant, callId, version, memory, ttlMs) {
      const t = token();
      if (t === undefined) return Promise.reject(new FencedError());
      return calls.write(tenant, callId, version, memory, ttlMs, t);
    },
  };
}
