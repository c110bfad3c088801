/**
 * Which uaCSTA call is the popup's ringing call (issue 38 item 4; docs/phone-systems/
 * yeastar-p-series.md section 10, "Remote answer"). The uaCSTA call id, which Answer and Decline
 * must send, arrives only in (30020) uaCSTA Call, which carries neither the caller nor the 30011
 * call id; the guide says nothing of how the two relate. So the match is made only where every
 * reading of the guide gives the same answer, and otherwise refused with its reason:
 *
 * - the popup's call still rings on the extension (a 30011 ring, `noteRing`);
 * - no other call rang on that extension from GUARD_MS before this ring began until now (two
 *   calls ringing, or one just before: which uaCSTA call is whose is unknowable) — `two-calls`;
 * - exactly one uaCSTA `call_start` on that extension, from the user's own phone (Settings' address,
 *   compared by IP, and by port where both give one), received from GUARD_MS before the ring began,
 *   not answered nor ended by uaCSTA since — none: `no-report`; more: `two-reports` — and it came
 *   no earlier than SLACK_MS before the ring began (the two events' order on the wire is not
 *   published) — else `two-reports` too (an open uaCSTA call older than the ring is not this one).
 *
 * Starts from another phone of the same extension are not counted (the user's phone is the one
 * answered), but reported as `other-phone` when they are all there is. The caller of `match`
 * (the CallControl) asks again at the moment of the press, so a second call that started ringing
 * after the buttons were shown refuses the press. Bounded: MAX_EXTENSIONS extensions, MAX_PER_EXTENSION
 * rings and reports each, nothing older than KEEP_MS. Never throws.
 */
import type { UacstaReport } from '../../../src-shared/phone-systems/yeastar-uacsta.ts';
import {
  sameDeskPhone,
  type DeskPhoneAddress,
} from '../../../src-shared/rules/desk-phone-address.ts';

/** No other ring on the extension within this long before the ring began. */
export const UACSTA_GUARD_MS = 10_000;
/** The uaCSTA start may arrive this long before the 30011 ring it belongs to. */
export const UACSTA_SLACK_MS = 3_000;
/** Rings and reports older than this (ended) are forgotten. */
export const UACSTA_KEEP_MS = 10 * 60_000;
export const UACSTA_MAX_EXTENSIONS = 32;
export const UACSTA_MAX_PER_EXTENSION = 16;

export type UacstaMatchRefusal =
  'not-ringing' | 'two-calls' | 'no-report' | 'two-reports' | 'other-phone';

export type UacstaMatch =
  | { ok: true; extension: string; uacstaCallId: string; ipAddress: string }
  | { ok: false; reason: UacstaMatchRefusal };

interface Ring {
  callId: string;
  from: number;
  /** When it stopped ringing; undefined while it rings. */
  to?: number;
}

interface Start {
  report: UacstaReport;
  at: number;
  /** Answered or ended by uaCSTA (call_answer, call_over). */
  closed: boolean;
}

interface PerExtension {
  rings: Ring[];
  starts: Start[];
}

export class UacstaCalls {
  private readonly now: () => number;
  private readonly byExtension = new Map<string, PerExtension>();

  /** `now`: a monotonic clock in ms (the core's). */
  constructor(now: () => number) {
    this.now = now;
  }

  /** A 30011 ring of `extension` in `callId` began (`ringing`) or ended. */
  noteRing(extension: string, callId: string, ringing: boolean): void {
    const now = this.now();
    const ext = this.entry(extension, now);
    const open = ext.rings.find((r) => r.callId === callId && r.to === undefined);
    if (ringing) {
      if (!open) push(ext.rings, { callId, from: now });
    } else if (open) open.to = now;
  }

  /** A decoded (30020) uaCSTA Call report. */
  noteReport(report: UacstaReport): void {
    const now = this.now();
    const ext = this.entry(report.extension, now);
    const same = ext.starts.find((s) => s.report.uacstaCallId === report.uacstaCallId);
    if (report.operation === 'call_start') {
      if (!same) push(ext.starts, { report, at: now, closed: false });
    } else if (same) same.closed = true;
  }

  /** The uaCSTA call of the popup's `callId` ringing on one of `extensions`, on the user's phone. */
  match(callId: string, extensions: readonly string[], phone: DeskPhoneAddress): UacstaMatch {
    const now = this.now();
    let found: UacstaMatch = { ok: false, reason: 'not-ringing' };
    let matches = 0;
    for (const extension of extensions) {
      const ext = this.byExtension.get(extension);
      if (!ext) continue;
      prune(ext, now);
      const ring = ext.rings.find((r) => r.callId === callId && r.to === undefined);
      if (!ring) continue;
      found = matchOn(extension, ext, ring, phone);
      if (found.ok) matches++;
    }
    // The same call ringing on two of the user's extensions, both matched: which phone? Refused.
    return matches > 1 ? { ok: false, reason: 'two-calls' } : found;
  }

  private entry(extension: string, now: number): PerExtension {
    let ext = this.byExtension.get(extension);
    if (ext) {
      prune(ext, now);
      return ext;
    }
    if (this.byExtension.size >= UACSTA_MAX_EXTENSIONS) {
      const oldest = this.byExtension.keys().next().value as string;
      this.byExtension.delete(oldest);
    }
    ext = { rings: [], starts: [] };
    this.byExtension.set(extension, ext);
    return ext;
  }
}

function matchOn(
  extension: string,
  ext: PerExtension,
  ring: Ring,
  phone: DeskPhoneAddress,
): UacstaMatch {
  const since = ring.from - UACSTA_GUARD_MS;
  const other = ext.rings.some((r) => r !== ring && (r.to === undefined || r.to >= since));
  if (other) return { ok: false, reason: 'two-calls' };
  const recent = ext.starts.filter((s) => s.at >= since);
  const mine = recent.filter((s) => sameDeskPhone(s.report.phone, phone));
  const open = mine.filter((s) => !s.closed);
  if (open.length === 0)
    return {
      ok: false,
      reason: mine.length === 0 && recent.length > 0 ? 'other-phone' : 'no-report',
    };
  if (open.length > 1 || mine.length > 1) return { ok: false, reason: 'two-reports' };
  const start = open[0]!;
  if (start.at < ring.from - UACSTA_SLACK_MS) return { ok: false, reason: 'two-reports' };
  return {
    ok: true,
    extension,
    uacstaCallId: start.report.uacstaCallId,
    ipAddress: start.report.ipAddress,
  };
}

function push<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > UACSTA_MAX_PER_EXTENSION) list.shift();
}

function prune(ext: PerExtension, now: number): void {
  const before = now - UACSTA_KEEP_MS;
  // A ring whose end was never reported is forgotten KEEP_MS after it began.
  ext.rings = ext.rings.filter((r) => (r.to ?? r.from) >= before);
  ext.starts = ext.starts.filter((s) => s.at >= before);
}
