/**
 * The durable call-log queue (issue 39): the app's CallLogSink. Each call to log is one small JSON
 * file in the queue's folder, written atomically (src-shared/files/atomic-file.ts) before `log()`
 * resolves, so a crash or a restart loses nothing; a worker writes the files' calls to the CRM one
 * at a time, retrying with the project's back-off (src-shared/kit/backoff.ts) through offline
 * periods, 5xx, time-outs and rate limits (a 429's Retry-After, HubSpot's secondly and daily
 * limits as hubspot.ts reads them), and across restarts (the files are read again on start).
 *
 * Once, however many retries: the file is also the journal from the phone system's call id to the
 * CRM's id of the logged call. A call logged again (a note added later) is an update of that id
 * (HubSpot: a PATCH), never a second call. HubSpot has no idempotency key and its search lags
 * behind writes, so a create whose outcome is unknown (a time-out, a dropped connection or a 5xx
 * after the request left: HubSpot may have written it) marks the entry `uncertain`; before it is
 * created again, the writer searches the CRM for the marker it wrote into the call (a token derived
 * from the call id) and, when found, keeps that id. The retry waits for the back-off first, which
 * gives the search time to catch up.
 *
 * Bounded: at most `maxEntries` files (logged ones make room first, oldest first; when every file
 * is a call still to log, `log()` rejects and the caller reports it); every file is kept 7 days
 * from its first queueing (the journal, so a late note still updates the logged call), then
 * removed, logged or not (an unlogged one is counted as expired in the status).
 *
 * Refused credentials (401, 403: the token lacks the write scope, none stored) stop the worker
 * until `resume()` (the settings changed); a 400 (the CRM refused this call's data) fails that
 * one call for good (kept and counted, never retried). The status and the diagnostics carry
 * counts, failure kinds, HTTP statuses and ages: never a number, a note or a call id in clear.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { Backoff, type BackoffPolicy } from '../../../src-shared/kit/backoff.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import { writeFileAtomic } from '../../../src-shared/files/atomic-file.ts';
import { parseJson } from '../../../src-shared/files/json-text.ts';
import type { CallLogRecord, CallLogSink } from '../ports/call-log.ts';
import { CrmError, type CrmFailureKind } from '../crm/connector.ts';

/** Where calls go: HubSpot's Calls or the generic HTTPS connector. */
export interface CallLogWriter {
  readonly kind: 'hubspot' | 'generic';
  /** Creates the call in the CRM with `marker` written into it; resolves to the CRM's id. */
  create(record: CallLogRecord, marker: string, signal: AbortSignal): Promise<string>;
  /** Updates the call already logged as `crmId`. */
  update(crmId: string, record: CallLogRecord, marker: string, signal: AbortSignal): Promise<void>;
  /** After an uncertain create: the CRM's id of the call carrying `marker`, or null (none yet). */
  find(marker: string, signal: AbortSignal): Promise<string | null>;
}

/** Retries of call logs: 1 s, 2 s, 4 s ... at most 5 minutes, never two back to back. */
export const LOG_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 5 * 60_000, floorMs: 250 };
export const KEEP_MS = 7 * 24 * 60 * 60_000;
export const MAX_ENTRIES = 5_000;
/** One request's time-out (a create, an update or a search). */
export const REQUEST_TIMEOUT_MS = 15_000;
/** The longest pause a rate limit imposes (HubSpot's daily quota without a Retry-After: 1 h). */
const MAX_PAUSE_MS = 60 * 60_000;
const VERSION = 1;

interface Entry {
  v: 1;
  record: CallLogRecord;
  marker: string;
  queuedAt: number;
  /** Raised by every `log()` of the call; the CRM has `loggedRevision`. */
  revision: number;
  loggedRevision: number;
  crmId?: string;
  uncertain?: boolean;
  /** A 400: this call's data is refused; never retried. */
  failed?: { kind: CrmFailureKind; status?: number };
  attempts: number;
}

export interface CallLoggedEvent {
  callId: string;
  crmId: string;
  /** 'created' the first time, 'updated' for a later revision; 'found' after an uncertain create. */
  how: 'created' | 'updated' | 'found';
  attempts: number;
}

