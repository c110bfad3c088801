/**
 * Yeastar P-Series (docs/phone-systems/yeastar-p-series.md): the access token in the query of
 * every request and of the socket's URL, the vendor's report frames decoded by
 * src-shared/phone-systems/yeastar-p-series.ts, its own errcodes, no voicemail or SMS events.
 */
import {
  YEASTAR_ERRCODE,
  YEASTAR_EVENT,
  YeastarEventDecoder,
} from '../../../src-shared/phone-systems/yeastar-p-series.ts';
import type { ErrcodeReader } from '../../../src-shared/service-errors.ts';
import type { PhoneSystemWire, StreamDialect } from './phone-system.ts';
import { subscribeUrl } from './standard.ts';

/**
 * The P-Series errcodes (section 6 of the doc, from "Error Code and Error Message"), as what the
 * app does about them and in the system's own terms.
 */
export const yeastarErrcodes: ErrcodeReader = (errcode, operation) => {
  switch (errcode) {
    case YEASTAR_ERRCODE.failure:
      // get_token's refusal of the Client ID or Secret ("Response Result"); a refused refresh
      // token is answered by a new get_token.
      if (operation === 'get_token') return { kind: 'credentials', fault: 'ys-credentials' };
      if (operation === 'refresh_token') return { kind: 'expired' };
      return { kind: 'server' };
    case YEASTAR_ERRCODE.internalServerError:
      return { kind: 'server' };
    case YEASTAR_ERRCODE.interfaceNotExisted:
      return { kind: 'unsupported', fault: 'ys-api-off' };
    case YEASTAR_ERRCODE.apiVersionOutOfMaintenance:
    case YEASTAR_ERRCODE.apiVersionUnsupported:
      return { kind: 'unsupported', fault: 'ys-api-version' };
    case YEASTAR_ERRCODE.tokenExpired:
      return { kind: 'expired' };
    case YEASTAR_ERRCODE.accessDenied:
    case YEASTAR_ERRCODE.actionForbidden:
      return { kind: 'scope', fault: 'ys-access-denied' };
    case YEASTAR_ERRCODE.parameterSyntaxError:
    case YEASTAR_ERRCODE.parameterError:
    case YEASTAR_ERRCODE.duplicateKeyValue:
    case YEASTAR_ERRCODE.fileSizeExceeded:
      return { kind: 'bad-request' };
    case YEASTAR_ERRCODE.accountIpBlocked:
      return { kind: 'ip', fault: 'ys-ip-blocked' };
    case YEASTAR_ERRCODE.ipForbidden:
      return { kind: 'ip', fault: 'ys-ip-forbidden' };
    default:
      return undefined;
  }
};

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
};

export const YEASTAR_P_SERIES_WIRE: PhoneSystemWire = {
  id: 'yeastar-p-series',
  api: { tokenIn: 'query', errcodes: yeastarErrcodes },
  stream: YEASTAR_STREAM,
  callCode: YEASTAR_EVENT.callState,
  featureCodes: {
    voicemail: null,
    sms: null,
    trunk: YEASTAR_EVENT.trunkRegistration,
    presence: YEASTAR_EVENT.presence,
  },
};
