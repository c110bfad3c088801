/**
 * The standard service's wire format (docs/wire-protocol.md): the bearer token in the Authorization
 * header, the core's own envelopes on the stream, its errcodes and scopes.
 */
import { ERRCODE, standardErrcodes } from '../api/service-errors.ts';
import { API_PATHS, serviceUrl } from '../api/service-api.ts';
import { CALL_STATE_CHANGED, decodeStandardFrame } from './envelope.ts';
import { FEATURE_CODES } from './event-codes.ts';
import type { PhoneSystemWire, StreamDialect } from './phone-system.ts';

/** ws:// or wss:// address of the subscribe endpoint for a tenant's http(s) base address. */
export function subscribeUrl(baseUrl: string): string {
  return serviceUrl(baseUrl, API_PATHS.subscribe, { ws: true }).toString();
}

export const STANDARD_STREAM: StreamDialect = {
  url: (baseUrl) => subscribeUrl(baseUrl),
  publicUrl: (baseUrl) => subscribeUrl(baseUrl),
  // The token only in the header, never in a URL (docs/wire-protocol.md section 5).
  headers: (token, userAgent) => ({ Authorization: `Bearer ${token}`, 'User-Agent': userAgent }),
  subscribe: (topics) => JSON.stringify({ topic_list: topics }),
  heartbeat: 'heartbeat',
  heartbeatResponse: 'heartbeat response',
  errcodes: standardErrcodes,
  // docs/wire-protocol.md section 5: a 403 without a JSON body is taken as 10004.
  refusedStatus: { 401: ERRCODE.tokenExpired, 403: ERRCODE.ipNotAllowed },
  partialSubscribe: ERRCODE.insufficientScope,
  decoder: () => decodeStandardFrame,
};

export const STANDARD_WIRE: PhoneSystemWire = {
  id: 'standard',
  api: { tokenIn: 'authorization', errcodes: standardErrcodes, asStandard: (errcode) => errcode },
  stream: STANDARD_STREAM,
  // docs/wire-protocol.md section 7: X-Service-Signature: sha256=<hex>, the envelope as body.
  webhook: {
    signatureHeader: 'x-service-signature',
    signatureForm: 'sha256-hex',
    body: 'envelope',
  },
  callCode: CALL_STATE_CHANGED,
  featureCodes: FEATURE_CODES,
};
