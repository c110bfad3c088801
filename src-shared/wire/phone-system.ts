/**
 * One phone system's wire format, as the core sees it: the seams where the standard service
 * (docs/wire-protocol.md) and Yeastar's P-Series (docs/phone-systems/yeastar-p-series.md) differ.
 * Everything past these seams (token manager, pipeline, call tracker, notices, the app) is the same
 * for every phone system: no other module checks which one is in use.
 */
import type { UacstaDecodeResult } from '../phone-systems/yeastar-uacsta.ts';
import type { ErrcodeContext, ErrcodeReader } from '../api/service-errors.ts';
import type { FrameDecoder } from './envelope.ts';
import type { FeatureCodes } from './event-codes.ts';
import type { PhoneSystem } from '../phone-systems/names.ts';
import type { MessageId } from '../i18n/catalogue.ts';

/** The HTTP API: token calls and extension list (service-client.ts). */
export interface ApiDialect {
  /** Where a call carries the access token: the Authorization header, or `?access_token=`. */
  tokenIn: 'authorization' | 'query';
  /** The system's errcodes (each system has its own table). */
  errcodes: ErrcodeReader;
  /** Whether a token can be revoked (`del_token`); the standard service publishes no such call. */
  revokes?: boolean;
  /**
   * This system's errcode as the standard service's (the relay protocol's, which desktops read):
   * a refused token, address or permission keeps its meaning; another code is -1.
   */
  asStandard(errcode: number, context?: ErrcodeContext): number;
  /**
   * Whether the system's API lists its own queues, ring groups and company contacts
   * (docs/phone-systems/yeastar-p-series.md section 9): the card's group, the PBX's contacts.
   */
  pbxLists?: boolean;
  /**
   * Whether the system's API controls calls (docs/phone-systems/yeastar-p-series.md section 10:
   * call/dial, call/transfer, call/hangup, call/query); the standard service publishes none, so
   * it says calls are "not offered by this phone system".
   */
  calls?: boolean;
}

/** Puts `token` where `api` takes it: `?access_token=` on `url`, or the Authorization header. */
export function placeToken(
  api: Pick<ApiDialect, 'tokenIn'>,
  url: URL,
  headers: Record<string, string>,
  token: string,
): void {
  if (api.tokenIn === 'query') url.searchParams.set('access_token', token);
  else headers.Authorization = `Bearer ${token}`;
}

/** The event stream (events/ws-source.ts). */
export interface StreamDialect {
  /** The socket's address, with `token` where this system wants it. */
  url(baseUrl: string, token: string): string;
  /** The same address without any credential: for words, logs and proxy decisions. */
  publicUrl(baseUrl: string): string;
  /** Handshake headers. */
  headers(token: string, userAgent: string): Record<string, string>;
  /** The frame that subscribes to `topics`. */
  subscribe(topics: readonly number[]): string;
  heartbeat: string;
  heartbeatResponse: string;
  /** The errcodes of control frames and refused handshakes. */
  errcodes: ErrcodeReader;
  /** The errcode a refused handshake without one stands for, by HTTP status (401, 403). */
  refusedStatus: Readonly<Record<number, number>>;
  /** The errcode of a subscribe answer meaning "subscribed, except the codes named" (if any). */
  partialSubscribe?: number;
  /** A decoder of this stream's frames into the core's envelopes; a new one per stream. */
  decoder(): FrameDecoder;
  /**
   * Remote answer's reports (Yeastar's (30020) uaCSTA Call, section 10): the code subscribed only
   * while "Answer from Screenpop" is on, and its decoder (data, not an envelope). Absent: no such
   * reports on this phone system.
   */
  remoteAnswer?: { code: number; decode(text: string): UacstaDecodeResult };
}

/** Its webhook deliveries, as the relay takes them (src-relay/webhook-handler.ts). */
export interface WebhookDialect {
  /** The header carrying the HMAC-SHA256 of the raw body, keyed with the secret (lower case). */
  signatureHeader: string;
  /** How the header writes the digest: `sha256=<hex>`, or Base64 alone. */
  signatureForm: 'sha256-hex' | 'base64';
  /** What a body is: the core's envelope (kept byte for byte), or the system's report (decoded). */
  body: 'envelope' | 'report';
  /**
   * The secret the system itself generates for a webhook: its length, and where the administrator
   * copies it from (the relay's config check warns about a secret of any other length).
   */
  generatedSecret?: { chars: number; shownAt: string };
  /**
   * Who sends deliveries whose signature covers no time (a captured one passes again at any time):
   * the relay's config check asks for `allowFrom` then. Absent where the signature is not replayable.
   */
  replayableFrom?: string;
}

export interface PhoneSystemWire {
  id: PhoneSystem;
  /** The product's name, as the relay's summary and warnings say it; none for the standard service. */
  vendorName?: string;
  api: ApiDialect;
  stream: StreamDialect;
  webhook: WebhookDialect;
  /** The event code of calls on this system's stream. */
  callCode: number;
  /**
   * Further codes of calls, subscribed with `callCode` whatever the features (Yeastar: the 30012
   * call record and the 30015 failure, which end a call's rings).
   */
  callEndCodes?: readonly number[];
  /**
   * Its decoder makes the core's call records (CALL_RECORD, Yeastar's 30012): a desktop asks the
   * relay for them (src-main/core/relay-client/filter.ts), which hands on those of its own calls.
   */
  callRecords?: boolean;
  /** The code each notice feature rides on, null where the system has no such event. */
  featureCodes: FeatureCodes;
  /**
   * What Test connection adds to its answer about setting this system up (catalogue messages):
   * `always`, and `apiMissing` where the API answered as absent or not this system's.
   */
  setupChecks?: { always: readonly MessageId[]; apiMissing?: MessageId };
  /**
   * How Test connection says the address to allow (`{ip}`), where this system keeps its allowlist;
   * `settings.test.ip` (the admin console's API key) where absent.
   */
  ipToAllowMessage?: MessageId;
}
