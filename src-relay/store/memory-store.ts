import { readFile } from 'node:fs/promises';
import type { Clock, TimerHandle } from '../../src-shared/process/clock.ts';
import { writeFileAtomic } from '../../src-shared/files/atomic-file.ts';
import { parseJson } from '../../src-shared/files/json-text.ts';
import { BoundedFifoMap } from '../../src-shared/kit/bounded-map.ts';
import { compareCursors } from '../../src-shared/relay/relay-protocol.ts';
import type {
  AppendResult,
  EventStore,
  NewEvent,
  ReadResult,
  RetentionOptions,
  StoredEvent,
} from './types.ts';
import { DEFAULT_RETENTION, waitFor } from './types.ts';

export interface MemoryStoreOptions {
  clock: Clock;
  retention?: Partial<RetentionOptions>;
  /** Upper bound on remembered event_ids (memory guard); the oldest are forgotten first. */
  maxDedupeEntries?: number;
  /**
   * A file the store is saved to on close() and loaded from on open(), so a graceful restart of a
   * single instance loses nothing. A crash still loses what is in memory: use Redis for that.
   */
  snapshotFile?: string;
  /** Upper bound on remembered call claims (organisation mode's call log); the oldest go first. */
  maxCallClaims?: number;
}

/** How long a call's claim is held at most in memory (a claim's own ttl may be shorter). */
const MAX_CLAIM_TTL_MS = 24 * 3600_000;

interface TenantLog {
  events: StoredEvent[];
  /** Index of the first live event in `events` (dropped ones are spliced out in batches). */
  head: number;
  /** The newest cursor ever dropped by retention: a client behind it has a gap. */
  lastDropped: string | null;
}

interface Snapshot {
  v: 1;
  floor: string;
  lastMs: number;
  lastSeq: number;
  tenants: Record<string, { events: StoredEvent[]; lastDropped: string | null }>;
  seen: [string, number][];
}

/**
 * Single-instance store. Events per tenant in arrival order; dedupe in a Map whose insertion order
 * is expiry order (one TTL for all), so expiry is a sweep from the front.
 */
export class MemoryStore implements EventStore {
  readonly kind = 'memory' as const;
  private readonly clock: Clock;
  private readonly retention: RetentionOptions;
  private readonly maxDedupe: number;
  private readonly snapshotFile: string | undefined;
  private readonly tenants = new Map<string, TenantLog>();
  private readonly seen = new Map<string, number>();
  private readonly listeners = new Set<(events: readonly StoredEvent[]) => void>();
  /** Appended and not yet handed to listeners: they get everything appended in one turn at once. */
  private unpublished: StoredEvent[] = [];
  private readonly publishWaiters: (() => void)[] = [];
  private lastMs = 0;
  private lastSeq = 0;
  /** Events before this cursor were held by an earlier process and are gone (unless snapshotted). */
  private floor: string;
  private sweepTimer: TimerHandle | undefined;
  private closed = false;
  /** `tenant \n callId` -> holder and expiry: bounded, forgotten after a day at most. */
  private readonly claims: BoundedFifoMap<{ user: string; until: number }>;

  constructor(options: MemoryStoreOptions) {
    this.clock = options.clock;
    this.retention = { ...DEFAULT_RETENTION, ...options.retention };
    this.maxDedupe = options.maxDedupeEntries ?? 5_000_000;
    this.snapshotFile = options.snapshotFile;
    this.claims = new BoundedFifoMap(options.maxCallClaims ?? 200_000, MAX_CLAIM_TTL_MS);
    // The floor is a position of its own (what `latest()` answers for an empty store), so every
    // cursor issued from now on must sort after it: the first event this millisecond is `-1`.
    this.lastMs = this.clock.now();
    this.floor = `${this.lastMs}-0`;
    this.scheduleSweep();
  }

