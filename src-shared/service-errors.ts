/**
 * The service's error codes, and what Screenpop says about each fault: one table of reasons and
 * remedies (docs/wire-protocol.md section 4), so that the tray, Test connection and the headless
 * runner say the same words for the same fault. The words are data keyed by a stable id
 * (`FaultId`, `HintId`), ready to be translated; `{name}` marks a value filled in by `words()`.
 *
 * Every failure of a service call is one `ServiceError` (built from an answer by
 * `api/errors.ts`, or locally by the token manager); `describeError(anything)` turns it, or any
 * other thrown value, into the words to show.
 *
 * Error text is shown in the tray and written to logs, so a message never carries a token or the
 * secret: it is built from our own words plus the server's `errmsg`, scrubbed with the
 * SecretRegistry by the caller (ServiceClient) and cut short.
 */

/** The service's `errcode` values (docs/wire-protocol.md section 4). */
export const ERRCODE = {
  ok: 0,
  invalidCredentials: 10001,
  tokenExpired: 10002,
  insufficientScope: 10003,
  ipNotAllowed: 10004,
  badRequest: 40000,
  rateLimited: 42900,
} as const;

/** What went wrong with a service call; decides what the token manager and the sources do. */
export type ServiceErrorKind =
  | 'credentials' // 10001: key or secret not accepted (also a refresh token not accepted)
  | 'expired' // 10002: the access token is expired or unknown
  | 'scope' // 10003: the key lacks a scope
  | 'ip' // 10004: this computer's IP is not on the key's allowlist
  | 'rate-limit' // 429 / 42900
  | 'server' // 5xx
  | 'network' // no answer: DNS, refused, reset
  | 'timeout' // no answer within our per-request time-out
  | 'bad-request' // 400 / 40000: our request was malformed
  | 'protocol' // an answer we cannot understand (not JSON, missing fields)
  | 'proxy' // the proxy refused us (407 credentials, 403 policy): a person must fix it
  | 'certificate'; // the server's TLS certificate is not trusted, expired or for another host

/** The faults Screenpop has words for. */
export type FaultId =
  | 'invalid-credentials'
  | 'token-expired'
  | 'insufficient-scope'
  | 'ip-not-allowed'
  | 'bad-request'
  | 'rate-limited'
  | 'server'
  | 'network'
  | 'timeout'
  | 'protocol'
  | 'unknown-errcode'
  | 'no-credentials'
  | 'keychain-unreadable'
  | 'proxy-unreachable'
  | 'proxy-auth'
  | 'proxy-refused'
  | 'certificate-untrusted'
  | 'certificate-expired'
  | 'certificate-host'
  | 'unexpected';

export interface FaultWords {
  /** What happened, in plain words. */
  reason: string;
  /** What the user does about it (or that Screenpop deals with it by itself). */
  remedy: string;
}

export const FAULT_WORDS: Readonly<Record<FaultId, FaultWords>> = {
  'invalid-credentials': {
    reason: 'The service rejected the API key or secret.',
    remedy:
      'Check the API key and secret in Settings; if the secret is lost, regenerate the key in the admin console.',
  },
  'token-expired': {
    reason: 'The access token expired.',
    remedy:
      "Screenpop refreshes it by itself; if this keeps happening, check this computer's date and time.",
  },
  'insufficient-scope': {
    reason: 'The API key lacks a scope (permission) Screenpop needs.',
    remedy: 'In the admin console, edit the API key and grant the missing scope.',
  },
  'ip-not-allowed': {
    reason: "This computer's IP address is not on the API key's allowlist.",
    remedy:
      "In the admin console, edit the API key and add this computer's IP address to its allowlist.",
  },
  'bad-request': {
    reason: 'The service rejected a request from Screenpop as malformed.',
    remedy: 'Update Screenpop; if it persists, report it.',
  },
  'rate-limited': {
    reason: 'The service is limiting requests.',
    remedy: 'Screenpop waits and tries again by itself.',
  },
  server: {
    reason: 'The service is having trouble.',
    remedy: 'Screenpop tries again by itself.',
  },
  network: {
    reason: 'The service cannot be reached.',
    remedy:
      'Check the network connection and the service address in Settings; Screenpop tries again by itself.',
  },
  timeout: {
    reason: 'The service did not answer in time.',
    remedy: 'Check the network connection; Screenpop tries again by itself.',
  },
  protocol: {
    reason: 'The service gave an answer Screenpop does not understand.',
    remedy: 'Check the service address in Settings (a proxy or login page may be in the way).',
  },
  'unknown-errcode': {
    reason: 'The service answered with error code {errcode}.',
    remedy: "Screenpop tries again later; if it persists, contact the service's administrator.",
  },
  'no-credentials': {
    reason: 'No API key and secret are set up.',
    remedy: 'Open Settings and enter the API key and secret from the admin console.',
  },
  'keychain-unreadable': {
    reason: 'The API secret could not be read from the system keychain.',
    remedy:
      'Unlock the system keychain (or sign in again), then choose Try again now; if it keeps failing, enter the API secret again in Settings.',
  },
  'proxy-unreachable': {
    reason: 'The proxy {proxy} cannot be reached.',
    remedy:
      'Check the proxy setting (or ask your network administrator whether the proxy is up); Screenpop tries again by itself.',
  },
  'proxy-auth': {
    reason: 'The proxy {proxy} did not accept the proxy user name and password.',
    remedy:
      'Check the proxy user name and password with your network administrator, then choose Try again now.',
  },
  'proxy-refused': {
    reason: 'The proxy {proxy} refused the connection to {host}.',
    remedy:
      'Ask your network administrator to allow {host} through the proxy, then choose Try again now.',
  },
  'certificate-untrusted': {
    reason: "{host}'s certificate is not from an authority this computer trusts.",
    remedy:
      "If your organisation uses its own certificate authority (or a proxy that inspects TLS), your administrator installs it in the system's certificate store or sets it as Screenpop's CA file; then choose Try again now.",
  },
  'certificate-expired': {
    reason: "{host}'s certificate has expired or is not valid yet.",
    remedy:
      "Check this computer's date and time; if they are right, the server's administrator must renew its certificate. Then choose Try again now.",
  },
  'certificate-host': {
    reason: "The certificate {host} presented is for another name: it is not {host}'s.",
    remedy:
      'Check the address in Settings; if it is right, the server (or a proxy in the way) presents the wrong certificate: tell its administrator. Then choose Try again now.',
  },
  unexpected: {
    reason: 'Something unexpected went wrong.',
    remedy: 'Screenpop tries again by itself; if it keeps happening, see the log.',
  },
};

