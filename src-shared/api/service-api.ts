/**
 * Where the service's interface lives under a tenant's base address (docs/wire-protocol.md sections
 * 2 to 5): the one list of its paths, for the app's client and socket, the relay's token check and
 * the simulator that plays the service.
 */
export const API_PREFIX = '/openapi/v1.0';

export const API_PATHS = {
  getToken: `${API_PREFIX}/get_token`,
  refreshToken: `${API_PREFIX}/refresh_token`,
  /** Yeastar P-Series only (*Revoke Access Token*): `GET del_token?access_token=`. */
  delToken: `${API_PREFIX}/del_token`,
  extensionList: `${API_PREFIX}/extension/list`,
  /** Yeastar P-Series only (docs/phone-systems/yeastar-p-series.md section 9): the PBX's own lists. */
  queueList: `${API_PREFIX}/queue/list`,
  ringGroupList: `${API_PREFIX}/ringgroup/list`,
  companyContactList: `${API_PREFIX}/company_contact/list`,
  phonebookList: `${API_PREFIX}/phonebook/list`,
  subscribe: `${API_PREFIX}/subscribe`,
  /**
   * Yeastar P-Series only (docs/phone-systems/yeastar-p-series.md section 10, "Call control"):
   * *Make a Call*, *Transfer a Call*, *Hang up a Call*, *Query Calls*.
   */
  callDial: `${API_PREFIX}/call/dial`,
  callTransfer: `${API_PREFIX}/call/transfer`,
  callHangup: `${API_PREFIX}/call/hangup`,
  callQuery: `${API_PREFIX}/call/query`,
  /** *uaCSTA - Accept a Call* / *- Refuse a Call* (section 10, "Remote answer"). */
  uacstaAccept: `${API_PREFIX}/uacsta_call/accept`,
  uacstaRefuse: `${API_PREFIX}/uacsta_call/refuse`,
} as const;

export type ApiPath = (typeof API_PATHS)[keyof typeof API_PATHS];

/**
 * The address of `path` for a tenant: its base address's path (`https://pbx.example/t/acme`) kept,
 * query and fragment dropped; `ws: true` turns http(s) into ws(s).
 */
export function serviceUrl(baseUrl: string, path: ApiPath, options: { ws?: boolean } = {}): URL {
  const url = new URL(baseUrl);
  if (options.ws) {
    if (url.protocol === 'http:') url.protocol = 'ws:';
    else if (url.protocol === 'https:') url.protocol = 'wss:';
    else throw new Error(`base address must be http(s), not ${url.protocol}`);
  }
  url.pathname = url.pathname.replace(/\/+$/, '') + path;
  url.search = '';
  url.hash = '';
  return url;
}
