/**
 * Attended transfers under way (issue 38 follow-up): "call X is in a consultation with Y since T",
 * held by the main process so that the popup's Complete transfer and Cancel transfer survive a
 * reload of the page, a popup window made again (after a renderer crash) or a second view of the
 * same call. The page asks for the list when it loads and is sent it each time it changes.
 *
 * Who changes it: CallActions (an attended transfer's first step accepted: begun; Complete or
 * Cancel accepted, the call hung up or transferred blind from Screenpop, the phone system
 * answering `no-such-call` to any of them, or refusing a Cancel: ended) and the runtime (the
 * user's call ended, or it is no longer among the presenter's calls: `retain`). A state the phone
 * system no longer has while the user's call goes on (the consultation cancelled on the phone's
 * own key) is not reported by it: a Complete pressed then is answered with the phone system's
 * refusal in words, as any refused action, and keeps the state (a refusal may also mean "not
 * yet"); Cancel, refused the same way, ends it (the card offers Transfer and Hang up again).
 *
 * Bounded: at most `max` calls (the oldest forgotten first), none older than `maxAgeMs` (a call
 * whose end was never heard). A plain Map, not the shared BoundedFifoMap: the list is read whole
 * (the page's view), which that map does not offer, and it holds a handful of calls.
 * Plain TypeScript, the clock injected; listeners are an Emitter (one that throws is logged).
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import type { ConsultationView } from '../ports/views.ts';

export interface ConsultationsDeps {
  clock: Clock;
  logger: Logger;
  /** Most calls held at once (default 20: more than anyone has on hold). */
  max?: number;
  /** A consultation older than this is forgotten (default 4 hours: the presenter's longest call). */
  maxAgeMs?: number;
}

export const DEFAULT_MAX_CONSULTATIONS = 20;
export const DEFAULT_MAX_CONSULTATION_MS = 4 * 60 * 60_000;

export class Consultations {
  private readonly clock: Clock;
  private readonly max: number;
  private readonly maxAgeMs: number;
  /** Insertion order is age order: `begin` of a held call deletes it first. */
  private readonly held = new Map<string, ConsultationView>();
  private readonly changes: Emitter<[list: ConsultationView[]]>;

  constructor(deps: ConsultationsDeps) {
    this.clock = deps.clock;
    this.max = Math.max(1, Math.floor(deps.max ?? DEFAULT_MAX_CONSULTATIONS));
    this.maxAgeMs = deps.maxAgeMs ?? DEFAULT_MAX_CONSULTATION_MS;
    this.changes = new Emitter(deps.logger.child({ component: 'consultations' }), 'consultations');
  }

  /** The phone system accepted an attended transfer's first step: `callId` consults `target`. */
  begin(callId: string, target: string, targetName: string | null): void {
    this.expire();
    this.held.delete(callId);
    const since = this.clock.now();
    this.held.set(callId, { callId, target, targetName, since });
    while (this.held.size > this.max) this.held.delete(this.held.keys().next().value!);
    this.changed();
  }

  /** The consultation of `callId` is over (done, cancelled, the call gone); nothing if none. */
  end(callId: string): void {
    if (this.held.delete(callId)) this.changed();
  }

  /** Keeps only the calls `keep` says still go on (the runtime: the presenter's live calls). */
  retain(keep: (callId: string) => boolean): void {
    let dropped = this.expire();
    for (const id of [...this.held.keys()]) {
      if (keep(id)) continue;
      this.held.delete(id);
      dropped = true;
    }
    if (dropped) this.changed();
  }

  get(callId: string): ConsultationView | undefined {
    if (this.expire()) this.changed();
    const c = this.held.get(callId);
    return c ? { ...c } : undefined;
  }

  /** Every consultation held, oldest first (what the page is given). */
  list(): ConsultationView[] {
    if (this.expire()) this.changed();
    return this.snapshot();
  }

  onChange(listener: (list: ConsultationView[]) => void): () => void {
    return this.changes.on(listener);
  }

  private snapshot(): ConsultationView[] {
    return [...this.held.values()].map((c) => ({ ...c }));
  }

  private changed(): void {
    this.changes.emit(this.snapshot());
  }

  /** Forgets consultations past their age; true when one went (the caller says so). */
  private expire(): boolean {
    const now = this.clock.now();
    let dropped = false;
    for (const [id, c] of this.held) {
      // A wall clock set back makes `since` lie in the future: judged on the distance either way.
      if (Math.abs(now - c.since) <= this.maxAgeMs) continue;
      this.held.delete(id);
      dropped = true;
    }
    return dropped;
  }
}