/** Sentences added to a fault's words where more is known about it. */
export type HintId =
  | 'scope-extension-list'
  | 'scope-events'
  | 'scope-no-call-events'
  | 'scope-missing'
  | 'scope-feature-off'
  | 'ip-reported'
  | 'ip-same-network'
  | 'ip-outbound'
  | 'ip-private'
  | 'ip-unknown';

export const HINT_WORDS: Readonly<Record<HintId, string>> = {
  'scope-extension-list': 'Signed in, but the key may not list extensions.',
  'scope-events': 'The key may not receive event codes {codes}.',
  'scope-no-call-events': 'No call events will arrive, so nothing will pop.',
  'scope-missing': 'Missing: {scopes}.',
  'scope-feature-off': '{feature} is off: the key may not receive event code {code}.',
  'ip-reported': "This computer's address, as the service sees it, is {ip}.",
  'ip-same-network': 'The service is on this network, so the address it sees is {ip}.',
  'ip-outbound': "This computer's outbound address is {ip}.",
  'ip-private':
    'Locally this computer is {ip}, a private address: the allowlist needs its public IP as the service sees it (your network administrator knows it).',
  'ip-unknown': "The allowlist needs this computer's public IP as the service sees it.",
};

/** A template from the tables above with its `{name}` values filled in. */
function words(template: string, values: Readonly<Record<string, string | number>> = {}) {
  return template.replace(/\{(\w+)\}/g, (all, name: string) =>
    name in values ? String(values[name]) : all,
  );
}

/** A hint's sentence with its values filled in. */
export function hint(id: HintId, values?: Readonly<Record<string, string | number>>): string {
  return words(HINT_WORDS[id], values);
}

const KIND_BY_ERRCODE: ReadonlyMap<number, ServiceErrorKind> = new Map<number, ServiceErrorKind>([
  [ERRCODE.invalidCredentials, 'credentials'],
  [ERRCODE.tokenExpired, 'expired'],
  [ERRCODE.insufficientScope, 'scope'],
  [ERRCODE.ipNotAllowed, 'ip'],
  [ERRCODE.badRequest, 'bad-request'],
  [ERRCODE.rateLimited, 'rate-limit'],
]);

/**
 * The service's `{"errcode": N, "errmsg": "..."}` in an answer's body (JSON text, or already
 * parsed), or undefined when the body carries no integer errcode.
 */
export function readErrcode(body: unknown): { errcode: number; errmsg?: string } | undefined {
  let value = body;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { errcode, errmsg } = value as { errcode?: unknown; errmsg?: unknown };
  if (typeof errcode !== 'number' || !Number.isInteger(errcode)) return undefined;
  return typeof errmsg === 'string' ? { errcode, errmsg } : { errcode };
}

/** The kind of error a known errcode stands for; undefined for codes the service does not publish. */
export function kindOfErrcode(errcode: number): ServiceErrorKind | undefined {
  return KIND_BY_ERRCODE.get(errcode);
}

