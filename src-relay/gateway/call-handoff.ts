/**
 * Call requests served through the lease holder (issues 38/40): with several relay instances on
 * one Redis, only the holder of a tenant's upstream lease has a phone-system token
 * (term-tokens.ts), so an instance standing by hands the request over through Redis, in the
 * tenant's slot, and waits for the holder's answer; it never signs in itself (two live tokens per
 * tenant at most). No new network path between instances: both already reach Redis.
 *
 * - The standby pushes `{id, deadline, user, action, ...}` onto the tenant's request list
 *   (bounded: past MAX_QUEUED it is refused at once, 503) and polls the request's state key.
 * - The holder takes requests only while Redis still names its term as the lease (the take is
 *   fenced in the script), and claims each (`SET NX taken`) before acting; a request whose
 *   state is already set (expired by its waiter, or done) is never acted on.
 * - The holder does not poll: every push also rings the tenant's bell, which a blocking read on a
 *   connection of its own waits for (watchCallRequests); the bell only wakes the holder, which
 *   then takes with the fenced take, so the bell decides nothing. It takes too when its term
 *   begins (a local check of term(), no Redis command) and when the wait reconnects; a take that
 *   failed is tried again after retryMs.
 * - At its deadline the waiter settles the state atomically: unset -> `expired` (the holder can no
 *   longer claim it: nothing was done, 503 "not picked up"); `taken` -> the holder claimed it and
 *   did not answer (killed or frozen mid-request): the call may or may not have been placed, 504
 *   with words; `done:<answer>` -> the answer. One id per request: never done twice.
 * - The holder re-checks the user's extension against the relay's user record (never trusts
 *   the hop); identity, rate and the audit line stay with the instance the desktop reached.
 */
import type { Logger } from '../../src-shared/process/log.ts';
import { delay, type Clock, type TimerHandle } from '../../src-shared/process/clock.ts';
import type { PbxCallAnswer, RelayCallApi } from '../calls/call-route.ts';

/** What the handoff needs of Redis (redis-store.ts). */
export interface CallHandoffBackend {
  /** Appends a request; false when the tenant's list already holds `max`. */
  pushCallRequest(tenant: string, request: string, max: number): Promise<boolean>;
  /** The next request, only while the lease holds `leaseToken`; null when none (or fenced). */
  takeCallRequest(tenant: string, leaseToken: string): Promise<string | null>;
  /**
   * Claims a request for acting while the lease holds `leaseToken`: true once; false when it
   * expired, was claimed, or the term ended.
   */
  claimCallRequest(tenant: string, id: string, leaseToken: string, ttlMs: number): Promise<boolean>;
  /** The request's state: null (not picked up), `taken`, `expired`, `done:<answer json>`. */
  callRequestState(tenant: string, id: string): Promise<string | null>;
  /** The holder's answer. */
  answerCallRequest(tenant: string, id: string, answer: string, ttlMs: number): Promise<void>;
  /** At the deadline: sets `expired` when unset; answers the state before. */
  expireCallRequest(tenant: string, id: string, ttlMs: number): Promise<string | null>;
}

export function isCallHandoffBackend(store: object): store is CallHandoffBackend {
  return 'pushCallRequest' in store && 'takeCallRequest' in store;
}

/** What the handoff needs of Redis to wait for requests and answers rather than poll (redis-store.ts). */
export interface CallRequestWatch {
  /** Calls `wake` when a request may be there to take; hands back the remover. */
  watchCallRequests(tenant: string, wake: () => void): () => void;
  /** Calls `wake` when the holder answered one of the tenant's requests; hands back the remover. */
  watchCallAnswers(tenant: string, wake: () => void): () => void;
}

export const MAX_QUEUED = 64;

/** The handoff's timings (CallHandoffDeps.timings); each has its default in HANDOFF_TIMINGS. */
export interface HandoffTimings {
  /** How long a standby waits for the holder. */
  deadlineMs: number;
  /**
   * How often the waiter reads its request's state at the latest (it reads it at once when an
   * answer's bell rings); without a watch, the holder's poll too.
   */
  pollMs: number;
  /** How often the holder looks (locally, no Redis command) whether its term began. */
  termCheckMs: number;
  /** After a take that failed (Redis away), when the holder tries again. */
  retryMs: number;
  /** The holder claims a request only with at least this much of its deadline left. */
  claimMarginMs: number;
  /** After the deadline, how long a claimed request's answer is still awaited. */
  answerGraceMs: number;
  /** How long a request's state is kept. */
  stateTtlMs: number;
}

