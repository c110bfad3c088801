/**
 * The relay's client protocol (docs/relay-protocol.md): the one module that knows its frames. Both
 * the relay server (src-relay) and the desktop's RelayEventSource import it, so a change to the wire
 * is a one-file change.
 *
 * Server -> client text frames are of two kinds:
 * - an event: the webhook body exactly as the service signed it (a JSON object, so it starts with
 *   `{` after optional whitespace);
 * - a control frame: the prefix `relay ` followed by a JSON object with a `type`. A JSON document
 *   never starts with `r`, so the two kinds cannot be confused and event bodies are never parsed
 *   or re-serialised by the relay or the source.
 * Client -> server frames are JSON objects with a `type` (hello, heartbeat).
 */

import { digitsOf, internationalDigits, isDid } from '../rules/phone-number-rules.ts';

export const CONTROL_PREFIX = 'relay ';

/** WebSocket path of a tenant's client endpoint on the relay. */
export function relayClientPath(tenant: string): string {
  return `/v1/stream/${encodeURIComponent(tenant)}`;
}

/** Where a device exchanges a one-time enrolment code for its credential (organisation mode). */
export function relayEnrolPath(tenant: string): string {
  return `/v1/enrol/${encodeURIComponent(tenant)}`;
}

/** What a tenant in organisation mode offers for sign-in (GET): its OpenID provider, enrolment. */
export function relayOrgPath(tenant: string): string {
  return `/v1/org/${encodeURIComponent(tenant)}`;
}

/**
 * Where an organisation user claims the logging of a call into the CRM (POST `{"callId":"..."}`):
 * the first user to claim a call id holds it; every desktop that saw the call asks, and only the
 * holder logs it (docs/relay-protocol.md 2.2, "Claiming a call's log").
 */
export function relayClaimPath(tenant: string): string {
  return `/v1/claim/${encodeURIComponent(tenant)}`;
}

/** The relay's answer to a claim: who holds the call's log, and whether that is the asker. */
export interface CallClaimAnswer {
  callId: string;
  holder: string;
  mine: boolean;
}

/**
 * The desktop a claim comes from (optional `device` of the claim's body): a user's two computers
 * are two claimants, so only one of them logs a call both saw. Random per app start.
 */
export const CLAIM_DEVICE_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

/** A call id as a claim carries it: the phone system's id, printable and short. */
export const CALL_ID_PATTERN = /^[A-Za-z0-9._:@+-]{1,128}$/;

/**
 * A device credential issued by the relay for an enrolment code starts with this, so the relay
 * tells it from an OpenID Connect token (three dot-separated parts) without trying both.
 */
export const DEVICE_CREDENTIAL_PREFIX = 'sprd_';

/**
 * The relay's own `errcode` values (organisation mode), beside the service's (errcodes.ts): a
 * refused handshake or enrolment says which of these it is so the desktop can say what to do.
 */
export const RELAY_ERRCODE = {
  /** 401: no credential of this relay, an unknown or expired one, or a service token where the tenant wants a user. */
  signInRequired: 46001,
  /** 401: the user's access was revoked by the relay's administrator. */
  revoked: 46002,
  /** 403: signed in, but the relay has no extension for this user. */
  notMapped: 46003,
  /** 401 (enrolment): the code is unknown, already used or expired. */
  codeRefused: 46004,
  /**
   * 403: the sign-in is not an account of the organisation: a required claim differs
   * (`oidc.requiredClaims`: Google's `hd`, Entra ID's `tid`); another account is the remedy.
   */
  otherAccount: 46005,
} as const;

/**
 * Who a session belongs to in organisation mode, as the relay enforces it: only these extensions'
 * and numbers' calls, voicemail and SMS (and tenant-wide notices) reach it. Sent in `ready` and
 * in the enrolment answer, so the desktop knows whose rings it shows without holding any setting.
 */
export interface RelayIdentity {
  /** The user's name on the relay (the administrator's `relay users add <name>`, or the e-mail address). */
  user: string;
  /** How the session signed in. */
  via: 'device' | 'oidc';
  extensions: string[];
  dids: string[];
  /**
   * Wall-clock ms at which this sign-in stops being accepted (an OpenID sign-in: the relay's
   * maximum age after its ID token was issued, whatever the token's own expiry); null: no end.
   */
  expiresAt: number | null;
}

