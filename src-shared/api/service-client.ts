/**
 * The HTTP calls the app makes (docs/wire-protocol.md sections 2 to 4): get_token, refresh_token
 * and extension/list; del_token where the phone system has it (Yeastar's); on a Yeastar P-Series
 * PBX also its queue, ring group and company contact lists (docs/phone-systems/yeastar-p-series.md
 * section 9), paged by one loop (`listAll`). Stateless: the token manager decides when to call.
 *
 * - Every request has a time-out on the injected clock (so tests drive it) through an AbortSignal.
 * - Every failure is a ServiceError (errors.ts); its message is scrubbed of every registered secret.
 * - The secret and each token are registered with the SecretRegistry the moment they are known, so
 *   that no later log line or error can show them.
 * - Tokens travel in JSON bodies and where the phone system wants them (`api`, src-shared/wire/):
 *   the Authorization header for the standard service, never a URL; `?access_token=` for a system
 *   that wants it in the query (Yeastar's), a URL that is then never logged and is scrubbed anyway.
 * - The phone system's errcodes are read through its own table (`api.errcodes`).
 */
import type { Clock } from '../process/clock.ts';
import type { Logger } from '../process/log.ts';
import { SecretRegistry, silentLogger } from '../process/log.ts';
import { isServiceError, readErrcode, ServiceError } from './service-errors.ts';
import { networkFault, unreachableFault } from '../net/net-errors.ts';
import { previewText } from '../ui/text.ts';
import {
  errorFromResponse,
  findingOf,
  isNotServiceStatus,
  notServiceError,
  pageTitle,
} from './errors.ts';
import type { Extension, TokenPair } from './wire.ts';
import {
  asObject,
  parseExtensionPage,
  parseTokenPair,
  protocolError,
  tokenStringsIn,
} from './wire.ts';
import {
  parseCompanyContactPage,
  parseGroupPage,
  type ListPage,
  type PbxContact,
  type PbxGroup,
} from './pbx-lists.ts';
import {
  dialBody,
  parseCallAnswer,
  parseCallQuery,
  requestField,
  transferBody,
  uacstaBody,
  type CallAnswer,
  type CallInfo,
  type DialRequest,
  type TransferRequest,
  type UacstaOperation,
  type UacstaRequest,
} from './call-api.ts';
import pkg from '../../package.json' with { type: 'json' };
import { placeToken, type ApiDialect } from '../wire/phone-system.ts';
import { STANDARD_WIRE } from '../wire/standard.ts';

export type { Extension, TokenPair } from './wire.ts';
export type { PbxContact, PbxGroup } from './pbx-lists.ts';
import { API_PATHS, type ApiPath } from './service-api.ts';

export const DEFAULT_USER_AGENT = `Screenpop/${pkg.version}`;
/** Long enough for a slow mobile link, short enough that a dead one is noticed in a heartbeat's time. */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** docs/wire-protocol.md section 3: page_size at most 100. */
export const EXTENSION_PAGE_SIZE = 100;
/** A server that keeps sending pages must not keep us looping: 1000 pages = 100,000 extensions. */
const MAX_EXTENSION_PAGES = 1000;
/**
 * The PBX's own lists (Yeastar P-Series, docs/phone-systems/yeastar-p-series.md section 9): pages
 * of 100 queues or ring groups, at most 1,000 of each (10 requests); pages of 1,000 company
 * contacts (the guide allows up to 10,000 a page), at most 20,000 (20 requests).
 */
export const GROUP_PAGE_SIZE = 100;
export const MAX_GROUPS = 1_000;
export const CONTACT_PAGE_SIZE = 1_000;
export const MAX_COMPANY_CONTACTS = 20_000;

/** A whole list as read: its entries, and whether that was all of it (false: cut at the cap). */
export interface ListResult<T> {
  items: T[];
  complete: boolean;
}

export interface ServiceClientDeps {
  baseUrl: string;
  clock: Clock;
  /**
   * The way out: NetTransport's fetch (net/transport.ts), so that every call goes through the
   * proxy and trusts the CAs the settings name. Required: no caller can fall back on Node's own.
   */
  fetch: typeof fetch;
  userAgent?: string;
  timeoutMs?: number;
  logger?: Logger;
  secrets?: SecretRegistry;
  /** How this phone system's API takes the token and what its errcodes mean; standard by default. */
  api?: ApiDialect;
}

