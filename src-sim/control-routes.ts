import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FailHttpOptions, Simulator } from './types.ts';
import { ApiError, ERR, readJsonBody, sendError, sendJson } from './errors.ts';

/**
 * The control surface: every in-process method of the Simulator as a JSON route under /_sim/, so a
 * simulator started by the CLI (with --control) can be driven from another process or by curl.
 * It has no authentication: it is off unless enabled and listens where the simulator listens.
 */
export const CONTROL_PREFIX = '/_sim/';

type Body = Record<string, unknown>;
type Route = (sim: Simulator, body: Body, param: string | undefined) => unknown;

function str(body: Body, name: string): string {
  const v = body[name];
  if (typeof v !== 'string' || v === '')
    throw new ApiError(ERR.BAD_REQUEST, `${name} must be a non-empty string`);
  return v;
}

function optStr(body: Body, name: string): string | undefined {
  return body[name] === undefined ? undefined : str(body, name);
}

function num(body: Body, name: string): number {
  const v = body[name];
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new ApiError(ERR.BAD_REQUEST, `${name} must be a number`);
  return v;
}

function optNum(body: Body, name: string): number | undefined {
  return body[name] === undefined ? undefined : num(body, name);
}

function strList(body: Body, name: string): string[] | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
    throw new ApiError(ERR.BAD_REQUEST, `${name} must be a list of strings`);
  return v as string[];
}

function numList(body: Body, name: string): number[] | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((x) => Number.isInteger(x)))
    throw new ApiError(ERR.BAD_REQUEST, `${name} must be a list of integers`);
  return v as number[];
}

function obj(body: Body, name: string): Record<string, unknown> {
  const v = body[name];
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new ApiError(ERR.BAD_REQUEST, `${name} must be an object`);
  return v as Record<string, unknown>;
}

const ok = (extra: Record<string, unknown> = {}) => ({ errcode: 0, errmsg: 'SUCCESS', ...extra });

