/**
 * The service's `errcode` values, alone in this file so that the relay (which needs only the codes)
 * loads none of the desktop's words and their i18n library (test/relay/package.test.ts).
 */
/** docs/wire-protocol.md section 4. */
export const ERRCODE = {
  ok: 0,
  invalidCredentials: 10001,
  tokenExpired: 10002,
  insufficientScope: 10003,
  ipNotAllowed: 10004,
  badRequest: 40000,
  rateLimited: 42900,
} as const;