/** The answer to a redeemed enrolment code (POST /v1/enrol/<tenant>). */
export interface EnrolmentAnswer {
  credential: string;
  device: string;
  identity: RelayIdentity;
}

/**
 * What a desktop needs to sign in with the organisation's OpenID provider (the relay's
 * `tenants.<name>.oidc`, docs/relay-protocol.md 2.3). The optional parts are what real providers
 * ask beyond the standard flow: Google's token endpoint wants its "Desktop app" client's secret
 * (which Google says is not secret in an installed app, but which is never logged) and
 * `access_type=offline` for a refresh token; Okta and Auth0 match the redirect address exactly,
 * port included, so the loopback listener's host and port can be fixed.
 */
export interface OidcClientInfo {
  issuer: string;
  clientId: string;
  scopes: string[];
  /** Sent to the token endpoint (client_secret_post) when the provider wants one. */
  clientSecret?: string;
  /** Extra parameters of the authorization request (access_type, prompt, hd, ...). */
  authorizationParams?: Record<string, string>;
  /** The loopback redirect's host: 127.0.0.1 (default, RFC 8252 8.3) or localhost. */
  redirectHost?: LoopbackRedirectHost;
  /** A fixed loopback port, for providers that match the redirect exactly; absent: any free port. */
  redirectPort?: number;
  /**
   * The ID token's claim the relay reads the user's address from, where it is not `email`
   * (Entra ID users without a mail attribute: `preferred_username`): the desktop shows who is
   * signed in from the same claim. Absent: `email`.
   */
  emailClaim?: string;
}

/** A claim name the desktop accepts from the relay (letters, digits, `_ . : -`, at most 64). */
export const CLAIM_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/** The hosts a loopback redirect may name (RFC 8252 7.3 and 8.3). */
export const LOOPBACK_REDIRECT_HOSTS = ['127.0.0.1', 'localhost'] as const;
export type LoopbackRedirectHost = (typeof LOOPBACK_REDIRECT_HOSTS)[number];

/**
 * Parameters of the authorization request the app sets itself: a configuration may not name them
 * in `authorizationParams` (the relay refuses it; the app ignores them).
 */
export const RESERVED_AUTHORIZATION_PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'code_challenge',
  'code_challenge_method',
  'state',
  'nonce',
  'client_secret',
] as const;

/** What an extra authorization parameter may be: its name, its value's length, how many. */
export const AUTHORIZATION_PARAM_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
export const MAX_AUTHORIZATION_PARAM_LENGTH = 512;
export const MAX_AUTHORIZATION_PARAMS = 20;

/** The answer of GET /v1/org/<tenant>: how a desktop signs in to this tenant. */
export interface OrgSignInInfo {
  tenant: string;
  /** The organisation's OpenID provider, when single sign-on is configured. */
  oidc: OidcClientInfo | null;
  /** Whether one-time enrolment codes are accepted. */
  enrolment: boolean;
}

/** Tenants name keys, paths and log fields: a conservative alphabet keeps them safe everywhere. */
export const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

export interface RelayFilter {
  /** Extension numbers whose 30011 events (data.to) the client receives. */
  extensions: string[];
  /** Telephone numbers (DIDs) that reach the user; compared digits-only, leading + kept. */
  dids: string[];
  /**
   * Event codes the client receives in full, for the whole tenant (opt-in); a call record
   * (CALL_RECORD) only of calls to its extensions and numbers, as calls.
   */
  events: number[];
}

export interface HelloMessage {
  type: 'hello';
  /** Protocol version; the relay refuses versions it does not speak. */
  v: 1;
  filter: RelayFilter;
  /** Last cursor the client processed; null = start live, nothing replayed. */
  cursor: string | null;
}

export interface HeartbeatMessage {
  type: 'heartbeat';
}

export type ClientMessage = HelloMessage | HeartbeatMessage;

