import type { SmsOptions, VoicemailOptions } from './notices.ts';
/**
 * The simulator's public, in-process API. Other parts of the project (integration tests,
 * benchmarks, the app's demo mode) code against exactly these types: add members, never change them.
 */
import type { Clock } from '../src-shared/process/clock.ts';
import type { PhoneSystem } from '../src-shared/phone-systems/names.ts';

export interface SimulatorOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Default 'acme'. */
  tenant?: string;
  /** Seeds keys, ids and traffic; default 1. */
  seed?: number;
  /** Default: systemClock scaled by clockSpeed. Tests pass a FakeClock so both sides share time. */
  clock?: Clock;
  /** Default 1; 120 => a 1800 s token lasts 15 real seconds. Scales token lifetimes, webhook retry schedule, traffic. */
  clockSpeed?: number;
  /** Socket idle close (4000); default 60_000 in REAL ms, not scaled (a real-time client's 25 s heartbeat works at any speed). */
  idleTimeoutMs?: number;
  /** Default 'ms'. */
  timestampUnit?: 'ms' | 's';
  /** How many extensions to create, numbered from '101' with realistic names; default 20. */
  extensions?: number;
  /** HTTP control surface under /_sim/ on the same port; default true in-process (the CLI turns it on only with --control). */
  control?: boolean;
  /** Added: a socket with more unread bytes queued than this is terminated as a dead consumer; default 32 MiB. */
  maxBufferedBytes?: number;
  /**
   * Added: a tag inside every event_id and generated call_id. Default: random per start, so two
   * runs with the same seed never reuse an event_id (a persistent dedupe store would drop events).
   * Tests that compare two runs byte for byte pass the same value.
   */
  instanceId?: string;
  /**
   * Added: serve https/wss with this PEM certificate and key (tests of private CAs, wrong and
   * expired certificates); default plain http.
   */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /**
   * Added: the phone system to be: 'standard' (docs/wire-protocol.md, the default) or
   * 'yeastar-p-series' (docs/phone-systems/yeastar-p-series.md: the token in the query, Yeastar's
   * errcodes, report frames, X-Signature webhooks, no voicemail or SMS events).
   */
  phoneSystem?: PhoneSystem;
  /**
   * Added: how Yeastar P-Series call reports (30011) are shaped (src-sim/yeastar-calls.ts):
   * 'member' (the default: the members that changed, the caller beside a ring, as real PBXs were
   * captured sending them), 'snapshot' (every member in every report) or 'mixed' (each call one
   * of the two, from the seed). Only with phoneSystem 'yeastar-p-series'.
   */
  reportStyle?: 'snapshot' | 'member' | 'mixed';
  /**
   * Added: Yeastar P-Series extensions with two devices (a desk phone and Linkus): every ring of
   * one rings two channels. Default: every fourth extension from 104 (104, 108, ...).
   */
  twoDevices?: string[];
  /**
   * Added: the access token's lifetime in (simulated) seconds, as get_token answers it; default
   * 1800. Shorter lets a real-time client's refresh before expiry be watched in seconds.
   */
  accessTokenLifetimeSec?: number;
  /**
   * Added: how the PBX treats many tokens of one application (credentials.ts TokenRule): none
   * (the default), the guide's limit of valid tokens, or each get_token ending the earlier ones.
   */
  tokenRule?: TokenRule;
}

/** See src-sim/credentials.ts. */
export type TokenRule = { kind: 'none' } | { kind: 'limit'; max: number } | { kind: 'one-sign-in' };

export interface SimApiKey {
  key: string;
  secret: string;
  name: string;
  scopes: string[];
  /** Empty = any IP. Entries are IP addresses or CIDR ranges ('10.0.0.0/8'). */
  allowlist: string[];
}

export interface Extension {
  number: string;
  caller_id_name: string;
  email_addr: string;
  presence_status: string;
}

export interface Envelope {
  event: number;
  timestamp: number;
  tenant: string;
  data: Record<string, unknown>;
  event_id: string;
}

export interface SimStats {
  getToken: number;
  refreshToken: number;
  /** Added: del_token calls (Yeastar's *Revoke Access Token*). */
  delToken: number;
  /** Added: access tokens valid now (every API application's). */
  tokensValid: number;
  /** Added: the most access tokens of one API application valid at once, so far (under a token rule). */
  tokensValidPeak: number;
  extensionList: number;
  tokenExpiredRejections: number;
  wsConnections: number;
  wsOpen: number;
  eventsSent: number;
  webhookAttempts: number;
  webhookDelivered: number;
  /** Added: attempts that got a non-2xx answer, an error or no answer within 10 s. */
  webhookFailedAttempts: number;
  /** Added: deliveries abandoned after the 24-hour retry window. */
  webhookGaveUp: number;
  /** Added: deliveries waiting for their next attempt or in flight. */
  webhookPending: number;
}

export interface FailHttpOptions {
  status: 500 | 502 | 503 | 429;
  count: number;
  retryAfterSec?: number;
  /** Added: which requests consume the count. 'api' (default): /openapi/v1.0/ HTTP calls only; 'handshake': WebSocket upgrades only; 'all': both. */
  target?: 'api' | 'handshake' | 'all';
}

