/**
 * Yeastar P-Series (docs/phone-systems/yeastar-p-series.md): the access token in the query of
 * every request and of the socket's URL, the vendor's report frames decoded by
 * src-shared/phone-systems/yeastar-p-series.ts, its own errcodes, voicemail from its call records (30012), no SMS events.
 */
import {
  YEASTAR_ERRCODE,
  YEASTAR_EVENT,
  YeastarEventDecoder,
  yeastarErrcodes,
} from '../phone-systems/yeastar-p-series.ts';
import { decodeUacstaReport, YEASTAR_UACSTA_EVENT } from '../phone-systems/yeastar-uacsta.ts';
import type { PhoneSystemWire, StreamDialect } from './phone-system.ts';
import { ERRCODE, type ErrcodeContext } from '../api/service-errors.ts';
import { subscribeUrl } from './standard.ts';

// The errcode table lives beside the frames: the relay reads it too (it may not import src-main).
export { yeastarErrcodes };

/**
 * A Yeastar P-Series errcode as the standard service's, through the one table of that system's
 * codes (yeastarErrcodes): a token refused, an address refused, a permission missing; any other
 * code is none of those (-1).
 */
export function yeastarAsStandard(errcode: number, context?: ErrcodeContext): number {
  if (errcode === YEASTAR_ERRCODE.ok) return ERRCODE.ok;
  switch (yeastarErrcodes(errcode, context)?.kind) {
    case 'expired':
    case 'credentials':
      return ERRCODE.tokenExpired;
    case 'ip':
      return ERRCODE.ipNotAllowed;
    case 'scope':
      return ERRCODE.insufficientScope;
    default:
      return -1;
  }
}

/** The socket's address with the token where the guide puts it ("Monitor Events via WebSocket"). */
export function yeastarSubscribeUrl(baseUrl: string, token: string): string {
  const url = new URL(subscribeUrl(baseUrl));
  url.searchParams.set('access_token', token);
  return url.toString();
}

export const YEASTAR_STREAM: StreamDialect = {
  url: yeastarSubscribeUrl,
  publicUrl: (baseUrl) => subscribeUrl(baseUrl),
  headers: (_token, userAgent) => ({ 'User-Agent': userAgent }),
  subscribe: (topics) => JSON.stringify({ topic_list: topics }),
  heartbeat: 'heartbeat',
  heartbeatResponse: 'heartbeat response',
  errcodes: yeastarErrcodes,
  // Assumption (doc section 4): a bare 401 is the token, a bare 403 the API's IP restriction.
  refusedStatus: { 401: YEASTAR_ERRCODE.tokenExpired, 403: YEASTAR_ERRCODE.ipForbidden },
  decoder: () => {
    const decoder = new YeastarEventDecoder();
    return (text, receivedAt, nowMonotonic) => decoder.decode(text, receivedAt, nowMonotonic);
  },
  // (30020) uaCSTA Call (doc section 10, "Remote answer").
  remoteAnswer: { code: YEASTAR_UACSTA_EVENT, decode: decodeUacstaReport },
};

export const YEASTAR_P_SERIES_WIRE: PhoneSystemWire = {
  id: 'yeastar-p-series',
  vendorName: 'Yeastar P-Series',
  // *Revoke Access Token*: GET del_token?access_token= (docs section 2).
  api: {
    tokenIn: 'query',
    errcodes: yeastarErrcodes,
    revokes: true,
    asStandard: yeastarAsStandard,
    // Queues, ring groups, company contacts (doc section 9).
    pbxLists: true,
    // Make, transfer, hang up and query calls (doc section 10).
    calls: true,
  },
  stream: YEASTAR_STREAM,
  // "Monitor Events via Webhook" (doc section 7): X-Signature, the Base64 of the HMAC; its reports.
  webhook: {
    signatureHeader: 'x-signature',
    signatureForm: 'base64',
    body: 'report',
    // "Monitor Events via Webhook": the PBX generates each webhook's Secret, 32 characters.
    generatedSecret: {
      chars: 32,
      shownAt: 'shown beside the webhook in the PBX (Integrations > API > Webhook Event Push)',
    },
    // The vendor's X-Signature has no time in it: a captured delivery stays valid for ever.
    replayableFrom: 'the PBX',
  },
  callCode: YEASTAR_EVENT.callState,
  // The call record and the failure end a call's rings (doc section 5).
  callEndCodes: [YEASTAR_EVENT.callRecord, YEASTAR_EVENT.callFailed],
  // Its records become the core's CALL_RECORD (History's talk time), through the relay too.
  callRecords: true,
  featureCodes: {
    // A voicemail is a call record (30012) whose status is VOICEMAIL (doc section 5).
    voicemail: YEASTAR_EVENT.callRecord,
    sms: null,
    trunk: YEASTAR_EVENT.trunkRegistration,
    presence: YEASTAR_EVENT.presence,
  },
  // Doc section 8: one API application per desktop (8 tokens), Call Status Monitor on trunks, and
  // which models have the API at all.
  setupChecks: {
    always: ['status.test.ys-one-application', 'status.test.ys-call-status-monitor'],
    apiMissing: 'status.test.ys-api-models',
  },
  // The API's IP restriction is the PBX's (Integrations > API), not an admin console's.
  ipToAllowMessage: 'settings.test.ip-yeastar',
};