export type ControlFrame =
  | {
      type: 'ready';
      session: string;
      cursor: string | null;
      heartbeatMs: number;
      idleTimeoutMs: number;
      /** Organisation mode: whose session this is (the relay's filter, not the hello's). */
      identity?: RelayIdentity;
    }
  | { type: 'cursor'; cursor: string }
  | { type: 'gap'; requested: string; oldest: string | null; reason: string }
  | { type: 'heartbeat'; cursor?: string }
  | { type: 'error'; code: string; message: string };

/** WebSocket close codes the relay uses (4000-4999 are the application's). */
export const CloseCode = {
  /** Nothing heard from the client for the idle timeout. */
  idle: 4000,
  /** Malformed or unexpected frame, or an unsupported protocol version. */
  badRequest: 4400,
  /** The client's authorisation reached its maximum age: reconnect with a fresh token. */
  reauthenticate: 4002,
  /** Organisation mode: the user's access was revoked; do not reconnect until signed in again. */
  revoked: 4003,
  /** The client could not keep up (send buffer over the limit): reconnect and resume. */
  slowConsumer: 4008,
  /** Relay restarting or shutting down: reconnect (elsewhere) and resume. */
  serviceRestart: 1012,
  /** Relay cannot serve now (e.g. cannot validate tokens): retry later. */
  tryAgainLater: 1013,
} as const;

export function encodeControl(frame: ControlFrame): string {
  return CONTROL_PREFIX + JSON.stringify(frame);
}

/** A control frame, or null when `text` is an event body (or garbage, which the pipeline rejects). */
export function decodeControl(text: string): ControlFrame | null {
  if (!text.startsWith(CONTROL_PREFIX)) return null;
  try {
    const value: unknown = JSON.parse(text.slice(CONTROL_PREFIX.length));
    if (
      value &&
      typeof value === 'object' &&
      typeof (value as { type?: unknown }).type === 'string'
    ) {
      return value as ControlFrame;
    }
  } catch {
    // fall through
  }
  return { type: 'error', code: 'bad-control-frame', message: 'unparseable control frame' };
}

const MAX_FILTER_ITEMS = 200;
/** A filter's extension (a PBX may name one with letters, `*` or `#`); its DIDs are DIDs (`isDid`). */
const ITEM = /^[+0-9A-Za-z*#._() -]{1,40}$/;
const isItem = (s: string) => ITEM.test(s);

/** Validates a client's hello (untrusted input); returns an error message or the hello. */
export function parseClientMessage(text: string): ClientMessage | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'frame is not JSON' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return { error: 'frame is not an object' };
  const v = value as Record<string, unknown>;
  if (v.type === 'heartbeat') return { type: 'heartbeat' };
  if (v.type !== 'hello') return { error: 'unknown frame type' };
  if (v.v !== 1) return { error: 'unsupported protocol version' };
  const f = v.filter as Record<string, unknown> | undefined;
  if (!f || typeof f !== 'object') return { error: 'filter missing' };
  const strings = (x: unknown, ok: (s: string) => boolean): string[] | null =>
    x === undefined
      ? []
      : Array.isArray(x) &&
          x.length <= MAX_FILTER_ITEMS &&
          x.every((s) => typeof s === 'string' && ok(s))
        ? (x as string[])
        : null;
  const extensions = strings(f.extensions, isItem);
  const dids = strings(f.dids, isDid);
  const events =
    f.events === undefined
      ? []
      : Array.isArray(f.events) &&
          f.events.length <= MAX_FILTER_ITEMS &&
          f.events.every((n) => Number.isInteger(n) && n > 0 && n < 1e9)
        ? (f.events as number[])
        : null;
  if (!extensions || !dids || !events) return { error: 'filter malformed' };
  const cursor = v.cursor ?? null;
  if (cursor !== null && (typeof cursor !== 'string' || !isCursor(cursor)))
    return { error: 'cursor malformed' };
  return { type: 'hello', v: 1, filter: { extensions, dids, events }, cursor };
}

/**
 * Cursors are stream positions `<ms>-<seq>` (the Redis Streams id format, used by the in-memory
 * store too), ordered numerically by both parts. Both parts stay below 2^53 (15 digits), so plain
 * numbers compare them exactly; the relay compares a cursor per client per event, so this is hot.
 */