export const HANDOFF_TIMINGS: HandoffTimings = {
  deadlineMs: 8_000,
  pollMs: 100,
  termCheckMs: 100,
  retryMs: 1_000,
  claimMarginMs: 2_000,
  answerGraceMs: 4_000,
  stateTtlMs: 10 * 60_000,
};

interface HandedRequest {
  id: string;
  deadline: number;
  user: string;
  action: 'dial' | 'transfer' | 'hangup' | 'attended';
  from: string;
  to?: string;
  callId?: string;
  mode?: 'blind' | 'attended';
  /** `attended`: the attended transfer's second step. */
  operate?: 'complete' | 'abort';
}

function parseHanded(text: string): HandedRequest | null {
  try {
    const r = JSON.parse(text) as Partial<HandedRequest>;
    if (typeof r !== 'object' || r === null) return null;
    if (typeof r.id !== 'string' || typeof r.deadline !== 'number') return null;
    if (typeof r.user !== 'string' || typeof r.from !== 'string') return null;
    if (!['dial', 'transfer', 'hangup', 'attended'].includes(r.action as string)) return null;
    return r as HandedRequest;
  } catch {
    return null;
  }
}

function parseAnswer(text: string): PbxCallAnswer {
  try {
    const a = JSON.parse(text) as PbxCallAnswer;
    if (typeof a === 'object' && a !== null && typeof a.ok === 'boolean') return a;
  } catch {
    /* below */
  }
  return { ok: false, unreachable: true };
}

/** The holder's answer when a request's state holds one (`done:<answer>`), else undefined. */
function answerIn(state: string | null): PbxCallAnswer | undefined {
  return state?.startsWith('done:') ? parseAnswer(state.slice(5)) : undefined;
}

/**
 * What a request's state says once its waiter settled it (expireCallRequest's answer): the
 * holder's answer; `claimed` (the holder took it and has not answered: the action may be under
 * way); else nobody took it, and nobody can any more: nothing was done.
 */
function settled(state: string | null): PbxCallAnswer | 'claimed' {
  if (state === 'taken') return 'claimed';
  return answerIn(state) ?? { ok: false, handoff: 'not-picked-up' };
}

export interface CallHandoffDeps {
  tenant: string;
  backend: CallHandoffBackend;
  /** The holder's own call API (gateway-calls.ts over its upstream). */
  local: RelayCallApi;
  /** This instance's lease term while it holds the tenant's lease, else undefined. */
  term: () => string | undefined;
  /** The user's extensions as the relay's record has them now (null: no such user). */
  extensionsOf: (user: string) => Promise<readonly string[] | null>;
  clock: Clock;
  logger: Logger;
  /** Default HANDOFF_TIMINGS. */
  timings?: Partial<HandoffTimings>;
  randomId?: () => string;
}

export class CallHandoff {
  private readonly deps: CallHandoffDeps;
  private readonly t: HandoffTimings;
  private timer: TimerHandle | undefined;
  private unwatch: (() => void) | undefined;
  private stopped = false;
  private running = 0;
  /** The term the holder last took requests under (a new one takes at once). */
  private lastTerm: string | undefined;
  /** A take is under way; `again`: another is due when it ends (woken meanwhile). */
  private draining = false;
  private again = false;
  /** After a failed take: when to try again (clock ms). */
  private retryAt: number | undefined;
  /** This instance's waiters' pauses, each cut short when an answer's bell rings. */
  private readonly answerWaits = new Set<AbortController>();
  private unwatchAnswers: (() => void) | undefined;

  constructor(deps: CallHandoffDeps) {
    this.deps = deps;
    this.t = { ...HANDOFF_TIMINGS, ...deps.timings };
  }

