import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Extension, SimStats } from './types.ts';
import type { AccessRecord, Credentials } from './credentials.ts';
import { SCOPE_CALL_CONTROL, SCOPE_EXTENSION_READ, normalizeIp } from './credentials.ts';
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
  /** A Yeastar P-Series PBX's call API (doc section 10); absent elsewhere. */
  calls?: SimCallApi;
}

/** What the call API's routes need of the call book (yeastar-calls.ts). */
export interface SimCallApi {
  isExtension(number: string): boolean;
  dial(caller: string, callee: string): { callId: string; ring: () => void };
  byChannel(channel: string): { callId: string; number: string; extension: boolean } | undefined;
  hangup(callId: string, number: string): void;
  transfer(callId: string, opts: { from: string; to: string; attended?: boolean }): void;
  /** An attended transfer's second request by the extension `from`; false when it has none. */
  attendedOperate(callId: string, from: string, operate: string): boolean;
  /** The extension in the call other than `number` (the one a blind transfer's member talks to). */
  otherExtension(callId: string, number: string): string | undefined;
  query(by: { callId?: string; extension?: string; type?: string }): Array<Record<string, unknown>>;
  /** uaCSTA accept/refuse (doc section 10); false: no such ringing uaCSTA call on that phone. */
  uacsta(operation: 'accept' | 'refuse', extension: string, id: string, ip: string): boolean;
}

const CALL_PATHS: ReadonlySet<string> = new Set([
  API_PATHS.callDial,
  API_PATHS.callTransfer,
  API_PATHS.callHangup,
  API_PATHS.callQuery,
  API_PATHS.uacstaAccept,
  API_PATHS.uacstaRefuse,
]);

/** A text field of a call request, or a 40002 PARAMETER ERROR naming it. */
function field(body: Record<string, unknown>, name: string, required = true): string | undefined {
  const v = body[name];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v.trim() === '' || v.length > 64)
    throw new ApiError(ERR.BAD_REQUEST, `${name} is required`);
  return v.trim();
}

/**
 * The call API (docs/phone-systems/yeastar-p-series.md section 10): *Make a Call*, *Transfer a
 * Call*, *Hang up a Call*, *Query Calls*. A key without the call-control scope is 10005. A dial
 * is caller-first: the caller's ring is reported before the answer is sent (as a PBX that rings
 * the caller while it answers). An unknown channel is 40002 (assumption: the guide does not say).
 */
async function handleCallApi(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  url: URL,
  access: AccessRecord,
  opts: ApiRoutesOptions,
  calls: SimCallApi,
): Promise<void> {
  if (!opts.credentials.hasScope(access.key, SCOPE_CALL_CONTROL))
    throw new ApiError(ERR.INSUFFICIENT_SCOPE);
  if (path === API_PATHS.callQuery) {
    const callId = url.searchParams.get('call_id') ?? undefined;
    const extension = url.searchParams.get('extension') ?? undefined;
    const type = url.searchParams.get('type') ?? undefined;
    sendJson(res, 200, {
      errcode: 0,
      errmsg: 'SUCCESS',
      data: calls.query({
        ...(callId !== undefined && { callId }),
        ...(extension !== undefined && { extension }),
        ...(type !== undefined && { type }),
      }),
    });
    return;
  }
  const body = (await readJsonBody(req)) as Record<string, unknown>;
  if (path === API_PATHS.callDial) {
    const caller = field(body, 'caller')!;
    const callee = field(body, 'callee')!;
    if (!calls.isExtension(caller)) throw new ApiError(ERR.BAD_REQUEST, 'caller');
    const { callId, ring } = calls.dial(caller, callee);
    ring();
    sendJson(res, 200, { errcode: 0, errmsg: 'SUCCESS', call_id: callId });
    return;
  }
  if (path === API_PATHS.uacstaAccept || path === API_PATHS.uacstaRefuse) {
    // The page's three fields, all required; errcode and errmsg only in the answer.
    const ok = calls.uacsta(
      path === API_PATHS.uacstaAccept ? 'accept' : 'refuse',
      field(body, 'extension')!,
      field(body, 'call_id')!,
      field(body, 'ip_address')!,
    );
    if (!ok) throw new ApiError(ERR.BAD_REQUEST, 'call_id');
    sendJson(res, 200, { errcode: 0, errmsg: 'SUCCESS' });
    return;
  }
  const channel = calls.byChannel(field(body, 'channel_id')!);
  if (!channel) throw new ApiError(ERR.BAD_REQUEST, 'channel_id');
  if (path === API_PATHS.callHangup) {
    calls.hangup(channel.callId, channel.number);
    sendJson(res, 200, { errcode: 0, errmsg: 'SUCCESS', call_id: channel.callId });
    return;
  }
  const type = field(body, 'type');
  const number = field(body, 'number', false);
  if (type === 'blind' && number !== undefined) {
    // Blind: the channel's member is moved to `number`; the extension it talked to leaves.
    const leaving = calls.otherExtension(channel.callId, channel.extension ? channel.number : '');
    if (!leaving) throw new ApiError(ERR.BAD_REQUEST, 'channel_id');
    calls.transfer(channel.callId, { from: leaving, to: number });
  } else if (type === 'attended' && number !== undefined && channel.extension) {
    calls.transfer(channel.callId, { from: channel.number, to: number, attended: true });
  } else if (type === 'attended' && body.attended_operate !== undefined) {
    // complete / abort played out, threeway / swap accepted; by the member who started it.
    const operate = field(body, 'attended_operate')!;
    if (!channel.extension || !calls.attendedOperate(channel.callId, channel.number, operate))
      throw new ApiError(ERR.BAD_REQUEST, 'attended_operate');
  } else throw new ApiError(ERR.BAD_REQUEST, 'type');
  sendJson(res, 200, { errcode: 0, errmsg: 'SUCCESS', call_id: channel.callId });
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
    if (opts.calls && CALL_PATHS.has(path)) {
      if (method !== (path === API_PATHS.callQuery ? 'GET' : 'POST'))
        throw new ApiError(ERR.METHOD_NOT_ALLOWED);
      if (method === 'GET') req.resume();
      const access = credentials.authenticate(dialect.token(req), ip);
      await handleCallApi(req, res, path, url, access, opts, opts.calls);
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
