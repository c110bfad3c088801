/**
 * Decides what the rest of the catalogue means for this user (docs/wire-protocol.md section 6):
 *
 * - Voicemail (30015) for one of the user's extensions, SMS (30031) to one of the user's DIDs or
 *   extensions: once per voicemail_id / message_id, however many event ids, sockets and relay
 *   replays carry it. One older than `staleNoticeMs` (default an hour) on the offset-corrected clock
 *   is history, not a notification (`notify: false`): a relay replaying yesterday's SMS after a
 *   restart must not ring the bell.
 * - Trunk status (30007), tenant-wide: one notice per change of a trunk's status; a status stamped
 *   before the one already known for that trunk (a replay, reordering) is ignored. `down` lists the
 *   trunks not registered now, so one notice says whether calls from outside may not come in.
 * - Presence (30009) of the user's own extensions only: one notice per change, older ones ignored.
 *
 * Memory: at most 10,000 voicemail/message ids for 25 hours (the webhook retry window plus a
 * margin), at most 256 trunks (a trunk past that is not tracked, and logged by the caller), and one
 * presence per own extension.
 */
import { BoundedFifoMap } from '../../../src-shared/kit/bounded-map.ts';
import { EVENT_ID_WINDOW_MS } from '../../../src-shared/wire/event-codes.ts';
import {
  PRESENCE_CHANGED,
  SMS_RECEIVED,
  TRUNK_STATUS_CHANGED,
  VOICEMAIL_RECEIVED,
  presenceData,
  smsData,
  trunkData,
  voicemailData,
} from './catalogue.ts';
import type { Envelope } from '../../../src-shared/wire/envelope.ts';
import type { UserNumberMatcher } from './numbers.ts';

export const NOTICE_CODES: readonly number[] = [
  VOICEMAIL_RECEIVED,
  SMS_RECEIVED,
  TRUNK_STATUS_CHANGED,
  PRESENCE_CHANGED,
];

interface NoticeBase {
  eventId: string;
  /** Server timestamp, ms since the epoch. */
  timestamp: number;
  /** Local wall-clock time the frame arrived. */
  receivedAt: number;
  /** The source whose copy arrived first. */
  source: string;
}

export interface VoicemailNotice extends NoticeBase {
  type: 'voicemail';
  voicemailId: string;
  extension: string;
  from: string;
  fromTruncated?: true;
  callerName: string | null;
  durationSec: number | null;
  /** False when the voicemail is older than the stale limit: history only, no notification. */
  notify: boolean;
}

export interface SmsNotice extends NoticeBase {
  type: 'sms';
  messageId: string;
  from: string;
  fromTruncated?: true;
  to: string;
  text: string;
  textTruncated?: true;
  /** False when the message is older than the stale limit: history only, no notification. */
  notify: boolean;
}

export interface TrunkNotice extends NoticeBase {
  type: 'trunk';
  trunk: string;
  status: string;
  registered: boolean;
  /** Trunks known to be not registered after this change (sorted). */
  down: string[];
}

export interface PresenceNotice extends NoticeBase {
  type: 'presence';
  extension: string;
  status: string;
}

export type Notice = VoicemailNotice | SmsNotice | TrunkNotice | PresenceNotice;

export type NoticeDecision =
  | { kind: 'notice'; notice: Notice }
  | { kind: 'ignored'; why: 'not-for-user' | 'duplicate' | 'older' | 'unchanged' | 'too-many' }
  | { kind: 'rejected' };

export interface NoticeTrackerOptions {
  /** A voicemail or SMS older than this is history, not a notification. Default 1 hour. */
  staleNoticeMs?: number;
  maxIds?: number;
  maxTrunks?: number;
}

export const DEFAULT_STALE_NOTICE_MS = 60 * 60_000;
const ID_TTL_MS = EVENT_ID_WINDOW_MS;

interface Known {
  status: string;
  timestamp: number;
}

export class NoticeTracker {
  readonly staleNoticeMs: number;
  private readonly ids: BoundedFifoMap<true>;
  private readonly maxTrunks: number;
  private readonly trunks = new Map<string, Known>();
  private readonly presence = new Map<string, Known>();

  constructor(options: NoticeTrackerOptions = {}) {
    this.staleNoticeMs = options.staleNoticeMs ?? DEFAULT_STALE_NOTICE_MS;
    this.ids = new BoundedFifoMap(options.maxIds ?? 10_000, ID_TTL_MS);
    this.maxTrunks = options.maxTrunks ?? 256;
  }

