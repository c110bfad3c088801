import { callerOf } from './envelope.ts';
import type { StoredEvent } from './store/types.ts';

/** What the fan-out needs of a session: events of a batch, and the batch framed once for all. */
export interface FanoutTarget<B extends { events: readonly StoredEvent[] }> {
  offer(batch: B, events: readonly StoredEvent[]): void;
}

export interface FanoutKeys {
  extensions: readonly string[];
  events: readonly number[];
  /** The session matches DIDs (by digit suffix), so it must see every addressed event. */
  hasNumbers: boolean;
}

/**
 * One tenant's connected sessions, indexed by what they asked for, so an event is offered to the
 * few sessions that may want it rather than to every client of the tenant (1,000 desktops, each
 * interested in one extension). Sessions not yet live (waiting for hello, replaying) see every
 * event: they buffer it. Each session still applies its own filter before sending.
 */
export class TenantFanout<B extends { events: readonly StoredEvent[] }, S extends FanoutTarget<B>> {
  private readonly all = new Set<S>();
  private readonly unindexed = new Set<S>();
  private readonly byExtension = new Map<string, Set<S>>();
  private readonly byEvent = new Map<number, Set<S>>();
  private readonly numbers = new Set<S>();
  private readonly keys = new Map<S, FanoutKeys>();
  /** Sessions already offered the event being published (kept to avoid an allocation per event). */
  private readonly offered = new Set<S>();
  /** The newest cursor offered: a live session has seen everything up to it that it wanted. */
  lastCursor: string | null = null;

  get size(): number {
    return this.all.size;
  }

  sessions(): IterableIterator<S> {
    return this.all.values();
  }

  add(session: S): void {
    this.all.add(session);
    this.unindexed.add(session);
  }

  /** The session is live: from now on it is offered only events that match its keys. */
  index(session: S, keys: FanoutKeys): void {
    if (!this.all.has(session)) return;
    this.unindexed.delete(session);
    this.keys.set(session, keys);
    for (const ext of keys.extensions) addTo(this.byExtension, ext, session);
    for (const code of keys.events) addTo(this.byEvent, code, session);
    if (keys.hasNumbers) this.numbers.add(session);
  }

  remove(session: S): void {
    this.all.delete(session);
    this.unindexed.delete(session);
    this.numbers.delete(session);
    const keys = this.keys.get(session);
    if (!keys) return;
    this.keys.delete(session);
    for (const ext of keys.extensions) removeFrom(this.byExtension, ext, session);
    for (const code of keys.events) removeFrom(this.byEvent, code, session);
  }

  /**
   * Offers each session, once, the events of the batch it may want, in order. A session found by
   * several keys (an extension and an event code) gets an event once.
   */
  publish(batch: B): void {
    if (batch.events.length === 1) return this.publishOne(batch);
    const perSession = new Map<S, StoredEvent[]>();
    const add = (s: S, event: StoredEvent) => {
      const list = perSession.get(s);
      if (!list) perSession.set(s, [event]);
      else if (list[list.length - 1] !== event) list.push(event);
    };
    for (const event of batch.events) {
      this.lastCursor = event.cursor;
      this.forTargets(event, (s) => add(s, event));
    }
    for (const [s, events] of perSession) s.offer(batch, events);
  }

  /** One event (the usual batch at a steady rate): offered straight, without a list per session. */
  private publishOne(batch: B): void {
    const event = batch.events[0]!;
    this.lastCursor = event.cursor;
    const offered = this.offered;
    offered.clear();
    this.forTargets(event, (s) => {
      if (offered.has(s)) return;
      offered.add(s);
      s.offer(batch, batch.events);
    });
    offered.clear();
  }

  /** Calls `fn` for each session that may want `event` (a session can come up more than once). */
  private forTargets(event: StoredEvent, fn: (s: S) => void): void {
    for (const s of this.unindexed) fn(s);
    const byEvent = this.byEvent.get(event.event);
    if (byEvent) for (const s of byEvent) fn(s);
    // Addressed events (a call, a voicemail, an SMS, a presence change: envelope.ts partyOf) go to
    // the sessions of that extension or of some number; each session's own filter has the last word.
    if (event.to !== null) {
      const byExt = this.byExtension.get(event.to);
      if (byExt) for (const s of byExt) fn(s);
      for (const s of this.numbers) fn(s);
    }
    // A call record goes to its caller's sessions too (an outbound call's record, for the
    // caller's call log): by extension only.
    const caller = callerOf(event);
    if (caller !== null && caller !== event.to) {
      const byExt = this.byExtension.get(caller);
      if (byExt) for (const s of byExt) fn(s);
    }
  }
}

function addTo<K, S>(map: Map<K, Set<S>>, key: K, session: S): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(session);
}

function removeFrom<K, S>(map: Map<K, Set<S>>, key: K, session: S): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(session);
  if (set.size === 0) map.delete(key);
}
