/**
 * The core's event codes and envelope (docs/wire-protocol.md section 6): what every phone system's
 * frames are decoded into before the pipeline sees them. The standard service speaks this format
 * on the wire; another phone system's module (src-shared/phone-systems/) translates its own frames
 * into it, so the app's pipeline, the relay's routing and the runner's lines know only these codes.
 */
export const CALL_STATE_CHANGED = 30011;
export const TRUNK_STATUS_CHANGED = 30007;
export const PRESENCE_CHANGED = 30009;
export const VOICEMAIL_RECEIVED = 30015;
/**
 * A call's record once it ended (a phone system's CDR): `call_id`, `to` (the callee), `status`
 * (the phone system's word), `talk_sec` and `duration_sec` where known. Not on the standard
 * service's wire: decoded from Yeastar's 30012 (docs/phone-systems/yeastar-p-series.md section 5);
 * History reads the talk time from it.
 */
export const CALL_RECORD = 30012;
export const SMS_RECEIVED = 30031;

/** The notices built on the catalogue beyond rings (src-main/core/events/features.ts). */
export type NoticeFeature = 'voicemail' | 'sms' | 'trunk' | 'presence';

/** The core's own code of each notice feature. */
export const FEATURE_CODES: Readonly<Record<NoticeFeature, number>> = {
  voicemail: VOICEMAIL_RECEIVED,
  sms: SMS_RECEIVED,
  trunk: TRUNK_STATUS_CHANGED,
  presence: PRESENCE_CHANGED,
};

/** The code each feature rides on in a phone system's wire format; null: it has no such event. */
export type FeatureCodes = Readonly<Record<NoticeFeature, number | null>>;

/**
 * How long an `event_id` is remembered so that a repeated delivery is one event: the service
 * retries a webhook for 24 hours (docs/wire-protocol.md section 7), plus an hour's margin. The one
 * window of the desktop's dedupe (events/dedupe.ts) and notice ids (events/notices.ts), and the
 * relay store's default and least dedupe time (src-relay/store/types.ts, src-relay/config.ts).
 */
export const EVENT_ID_WINDOW_MS = 25 * 60 * 60_000;

/** One event as the core handles it (docs/wire-protocol.md section 6). */
export interface EventEnvelope {
  event: number;
  /** Milliseconds since the Unix epoch. */
  timestamp: number;
  tenant: string;
  data: Record<string, unknown>;
  event_id: string;
  /**
   * The wire carried no time of its own: `timestamp` is when this process received the frame, on
   * its own clock. Such an event came live over a socket that never replays, so it is fresh by
   * construction; it is no sample of another clock either (docs/phone-systems/yeastar-p-series.md).
   */
  receiptStamped?: true;
}