export interface TrafficOptions {
  ratePerSec: number;
  /** Extensions the generator never rings (e.g. the demo user's own). */
  excludeExtensions?: string[];
  /** When given, generated calls ring only these numbers (instead of all non-excluded extensions). */
  ringTo?: string[];
}

export interface WebhookInfo {
  id: string;
  tenant: string;
  url: string;
  events: number[] | null;
}

export interface Simulator {
  /** 'http://127.0.0.1:PORT' (API paths /openapi/v1.0/..., WS at ws://.../openapi/v1.0/subscribe). */
  readonly baseUrl: string;
  readonly tenant: string;
  /** Added: the phone system it speaks. */
  readonly phoneSystem: PhoneSystem;
  /** Created at start: all scopes, no allowlist. */
  readonly apiKey: SimApiKey;
  readonly clock: Clock;
  readonly extensions: ReadonlyArray<Extension>;
  /** Scope names: 'extension:read' for extension/list, 'event:<code>' per event code (e.g. 'event:30011'), 'event:*' for all codes; default all. */
  createApiKey(opts?: {
    name?: string;
    scopes?: string[];
    allowlist?: string[];
    tenant?: string;
  }): SimApiKey;
  /**
   * Emits one 30011 'ringing' per party; returns call_id. Added, Yeastar P-Series only: `via`, the
   * number of the queue or ring group the call came through (the members' `call_path`); `devices`,
   * how many devices each extension rung rings (default: two for those of `twoDevices`, else one).
   */
  ring(opts: {
    from: string;
    to: string | string[];
    callId?: string;
    via?: string;
    devices?: number;
  }): string;
  /**
   * One 30011 per ringing party (or just `to`). Added, Yeastar P-Series: `device` (from 1) is one
   * device of `to` only; the state `voicemail` sends the call to the voicemail of `to` (default the
   * first extension rung): its call record says VOICEMAIL.
   */
  setCallState(callId: string, state: string, opts?: { to?: string; device?: number }): void;
  /**
   * Yeastar P-Series only: puts `extension` on a uaCSTA desk phone at `ipAddress` (null: none), so
   * its rings send (30020) uaCSTA Call and the uaCSTA accept/refuse requests act on them.
   */
  setUacstaPhone(extension: string, ipAddress: string | null): void;
  /**
   * Added: a transfer in the same call, with the same caller. Blind (the default): the extension
   * `from` leaves the call (ended / BYE) and `to` rings. Attended: `from` holds (HOLD) while `to`
   * rings; answer as `to`, then end `from`, to complete it.
   */
  transfer(callId: string, opts: { from: string; to: string; attended?: boolean }): void;
  /** Added: one 30015 (voicemail received); voicemail_id generated unless given. */
  voicemail(opts: VoicemailOptions): Envelope;
  /** Added: one 30031 (inbound SMS, text at most 1,600 characters); message_id generated unless given. */
  sms(opts: SmsOptions): Envelope;
  /** Added: one 30007 (trunk status changed), e.g. ('SIP-Main', 'unregistered'). */
  setTrunkStatus(trunk: string, status: string): Envelope;
  /** Added: one 30009 (presence changed); the extension list reports it from then on. */
  setPresence(extension: string, status: string): Envelope;
  /** To every subscribed socket + webhooks. */
  emit(
    event: number,
    data: Record<string, unknown>,
    opts?: { eventId?: string; timestamp?: number; tenant?: string },
  ): Envelope;
  /**
   * Added: sends `text` byte for byte (malformed JSON, missing fields, ...) to the sockets
   * subscribed to `event` (every subscribed socket when omitted) and to matching webhooks. For client
   * robustness tests; not passed to onSent, not counted in eventsSent.
   */
  emitRaw(text: string, opts?: { event?: number; tenant?: string }): void;
  /** Returns the webhook id. */
  /** `tenant` defaults to the simulator's: a webhook carries its own tenant's events only. */
  addWebhook(opts: { url: string; secret: string; events?: number[]; tenant?: string }): string;
  removeWebhook(id: string): void;
  /** Added: the configured webhooks (secrets left out). */
  listWebhooks(): WebhookInfo[];
  // faults
  /** Default 1001. */
  closeAllSockets(code?: number): void;
  /** Keep TCP open, stop reading and writing (half-open). Applies to the sockets open now. */
  stallSockets(): void;
  /** Each of the next n events is sent twice (added: `copies` times, the same bytes each time). */
  duplicateNext(n: number, copies?: number): void;
  /** The next n events are held and sent in reverse order. */
  reorderNext(n: number): void;
  /** The next `count` API calls fail with `status`. */
  failHttp(opts: FailHttpOptions): void;
  /** 10001 afterwards. */
  revokeKey(key: string): void;
  /** 10004 for others (handshake: 403). */
  setAllowlist(key: string, ips: string[]): void;
  /** Access tokens now 10002; sockets get TOKEN EXPIRED + close 4002. */
  expireAllTokens(): void;
  /**
   * Added: what a restart of the phone system leaves: every socket closed (1012, service restart)
   * and every access and refresh token unknown from now on (the API key stays).
   */
  restart(): void;
  startTraffic(opts: TrafficOptions): void;
  stopTraffic(): void;
  stats(): SimStats;
  /** Called right before a frame is written (benchmarks time from here). Once per dispatched frame, not per socket. */
  onSent(listener: (envelope: Envelope, frameText: string) => void): () => void;
  close(): Promise<void>;
}
