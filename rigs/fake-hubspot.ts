/**
 * A fake HubSpot for the CRM lookup's tests and benchmark, built from HubSpot's API reference
 * (docs/crm/hubspot.md lists the facts and where each comes from) and failing the way HubSpot
 * fails. HTTPS on 127.0.0.1 with a certificate from the test CA (rigs/certs.ts), so the app
 * reaches it through its one transport, trusting that CA as an administrator's CA file.
 *
 * - `POST /crm/objects/2026-09/contacts/search` (HubSpot's dated version; the legacy
 *   `/crm/v3/objects/contacts/search` answers the same until HubSpot drops it): a service key or a
 *   legacy private app's token, either as `Authorization: Bearer …` (`tokens`);
 *   401 INVALID_AUTHENTICATION without a known one, 403 MISSING_SCOPES without
 *   `crm.objects.contacts.read`. The body is checked as HubSpot checks it (400 VALIDATION_ERROR):
 *   JSON, at most 5 filter groups, 10 filters per group and 25 in all, known operators, `limit`
 *   1 to 200, `after` a number. Filter groups are OR'ed, filters within one AND'ed; EQ compares
 *   case-insensitively. Answers `{ total, results: [{ id, properties, createdAt, updatedAt,
 *   archived }], paging?: { next: { after } } }` with the requested properties (and the defaults).
 *   HubSpot's calculated properties, computed from `phone` / `mobilephone` as typed (read in the
 *   account's `defaultCountry` when they have no country code): `hs_calculated_phone_number` /
 *   `_mobile_number` the E.164 form, `hs_searchable_calculated_phone_number` / `_mobile_number` the
 *   national number's digits without the country code, so +44 20 7946 0958 and +1 207-946-0958 are
 *   both 2079460958 there (as in an answer recorded by a public integration: `phone`
 *   "+5511999999999", `hs_calculated_phone_number` "+5511999999999",
 *   `hs_searchable_calculated_phone_number` "11999999999"; docs/crm/hubspot.md).
 * - Rate limits are the account's, shared by every integration (`otherIntegrationSearches` spends
 *   them as another app would): search at most `searchPerSecond` (5) requests a second, and a daily
 *   quota. Over them, a 429 without Retry-After (HubSpot does not promise one), in one of the two
 *   shapes recorded by public integrations (docs/crm/hubspot.md, "Rate limits"): `limitShape`
 *   'category' (the default, the current one) `{ status: "error", message: "You have reached your
 *   secondly limit." | "… daily limit.", correlationId, category: "RATE_LIMITS" }` with no
 *   policyName, or 'policy' (the older one) `{ status, message, errorType: "RATE_LIMIT",
 *   correlationId, groupName, policyName: "SECONDLY" | "DAILY", requestId }`. Search answers carry
 *   `X-HubSpot-RateLimit-Daily` and `X-HubSpot-RateLimit-Daily-Remaining` (not the secondly
 *   ones: integrations' notes say the search endpoints send none; unconfirmed by HubSpot's pages).
 * - `GET /account-info/2026-09/details` (or `/account-info/v3/details`): the account's `portalId`
 *   and `uiDomain`.
 * - Calls (issue 39; HubSpot's "Activities | Calls" guide, developers.hubspot.com/docs/guides/api/
 *   crm/engagements/calls, and its create example: `{ properties: { hs_timestamp, hs_call_body,
 *   hs_call_duration, hs_call_direction, ... }, associations: [{ to: { id }, types: [{
 *   associationCategory: "HUBSPOT_DEFINED", associationTypeId: 194 }] }] }`): `POST
 *   /crm/objects/2026-09/calls` (or v3) needs `crm.objects.contacts.write` (403 MISSING_SCOPES
 *   without it), requires `hs_timestamp` and string property values, checks `hs_call_direction`,
 *   `hs_call_status` against HubSpot's list and `hs_call_disposition` as a GUID (400
 *   VALIDATION_ERROR otherwise), and answers 201 `{ id, properties, createdAt, updatedAt,
 *   archived: false }`; `PATCH …/calls/{id}` updates (404 for an unknown id); `POST
 *   …/calls/search` with CONTAINS_TOKEN on `hs_call_body`, lagging `callSearchLagMs` behind the
 *   writes (HubSpot's search index is eventually consistent); `GET /calling/v1/dispositions`
 *   the account's outcomes (HubSpot's six defaults). Writes share the account's daily quota and
 *   answer over `writesPerTenSeconds` (100) with the TEN_SECONDLY_ROLLING limit.
 * - Faults for tests: a delay before answering, N answers of a given status, a body that is not
 *   JSON, a connection dropped mid-request, a 500 with the RATE_LIMITS body (integrations report
 *   HubSpot answering a limit that way too).
 */
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

