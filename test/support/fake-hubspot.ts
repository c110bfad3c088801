/**
 * A fake HubSpot for the CRM lookup's tests and benchmark, built from HubSpot's API reference
 * (docs/crm/hubspot.md lists the facts and where each comes from) and failing the way HubSpot
 * fails. HTTPS on 127.0.0.1 with a certificate from the test CA (test/support/certs.ts), so the app
 * reaches it through its one transport, trusting that CA as an administrator's CA file.
 *
 * - `POST /crm/v3/objects/contacts/search`: a private app's token (`Authorization: Bearer …`);
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
 * - Rate limits: search at most `searchPerSecond` (4) requests per second per token, and a daily
 *   quota; over them, 429 with `{ status, message, errorType: "RATE_LIMIT", correlationId,
 *   policyName: "SECONDLY" | "DAILY", requestId }` and no Retry-After (HubSpot does not promise one).
 * - `GET /account-info/v3/details`: the account's `portalId` and `uiDomain`.
 * - Faults for tests: a delay before answering, N answers of a given status, a body that is not
 *   JSON, a connection dropped mid-request.
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
  authorization: string | undefined;
  body: unknown;
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
  /** Every request that arrived, faults included. */
  requests: number;
  /** Wait this long before answering each request (a slow CRM). */
  delayMs: number;
  /** The next answers: a status to send instead (500, 502, 503…), a broken body, or a dropped connection. */
  failNext(count: number, fault: number | 'not-json' | 'drop'): void;
  close(): Promise<void>;
}

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

export async function startFakeHubSpot(options: FakeHubSpotOptions): Promise<FakeHubSpot> {
  const tokens = options.tokens ?? { 'pat-na1-test': ['crm.objects.contacts.read'] };
  const country = options.defaultCountry ?? 'US';
  const perSecond = options.searchPerSecond ?? 4;
  const daily = options.dailyLimit ?? 250_000;
  const windows = new Map<string, number[]>();
  const dailyCount = new Map<string, number>();
  const faults: Array<number | 'not-json' | 'drop'> = [];
  let nextId = 51;
  const fake: FakeHubSpot = {
    url: '',
    contacts: [],
    searches: [],
    accountRequests: 0,
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

  function rateLimited(token: string) {
    const now = Date.now();
    const used = (dailyCount.get(token) ?? 0) + 1;
    dailyCount.set(token, used);
    const policy = (name: 'DAILY' | 'SECONDLY', message: string) => ({
      status: 429,
      body: {
        status: 'error',
        message,
        errorType: 'RATE_LIMIT',
        correlationId: randomUUID(),
        policyName: name,
        requestId: randomUUID(),
      },
    });
    if (used > daily) return policy('DAILY', 'You have reached your daily limit.');
    const recent = (windows.get(token) ?? []).filter((t) => now - t < 1000);
    if (recent.length >= perSecond) {
      windows.set(token, recent);
      return policy('SECONDLY', 'You have reached your secondly limit.');
    }
    recent.push(now);
    windows.set(token, recent);
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
      const answer = (status: number, body: unknown, raw?: string) => {
        const text = raw ?? JSON.stringify(body);
        res.writeHead(status, {
          'content-type': raw ? 'text/html' : 'application/json;charset=utf-8',
        });
        res.end(text);
      };
      fake.requests++;
      const respond = () => {
        const fault = faults.shift();
        if (fault === 'drop') return req.socket.destroy();
        if (fault === 'not-json') return answer(502, null, '<html><body>Bad gateway</body></html>');
        if (typeof fault === 'number')
          return answer(fault, {
            status: 'error',
            message: 'internal error',
            correlationId: randomUUID(),
          });
        const url = new URL(req.url ?? '/', 'https://127.0.0.1');
        const isSearch =
          req.method === 'POST' && url.pathname === '/crm/v3/objects/contacts/search';
        let body: unknown;
        if (isSearch) {
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            body = undefined;
          }
          fake.searches.push({ authorization: req.headers.authorization, body });
        }
        const auth = authorize(req.headers.authorization);
        if ('fail' in auth && auth.fail) return answer(auth.fail.status, auth.fail.body);
        const { token, scopes } = auth as { token: string; scopes: string[] };
        if (req.method === 'GET' && url.pathname === '/account-info/v3/details') {
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
          const limited = rateLimited(token);
          if (limited) return answer(limited.status, limited.body);
          const result = search(body);
          return answer(result.status, result.body);
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
