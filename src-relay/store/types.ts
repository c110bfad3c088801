import type { SharedCallMemory } from './call-memory-redis.ts';
/**
 * Where accepted webhooks live until desktops have them. One interface, two backends:
 * memory-store.ts (a single instance, the embedded default) and redis-store.ts (several instances
 * behind a load balancer share one Redis).
 */
import { EVENT_ID_WINDOW_MS } from '../../src-shared/wire/event-codes.ts';

export interface NewEvent {
  tenant: string;
  eventId: string;
  event: number;
  to: string | null;
  /** The original body text, forwarded as is. */
  body: string;
  /** Wall-clock ms at which the webhook arrived at a relay instance. */
  receivedAt: number;
}

export interface StoredEvent extends Omit<NewEvent, 'body'> {
  /** Stream position `<ms>-<seq>`, increasing within a tenant. */
  cursor: string;
  /** The original body, as text or as its UTF-8 bytes (as the backend read it). */
  body: string | Buffer;
}

export type AppendResult = { status: 'stored'; cursor: string } | { status: 'duplicate' };

export interface ReadResult {
  events: StoredEvent[];
  /** Set when events after the requested cursor may have been dropped by retention (or a reset). */
  gap: { oldest: string | null } | null;
}

export interface EventStore {
  readonly kind: 'memory' | 'redis';
  /** Redis: the Yeastar call memory every instance shares (absent: each process keeps its own). */
  readonly callMemory?: SharedCallMemory;
  /**
   * Stores the event unless its event_id was seen in the dedupe window. Resolves only once the
   * event is as durable as the backend makes it; rejects when it is not stored (answer 5xx).
   */
  append(event: NewEvent): Promise<AppendResult>;
  /**
   * The events of one delivery (one tenant), stored in order as `append` stores each, together:
   * Redis runs one script for them (one round trip and one fsync, and followers get them in one
   * batch, so a desktop gets them in one write). Resolves with each one's result; rejects as
   * `append` does, the events before a failed one being stored (as one `append` after another).
   */
  appendAll(events: readonly NewEvent[]): Promise<AppendResult[]>;
  /** Up to `limit` events of `tenant` strictly after `cursor`, oldest first. */
  readAfter(tenant: string, cursor: string, limit: number): Promise<ReadResult>;
  /**
   * The newest position of a tenant. With nothing stored it is still a real position (the start
   * of this store's history), so that a client that connected to an empty relay can resume.
   */
  latest(tenant: string): Promise<string>;
  /**
   * Every event appended by any instance sharing this store, in order per tenant, in batches:
   * what arrived together is handed over together (and leaves for each client in one write).
   */
  subscribe(listener: (events: readonly StoredEvent[]) => void): () => void;
  /**
   * Resolves once every event appended through this instance so far has been handed to the
   * listeners (or after `timeoutMs`): a drain waits for it, so a webhook answered 200 just before
   * a shutdown still reaches the clients connected here.
   */
  published(timeoutMs: number): Promise<void>;
  /**
   * Claims the CRM logging of a call for `user` (organisation mode): atomically, the first claim
   * of `callId` in `tenant` wins and is kept `ttlMs`; resolves with the holder (the user itself
   * when it won, or when it claimed before: a retry). Rejects when the backend does not answer.
   * Both backends have it; a wrapper without it (a gateway's fenced view) claims nothing.
   */
  claimCall?(tenant: string, callId: string, user: string, ttlMs: number): Promise<string>;
  /** Resolves when the backend answers (readiness). */
  ping(): Promise<void>;
  /** A networked backend's connection: where it is and what happened to it (metrics, /readyz). */
  storageHealth?(): StorageHealth;
  close(): Promise<void>;
}

export interface StorageHealth {
  /** The command connection is up. */
  connected: boolean;
  /** The server commands go to (`host:port`), once connected. */
  primary: string | null;
  /** Times the command connection came back after it was lost. */
  reconnects: number;
  /** Times it came back to another server (a Sentinel failover this instance followed). */
  primaryChanges: number;
  /** Webhooks answered 503 because too few replicas confirmed their event in time. */
  waitFailures: number;
  /**
   * Times a connection reached a server that a majority of the sentinels did not name as the
   * primary (an old primary restarted, a sentinel not yet told of a failover), left for another.
   */
  unconfirmedPrimaries: number;
  /**
   * Webhooks answered 503 (and upstream lease asks refused) because, once written, the sentinels
   * no longer vouched for the server (a failover of it under way, or a majority naming another).
   */
  unvouchedWrites: number;
  /**
   * Redis Cluster, as its nodes said at the last readiness check (ping): `ok` while a majority of
   * the primaries that answered say cluster_state:ok (with Redis' default
   * cluster-require-full-coverage, `fail` from a primary's loss until its replica is promoted,
   * and for good when it has none: every command is then refused); `unknown` before the first
   * check. The primaries and replicas the answering node counts as up, and the nodes that did not
   * answer.
   */
  cluster?: {
    state: 'ok' | 'fail' | 'unknown';
    primaries: number;
    replicas: number;
    unreachable: number;
  };
}

/**
 * A lease holder's append refused: the tenant's upstream lease is no longer this term's
 * (gateway/lease.ts), so what it read is another instance's to store.
 */
export class FencedError extends Error {
  constructor() {
    super('not stored: the upstream lease is no longer held by this instance');
    this.name = 'FencedError';
  }
}

export interface RetentionOptions {
  /** Events kept per tenant at most (Redis: MAXLEN ~, approximate). */
  maxEvents: number;
  /** Events older than this are dropped (ms). */
  maxAgeMs: number;
  /** How long an event_id is remembered for dedupe (ms); at least 25 hours. */
  dedupeTtlMs: number;
}

export const DEFAULT_RETENTION: RetentionOptions = {
  maxEvents: 100_000,
  maxAgeMs: 24 * 3600_000,
  dedupeTtlMs: EVENT_ID_WINDOW_MS,
};

/** Resolves when `register`'s callback is called, or after `timeoutMs`, whichever comes first. */
export async function waitFor(
  register: (done: () => void) => void,
  timeoutMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    new Promise<void>((resolve) => register(resolve)),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
  ]);
  clearTimeout(timer);
}