export interface FakeContact {
  id: string;
  properties: Record<string, string>;
  /** ms since the epoch; the newest first when sorted by lastmodifieddate DESCENDING. */
  updatedAt: number;
}

export interface SearchRequestSeen {
  /** The path asked: the dated one or the legacy v3 one. */
  path: string;
  authorization: string | undefined;
  body: unknown;
}

export interface FakeCall {
  id: string;
  properties: Record<string, string>;
  associations: unknown[];
  createdAt: number;
  updatedAt: number;
}

export interface FakeHubSpotOptions {
  cert: Buffer;
  key: Buffer;
  /** Access tokens and their scopes. */
  tokens?: Record<string, string[]>;
  searchPerSecond?: number;
  dailyLimit?: number;
  portalId?: number;
  uiDomain?: string;
  /** The 429 body's shape: 'category' (current, no policyName; the default) or 'policy' (older). */
  limitShape?: 'category' | 'policy';
  /** HubSpot's rolling 10-second limit for writes (100 on the lowest tiers). */
  writesPerTenSeconds?: number;
  /** How long a written call stays invisible to the calls search. */
  callSearchLagMs?: number;
  /** The country a number typed without a country code is read in (ISO 3166 alpha-2); US. */
  defaultCountry?: CountryCode;
}

export interface FakeHubSpot {
  /** https://127.0.0.1:<port> */
  url: string;
  contacts: FakeContact[];
  addContact(properties: Record<string, string>, updatedAt?: number): FakeContact;
  searches: SearchRequestSeen[];
  accountRequests: number;
  /** The calls logged, by HubSpot id. */
  calls: Map<string, FakeCall>;
  /** Every calls request: method, path, status answered. */
  callRequests: Array<{ method: string; path: string; status: number }>;
  /** Every request that arrived, faults included. */
  requests: number;
  /** Wait this long before answering each request (a slow CRM). */
  delayMs: number;
  /** The next answers: a status to send instead (500, 502, 503…), a broken body, or a dropped connection. */
  failNext(count: number, fault: Fault): void;
  /** Another integration of the same account searches `count` times now (the limits are shared). */
  otherIntegrationSearches(count: number): void;
  close(): Promise<void>;
}

const SEARCH_PATHS = ['/crm/objects/2026-09/contacts/search', '/crm/v3/objects/contacts/search'];
const ACCOUNT_PATHS = ['/account-info/2026-09/details', '/account-info/v3/details'];

/**
 * 'write-then-drop' / 'write-then-hang': a calls write is done, then the connection is dropped /
 * never answered (the client's time-out); 'limit-secondly' / 'limit-daily': a 429 in HubSpot's
 * shape for that limit.
 */
type Fault =
  | number
  | 'not-json'
  | 'drop'
  | 'rate-limits-500'
  | 'write-then-drop'
  | 'write-then-hang'
  | 'limit-secondly'
  | 'limit-daily';

