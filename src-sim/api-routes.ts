import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Extension, SimStats } from './types.ts';
import type { Credentials } from './credentials.ts';
import { SCOPE_EXTENSION_READ, normalizeIp } from './credentials.ts';
import { ApiError, ERR, readJsonBody, sendJson } from './errors.ts';
import { API_PATHS, API_PREFIX as SERVICE_API_PREFIX } from '../src-shared/api/service-api.ts';
import type { SimDialect } from './phone-system.ts';
import type { SimPbxLists } from './directory.ts';

/** The service's HTTP API under /openapi/v1.0/ (docs/wire-protocol.md sections 2 to 4). */
export const API_PREFIX = `${SERVICE_API_PREFIX}/`;
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

export interface HttpFault {
  status: number;
  retryAfterSec?: number;
}

export interface ApiRoutesOptions {
  credentials: Credentials;
  stats: SimStats;
  extensions: () => ReadonlyArray<Extension>;
  /** The next injected API failure, if any. */
  takeApiFault: () => HttpFault | null;
  /** The phone system's words: where the token is, how errors are answered. */
  dialect: SimDialect;
  /** A Yeastar P-Series PBX's own lists (queues, ring groups, contacts); absent elsewhere. */
  pbxLists?: () => SimPbxLists;
}

/**
 * The Yeastar PBX's lists (docs/phone-systems/yeastar-p-series.md section 9): the answer's list key
 * (the queue list says `queue_list`, the others `data`) and the largest page_size taken (the
 * company contact list's is the guide's 10,000; the others are not published: 100, as the
 * extension list's).
 */
const PBX_LISTS: Record<string, { key: string; maxPageSize: number; of: keyof SimPbxLists }> = {
  [API_PATHS.queueList]: { key: 'queue_list', maxPageSize: MAX_PAGE_SIZE, of: 'queues' },
  [API_PATHS.ringGroupList]: { key: 'data', maxPageSize: MAX_PAGE_SIZE, of: 'ringGroups' },
  [API_PATHS.companyContactList]: { key: 'data', maxPageSize: 10_000, of: 'companyContacts' },
  [API_PATHS.phonebookList]: { key: 'data', maxPageSize: MAX_PAGE_SIZE, of: 'phonebooks' },
};

/** A positive integer query parameter, or the default when absent; anything else is a 40000. */
function intParam(params: URLSearchParams, name: string, fallback: number, max: number): number {
  const raw = params.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d{1,9}$/.test(raw))
    throw new ApiError(ERR.BAD_REQUEST, `${name} must be a positive integer`);
  const n = Number(raw);
  if (n < 1 || n > max) throw new ApiError(ERR.BAD_REQUEST, `${name} must be between 1 and ${max}`);
  return n;
}

export async function handleApi(
  req: IncomingMessage,
  res: ServerResponse,
  opts: ApiRoutesOptions,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim.invalid');
  const path = url.pathname;
  const ip = normalizeIp(req.socket.remoteAddress);
  const { credentials, stats, dialect } = opts;
  // The call's name (get_token, extension/list): some phone systems answer its errors their way.
  const operation = path.slice(SERVICE_API_PREFIX.length + 1);
  const fail = (errcode: number, errmsg?: string, headers: Record<string, string> = {}) => {
    const answer = dialect.apiError(errcode, operation, errmsg);
    sendJson(res, answer.status, answer.body, headers);
  };
  try {
    if (path === API_PATHS.getToken) stats.getToken++;
    else if (path === API_PATHS.refreshToken) stats.refreshToken++;
    else if (path === API_PATHS.delToken) stats.delToken++;
    else if (path === API_PATHS.extensionList) stats.extensionList++;

    const fault = opts.takeApiFault();
    if (fault) {
      const headers: Record<string, string> = {};
      if (fault.retryAfterSec !== undefined) headers['Retry-After'] = String(fault.retryAfterSec);
      req.resume();
      fail(fault.status * 100, undefined, headers);
      return;
    }

    const method = req.method ?? 'GET';
    if (path === API_PATHS.getToken || path === API_PATHS.refreshToken) {
      if (method !== 'POST') throw new ApiError(ERR.METHOD_NOT_ALLOWED);
      const body = await readJsonBody(req);
      // refresh_token needs no bearer header: an Authorization header, if sent, is ignored.
      const pair =
        path === API_PATHS.getToken
          ? credentials.exchange(body.username, body.password, ip)
          : credentials.refreshPair(body.refresh_token, ip);
      sendJson(res, 200, pair);
      return;
    }
    if (path === API_PATHS.delToken && dialect.id === 'yeastar-p-series') {
      // *Revoke Access Token*: GET, the token in the query, answered {"errcode":0,"errmsg":"SUCCESS"}.
      if (method !== 'GET') throw new ApiError(ERR.METHOD_NOT_ALLOWED);
      req.resume();
      credentials.revokeAccess(dialect.token(req), ip);
      sendJson(res, 200, { errcode: 0, errmsg: 'SUCCESS' });
      return;
    }
    if (path === API_PATHS.extensionList) {
      if (method !== 'GET') throw new ApiError(ERR.METHOD_NOT_ALLOWED);
      req.resume();
      const access = credentials.authenticate(dialect.token(req), ip);
      if (!credentials.hasScope(access.key, SCOPE_EXTENSION_READ))
        throw new ApiError(ERR.INSUFFICIENT_SCOPE);
      const page = intParam(url.searchParams, 'page', 1, 1_000_000_000);
      const pageSize = intParam(url.searchParams, 'page_size', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
      const all = opts.extensions();
      const data = all.slice((page - 1) * pageSize, page * pageSize);
      sendJson(res, 200, { errcode: 0, errmsg: 'SUCCESS', total_number: all.length, data });
      return;
    }
    const pbxList = opts.pbxLists && Object.hasOwn(PBX_LISTS, path) ? PBX_LISTS[path] : undefined;
    if (pbxList && opts.pbxLists) {
      if (method !== 'GET') throw new ApiError(ERR.METHOD_NOT_ALLOWED);
      req.resume();
      credentials.authenticate(dialect.token(req), ip);
      const page = intParam(url.searchParams, 'page', 1, 1_000_000_000);
      const pageSize = intParam(
        url.searchParams,
        'page_size',
        DEFAULT_PAGE_SIZE,
        pbxList.maxPageSize,
      );
      const all = opts.pbxLists()[pbxList.of];
      const items = all.slice((page - 1) * pageSize, page * pageSize);
      sendJson(res, 200, {
        errcode: 0,
        errmsg: 'SUCCESS',
        total_number: all.length,
        [pbxList.key]: items,
      });
      return;
    }
    req.resume();
    throw new ApiError(ERR.NOT_FOUND);
  } catch (err) {
    if (err instanceof ApiError) {
      if (err.errcode === ERR.TOKEN_EXPIRED) stats.tokenExpiredRejections++;
      fail(err.errcode, err.errmsg);
    } else fail(50000);
  }
}