export interface CallLogStatus {
  writer: 'hubspot' | 'generic';
  /** Calls waiting to be written (or rewritten). */
  pending: number;
  logged: number;
  /** Refused for good (400). */
  failed: number;
  /** Removed after 7 days without being logged, since start. */
  expired: number;
  /** The oldest pending call's age in ms (0 when none). */
  oldestPendingMs: number;
  /** Why the worker is waiting, if it is. */
  lastFailure?: {
    kind: CrmFailureKind;
    status?: number;
    at: number;
    /** A 429 of the CRM's daily quota (HubSpot's DAILY), not a short rate limit. */
    daily?: true;
  };
  /** Stopped until the settings change (refused credentials). */
  stopped?: CrmFailureKind;
  pausedUntil?: number;
}

export interface CallLogQueueDeps {
  folder: string;
  writer: CallLogWriter;
  clock: Clock;
  logger: Logger;
  random?: () => number;
  maxEntries?: number;
  onLogged?: (event: CallLoggedEvent) => void;
}

/** A file name from a call id that says nothing about it (the id may carry a number). */
function fileOf(callId: string): string {
  return `${createHash('sha256').update(callId).digest('hex').slice(0, 32)}.json`;
}

/** The marker written into a logged call: derived from the call id, one word for a token search. */
export function markerOf(callId: string): string {
  return `sp${createHash('sha256').update(`screenpop-call:${callId}`).digest('hex').slice(0, 24)}`;
}

function isEntry(value: unknown): value is Entry {
  const e = value as Partial<Entry> | null;
  return (
    !!e &&
    e.v === VERSION &&
    typeof e.record?.callId === 'string' &&
    typeof e.marker === 'string' &&
    typeof e.queuedAt === 'number' &&
    typeof e.revision === 'number' &&
    typeof e.loggedRevision === 'number'
  );
}

export class CallLogQueue implements CallLogSink {
  private readonly d: CallLogQueueDeps;
  private readonly entries = new Map<string, Entry>();
  private readonly backoff: Backoff;
  private readonly max: number;
  private loaded: Promise<void> | null = null;
  private started: Promise<void> | null = null;
  private timer: TimerHandle | undefined;
  private running = false;
  private closed = false;
  private pausedUntil = 0;
  private stopped: CrmFailureKind | undefined;
  private lastFailure: CallLogStatus['lastFailure'];
  private expired = 0;
  private inflight: AbortController | null = null;
  private readonly changes: Emitter<[status: CallLogStatus]>;

  constructor(deps: CallLogQueueDeps) {
    this.d = deps;
    this.changes = new Emitter(deps.logger, 'call-log status');
    this.backoff = new Backoff(LOG_BACKOFF, deps.random);
    this.max = deps.maxEntries ?? MAX_ENTRIES;
  }

  /** Reads the queue's folder (calls left by an earlier run) and starts writing them. */
  async start(): Promise<void> {
    this.started ??= mkdir(this.d.folder, { recursive: true, mode: 0o700 }).then(
      () => (this.loaded ??= this.load()),
    );
    await this.started;
    this.kick(0);
  }

  /** The diagnostics of the calls in the folder, read without writing any (the runner's --diagnostics). */
  async inspect(): Promise<object> {
    await (this.loaded ??= this.load());
    return this.diagnostics();
  }

  async log(record: CallLogRecord): Promise<void> {
    await this.start();
    if (this.closed) throw new Error('the call-log queue is closed');
    const now = this.d.clock.now();
    const old = this.entries.get(record.callId);
    if (!old) this.makeRoom();
    const entry: Entry = old
      ? { ...old, record, revision: old.revision + 1, attempts: 0 }
      : {
          v: VERSION,
          record,
          marker: markerOf(record.callId),
          queuedAt: now,
          revision: 1,
          loggedRevision: 0,
          attempts: 0,
        };
    delete entry.failed;
    await this.save(entry);
    this.entries.set(record.callId, entry);
    this.changed();
    this.kick(0);
  }

  /** After the settings changed (a new token): try again now. */
  resume(): void {
    this.stopped = undefined;
    this.pausedUntil = 0;
    this.backoff.reset();
    this.changed();
    this.kick(0);
  }

  /** The network came back: the wait ends now (a rate limit's pause is still honoured). */
  online(): void {
    if (this.stopped) return;
    this.kick(Math.max(0, this.pausedUntil - this.d.clock.now()));
  }

  /**
   * The status changed (a call queued, logged, failing, paused, stopped or resumed, expired): the
   * Settings window's call-log status follows it (AppRuntime publishes the status again).
   */
  onChange(listener: (status: CallLogStatus) => void): () => void {
    return this.changes.on(listener);
  }

  private changed(): void {
    this.changes.emit(this.status());
  }

