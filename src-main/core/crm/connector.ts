/**
 * One small interface for every CRM Screenpop can ask "who is calling?": a connector turns a
 * caller's number into a record (name, company, a link to the record) or says it knows no one by
 * that number. It makes one attempt; the time-out, the cache, the negative cache and rate-limit
 * pauses are the lookup service's (lookup.ts), the same for every connector.
 *
 * Everything a CRM answers is untrusted: connectors return text as received (bounded), and the
 * lookup service makes it inert and sends every link through the one URL gate (external-url.ts).
 */

/** The number to look up, in the forms CRMs store numbers in. */
export interface CrmQuery {
  /** E.164 when the number is a telephone number ("+14155550123"); else the digits. */
  e164: string;
  /** The national significant number, digits only ("4155550123"); '' when not known. */
  national: string;
  /** What the phone system sent, bounded. */
  raw: string;
  /** The region a stored number without a country code is read in (the user's, "US"); '' when none. */
  region: string;
}

/** A record as a connector read it (not yet made inert or vetted). */
export interface CrmRecord {
  name: string;
  company: string;
  /** A link to the record in the CRM's own pages; '' when there is none. */
  recordUrl: string;
  /**
   * The CRM's own id of the record (HubSpot's contact id), for the call log's association to the
   * contact (issue 39); absent when the connector has none (the generic connector).
   */
  contactId?: string;
}

export type CrmAnswer = { found: true; record: CrmRecord } | { found: false };

/** Why a lookup gave no answer: what the user (Test lookup) and the diagnostics are told. */
export type CrmFailureKind =
  /** No answer within the time-out. */
  | 'timeout'
  /** The CRM said "too many requests"; `retryAfterMs` says for how long to stop asking. */
  | 'rate-limited'
  /** The token or the user name and password were refused (401). */
  | 'auth'
  /** Signed in, but not allowed to read contacts (403; HubSpot: a missing scope). */
  | 'forbidden'
  /** The CRM could not be reached (DNS, refused, reset, proxy). */
  | 'network'
  /** The CRM's TLS certificate was refused (untrusted, expired, another host's): `certificate`. */
  | 'certificate'
  /** The CRM answered with an error of its own (5xx, or 4xx other than the above). */
  | 'server'
  /** The answer was not what this connector reads (not JSON, too large, a redirect). */
  | 'bad-answer'
  /** No token or password is stored for this CRM. */
  | 'no-credentials';

/** A refused certificate, as the service connection names it (src-shared/net/net-errors.ts). */
export interface CrmCertificateProblem {
  fault: 'certificate-untrusted' | 'certificate-expired' | 'certificate-host';
  host: string;
}

export class CrmError extends Error {
  readonly kind: CrmFailureKind;
  /** HTTP status when there was one. */
  readonly status: number | undefined;
  /** For 'rate-limited': how long the CRM asked us to wait (ms), when it said. */
  readonly retryAfterMs: number | undefined;
  /** For 'rate-limited': the CRM's daily quota is spent (HubSpot's DAILY), not a short limit. */
  readonly daily: boolean;
  /** For 'certificate': which refusal, and the host whose certificate it was. */
  readonly certificate: CrmCertificateProblem | undefined;

  constructor(
    kind: CrmFailureKind,
    message: string,
    options: {
      status?: number;
      retryAfterMs?: number;
      daily?: boolean;
      cause?: unknown;
      certificate?: CrmCertificateProblem;
    } = {},
  ) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'CrmError';
    this.kind = kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.daily = options.daily === true;
    this.certificate = options.certificate;
  }
}

export interface CrmConnector {
  /** For logs and diagnostics: 'generic' or 'hubspot'. */
  readonly kind: CrmProvider;
  /** One attempt. Rejects with a CrmError; honours `signal` (the lookup's time-out). */
  lookup(query: CrmQuery, signal: AbortSignal): Promise<CrmAnswer>;
}

export type CrmProvider = 'generic' | 'hubspot';