const CALL_STATUSES = new Set([
  'BUSY',
  'CALLING_CRM_USER',
  'CANCELED',
  'COMPLETED',
  'CONNECTING',
  'FAILED',
  'IN_PROGRESS',
  'MISSED',
  'NO_ANSWER',
  'QUEUED',
  'RINGING',
]);
/** HubSpot's default call outcomes (the Calls guide, hs_call_disposition). */
export const DEFAULT_DISPOSITIONS = [
  { id: '9d9162e7-6cf3-4944-bf63-4dff82258764', label: 'Busy' },
  { id: 'f240bbac-87c9-4f6e-bf70-924b57d47db7', label: 'Connected' },
  { id: 'a4c4c377-d246-4b32-a13b-75a56a4cd0ff', label: 'Left live message' },
  { id: 'b2cf5968-551e-4856-9783-52b3da59a7d0', label: 'Left voicemail' },
  { id: '73a0d17f-1163-4015-bdd5-ec830791da20', label: 'No answer' },
  { id: '17b47fee-58de-441e-a44c-c6300d46f273', label: 'Wrong number' },
];
const CALL_PATH = /^\/crm\/(?:objects\/2026-09|v3\/objects)\/calls(?:\/(search|\d+))?$/;
const DISPOSITIONS_PATH = '/calling/v1/dispositions';

const OPERATORS = new Set([
  'EQ',
  'NEQ',
  'LT',
  'LTE',
  'GT',
  'GTE',
  'BETWEEN',
  'IN',
  'NOT_IN',
  'HAS_PROPERTY',
  'NOT_HAS_PROPERTY',
  'CONTAINS_TOKEN',
  'NOT_CONTAINS_TOKEN',
]);
const DEFAULT_PROPERTIES = [
  'createdate',
  'email',
  'firstname',
  'hs_object_id',
  'lastmodifieddate',
  'lastname',
];

/** HubSpot's calculated forms of a typed number: E.164 and the national digits; '' when unreadable. */
function calculated(
  value: string | undefined,
  country: CountryCode,
): { e164: string; national: string } {
  const parsed = value ? parsePhoneNumberFromString(value, country) : undefined;
  return parsed
    ? { e164: parsed.number, national: String(parsed.nationalNumber) }
    : { e164: '', national: (value ?? '').replace(/\D/g, '') };
}

/** A contact's property as HubSpot answers it, calculated ones included; undefined when unset. */
function property(contact: FakeContact, name: string, country: CountryCode): string | undefined {
  const p = contact.properties;
  const number = (typed: string | undefined, form: 'e164' | 'national') =>
    typed ? calculated(typed, country)[form] || undefined : undefined;
  switch (name) {
    case 'hs_calculated_phone_number':
      return number(p.phone, 'e164');
    case 'hs_calculated_mobile_number':
      return number(p.mobilephone, 'e164');
    case 'hs_searchable_calculated_phone_number':
      return number(p.phone, 'national');
    case 'hs_searchable_calculated_mobile_number':
      return number(p.mobilephone, 'national');
    case 'hs_object_id':
      return contact.id;
    default:
      return p[name];
  }
}

function error(status: number, category: string, message: string, extra: object = {}) {
  return {
    status,
    body: { status: 'error', message, correlationId: randomUUID(), category, ...extra },
  };
}

type Filter = { propertyName?: unknown; operator?: unknown; value?: unknown };

function validate(body: unknown): string | null {
  if (!body || typeof body !== 'object') return 'Invalid input JSON on line 1, column 1';
  const b = body as {
    filterGroups?: unknown;
    limit?: unknown;
    after?: unknown;
    properties?: unknown;
  };
  const groups = b.filterGroups ?? [];
  if (!Array.isArray(groups)) return 'filterGroups must be an array';
  if (groups.length > 5) return 'Too many filter groups: the maximum is 5.';
  let total = 0;
  for (const g of groups) {
    const filters = (g as { filters?: unknown }).filters;
    if (!Array.isArray(filters)) return 'each filter group needs filters';
    if (filters.length > 10) return 'Too many filters in a group: the maximum is 10.';
    total += filters.length;
    for (const f of filters as Filter[]) {
      if (typeof f.propertyName !== 'string') return 'filter propertyName is required';
      if (typeof f.operator !== 'string' || !OPERATORS.has(f.operator))
        return `Unable to parse operator ${String(f.operator)}`;
    }
  }
  if (total > 25) return 'Too many filters: the maximum is 25.';
  if (b.limit !== undefined && (typeof b.limit !== 'number' || b.limit < 1 || b.limit > 200))
    return 'limit must be between 1 and 200';
  if (b.after !== undefined && !/^\d+$/.test(String(b.after))) return 'after must be a number';
  if (b.properties !== undefined && !Array.isArray(b.properties))
    return 'properties must be an array';
  return null;
}