  status(): CallLogStatus {
    const now = this.d.clock.now();
    let pending = 0;
    let logged = 0;
    let failed = 0;
    let oldest = now;
    for (const e of this.entries.values()) {
      if (e.failed) failed++;
      else if (e.loggedRevision < e.revision) {
        pending++;
        oldest = Math.min(oldest, e.queuedAt);
      } else logged++;
    }
    return {
      writer: this.d.writer.kind,
      pending,
      logged,
      failed,
      expired: this.expired,
      oldestPendingMs: now - oldest,
      ...(this.lastFailure ? { lastFailure: this.lastFailure } : {}),
      ...(this.stopped ? { stopped: this.stopped } : {}),
      ...(this.pausedUntil > now ? { pausedUntil: this.pausedUntil } : {}),
    };
  }

  /** The diagnostics archive's section: the status, and each queued call without its content. */
  diagnostics(): object {
    const now = this.d.clock.now();
    return {
      ...this.status(),
      calls: [...this.entries.values()].map((e) => ({
        file: fileOf(e.record.callId),
        ageMs: now - e.queuedAt,
        state: e.failed ? 'failed' : e.loggedRevision < e.revision ? 'pending' : 'logged',
        revision: e.revision,
        attempts: e.attempts,
        uncertain: e.uncertain === true,
        hasCrmId: e.crmId !== undefined,
        hasNote: (e.record.note ?? '') !== '',
        outcome: e.record.outcome,
      })),
    };
  }

  /** Stops the worker (an attempt in flight is aborted: it is retried on the next start). */
  close(): void {
    this.closed = true;
    this.d.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.inflight?.abort(new Error('closed'));
  }