  /** Loads the snapshot, if one is configured and present. */
  async open(): Promise<void> {
    if (!this.snapshotFile) return;
    let text: string;
    try {
      text = await readFile(this.snapshotFile, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    // Never quote the file in the error: it holds callers' numbers.
    const parsed = parseJson(text);
    if (!parsed.ok)
      throw new Error(`relay snapshot ${this.snapshotFile} is not valid JSON${parsed.where}`);
    const snap = parsed.value as Snapshot;
    if (snap?.v !== 1) throw new Error('unknown relay snapshot version');
    this.floor = snap.floor;
    this.lastMs = snap.lastMs;
    this.lastSeq = snap.lastSeq;
    for (const [tenant, t] of Object.entries(snap.tenants))
      this.tenants.set(tenant, { events: t.events, head: 0, lastDropped: t.lastDropped });
    const now = this.clock.now();
    for (const [k, exp] of snap.seen) if (exp > now) this.seen.set(k, exp);
  }

  async append(event: NewEvent): Promise<AppendResult> {
    if (this.closed) throw new Error('store closed');
    const key = `${event.tenant}\u0000${event.eventId}`;
    const now = this.clock.now();
    const exp = this.seen.get(key);
    if (exp !== undefined && exp > now) return { status: 'duplicate' };
    this.seen.delete(key);
    this.seen.set(key, now + this.retention.dedupeTtlMs);
    if (this.seen.size > this.maxDedupe) this.seen.delete(this.seen.keys().next().value!);

    const cursor = this.nextCursor(now);
    const stored: StoredEvent = { ...event, cursor };
    const log = this.log(event.tenant);
    log.events.push(stored);
    this.trim(log, now);
    // The webhook is answered now; the fan-out runs once this turn of the event loop is over, for
    // every event appended in it (so a burst of webhooks leaves for each client in one write).
    if (this.unpublished.push(stored) === 1) setImmediate(() => this.publish());
    return { status: 'stored', cursor };
  }

  /** One after the other, in this turn: the fan-out gets them in one batch (see append). */
  async appendAll(events: readonly NewEvent[]): Promise<AppendResult[]> {
    const results: AppendResult[] = [];
    for (const e of events) results.push(await this.append(e));
    return results;
  }

  async readAfter(tenant: string, cursor: string, limit: number): Promise<ReadResult> {
    const log = this.tenants.get(tenant);
    const gapFrom =
      log?.lastDropped && compareCursors(log.lastDropped, cursor) > 0
        ? log.lastDropped
        : compareCursors(this.floor, cursor) > 0
          ? this.floor
          : null;
    const events = log ? log.events : [];
    let lo = log ? log.head : 0;
    let hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareCursors(events[mid]!.cursor, cursor) <= 0) lo = mid + 1;
      else hi = mid;
    }
    const out = events.slice(lo, lo + limit);
    return {
      events: out,
      gap: gapFrom
        ? { oldest: log && log.head < events.length ? events[log.head]!.cursor : null }
        : null,
    };
  }

  async latest(tenant: string): Promise<string> {
    const log = this.tenants.get(tenant);
    if (log && log.events.length > log.head) return log.events[log.events.length - 1]!.cursor;
    // Nothing held: the newest position dropped, or the start of this store's history.
    return log?.lastDropped ?? this.floor;
  }

  subscribe(listener: (events: readonly StoredEvent[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private publish(): void {
    const events = this.unpublished;
    this.unpublished = [];
    for (const l of this.listeners) l(events);
    for (const w of this.publishWaiters.splice(0)) w();
  }

  async published(timeoutMs: number): Promise<void> {
    if (this.unpublished.length === 0) return;
    await waitFor((done) => this.publishWaiters.push(done), timeoutMs);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('store closed');
  }

  /** One process, one turn: the check and the set below cannot interleave with another claim. */
  async claimCall(tenant: string, callId: string, user: string, ttlMs: number): Promise<string> {
    if (this.closed) throw new Error('store closed');
    const key = `${tenant}\n${callId}`;
    const now = this.clock.now();
    const held = this.claims.get(key, now);
    if (held && held.until > now) return held.user;
    this.claims.set(key, { user, until: now + Math.min(ttlMs, MAX_CLAIM_TTL_MS) }, now);
    return user;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clock.clearTimeout(this.sweepTimer);
    if (this.snapshotFile)
      await writeFileAtomic(this.snapshotFile, JSON.stringify(this.snapshot()));
  }

  /** Events held and event_ids remembered (for tests and diagnostics). */
  size(): { events: number; dedupe: number } {
    let events = 0;
    for (const log of this.tenants.values()) events += log.events.length - log.head;
    return { events, dedupe: this.seen.size };
  }

  private snapshot(): Snapshot {
    const tenants: Snapshot['tenants'] = {};
    for (const [tenant, log] of this.tenants)
      tenants[tenant] = { events: log.events.slice(log.head), lastDropped: log.lastDropped };
    return {
      v: 1,
      floor: this.floor,
      lastMs: this.lastMs,
      lastSeq: this.lastSeq,
      tenants,
      seen: [...this.seen],
    };
  }

  private nextCursor(now: number): string {
    if (now > this.lastMs) {
      this.lastMs = now;
      this.lastSeq = 0;
    } else {
      this.lastSeq += 1; // same ms, or the wall clock stepped back: stay increasing
    }
    return `${this.lastMs}-${this.lastSeq}`;
  }

  private log(tenant: string): TenantLog {
    let log = this.tenants.get(tenant);
    if (!log) {
      log = { events: [], head: 0, lastDropped: null };
      this.tenants.set(tenant, log);
    }
    return log;
  }

  private trim(log: TenantLog, now: number): void {
    const oldestAllowed = now - this.retention.maxAgeMs;
    while (log.head < log.events.length) {
      const first = log.events[log.head]!;
      if (
        log.events.length - log.head <= this.retention.maxEvents &&
        first.receivedAt >= oldestAllowed
      )
        break;
      log.lastDropped = first.cursor;
      log.head += 1;
    }
    if (log.head > 1024 && log.head * 2 > log.events.length) {
      log.events = log.events.slice(log.head);
      log.head = 0;
    }
  }

  private scheduleSweep(): void {
    this.sweepTimer = this.clock.setTimeout(() => {
      const now = this.clock.now();
      for (const log of this.tenants.values()) this.trim(log, now);
      for (const [k, exp] of this.seen) {
        if (exp > now) break;
        this.seen.delete(k);
      }
      if (!this.closed) this.scheduleSweep();
    }, 60_000);
  }
}