function matches(contact: FakeContact, filter: Filter, country: CountryCode): boolean {
  const value = String(filter.value ?? '').toLowerCase();
  const stored = property(contact, String(filter.propertyName), country);
  switch (filter.operator) {
    case 'EQ':
      return stored !== undefined && stored.toLowerCase() === value;
    case 'NEQ':
      return stored === undefined || stored.toLowerCase() !== value;
    case 'HAS_PROPERTY':
      return stored !== undefined && stored !== '';
    case 'NOT_HAS_PROPERTY':
      return stored === undefined || stored === '';
    case 'CONTAINS_TOKEN':
      return stored !== undefined && stored.toLowerCase().split(/\s+/).includes(value);
    default:
      return false;
  }
}

function callView(c: FakeCall) {
  return {
    id: c.id,
    properties: {
      ...c.properties,
      hs_object_id: c.id,
      hs_createdate: new Date(c.createdAt).toISOString(),
    },
    createdAt: new Date(c.createdAt).toISOString(),
    updatedAt: new Date(c.updatedAt).toISOString(),
    archived: false,
  };
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** HubSpot's checks of a call's properties (400 VALIDATION_ERROR); null when they pass. */
function checkCallProperties(p: Record<string, unknown>, creating: boolean): string | null {
  for (const [k, v] of Object.entries(p))
    if (typeof v !== 'string') return `Property values were not valid: ${k} must be a string`;
  const s = p as Record<string, string | undefined>;
  if (creating && !s.hs_timestamp)
    return 'Property values were not valid: hs_timestamp is required';
  if (
    s.hs_timestamp !== undefined &&
    !Number.isFinite(Date.parse(s.hs_timestamp)) &&
    !/^\d+$/.test(s.hs_timestamp)
  )
    return `Property values were not valid: ${s.hs_timestamp} is not a valid timestamp`;
  if (s.hs_call_direction !== undefined && !['INBOUND', 'OUTBOUND'].includes(s.hs_call_direction))
    return `Property values were not valid: ${s.hs_call_direction} was not one of the allowed options`;
  if (s.hs_call_status !== undefined && !CALL_STATUSES.has(s.hs_call_status))
    return `Property values were not valid: ${s.hs_call_status} was not one of the allowed options`;
  if (s.hs_call_disposition !== undefined && !GUID.test(s.hs_call_disposition))
    return `Property values were not valid: ${s.hs_call_disposition} was not one of the allowed options`;
  if (s.hs_call_duration !== undefined && !/^\d+$/.test(s.hs_call_duration))
    return `Property values were not valid: ${s.hs_call_duration} is not a number`;
  return null;
}

export async function startFakeHubSpot(options: FakeHubSpotOptions): Promise<FakeHubSpot> {
  const tokens = options.tokens ?? { 'pat-na1-test': ['crm.objects.contacts.read'] };
  const country = options.defaultCountry ?? 'US';
  const perSecond = options.searchPerSecond ?? 5;
  const daily = options.dailyLimit ?? 250_000;
  const shape = options.limitShape ?? 'category';
  // One account: every token (every integration) spends the same second and the same day.
  let window: number[] = [];
  let usedToday = 0;
  const faults: Fault[] = [];
  let nextId = 51;
  let nextCallId = 10_001;
  let writes: number[] = [];
  const writesPer10s = options.writesPerTenSeconds ?? 100;
  const lag = options.callSearchLagMs ?? 0;
  const fake: FakeHubSpot = {
    url: '',
    contacts: [],
    searches: [],
    accountRequests: 0,
    calls: new Map(),
    callRequests: [],
    requests: 0,
    delayMs: 0,
    addContact(properties, updatedAt = Date.now()) {
      const contact = { id: String(nextId++), properties, updatedAt };
      fake.contacts.push(contact);
      return contact;
    },
    failNext(count, fault) {
      for (let i = 0; i < count; i++) faults.push(fault);
    },
    otherIntegrationSearches(count) {
      for (let i = 0; i < count; i++) void rateLimited();
    },
    close: async () => {},
  };

  function authorize(header: string | undefined) {
    const token = /^Bearer (.+)$/.exec(header ?? '')?.[1];
    const scopes = token !== undefined ? tokens[token] : undefined;
    if (!token || !scopes)
      return {
        fail: error(
          401,
          'INVALID_AUTHENTICATION',
          'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
        ),
      };
    return { token, scopes };
  }

  /** The daily-quota headers a search answer carries. */
  function dailyHeaders(): Record<string, string> {
    return {
      'x-hubspot-ratelimit-daily': String(daily),
      'x-hubspot-ratelimit-daily-remaining': String(Math.max(0, daily - usedToday)),
    };
  }

  function limitBody(policy: 'DAILY' | 'SECONDLY') {
    const message = `You have reached your ${policy === 'DAILY' ? 'daily' : 'secondly'} limit.`;
    return shape === 'category'
      ? { status: 'error', message, correlationId: randomUUID(), category: 'RATE_LIMITS' }
      : {
          status: 'error',
          message,
          errorType: 'RATE_LIMIT',
          correlationId: randomUUID(),
          groupName: `publicapi:private-app-${policy.toLowerCase()}:${options.portalId ?? 20_251_122}`,
          policyName: policy,
          requestId: randomUUID(),
        };
  }

  /** Spends one search of the account's limits; the 429 when one is spent already. */
  function rateLimited() {
    const now = Date.now();
    if (usedToday >= daily) return { status: 429, body: limitBody('DAILY') };
    window = window.filter((t) => now - t < 1000);
    if (window.length >= perSecond) return { status: 429, body: limitBody('SECONDLY') };
    window.push(now);
    usedToday++;
    return null;
  }

  function search(body: unknown) {
    const problem = validate(body);
    if (problem)
      return error(400, 'VALIDATION_ERROR', problem, {
        context: {},
        errors: [{ message: problem }],
      });
    const b = body as {
      filterGroups?: Array<{ filters: Filter[] }>;
      properties?: string[];
      sorts?: Array<{ propertyName?: string; direction?: string }>;
      limit?: number;
      after?: string;
    };
    const groups = b.filterGroups ?? [];
    let found = fake.contacts.filter(
      (c) =>
        groups.length === 0 || groups.some((g) => g.filters.every((f) => matches(c, f, country))),
    );
    const sort = b.sorts?.[0];
    if (sort?.propertyName === 'lastmodifieddate')
      found = [...found].sort((a, c) =>
        sort.direction === 'DESCENDING' ? c.updatedAt - a.updatedAt : a.updatedAt - c.updatedAt,
      );
    const limit = b.limit ?? 10;
    const offset = Number(b.after ?? 0);
    const page = found.slice(offset, offset + limit);
    const wanted = b.properties?.length ? b.properties : DEFAULT_PROPERTIES;
    return {
      status: 200,
      body: {
        total: found.length,
        results: page.map((c) => ({
          id: c.id,
          properties: Object.fromEntries(
            [...new Set([...wanted, 'hs_object_id', 'createdate', 'lastmodifieddate'])].map((k) => [
              k,
              k === 'hs_object_id'
                ? c.id
                : k === 'lastmodifieddate' || k === 'createdate'
                  ? new Date(c.updatedAt).toISOString()
                  : (property(c, k, country) ?? null),
            ]),
          ),
          createdAt: new Date(c.updatedAt).toISOString(),
          updatedAt: new Date(c.updatedAt).toISOString(),
          archived: false,
        })),
        ...(offset + limit < found.length
          ? { paging: { next: { after: String(offset + limit) } } }
          : {}),
      },
    };
  }

  const server = https.createServer({ cert: options.cert, key: options.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (
        status: number,
        body: unknown,
        raw?: string,
        headers: Record<string, string> = {},
      ) => {
        const text = raw ?? JSON.stringify(body);
        res.writeHead(status, {
          'content-type': raw ? 'text/html' : 'application/json;charset=utf-8',
          ...headers,
        });
        res.end(text);
      };
      fake.requests++;
      const respond = () => {
        const fault = faults.shift();
        if (fault === 'drop') return req.socket.destroy();
        if (fault === 'not-json') return answer(502, null, '<html><body>Bad gateway</body></html>');
        if (fault === 'rate-limits-500') return answer(500, limitBody('SECONDLY'));
        if (fault === 'limit-secondly' || fault === 'limit-daily')
          return answer(429, limitBody(fault === 'limit-daily' ? 'DAILY' : 'SECONDLY'), undefined, {
            ...dailyHeaders(),
            ...(fault === 'limit-daily' ? { 'x-hubspot-ratelimit-daily-remaining': '0' } : {}),
          });
        if (typeof fault === 'number')
          return answer(fault, {
            status: 'error',
            message: 'internal error',
            correlationId: randomUUID(),
          });
        const url = new URL(req.url ?? '/', 'https://127.0.0.1');
        const sent = Buffer.concat(chunks).toString('utf8');
        const hold = () => {
          if (fault === 'write-then-drop') req.socket.destroy();
          // 'write-then-hang': never answered; the socket is closed by the client or by close().
        };
        const calls = (
          method: string,
          path: string,
          tail: string | undefined,
          scopes: string[],
          f: Fault | undefined,
        ): { status: number; body?: unknown; headers?: Record<string, string> } => {
          if (method === 'GET' && path === DISPOSITIONS_PATH)
            return {
              status: 200,
              body: DEFAULT_DISPOSITIONS.map((d) => ({ ...d, deleted: false })),
            };
          const write = method !== 'GET' && tail !== 'search';
          const needed = write ? 'crm.objects.contacts.write' : 'crm.objects.contacts.read';
          if (!scopes.includes(needed)) {
            const e = error(
              403,
              'MISSING_SCOPES',
              "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.",
              {
                errors: [
                  {
                    message: 'One or more of the following scopes are required.',
                    context: { requiredGranularScopes: [needed] },
                  },
                ],
              },
            );
            return e;
          }
          const now = Date.now();
          if (usedToday >= daily)
            return { status: 429, body: limitBody('DAILY'), headers: dailyHeaders() };
          writes = writes.filter((t) => now - t < 10_000);
          if (writes.length >= writesPer10s)
            return {
              status: 429,
              body: {
                ...limitBody('SECONDLY'),
                message: 'You have reached your ten_secondly_rolling limit.',
              },
              headers: { 'x-hubspot-ratelimit-interval-milliseconds': '10000', ...dailyHeaders() },
            };
          writes.push(now);
          usedToday++;
          let body: Record<string, unknown>;
          try {
            body = JSON.parse(sent) as Record<string, unknown>;
          } catch {
            return error(400, 'VALIDATION_ERROR', 'Invalid input JSON on line 1, column 1');
          }
          if (tail === 'search') {
            const token = String(
              (body as { filterGroups?: Array<{ filters: Filter[] }> }).filterGroups?.[0]
                ?.filters?.[0]?.value ?? '',
            ).toLowerCase();
            const found = [...fake.calls.values()].filter(
              (c) =>
                now - c.createdAt >= lag &&
                (c.properties.hs_call_body ?? '')
                  .toLowerCase()
                  .split(/[^a-z0-9]+/)
                  .includes(token),
            );
            return {
              status: 200,
              body: {
                total: found.length,
                results: found.slice(0, 1).map((c) => callView(c)),
              },
            };
          }
          const props = (body.properties ?? {}) as Record<string, unknown>;
          const problem = checkCallProperties(props, method === 'POST');
          if (problem)
            return error(400, 'VALIDATION_ERROR', problem, { errors: [{ message: problem }] });
          if (method === 'POST' && tail === undefined) {
            const id = String(nextCallId++);
            const call: FakeCall = {
              id,
              properties: props as Record<string, string>,
              associations: Array.isArray(body.associations) ? body.associations : [],
              createdAt: now,
              updatedAt: now,
            };
            fake.calls.set(id, call);
            if (f === 'write-then-drop' || f === 'write-then-hang') {
              hold();
              return { status: 0 };
            }
            return { status: 201, body: callView(call) };
          }
          if (method === 'PATCH' && tail !== undefined) {
            const call = fake.calls.get(tail);
            if (!call) return error(404, 'OBJECT_NOT_FOUND', 'resource not found');
            call.properties = { ...call.properties, ...(props as Record<string, string>) };
            call.updatedAt = now;
            if (f === 'write-then-drop' || f === 'write-then-hang') {
              hold();
              return { status: 0 };
            }
            return { status: 200, body: callView(call) };
          }
          return error(405, 'METHOD_NOT_ALLOWED', 'method not allowed');
        };
        const isSearch = req.method === 'POST' && SEARCH_PATHS.includes(url.pathname);
        let body: unknown;
        if (isSearch) {
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            body = undefined;
          }
          fake.searches.push({
            path: url.pathname,
            authorization: req.headers.authorization,
            body,
          });
        }
        const auth = authorize(req.headers.authorization);
        if ('fail' in auth && auth.fail) return answer(auth.fail.status, auth.fail.body);
        const { scopes } = auth as { token: string; scopes: string[] };
        if (req.method === 'GET' && ACCOUNT_PATHS.includes(url.pathname)) {
          fake.accountRequests++;
          return answer(200, {
            portalId: options.portalId ?? 20_251_122,
            accountType: 'STANDARD',
            timeZone: 'US/Eastern',
            companyCurrency: 'USD',
            additionalCurrencies: [],
            utcOffset: '-05:00',
            utcOffsetMilliseconds: -18_000_000,
            uiDomain: options.uiDomain ?? 'app.hubspot.com',
            dataHostingLocation: 'na1',
          });
        }
        if (isSearch) {
          if (!scopes.includes('crm.objects.contacts.read')) {
            const e = error(
              403,
              'MISSING_SCOPES',
              "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.",
              {
                errors: [
                  {
                    message: 'One or more of the following scopes are required.',
                    context: { requiredGranularScopes: ['crm.objects.contacts.read'] },
                  },
                ],
              },
            );
            return answer(e.status, e.body);
          }
          const limited = rateLimited();
          if (limited) return answer(limited.status, limited.body, undefined, dailyHeaders());
          const result = search(body);
          return answer(result.status, result.body, undefined, dailyHeaders());
        }
        const callPath = CALL_PATH.exec(url.pathname);
        if (callPath || (req.method === 'GET' && url.pathname === DISPOSITIONS_PATH)) {
          const result = calls(req.method ?? 'GET', url.pathname, callPath?.[1], scopes, fault);
          fake.callRequests.push({
            method: req.method ?? '',
            path: url.pathname,
            status: result.status,
          });
          if (result.status === 0) return; // hung or dropped after the write
          return answer(result.status, result.body, undefined, result.headers ?? {});
        }
        answer(404, { status: 'error', message: 'Not found', correlationId: randomUUID() });
      };
      if (fake.delayMs > 0) setTimeout(respond, fake.delayMs);
      else respond();
    });
  });
  const sockets = new Set<Duplex>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return fake;
}