const CURSOR = /^\d{1,15}-\d{1,15}$/;

export function isCursor(text: string): boolean {
  return CURSOR.test(text);
}

export function compareCursors(a: string, b: string): number {
  const ia = a.indexOf('-');
  const ib = b.indexOf('-');
  const msA = Number(a.slice(0, ia));
  const msB = Number(b.slice(0, ib));
  if (msA !== msB) return msA < msB ? -1 : 1;
  const seqA = Number(a.slice(ia + 1));
  const seqB = Number(b.slice(ib + 1));
  if (Number.isNaN(msA + msB + seqA + seqB) || ia < 0 || ib < 0) throw new Error('not a cursor');
  return seqA === seqB ? 0 : seqA < seqB ? -1 : 1;
}

/**
 * Telephone numbers (DIDs) as the relay matches them against a 30011 `data.to`: on digits only;
 * equal, or one a suffix of the other with at least MIN_SUFFIX_DIGITS digits, so the national and
 * international forms of one number match ("+1 (415) 555-0100", "4155550100", "14155550100").
 * Deliberately wider than the desktop pipeline's E.164 match (the relay knows no region): a rare
 * extra frame costs nothing, a missing one costs a pop.
 */
export const MIN_SUFFIX_DIGITS = 7;

export class NumberSet {
  private readonly exact = new Set<string>();
  private readonly byTail = new Map<string, string[]>();
  private readonly exactOnly: boolean;

  /**
   * `exactOnly` (organisation mode): numbers are the users' DIDs in full international form, and
   * a `to` matches one only when it is the same number (`+` or `00` before the country code), never
   * by a suffix: otherwise a DID entered short ("555 0100") would receive a colleague's outbound
   * call to any number ending in it.
   */
  constructor(numbers: readonly string[], options: { exactOnly?: boolean } = {}) {
    this.exactOnly = options.exactOnly ?? false;
    for (const n of numbers) {
      const d = this.exactOnly ? internationalDigits(n) : digitsOf(n);
      if (!d) continue;
      this.exact.add(d);
      if (!this.exactOnly && d.length >= MIN_SUFFIX_DIGITS) {
        const tail = d.slice(-MIN_SUFFIX_DIGITS);
        const list = this.byTail.get(tail);
        if (list) list.push(d);
        else this.byTail.set(tail, [d]);
      }
    }
  }

  get size(): number {
    return this.exact.size;
  }

  has(text: string): boolean {
    if (this.exactOnly) {
      const d = internationalDigits(text);
      return d !== '' && this.exact.has(d);
    }
    const d = digitsOf(text);
    if (!d) return false;
    if (this.exact.has(d)) return true;
    if (d.length < MIN_SUFFIX_DIGITS) return false;
    const list = this.byTail.get(d.slice(-MIN_SUFFIX_DIGITS));
    return !!list && list.some((x) => x.endsWith(d) || d.endsWith(x));
  }
}

/**
 * What a desktop may send as its filter: entries trimmed, deduplicated, of the allowed alphabet and
 * length, at most 200 per list. Settings typed by a person may hold anything; an entry the relay
 * would refuse is dropped here (and counted) rather than making every hello fail.
 */
export function sanitiseFilter(filter: RelayFilter): { filter: RelayFilter; dropped: number } {
  let dropped = 0;
  const clean = (items: readonly string[], ok: (s: string) => boolean) => {
    const out = new Set<string>();
    for (const raw of items) {
      const item = typeof raw === 'string' ? raw.trim() : '';
      if (ok(item) && out.size < MAX_FILTER_ITEMS) out.add(item);
      else dropped++;
    }
    return [...out];
  };
  const events = [
    ...new Set(filter.events.filter((n) => Number.isInteger(n) && n > 0 && n < 1e9)),
  ].slice(0, MAX_FILTER_ITEMS);
  dropped += filter.events.length - events.length;
  return {
    filter: {
      extensions: clean(filter.extensions, isItem),
      dids: clean(filter.dids, isDid),
      events,
    },
    dropped,
  };
}