  /** The route's call API: the local one while this instance holds the lease, else the handoff. */
  api(): RelayCallApi {
    const pick = () => (this.deps.term() !== undefined ? this.deps.local : undefined);
    return {
      dial: (from, to, user) =>
        pick()?.dial(from, to, user) ?? this.ask({ action: 'dial', from, to }, user),
      transfer: (from, callId, to, mode, user) =>
        pick()?.transfer(from, callId, to, mode, user) ??
        this.ask({ action: 'transfer', from, callId, to, mode }, user),
      hangup: (from, callId, user) =>
        pick()?.hangup(from, callId, user) ?? this.ask({ action: 'hangup', from, callId }, user),
      attended: (from, callId, operate, user) =>
        pick()?.attended(from, callId, operate, user) ??
        this.ask({ action: 'attended', from, callId, operate }, user),
    };
  }

  /** Standby: hands the request to the holder and waits for its answer until the deadline. */
  private async ask(
    r: Omit<HandedRequest, 'id' | 'deadline' | 'user'>,
    user: string | undefined,
  ): Promise<PbxCallAnswer> {
    if (user === undefined) return { ok: false, unreachable: true };
    const { backend, tenant, clock } = this.deps;
    const { deadlineMs, pollMs, stateTtlMs, answerGraceMs } = this.t;
    const id = this.deps.randomId?.() ?? crypto.randomUUID();
    const deadline = clock.now() + deadlineMs;
    try {
      const queued = await backend.pushCallRequest(
        tenant,
        JSON.stringify({ ...r, id, deadline, user }),
        MAX_QUEUED,
      );
      if (!queued) return { ok: false, handoff: 'not-picked-up' };
      for (;;) {
        // Armed before the read: an answer landing between the read and the pause is not missed.
        const armed = this.armAnswerWait();
        const answer = answerIn(await backend.callRequestState(tenant, id));
        if (answer) return answer;
        if (clock.now() >= deadline) break;
        await this.answerWait(armed, pollMs);
      }
      const last = settled(await backend.expireCallRequest(tenant, id, stateTtlMs));
      if (last !== 'claimed') return last;
      // Claimed (never later than claimMarginMs before the deadline): the action is under way
      // at the holder; its answer is awaited a little longer before saying "uncertain".
      const until = clock.now() + answerGraceMs;
      while (clock.now() < until) {
        await this.answerWait(this.armAnswerWait(), pollMs);
        const answer = answerIn(await backend.callRequestState(tenant, id));
        if (answer) return answer;
      }
      return { ok: false, handoff: 'uncertain' };
    } catch (error) {
      this.deps.logger.warn('call handoff failed', { tenant, error });
      // Pushed or not, unknown: the state settles it if it can.
      try {
        const last = settled(await backend.expireCallRequest(tenant, id, stateTtlMs));
        return last === 'claimed' ? { ok: false, handoff: 'uncertain' } : last;
      } catch {
        return { ok: false, handoff: 'uncertain' };
      }
    }
  }

  /**
   * Watches the tenant's answers' bell (from start(), or the first wait of a handoff not
   * started); false when the backend has no watch.
   */
  private watchAnswers(): boolean {
    const backend = this.deps.backend as CallHandoffBackend & Partial<CallRequestWatch>;
    if (!backend.watchCallAnswers) return false;
    this.unwatchAnswers ??= backend.watchCallAnswers(this.deps.tenant, () => {
      for (const w of this.answerWaits) w.abort();
      this.answerWaits.clear();
    });
    return true;
  }

  /** A pause for a waiter, cut short by the next answer's bell. */
  private armAnswerWait(): AbortController | undefined {
    if (this.stopped || !this.watchAnswers()) return undefined;
    const armed = new AbortController();
    this.answerWaits.add(armed);
    return armed;
  }

  /** Up to `ms`, less when an answer's bell rang since `armed`. */
  private async answerWait(armed: AbortController | undefined, ms: number): Promise<void> {
    try {
      await delay(this.deps.clock, ms, armed?.signal);
    } catch {
      /* rung */
    } finally {
      if (armed) this.answerWaits.delete(armed);
    }
  }