  private async load(): Promise<void> {
    const now = this.d.clock.now();
    const names = await readdir(this.d.folder).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [] as string[];
      throw error;
    });
    for (const name of names) {
      if (!/^[0-9a-f]{32}\.json$/.test(name)) continue;
      const path = join(this.d.folder, name);
      const text = await readFile(path, 'utf8').catch(() => '');
      const parsed = parseJson(text);
      if (!parsed.ok || !isEntry(parsed.value) || fileOf(parsed.value.record.callId) !== name) {
        this.d.logger.warn('call log: an unreadable queue file was skipped', { file: name });
        continue;
      }
      const entry = parsed.value;
      if (now - entry.queuedAt > KEEP_MS) {
        if (entry.loggedRevision < entry.revision && !entry.failed) this.expired++;
        await unlink(path).catch(() => {});
        continue;
      }
      this.entries.set(entry.record.callId, entry);
    }
    this.changed();
  }

  /** Logged calls make room first, oldest first; a queue full of pending calls refuses. */
  private makeRoom(): void {
    if (this.entries.size < this.max) return;
    const done = [...this.entries.values()]
      .filter((e) => e.failed || e.loggedRevision >= e.revision)
      .sort((a, b) => a.queuedAt - b.queuedAt);
    const drop = done[0];
    if (!drop) throw new Error(`the call-log queue is full (${this.max} calls not yet logged)`);
    this.entries.delete(drop.record.callId);
    void unlink(join(this.d.folder, fileOf(drop.record.callId))).catch(() => {});
  }

  private save(entry: Entry): Promise<void> {
    return writeFileAtomic(join(this.d.folder, fileOf(entry.record.callId)), JSON.stringify(entry));
  }

  private kick(ms: number): void {
    if (this.closed || this.running) return;
    this.d.clock.clearTimeout(this.timer);
    this.timer = this.d.clock.setTimeout(() => {
      this.timer = undefined;
      void this.drain();
    }, ms);
  }

  private next(): Entry | undefined {
    let best: Entry | undefined;
    for (const e of this.entries.values())
      if (!e.failed && e.loggedRevision < e.revision && (!best || e.queuedAt < best.queuedAt))
        best = e;
    return best;
  }

  private async drain(): Promise<void> {
    if (this.running || this.closed) return;
    this.running = true;
    let wait: number | null = null;
    try {
      await this.expire();
      for (;;) {
        if (this.closed || this.stopped) break;
        const now = this.d.clock.now();
        if (this.pausedUntil > now) {
          wait = this.pausedUntil - now;
          break;
        }
        const entry = this.next();
        if (!entry) break;
        const delay = await this.attempt(entry);
        if (delay !== null) {
          wait = delay;
          break;
        }
      }
    } catch (error) {
      this.d.logger.warn('call log: the queue could not be written', { error });
      wait = this.backoff.next();
    } finally {
      this.running = false;
    }
    if (wait !== null && !this.closed && !this.stopped) this.kick(wait);
  }

  private async expire(): Promise<void> {
    const now = this.d.clock.now();
    let removed = false;
    for (const e of [...this.entries.values()])
      if (now - e.queuedAt > KEEP_MS) {
        if (e.loggedRevision < e.revision && !e.failed) this.expired++;
        this.entries.delete(e.record.callId);
        removed = true;
        await unlink(join(this.d.folder, fileOf(e.record.callId))).catch(() => {});
      }
    if (removed) this.changed();
  }

  /** One try at one call: null when it was logged (go on), else how long to wait. */
  private async attempt(entry: Entry): Promise<number | null> {
    const controller = new AbortController();
    this.inflight = controller;
    const timer = this.d.clock.setTimeout(
      () => controller.abort(new Error('call log timed out')),
      REQUEST_TIMEOUT_MS,
    );
    const revision = entry.revision;
    let how: CallLoggedEvent['how'] = 'updated';
    let creating = false;
    const uncertainBefore = entry.uncertain === true;
    try {
      const { writer } = this.d;
      if (entry.crmId === undefined && entry.uncertain) {
        const found = await writer.find(entry.marker, controller.signal);
        if (found !== null) {
          entry.crmId = found;
          how = 'found';
          await this.save(entry);
        }
      }
      if (entry.crmId === undefined) {
        creating = true;
        how = 'created';
        // Written ahead: if the app dies while the create is in flight, the next start searches
        // for the marker before creating again.
        const wasUncertain = entry.uncertain === true;
        entry.uncertain = true;
        if (!wasUncertain) await this.save(entry);
        const id = await writer.create(entry.record, entry.marker, controller.signal);
        entry.crmId = id;
        delete entry.uncertain;
      } else {
        // After a found uncertain create too: the found call may hold an older revision's data.
        await writer.update(entry.crmId, entry.record, entry.marker, controller.signal);
      }
      entry.attempts++;
      const attempts = entry.attempts;
      entry.loggedRevision = revision;
      entry.attempts = 0;
      await this.save(entry);
      this.backoff.reset();
      this.lastFailure = undefined;
      this.d.onLogged?.({ callId: entry.record.callId, crmId: entry.crmId, how, attempts });
      this.changed();
      return null;
    } catch (error) {
      entry.attempts++;
      const e =
        error instanceof CrmError
          ? error
          : new CrmError(controller.signal.aborted ? 'timeout' : 'network', String(error));
      if (this.closed) return null;
      const now = this.d.clock.now();
      this.lastFailure = {
        kind: e.kind,
        ...(e.status !== undefined ? { status: e.status } : {}),
        at: now,
        ...(e.kind === 'rate-limited' && e.daily ? { daily: true as const } : {}),
      };
      // A create refused for sure (401, 403, 429, 4xx) wrote nothing, unless an earlier one was
      // already uncertain (not yet found: HubSpot's search may lag); one that may have been
      // written (time-out, network, 5xx) stays uncertain.
      if (creating && !uncertainBefore && !['timeout', 'network', 'server'].includes(e.kind))
        delete entry.uncertain;
      this.d.logger.info('call log: a write failed', {
        writer: this.d.writer.kind,
        kind: e.kind,
        status: e.status,
        attempts: entry.attempts,
        uncertain: entry.uncertain === true,
      });
      if (e.kind === 'auth' || e.kind === 'forbidden' || e.kind === 'no-credentials') {
        // Said once the file holds it: a test (or a restart) that sees the stop finds the file
        // written (CI saw the file come back after a later start had expired it).
        await this.save(entry);
        this.stopped = e.kind;
        this.changed();
        return null;
      }
      if (e.kind === 'bad-answer' && e.status !== undefined && e.status >= 400 && e.status < 500) {
        entry.failed = { kind: e.kind, status: e.status };
        await this.save(entry);
        this.changed();
        return 0;
      }
      // The pause is decided before the file is saved: the status says it at once.
      const delay =
        e.kind === 'rate-limited'
          ? Math.min(MAX_PAUSE_MS, e.retryAfterMs ?? LOG_BACKOFF.baseMs)
          : this.backoff.next();
      this.pausedUntil = now + delay;
      await this.save(entry);
      this.changed();
      return delay;
    } finally {
      this.d.clock.clearTimeout(timer);
      this.inflight = null;
    }
  }
}