interface RequestSpec {
  operation: string;
  method: 'GET' | 'POST';
  path: ApiPath;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
  bearer?: string;
  /** Shorter than the client's own time-out (revoking while the app quits). */
  timeoutMs?: number;
}

export class ServiceClient {
  private readonly baseUrl: string;
  private readonly clock: Clock;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;
  private readonly timeoutMs: number;
  private readonly logger: Logger;
  /** Where every secret it sends or receives is registered (tokens are retired by their owner). */
  readonly secrets: SecretRegistry;
  /**
   * Whether this address has ever answered as the service (JSON with an errcode). Until it has, an
   * answer that is not the service's means a wrong address (needs attention, no retry loop); after,
   * the same answer is something passing in the way (a proxy's page during a deploy): retried.
   */
  private answeredAsService = false;
  private readonly api: ApiDialect;

  constructor(deps: ServiceClientDeps) {
    const url = new URL(deps.baseUrl);
    if (url.username || url.password)
      throw new Error('The base address must not contain credentials.');
    this.baseUrl = url.origin + url.pathname.replace(/\/+$/, '');
    this.clock = deps.clock;
    this.fetchImpl = deps.fetch;
    this.userAgent = deps.userAgent ?? DEFAULT_USER_AGENT;
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.logger = (deps.logger ?? silentLogger).child({ component: 'service-client' });
    this.secrets = deps.secrets ?? new SecretRegistry();
    this.api = deps.api ?? STANDARD_WIRE.api;
  }

  /** Exchanges the API key and secret for a token pair (10001 bad key/secret, 10004 IP). */
  getToken(key: string, secret: string): Promise<TokenPair> {
    this.secrets.add(secret);
    return this.tokenCall('get_token', { username: key, password: secret });
  }

  /**
   * A new access token for a refresh token. The service does not publish the answer's shape; we
   * decided on the token-pair shape (docs/wire-protocol.md section 2). If it carries no new
   * refresh token and `currentRefreshExpiresAt` is given, the old refresh token stays in use until
   * that deadline.
   */
  refreshToken(refreshToken: string, currentRefreshExpiresAt?: number): Promise<TokenPair> {
    this.secrets.add(refreshToken);
    const previous =
      currentRefreshExpiresAt === undefined
        ? undefined
        : { token: refreshToken, expiresAt: currentRefreshExpiresAt };
    return this.tokenCall('refresh_token', { refresh_token: refreshToken }, previous);
  }

  private async tokenCall(
    operation: 'get_token' | 'refresh_token',
    body: Record<string, string>,
    previous?: { token: string; expiresAt: number },
  ): Promise<TokenPair> {
    const issuedAt = this.clock.now();
    const path = operation === 'get_token' ? API_PATHS.getToken : API_PATHS.refreshToken;
    const answer = await this.request({ operation, method: 'POST', path, body });
    return parseTokenPair(answer, issuedAt, operation, previous);
  }

  /** Whether this phone system can revoke a token (`del_token`); see revokeToken. */
  get canRevoke(): boolean {
    return this.api.revokes === true;
  }

  /**
   * Revokes an access token (*Revoke Access Token*: `GET del_token?access_token=`, answered
   * `{"errcode":0}`), so that it no longer counts against the application's 8 valid tokens. Only
   * where the phone system has the call (`canRevoke`); the URL carries the token, so it is never
   * logged (request() logs the operation and the status only, and scrubs any error).
   */
  async revokeToken(accessToken: string, timeoutMs?: number): Promise<void> {
    if (!this.canRevoke) return;
    await this.request({
      operation: 'del_token',
      method: 'GET',
      path: API_PATHS.delToken,
      bearer: accessToken,
      ...(timeoutMs !== undefined && { timeoutMs: Math.min(timeoutMs, this.timeoutMs) }),
    });
  }