  /** True for the codes this tracker reads. */
  static handles(code: number): boolean {
    return NOTICE_CODES.includes(code);
  }

  /**
   * `ageOf` gives the event's age on the offset-corrected clock (called only when it matters).
   */
  handle(
    envelope: Envelope,
    matcher: UserNumberMatcher,
    ageOf: () => number,
    nowMono: number,
    meta: { source: string; receivedAt: number },
  ): NoticeDecision {
    const base: NoticeBase = {
      eventId: envelope.event_id,
      timestamp: envelope.timestamp,
      receivedAt: meta.receivedAt,
      source: meta.source,
    };
    switch (envelope.event) {
      case VOICEMAIL_RECEIVED: {
        const v = voicemailData(envelope);
        if (!v) return { kind: 'rejected' };
        if (!matcher.isExtension(v.extension)) return { kind: 'ignored', why: 'not-for-user' };
        if (!this.firstSeen(`v:${v.voicemail_id}`, nowMono))
          return { kind: 'ignored', why: 'duplicate' };
        return {
          kind: 'notice',
          notice: {
            ...base,
            type: 'voicemail',
            voicemailId: v.voicemail_id,
            extension: v.extension,
            from: v.from,
            ...(v.fromTruncated ? { fromTruncated: true as const } : {}),
            callerName: v.caller_name,
            durationSec: v.duration_sec,
            notify: ageOf() <= this.staleNoticeMs,
          },
        };
      }
      case SMS_RECEIVED: {
        const s = smsData(envelope);
        if (!s) return { kind: 'rejected' };
        if (!matcher.matches(s.to)) return { kind: 'ignored', why: 'not-for-user' };
        if (!this.firstSeen(`s:${s.message_id}`, nowMono))
          return { kind: 'ignored', why: 'duplicate' };
        return {
          kind: 'notice',
          notice: {
            ...base,
            type: 'sms',
            messageId: s.message_id,
            from: s.from,
            ...(s.fromTruncated ? { fromTruncated: true as const } : {}),
            to: s.to,
            text: s.text,
            ...(s.textTruncated ? { textTruncated: true as const } : {}),
            notify: ageOf() <= this.staleNoticeMs,
          },
        };
      }
      case TRUNK_STATUS_CHANGED: {
        const t = trunkData(envelope);
        if (!t) return { kind: 'rejected' };
        if (!this.trunks.has(t.trunk) && this.trunks.size >= this.maxTrunks)
          return { kind: 'ignored', why: 'too-many' };
        const why = this.update(this.trunks, t.trunk, t.status, envelope.timestamp);
        if (why) return { kind: 'ignored', why };
        return {
          kind: 'notice',
          notice: {
            ...base,
            type: 'trunk',
            trunk: t.trunk,
            status: t.status,
            registered: t.status === 'registered',
            down: this.trunksDown(),
          },
        };
      }
      case PRESENCE_CHANGED: {
        const p = presenceData(envelope);
        if (!p) return { kind: 'rejected' };
        if (!matcher.isExtension(p.extension)) return { kind: 'ignored', why: 'not-for-user' };
        const why = this.update(this.presence, p.extension, p.presence_status, envelope.timestamp);
        if (why) return { kind: 'ignored', why };
        return {
          kind: 'notice',
          notice: { ...base, type: 'presence', extension: p.extension, status: p.presence_status },
        };
      }
      default:
        return { kind: 'rejected' };
    }
  }

  /** Trunks known to be not registered now (sorted). */
  trunksDown(): string[] {
    return [...this.trunks]
      .filter(([, k]) => k.status !== 'registered')
      .map(([name]) => name)
      .sort();
  }

  get size(): { ids: number; trunks: number } {
    return { ids: this.ids.size, trunks: this.trunks.size };
  }

  private firstSeen(key: string, nowMono: number): boolean {
    if (this.ids.has(key, nowMono)) return false;
    this.ids.set(key, true, nowMono);
    return true;
  }

  /** Records a status unless an equal or later-stamped one is known; says why not. */
  private update(
    map: Map<string, Known>,
    key: string,
    status: string,
    timestamp: number,
  ): 'older' | 'unchanged' | undefined {
    const known = map.get(key);
    if (known && timestamp < known.timestamp) return 'older';
    if (known && known.status === status) {
      known.timestamp = timestamp;
      return 'unchanged';
    }
    map.set(key, { status, timestamp });
    return undefined;
  }
}