const FAULT_BY_KIND: Readonly<Record<ServiceErrorKind, FaultId>> = {
  credentials: 'invalid-credentials',
  expired: 'token-expired',
  scope: 'insufficient-scope',
  ip: 'ip-not-allowed',
  'rate-limit': 'rate-limited',
  server: 'server',
  network: 'network',
  timeout: 'timeout',
  'bad-request': 'bad-request',
  protocol: 'protocol',
  proxy: 'proxy-refused',
  certificate: 'certificate-untrusted',
};

/** Kinds a person must fix (the key, its scopes, the allowlist): no retry until they act. */
const NEEDS_USER: ReadonlySet<ServiceErrorKind> = new Set<ServiceErrorKind>([
  'credentials',
  'scope',
  'ip',
  // Neither fixes itself by retrying; a silent retry loop would only hide it.
  'proxy',
  'certificate',
]);

/** True for kinds a person must fix; retrying by ourselves would only get an IP blocked. */
export function needsUser(kind: ServiceErrorKind): boolean {
  return NEEDS_USER.has(kind);
}

/** Kinds where the same request may succeed later without anyone changing anything. */
const RETRYABLE: ReadonlySet<ServiceErrorKind> = new Set<ServiceErrorKind>([
  'expired',
  'rate-limit',
  'server',
  'network',
  'timeout',
  // An answer we cannot read is usually a captive portal or a proxy page: worth trying later.
  'protocol',
]);

export interface ServiceErrorInit {
  kind: ServiceErrorKind;
  message: string;
  errcode?: number;
  httpStatus?: number;
  /** Which words describe it; by default those of its kind. */
  fault?: FaultId;
  retryAfterMs?: number;
  cause?: unknown;
  /** Values for the words' `{name}` placeholders (the host, the proxy), never secrets. */
  values?: Readonly<Record<string, string>>;
}

export class ServiceError extends Error {
  readonly kind: ServiceErrorKind;
  readonly fault: FaultId;
  readonly errcode?: number;
  readonly httpStatus?: number;
  readonly retryAfterMs?: number;
  readonly retryable: boolean;
  readonly values?: Readonly<Record<string, string>>;

  constructor(init: ServiceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ServiceError';
    this.kind = init.kind;
    this.fault = init.fault ?? FAULT_BY_KIND[init.kind];
    if (init.errcode !== undefined) this.errcode = init.errcode;
    if (init.httpStatus !== undefined) this.httpStatus = init.httpStatus;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    this.retryable = RETRYABLE.has(init.kind);
    if (init.values !== undefined) this.values = init.values;
  }

  /** What the user does about it, in plain words (the same as `describeError(this).remedy`). */
  get remedy(): string {
    return describeError(this).remedy;
  }

  /** The same error with its message passed through `scrub` (e.g. SecretRegistry.scrub). */
  scrubbed(scrub: (text: string) => string): ServiceError {
    const message = scrub(this.message);
    if (message === this.message) return this;
    return new ServiceError({
      kind: this.kind,
      message,
      fault: this.fault,
      ...(this.errcode !== undefined && { errcode: this.errcode }),
      ...(this.httpStatus !== undefined && { httpStatus: this.httpStatus }),
      ...(this.retryAfterMs !== undefined && { retryAfterMs: this.retryAfterMs }),
      ...(this.values !== undefined && { values: this.values }),
    });
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}

/** A fault in the words the user sees, with what a program needs to act on it. */
export interface ErrorDescription extends FaultWords {
  fault: FaultId;
  /** The service's errcode, when the service gave one. */
  errcode?: number;
  /** A person must act (fix the key, a scope, the allowlist, the keychain); retrying will not help. */
  needsUser: boolean;
}

/** The words for an errcode the service sent (in an answer, a frame, a refused handshake). */
export function describeErrcode(errcode: number): ErrorDescription {
  const kind = kindOfErrcode(errcode);
  const fault = kind ? FAULT_BY_KIND[kind] : 'unknown-errcode';
  return {
    fault,
    reason: words(FAULT_WORDS[fault].reason, { errcode }),
    remedy: words(FAULT_WORDS[fault].remedy, { errcode }),
    errcode,
    needsUser: kind !== undefined && needsUser(kind),
  };
}

/**
 * Anything thrown or rejected, in the words the user sees: a ServiceError by its fault (and its
 * errcode when the service gave one), anything else as an unexpected error (a bug, logged where
 * it happened).
 */
export function describeError(error: unknown): ErrorDescription {
  if (!isServiceError(error)) {
    return { fault: 'unexpected', ...FAULT_WORDS.unexpected, needsUser: false };
  }
  const values: Record<string, string | number> = {
    ...error.values,
    ...(error.errcode !== undefined && { errcode: error.errcode }),
  };
  return {
    fault: error.fault,
    reason: words(FAULT_WORDS[error.fault].reason, values),
    remedy: words(FAULT_WORDS[error.fault].remedy, values),
    ...(error.errcode !== undefined && { errcode: error.errcode }),
    needsUser: needsUser(error.kind),
  };
}