  /** Every extension, page by page, until `total_number` entries have been seen. */
  async listExtensions(accessToken: string): Promise<Extension[]> {
    const { items } = await this.listAll(
      accessToken,
      'extension/list',
      API_PATHS.extensionList,
      EXTENSION_PAGE_SIZE,
      EXTENSION_PAGE_SIZE * MAX_EXTENSION_PAGES,
      (body, operation) => {
        const page = parseExtensionPage(body, operation);
        return {
          items: page.extensions,
          received: page.received,
          ...(page.total !== undefined && { total: page.total }),
        };
      },
    );
    return items;
  }

  /**
   * The PBX's queues and ring groups (Yeastar P-Series: queue/list, ringgroup/list), at most
   * MAX_GROUPS of each; `complete` is false when the PBX has more.
   */
  async listGroups(accessToken: string): Promise<ListResult<PbxGroup>> {
    const queues = await this.listAll(
      accessToken,
      'queue/list',
      API_PATHS.queueList,
      GROUP_PAGE_SIZE,
      MAX_GROUPS,
      (body, operation) => parseGroupPage(body, operation, 'queue'),
    );
    const ringGroups = await this.listAll(
      accessToken,
      'ringgroup/list',
      API_PATHS.ringGroupList,
      GROUP_PAGE_SIZE,
      MAX_GROUPS,
      (body, operation) => parseGroupPage(body, operation, 'ring-group'),
    );
    return {
      items: [...queues.items, ...ringGroups.items],
      complete: queues.complete && ringGroups.complete,
    };
  }

  /**
   * The PBX's company contacts (Yeastar P-Series: company_contact/list; every phonebook is a
   * selection of them), at most MAX_COMPANY_CONTACTS; `complete` is false when the PBX has more.
   */
  listCompanyContacts(accessToken: string): Promise<ListResult<PbxContact>> {
    return this.listAll(
      accessToken,
      'company_contact/list',
      API_PATHS.companyContactList,
      CONTACT_PAGE_SIZE,
      MAX_COMPANY_CONTACTS,
      parseCompanyContactPage,
    );
  }

  /** Whether this phone system's API controls calls (docs/phone-systems/yeastar-p-series.md section 10). */
  get controlsCalls(): boolean {
    return this.api.calls === true;
  }

  /**
   * *Make a Call* (`POST call/dial`): the caller (the user's extension) rings first, then the PBX
   * calls the callee. Answers the new call's `call_id` (required: it is how the app knows the call
   * as its own). Where the phone system has no call API, an `unsupported` ServiceError, unsent.
   */
  async dial(accessToken: string, request: DialRequest): Promise<Required<CallAnswer>> {
    const body = await this.callRequest(
      'call/dial',
      API_PATHS.callDial,
      dialBody(request),
      accessToken,
    );
    return parseCallAnswer(body, 'call/dial', true) as Required<CallAnswer>;
  }

  /** *Transfer a Call* (`POST call/transfer`), blind or attended, by a member's `channel_id`. */
  async transfer(accessToken: string, request: TransferRequest): Promise<CallAnswer> {
    const body = await this.callRequest(
      'call/transfer',
      API_PATHS.callTransfer,
      transferBody(request),
      accessToken,
    );
    return parseCallAnswer(body, 'call/transfer');
  }

  /** *Hang up a Call* (`POST call/hangup`): the member whose `channel_id` is given leaves the call. */
  async hangup(accessToken: string, channelId: string): Promise<CallAnswer> {
    const body = await this.callRequest(
      'call/hangup',
      API_PATHS.callHangup,
      { channel_id: requestField('call/hangup', 'channel_id', channelId) },
      accessToken,
    );
    return parseCallAnswer(body, 'call/hangup');
  }

  /**
   * *uaCSTA - Accept a Call* / *- Refuse a Call* (`POST uacsta_call/accept|refuse`): answers or
   * refuses the ringing call on the extension's uaCSTA desk phone. The answer is errcode and
   * errmsg only (section 10).
   */
  async uacsta(
    accessToken: string,
    operation: UacstaOperation,
    request: UacstaRequest,
  ): Promise<void> {
    await this.callRequest(
      `uacsta_call/${operation}`,
      operation === 'accept' ? API_PATHS.uacstaAccept : API_PATHS.uacstaRefuse,
      uacstaBody(operation, request),
      accessToken,
    );
  }