  /**
   * Holder side: takes handed requests when the tenant's bell rings (a blocking read in the
   * store), when this instance's term begins, and again after a failed take; without a watch
   * (a backend that has none), every pollMs as before.
   */
  start(): void {
    const backend = this.deps.backend as CallHandoffBackend & Partial<CallRequestWatch>;
    const watch = backend.watchCallRequests?.bind(backend);
    if (watch) this.unwatch = watch(this.deps.tenant, () => this.wake());
    // Any instance may wait for answers: watched from the start, in the same blocking read.
    this.watchAnswers();
    const every = watch ? this.t.termCheckMs : this.t.pollMs;
    const tick = () => {
      this.timer = undefined;
      if (this.stopped) return;
      const term = this.deps.term();
      const now = this.deps.clock.now();
      if (!watch || (term !== undefined && term !== this.lastTerm)) this.wake();
      else if (this.retryAt !== undefined && now >= this.retryAt) this.wake();
      this.lastTerm = term;
      this.timer = this.deps.clock.setTimeout(tick, every);
    };
    this.timer = this.deps.clock.setTimeout(tick, every);
  }

  stop(): void {
    this.stopped = true;
    this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.unwatch?.();
    this.unwatch = undefined;
    this.unwatchAnswers?.();
    this.unwatchAnswers = undefined;
  }

  /** Takes what is there (one take at a time; a wake during one makes another follow it). */
  private wake(): void {
    if (this.stopped || this.deps.term() === undefined) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = true;
    void (async () => {
      do {
        this.again = false;
        this.retryAt = undefined;
        try {
          // A full batch: more may be waiting (a bell rings once for all of them).
          if (await this.drain()) this.again = true;
        } catch (error) {
          this.retryAt = this.deps.clock.now() + this.t.retryMs;
          this.deps.logger.warn('call handoff: reading requests failed', {
            tenant: this.deps.tenant,
            error,
          });
        }
      } while (this.again && !this.stopped);
      this.draining = false;
    })();
  }

  /** Takes up to MAX_QUEUED requests; true when it took that many (there may be more). */
  private async drain(): Promise<boolean> {
    for (let n = 0; n < MAX_QUEUED; n++) {
      const term = this.deps.term();
      if (term === undefined || this.stopped) return false;
      const text = await this.deps.backend.takeCallRequest(this.deps.tenant, term);
      if (text === null) return false;
      const r = parseHanded(text);
      if (!r) continue;
      // Acted on concurrently (a slow dial does not hold the others up), each once.
      this.running++;
      void this.serve(r).finally(() => this.running--);
    }
    return true;
  }

  private async serve(r: HandedRequest): Promise<void> {
    try {
      await this.serveOnce(r);
    } catch (error) {
      this.deps.logger.warn('call handoff: request not served', {
        tenant: this.deps.tenant,
        error,
      });
    }
  }

  private async serveOnce(r: HandedRequest): Promise<void> {
    const { backend, tenant, clock, logger } = this.deps;
    // Too late to be useful: its waiter expires it (a claim now would race the deadline).
    if (clock.now() >= r.deadline - this.t.claimMarginMs) return;
    const term = this.deps.term();
    if (term === undefined) return;
    if (!(await backend.claimCallRequest(tenant, r.id, term, this.t.stateTtlMs))) return;
    let answer: PbxCallAnswer;
    try {
      // Never trusting the hop: the extension is the user's by the relay's record, now.
      const own = await this.deps.extensionsOf(r.user);
      if (!own?.includes(r.from)) answer = { ok: false, refusal: 'not-own-extension' };
      else {
        const api = this.deps.local;
        answer =
          r.action === 'dial' && r.to !== undefined
            ? await api.dial(r.from, r.to, r.user)
            : r.action === 'transfer' && r.to && r.callId && r.mode
              ? await api.transfer(r.from, r.callId, r.to, r.mode, r.user)
              : r.action === 'hangup' && r.callId
                ? await api.hangup(r.from, r.callId, r.user)
                : r.action === 'attended' &&
                    r.callId &&
                    (r.operate === 'complete' || r.operate === 'abort')
                  ? await api.attended(r.from, r.callId, r.operate, r.user)
                  : { ok: false, unreachable: true };
      }
    } catch {
      answer = { ok: false, unreachable: true };
    }
    try {
      await backend.answerCallRequest(tenant, r.id, JSON.stringify(answer), this.t.stateTtlMs);
    } catch (error) {
      logger.warn('call handoff: answer not written', { tenant, error });
    }
  }
}
