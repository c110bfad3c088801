import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERRCODE } from '../src-shared/api/errcodes.ts';

/**
 * Error codes and their HTTP statuses (docs/wire-protocol.md section 4). Every JSON answer carries errcode
 * and errmsg; HTTP-level errcodes are the status times 100 (40000, 42900, 50300, ...).
 */
export const ERR = {
  OK: ERRCODE.ok,
  INVALID_KEY: ERRCODE.invalidCredentials,
  TOKEN_EXPIRED: ERRCODE.tokenExpired,
  INSUFFICIENT_SCOPE: ERRCODE.insufficientScope,
  IP_NOT_ALLOWED: ERRCODE.ipNotAllowed,
  BAD_REQUEST: ERRCODE.badRequest,
  NOT_FOUND: 40400,
  METHOD_NOT_ALLOWED: 40500,
  TOO_MANY_REQUESTS: ERRCODE.rateLimited,
  /**
   * Added: the application holds all the tokens a token rule allows (credentials.ts TokenRule).
   * Yeastar's dialect answers it as 60002 MAX LIMITATION EXCEEDED; the standard service has no
   * such rule, and answers it as HTTP 409.
   */
  TOKEN_LIMIT: 40900,
} as const;

/** The service's own `errmsg` words (the simulator's choice; clients never show them as they are). */
const MESSAGES: Record<number, string> = {
  [ERR.OK]: 'SUCCESS',
  [ERR.INVALID_KEY]: 'INVALID KEY OR SECRET',
  [ERR.TOKEN_EXPIRED]: 'TOKEN EXPIRED',
  [ERR.INSUFFICIENT_SCOPE]: 'INSUFFICIENT SCOPE',
  [ERR.IP_NOT_ALLOWED]: 'IP NOT ALLOWED',
  [ERR.BAD_REQUEST]: 'BAD REQUEST',
  [ERR.NOT_FOUND]: 'NOT FOUND',
  [ERR.METHOD_NOT_ALLOWED]: 'METHOD NOT ALLOWED',
  [ERR.TOO_MANY_REQUESTS]: 'TOO MANY REQUESTS',
  [ERR.TOKEN_LIMIT]: 'TOO MANY TOKENS',
  50000: 'INTERNAL SERVER ERROR',
  50200: 'BAD GATEWAY',
  50300: 'SERVICE UNAVAILABLE',
};

export function statusFor(errcode: number): number {
  if (errcode === ERR.OK) return 200;
  if (errcode === ERR.INVALID_KEY || errcode === ERR.TOKEN_EXPIRED) return 401;
  if (errcode === ERR.INSUFFICIENT_SCOPE || errcode === ERR.IP_NOT_ALLOWED) return 403;
  if (errcode >= ERR.BAD_REQUEST) return Math.floor(errcode / 100); // HTTP-level codes
  return 400;
}

export function errmsgFor(errcode: number): string {
  return MESSAGES[errcode] ?? 'ERROR';
}

/** A service error thrown inside a route and turned into its JSON answer. */
export class ApiError extends Error {
  readonly errcode: number;
  readonly errmsg: string;
  constructor(errcode: number, errmsg = errmsgFor(errcode)) {
    super(errmsg);
    this.errcode = errcode;
    this.errmsg = errmsg;
  }
}

export function errorBody(errcode: number, errmsg = errmsgFor(errcode)): string {
  return JSON.stringify({ errcode, errmsg });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  errcode: number,
  errmsg?: string,
  headers?: Record<string, string>,
): void {
  sendJson(res, statusFor(errcode), errorBody(errcode, errmsg), headers);
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/**
 * A refused WebSocket handshake is a plain HTTP response on the raw socket, then the socket closes.
 * `refusal` is an errcode (answered as the standard service does) or a phone system's answer.
 */
export function rejectUpgrade(
  socket: Duplex,
  refusal: number | { status: number; body: string },
  headers: Record<string, string> = {},
): void {
  const { status, body } =
    typeof refusal === 'number'
      ? { status: statusFor(refusal), body: errorBody(refusal) }
      : refusal;
  const lines = [
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  if (socket.writable) socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
  else socket.destroy();
}

/** Reads a JSON object body (at most 64 KiB); anything else is a 40000. */
export async function readJsonBody(
  req: IncomingMessage,
  limit = 64 * 1024,
): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new ApiError(ERR.BAD_REQUEST, 'BODY TOO LARGE');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError(ERR.BAD_REQUEST, 'BODY IS NOT JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ApiError(ERR.BAD_REQUEST, 'BODY MUST BE A JSON OBJECT');
  return parsed as Record<string, unknown>;
}
