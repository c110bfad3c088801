import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Envelope } from './types.ts';
import { bearerToken } from './credentials.ts';
import { ERR, errmsgFor, statusFor } from './errors.ts';
import { SIGNATURE_HEADER, signBody } from './webhook-signature.ts';
import type { PhoneSystem } from '../src-shared/phone-systems/names.ts';

/**
 * What the simulator says differently as each phone system: where a request's token is, how an
 * error is answered, how an event is framed, how a webhook is signed. The routes, the socket hub
 * and the dispatcher keep one logic and ask the dialect for the words. Yeastar P-Series as
 * docs/phone-systems/yeastar-p-series.md describes it (facts from the vendor's guide, and our
 * assumptions where it is silent, each a line here).
 */
export type SimPhoneSystem = PhoneSystem;

export interface ErrorAnswer {
  status: number;
  body: string;
}

export interface SimDialect {
  readonly id: SimPhoneSystem;
  /** The access token of an API request or a socket handshake, if any. */
  token(req: IncomingMessage): string | undefined;
  /**
   * A service error (the simulator's internal code, ERR in errors.ts) as this system answers an
   * API call `operation` (get_token, refresh_token, extension/list, ...).
   */
  apiError(errcode: number, operation: string, errmsg?: string): ErrorAnswer;
  /** The same for a refused socket handshake (never a 101). */
  handshakeError(errcode: number): ErrorAnswer;
  /** A control frame on the socket: an internal code in this system's words. */
  frame(errcode: number, errmsg?: string): string;
  /** An event as this system frames it on the socket and in a webhook body. */
  encode(envelope: Envelope): string;
  /** The headers that sign a webhook body. */
  webhookHeaders(secret: string, body: Buffer): Record<string, string>;
  /** Whether a key's `event:<code>` scopes decide what a socket receives. */
  eventScopes: boolean;
}

function body(errcode: number, errmsg = errmsgFor(errcode), extra: object = {}): string {
  return JSON.stringify({ errcode, errmsg, ...extra });
}

export const STANDARD_DIALECT: SimDialect = {
  id: 'standard',
  token(req) {
    if (req.headers.authorization) return bearerToken(req.headers.authorization);
    // Some real platforms take the token in the URL; the simulator accepts it, our client never sends it.
    return queryToken(req);
  },
  apiError: (errcode, _operation, errmsg) => ({
    status: statusFor(errcode),
    body: body(errcode, errmsg),
  }),
  handshakeError: (errcode) => ({ status: statusFor(errcode), body: body(errcode) }),
  frame: (errcode, errmsg) => body(errcode, errmsg),
  encode: (envelope) => JSON.stringify(envelope),
  webhookHeaders: (secret, payload) => ({ [SIGNATURE_HEADER]: signBody(secret, payload) }),
  eventScopes: true,
};

function queryToken(req: IncomingMessage): string | undefined {
  const q = (req.url ?? '').indexOf('?');
  if (q < 0) return undefined;
  return new URLSearchParams((req.url ?? '').slice(q + 1)).get('access_token') ?? undefined;
}

/** Yeastar's errcodes ("Error Code and Error Message"), for the simulator's internal ones. */
const YS = {
  failure: [-1, 'FAILURE'],
  interfaceNotExisted: [10001, 'INTERFACE NOT EXISTED'],
  tokenExpired: [10004, 'TOKEN EXPIRED'],
  accessDenied: [10005, 'ACCESS DENIED'],
  parameterError: [40002, 'PARAMETER ERROR'],
  maxLimitationExceeded: [60002, 'MAX LIMITATION EXCEEDED'],
  ipForbidden: [70087, 'IP FORBIDDEN'],
} as const;

/** The Yeastar code and message for an internal one (HTTP-level faults keep theirs). */
function yeastarCode(errcode: number, operation: string): readonly [number, string] {
  switch (errcode) {
    case ERR.OK:
      return [0, 'SUCCESS'];
    case ERR.INVALID_KEY:
      // "Response Result": a refused get_token is -1 FAILURE naming "username or password"; a
      // token of a revoked key is simply no longer a token.
      return operation === 'get_token' ? YS.failure : YS.tokenExpired;
    case ERR.TOKEN_EXPIRED:
      // Assumption: an unknown, spent or expired refresh token is a plain FAILURE.
      return operation === 'refresh_token' ? YS.failure : YS.tokenExpired;
    case ERR.INSUFFICIENT_SCOPE:
      return YS.accessDenied;
    case ERR.IP_NOT_ALLOWED:
      return YS.ipForbidden;
    case ERR.BAD_REQUEST:
      return YS.parameterError;
    case ERR.NOT_FOUND:
    case ERR.METHOD_NOT_ALLOWED:
      return YS.interfaceNotExisted;
    case ERR.TOKEN_LIMIT:
      // Assumption (docs section 2): the guide names no errcode for its 8-token limit; a public
      // integration reads 60002 ("the existing quantity has reached the limit") as that refusal.
      return YS.maxLimitationExceeded;
    default:
      return [errcode, errmsgFor(errcode)];
  }
}

/** Serial number of a simulated PBX (the `sn` of its reports), from its tenant. */
export function simSerial(tenant: string): string {
  return `SIM${tenant.toUpperCase().replace(/[^A-Z0-9]/g, '')}`.slice(0, 32);
}

export const YEASTAR_DIALECT: SimDialect = {
  id: 'yeastar-p-series',
  // "Request Structure": the token is the access_token query parameter; a header is not read.
  token: queryToken,
  apiError(errcode, operation, errmsg) {
    const [code, message] = yeastarCode(errcode, operation);
    // HTTP-level faults (429, 5xx injected by failHttp) keep their status; the PBX's own errors are
    // answered 200 with the errcode (assumption: the guide publishes no statuses).
    const status = errcode >= ERR.BAD_REQUEST && code === errcode ? statusFor(errcode) : 200;
    const extra =
      code === -1 && operation === 'get_token'
        ? { invalid_param_list: [{ field: 'username or password', value: 'error' }] }
        : {};
    return { status, body: body(code, code === errcode && errmsg ? errmsg : message, extra) };
  },
  handshakeError(errcode) {
    const [code, message] = yeastarCode(errcode, 'subscribe');
    // Assumption: a refused handshake is 401 for the token, 403 for the address.
    const status =
      code === YS.ipForbidden[0] ? 403 : code === YS.tokenExpired[0] ? 401 : statusFor(errcode);
    return { status, body: body(code, message) };
  },
  frame(errcode, errmsg) {
    const [code, message] = yeastarCode(errcode, 'subscribe');
    return body(code, code === errcode && errmsg ? errmsg : message);
  },
  // The event pages: {"type":<id>,"sn":"<serial>","msg":"<payload as a JSON string>"}.
  encode: (envelope) =>
    JSON.stringify({
      type: envelope.event,
      sn: simSerial(envelope.tenant),
      msg: JSON.stringify(envelope.data),
    }),
  // "Monitor Events via Webhook": X-Signature is the Base64 of HMAC-SHA256(secret, raw body).
  webhookHeaders: (secret, payload) => ({
    'X-Signature': createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(payload)
      .digest('base64'),
  }),
  eventScopes: false,
};

export function simDialect(system: SimPhoneSystem | undefined): SimDialect {
  return system === 'yeastar-p-series' ? YEASTAR_DIALECT : STANDARD_DIALECT;
}