/** `METHOD path` (after /_sim/) -> handler; a trailing `/:id` is passed as `param`. */
const ROUTES: Record<string, Route> = {
  'GET info': (sim) =>
    ok({
      baseUrl: sim.baseUrl,
      tenant: sim.tenant,
      apiKey: sim.apiKey,
      extensions: sim.extensions.length,
      now: sim.clock.now(),
    }),
  'GET extensions': (sim) => ok({ data: sim.extensions }),
  'GET stats': (sim) => ok({ stats: sim.stats() }),
  'POST keys': (sim, b) => {
    const opts: { name?: string; scopes?: string[]; allowlist?: string[]; tenant?: string } = {};
    const name = optStr(b, 'name');
    const scopes = strList(b, 'scopes');
    const allowlist = strList(b, 'allowlist');
    const tenant = optStr(b, 'tenant');
    if (name !== undefined) opts.name = name;
    if (scopes !== undefined) opts.scopes = scopes;
    if (allowlist !== undefined) opts.allowlist = allowlist;
    if (tenant !== undefined) opts.tenant = tenant;
    return ok({ key: sim.createApiKey(opts) });
  },
  'POST ring': (sim, b) => {
    const to = typeof b.to === 'string' ? b.to : strList(b, 'to');
    if (to === undefined)
      throw new ApiError(ERR.BAD_REQUEST, 'to must be a string or a list of strings');
    const callId = optStr(b, 'callId');
    const via = optStr(b, 'via');
    const devices = optNum(b, 'devices');
    return ok({
      call_id: sim.ring({
        from: str(b, 'from'),
        to,
        ...(callId ? { callId } : {}),
        ...(via !== undefined && { via }),
        ...(devices !== undefined && { devices }),
      }),
    });
  },
  'POST state': (sim, b) => {
    const to = optStr(b, 'to');
    const device = optNum(b, 'device');
    sim.setCallState(str(b, 'callId'), str(b, 'state'), {
      ...(to !== undefined && { to }),
      ...(device !== undefined && { device }),
    });
    return ok();
  },
  'POST transfer': (sim, b) => {
    const attended = b.attended;
    if (attended !== undefined && typeof attended !== 'boolean')
      throw new ApiError(ERR.BAD_REQUEST, 'attended must be true or false');
    sim.transfer(str(b, 'callId'), {
      from: str(b, 'from'),
      to: str(b, 'to'),
      ...(attended !== undefined && { attended }),
    });
    return ok();
  },
  'POST voicemail': (sim, b) => {
    const callerName = b.callerName === undefined ? undefined : b.callerName;
    if (callerName !== undefined && typeof callerName !== 'string')
      throw new ApiError(ERR.BAD_REQUEST, 'callerName must be a string');
    const voicemailId = optStr(b, 'voicemailId');
    return ok({
      envelope: sim.voicemail({
        extension: str(b, 'extension'),
        from: str(b, 'from'),
        durationSec: num(b, 'durationSec'),
        ...(callerName !== undefined ? { callerName } : {}),
        ...(voicemailId !== undefined ? { voicemailId } : {}),
      }),
    });
  },
  'POST sms': (sim, b) => {
    if (typeof b.text !== 'string') throw new ApiError(ERR.BAD_REQUEST, 'text must be a string');
    const messageId = optStr(b, 'messageId');
    const receivedAt = optNum(b, 'receivedAt');
    return ok({
      envelope: sim.sms({
        from: str(b, 'from'),
        to: str(b, 'to'),
        text: b.text,
        ...(messageId !== undefined ? { messageId } : {}),
        ...(receivedAt !== undefined ? { receivedAt } : {}),
      }),
    });
  },
  'POST trunk': (sim, b) => ok({ envelope: sim.setTrunkStatus(str(b, 'trunk'), str(b, 'status')) }),
  'POST presence': (sim, b) =>
    ok({ envelope: sim.setPresence(str(b, 'extension'), str(b, 'status')) }),
  'POST emit': (sim, b) => {
    const opts: { eventId?: string; timestamp?: number; tenant?: string } = {};
    const eventId = optStr(b, 'eventId');
    const timestamp = optNum(b, 'timestamp');
    const tenant = optStr(b, 'tenant');
    if (eventId !== undefined) opts.eventId = eventId;
    if (timestamp !== undefined) opts.timestamp = timestamp;
    if (tenant !== undefined) opts.tenant = tenant;
    return ok({ envelope: sim.emit(num(b, 'event'), obj(b, 'data'), opts) });
  },
  'POST emit-raw': (sim, b) => {
    const event = optNum(b, 'event');
    const tenant = optStr(b, 'tenant');
    sim.emitRaw(str(b, 'text'), {
      ...(event !== undefined ? { event } : {}),
      ...(tenant ? { tenant } : {}),
    });
    return ok();
  },
  'GET webhooks': (sim) => ok({ data: sim.listWebhooks() }),
  'POST webhooks': (sim, b) => {
    const events = numList(b, 'events');
    const tenant = optStr(b, 'tenant');
    return ok({
      id: sim.addWebhook({
        url: str(b, 'url'),
        secret: str(b, 'secret'),
        ...(events ? { events } : {}),
        ...(tenant ? { tenant } : {}),
      }),
    });
  },
  'DELETE webhooks': (sim, _b, id) => {
    if (!id) throw new ApiError(ERR.BAD_REQUEST, 'webhook id missing: DELETE /_sim/webhooks/<id>');
    sim.removeWebhook(id);
    return ok();
  },
  'POST faults/close': (sim, b) => (sim.closeAllSockets(optNum(b, 'code')), ok()),
  'POST faults/stall': (sim) => (sim.stallSockets(), ok()),
  'POST faults/duplicate': (sim, b) => (sim.duplicateNext(num(b, 'n'), optNum(b, 'copies')), ok()),
  'POST faults/reorder': (sim, b) => (sim.reorderNext(num(b, 'n')), ok()),
  'POST faults/fail-http': (sim, b) => {
    const opts: FailHttpOptions = {
      status: num(b, 'status') as FailHttpOptions['status'],
      count: num(b, 'count'),
    };
    const retryAfterSec = optNum(b, 'retryAfterSec');
    const target = optStr(b, 'target');
    if (retryAfterSec !== undefined) opts.retryAfterSec = retryAfterSec;
    if (target !== undefined) opts.target = target as FailHttpOptions['target'];
    sim.failHttp(opts);
    return ok();
  },
  'POST faults/revoke': (sim, b) => (sim.revokeKey(str(b, 'key')), ok()),
  'POST faults/allowlist': (sim, b) => {
    const ips = strList(b, 'ips');
    if (ips === undefined) throw new ApiError(ERR.BAD_REQUEST, 'ips must be a list of strings');
    sim.setAllowlist(str(b, 'key'), ips);
    return ok();
  },
  'POST faults/expire-tokens': (sim) => (sim.expireAllTokens(), ok()),
  'POST traffic/start': (sim, b) => {
    const excludeExtensions = strList(b, 'excludeExtensions');
    const ringTo = strList(b, 'ringTo');
    sim.startTraffic({
      ratePerSec: num(b, 'ratePerSec'),
      ...(excludeExtensions ? { excludeExtensions } : {}),
      ...(ringTo ? { ringTo } : {}),
    });
    return ok();
  },
  'POST traffic/stop': (sim) => (sim.stopTraffic(), ok()),
};

export async function handleControl(
  req: IncomingMessage,
  res: ServerResponse,
  sim: Simulator,
): Promise<void> {
  try {
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    let path = url.pathname.slice(CONTROL_PREFIX.length).replace(/\/+$/, '');
    let param: string | undefined;
    const method = req.method ?? 'GET';
    if (!ROUTES[`${method} ${path}`]) {
      const slash = path.lastIndexOf('/');
      if (slash > 0) {
        param = decodeURIComponent(path.slice(slash + 1));
        path = path.slice(0, slash);
      }
    }
    const route = ROUTES[`${method} ${path}`];
    if (!route) {
      req.resume();
      const known = Object.keys(ROUTES).some((k) => k.endsWith(` ${path}`));
      throw new ApiError(known ? ERR.METHOD_NOT_ALLOWED : ERR.NOT_FOUND);
    }
    const body =
      method === 'GET' || method === 'DELETE' ? (req.resume(), {}) : await readJsonBody(req);
    sendJson(res, 200, route(sim, body, param));
  } catch (err) {
    if (err instanceof ApiError) sendError(res, err.errcode, err.errmsg);
    else if (err instanceof TypeError || err instanceof RangeError)
      sendError(res, ERR.BAD_REQUEST, err.message);
    else sendError(res, 50000);
  }
}