  /**
   * *Query Calls* (`GET call/query`): the calls in progress, one by its `call_id`, those of an
   * extension, or those of a `type` (`inbound`, `outbound`, `internal`: the relay's gateway asks
   * for the calls still ringing once its stream is subscribed), with each member's channel and
   * status.
   */
  async queryCalls(
    accessToken: string,
    by: { callId: string } | { extension: string } | { type: 'inbound' | 'outbound' | 'internal' },
  ): Promise<CallInfo[]> {
    if (!this.controlsCalls) throw this.noCallApi('call/query');
    const query: Record<string, string> =
      'callId' in by
        ? { call_id: requestField('call/query', 'call_id', by.callId) }
        : 'type' in by
          ? { type: by.type }
          : { extension: requestField('call/query', 'extension', by.extension) };
    const body = await this.request({
      operation: 'call/query',
      method: 'GET',
      path: API_PATHS.callQuery,
      query,
      bearer: accessToken,
    });
    return parseCallQuery(body, 'call/query');
  }

  private callRequest(
    operation: string,
    path: ApiPath,
    body: Record<string, string>,
    accessToken: string,
  ): Promise<unknown> {
    if (!this.controlsCalls) return Promise.reject(this.noCallApi(operation));
    return this.request({ operation, method: 'POST', path, body, bearer: accessToken });
  }

  private noCallApi(operation: string): ServiceError {
    return new ServiceError({
      kind: 'unsupported',
      fault: 'api-unavailable',
      message: `${operation}: this phone system publishes no call API`,
    });
  }

  /**
   * Every entry of a paged list, page by page until `total_number` entries have been seen, at
   * most `maxItems` (the pages asked for stop there: ceil(maxItems / pageSize) requests at most).
   * Without a total, a short page is the last one; an empty page always ends it (no loop forever
   * on a server whose total is larger than what it has).
   */
  private async listAll<T>(
    accessToken: string,
    operation: string,
    path: ApiPath,
    pageSize: number,
    maxItems: number,
    parse: (body: unknown, operation: string) => ListPage<T>,
  ): Promise<ListResult<T>> {
    const all: T[] = [];
    let seen = 0;
    const maxPages = Math.ceil(maxItems / pageSize);
    for (let page = 1; page <= maxPages; page++) {
      const body = await this.request({
        operation,
        method: 'GET',
        path,
        query: { page: String(page), page_size: String(pageSize) },
        bearer: accessToken,
      });
      const result = parse(body, operation);
      all.push(...result.items);
      seen += result.received;
      if (result.received === 0) return { items: all, complete: true };
      if (result.total !== undefined ? seen >= result.total : result.received < pageSize)
        return { items: all.slice(0, maxItems), complete: all.length <= maxItems };
    }
    return { items: all.slice(0, maxItems), complete: false };
  }

  private async request(spec: RequestSpec): Promise<unknown> {
    const url = new URL(this.baseUrl + spec.path);
    for (const [k, v] of Object.entries(spec.query ?? {})) url.searchParams.set(k, v);
    if (spec.bearer) this.secrets.add(spec.bearer);
    const headers: Record<string, string> = {
      'User-Agent': this.userAgent,
      Accept: 'application/json',
    };
    if (spec.body) headers['Content-Type'] = 'application/json';
    if (spec.bearer) placeToken(this.api, url, headers, spec.bearer);

    const controller = new AbortController();
    let timedOut = false;
    const timeoutMs = spec.timeoutMs ?? this.timeoutMs;
    const timer = this.clock.setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const started = this.clock.monotonic();
    try {
      const response = await this.fetchImpl(url, {
        method: spec.method,
        headers,
        signal: controller.signal,
        redirect: 'error', // a redirect would resend the secret or the bearer to another place
        ...(spec.body && { body: JSON.stringify(spec.body) }),
      });
      const text = await response.text();
      // Tokens in an answer are secrets from the moment they arrive, even if the answer is invalid.
      let body: unknown = text;
      let isJson = false;
      try {
        body = JSON.parse(text);
        isJson = true;
        for (const t of tokenStringsIn(body)) this.secrets.add(t);
      } catch {
        // not JSON: errorFromResponse falls back on the HTTP status
      }
      this.logger.debug('service answered', {
        operation: spec.operation,
        status: response.status,
        ms: Math.round(this.clock.monotonic() - started),
      });
      const wrongPath = this.wrongPath(response.status, spec.operation);
      if (wrongPath) throw wrongPath;
      const coded = isJson && readErrcode(body) !== undefined;
      if (coded) this.answeredAsService = true;
      else if (!this.answeredAsService && isNotServiceStatus(response.status))
        throw notServiceError(
          spec.operation,
          this.baseUrl,
          response.status,
          findingOf(text),
          pageTitle(text),
        );
      if (!isJson) {
        throw response.ok
          ? protocolError(spec.operation, `the answer (HTTP ${response.status}) is not JSON`)
          : errorFromResponse(response.status, text, response.headers, this.errorContext(spec));
      }
      const errcode = (body as { errcode?: unknown } | null)?.errcode;
      if (response.ok && errcode === 0) return body;
      if (response.ok && errcode === undefined) {
        asObject(body, spec.operation);
        throw protocolError(spec.operation, 'the answer lacks "errcode"');
      }
      throw errorFromResponse(response.status, body, response.headers, this.errorContext(spec));
    } catch (err) {
      throw this.toServiceError(err, spec.operation, timedOut, timeoutMs);
    } finally {
      this.clock.clearTimeout(timer);
    }
  }

  /**
   * A 404 under a service address with a path: the path is what is wrong (the API's paths are
   * the address's own, /openapi/v1.0/...), said with the address to use instead, rather than as
   * a malformed request ("Update Screenpop") or another web server.
   */
  private wrongPath(status: number, operation: string): ServiceError | undefined {
    if (status !== 404) return undefined;
    const url = new URL(this.baseUrl);
    const path = url.pathname.replace(/\/+$/, '');
    if (!path) return undefined;
    const shown = previewText(path, 60);
    return new ServiceError({
      kind: 'not-service',
      fault: 'base-url-path',
      message: `${operation}: ${url.host} has no API under ${shown} (HTTP 404)`,
      httpStatus: status,
      values: { host: url.host, path: shown, origin: url.origin },
    });
  }

  private errorContext(spec: RequestSpec) {
    return {
      operation: spec.operation,
      now: this.clock.now(),
      scrub: (text: string) => this.secrets.scrub(text),
      errcodes: this.api.errcodes,
    };
  }

  private toServiceError(
    err: unknown,
    operation: string,
    timedOut: boolean,
    timeoutMs: number,
  ): ServiceError {
    if (isServiceError(err)) return err.scrubbed((t) => this.secrets.scrub(t));
    if (timedOut) {
      return new ServiceError({
        kind: 'timeout',
        message: `${operation}: no answer within ${Math.round(timeoutMs / 1000)} s`,
      });
    }
    // A proxy or certificate failure, in words naming the host (and the proxy).
    const fault = networkFault(err, this.baseUrl, operation);
    if (fault) return fault.scrubbed((t) => this.secrets.scrub(t));
    // fetch rejects with a TypeError whose cause says what went wrong (ECONNREFUSED, ENOTFOUND...).
    const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
    // The service never redirects its API (we refuse to follow: the secret would go along); an
    // address that does is a web site, not the phone system.
    if (
      !this.answeredAsService &&
      typeof cause?.message === 'string' &&
      /redirect/i.test(cause.message)
    )
      return notServiceError(operation, this.baseUrl, null, 'redirect');
    const unreachable = unreachableFault(err, this.baseUrl, operation);
    if (unreachable) return unreachable;
    const code = typeof cause?.code === 'string' ? cause.code : undefined;
    const detail = code ?? (err instanceof Error ? err.message : String(err));
    return new ServiceError({
      kind: 'network',
      message: this.secrets.scrub(`${operation}: the service could not be reached (${detail})`),
    });
  }
}
