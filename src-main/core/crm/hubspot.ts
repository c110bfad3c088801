/**
 * HubSpot: the CRM search API of HubSpot's dated version 2026-09
 * (`POST /crm/objects/2026-09/contacts/search`; the numeric v1-v3 paths are unsupported from
 * September 2027) with a service key, or an existing legacy private app's access token (`pat-…`),
 * both sent as `Authorization: Bearer …` with the scope `crm.objects.contacts.read`, as HubSpot's
 * API reference describes it (docs/crm/hubspot.md has the facts we rely on and where each comes
 * from).
 *
 * One search per number: filter groups are OR'ed, so one request asks for the number in `phone`
 * or `mobilephone` as E.164, or in HubSpot's calculated searchable forms (digits without the
 * country code). Those forms collide across countries (+44 20 7946 0958 and +1 207-946-0958 are
 * both 2079460958), so the search only finds candidates: a contact is named only when one of its
 * numbers is the caller's E.164 (HubSpot's calculated international form
 * `hs_calculated_phone_number` / `_mobile_number` when it has one, else the number as typed read
 * in the user's region, with phone-number.ts, the project's one reading of a number). The most
 * recently modified such contact wins (sorted by `lastmodifieddate`); further pages are never
 * fetched. The record link is HubSpot's own contact page, built from the account's `portalId`
 * and `uiDomain` (`GET /account-info/2026-09/details`, asked once).
 *
 * Rate limits are the account's, shared by all its integrations (five searches a second).
 * HubSpot answers a limit in two shapes: the older body names it (`policyName`: SECONDLY, DAILY,
 * TEN_SECONDLY_ROLLING; `errorType: "RATE_LIMIT"`), the current one may carry only `category:
 * "RATE_LIMITS"` and a message, with the daily quota in `X-HubSpot-RateLimit-Daily-Remaining`;
 * and such a body has been seen with a 500 as well as a 429. `hubspotLimit` reads all of them:
 * the daily quota is spent when the policy says DAILY, the daily-remaining header says 0 or the
 * message says "daily"; otherwise it is the per-second (or per-interval) limit. HubSpot does not
 * promise a Retry-After, so without one the lookup pauses 1 s (or the interval HubSpot names, at
 * most 10 s) for a short limit and an hour for the daily one (the quota resets at midnight in
 * the account's time zone). docs/crm/hubspot.md has each shape's source.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import type { SecretRegistry } from '../../../src-shared/process/log.ts';
import { CrmError, type CrmAnswer, type CrmConnector, type CrmQuery } from './connector.ts';
import { exchangeJson, retryAfterMs, statusError } from './http.ts';
import { toE164 } from '../numbers/phone-number.ts';

export const HUBSPOT_API = 'https://api.hubapi.com';
/** HubSpot's dated API version the connector asks (docs/crm/hubspot.md, "API version"). */
export const HUBSPOT_API_VERSION = '2026-09';
export const HUBSPOT_SEARCH_PATH = `/crm/objects/${HUBSPOT_API_VERSION}/contacts/search`;
export const HUBSPOT_ACCOUNT_PATH = `/account-info/${HUBSPOT_API_VERSION}/details`;

/**
 * Each number a contact has, as typed and as HubSpot's calculated E.164 (its international form),
 * the pair checked against the caller.
 */
const NUMBERS = [
  { typed: 'phone', calculated: 'hs_calculated_phone_number' },
  { typed: 'mobilephone', calculated: 'hs_calculated_mobile_number' },
] as const;
/** The contact properties read: name, company, and the numbers (to check that one is the caller's). */
const PROPERTIES = [
  'firstname',
  'lastname',
  'company',
  ...NUMBERS.flatMap((n) => [n.typed, n.calculated]),
];
/**
 * Candidates per search (HubSpot allows up to 200 a page): enough that namesakes of other countries
 * (same national digits) do not push the caller's own contact off the page.
 */
const LIMIT = 10;
const SECONDLY_PAUSE_MS = 1_000;
/** The longest short-limit pause taken from HubSpot's interval header (its rolling window is 10 s). */
const MAX_INTERVAL_PAUSE_MS = 10_000;
const DAILY_PAUSE_MS = 60 * 60_000;

export interface HubSpotLimit {
  /** Which limit, for the log: DAILY, SECONDLY, TEN_SECONDLY_ROLLING, … ('RATE' when unnamed). */
  policy: string;
  daily: boolean;
  /** How long to stop asking when HubSpot gives no Retry-After. */
  pauseMs: number;
}

/**
 * Whether an answer says a HubSpot rate limit was reached, and which: a 429 in either body shape,
 * or any answer whose body has `category: "RATE_LIMITS"`; null for every other answer.
 */
export function hubspotLimit(status: number, headers: Headers, body: unknown): HubSpotLimit | null {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const category = text(b.category).toUpperCase();
  if (status !== 429 && category !== 'RATE_LIMITS') return null;
  const policy = text(b.policyName).toUpperCase().slice(0, 40);
  const remaining = headers.get('x-hubspot-ratelimit-daily-remaining')?.trim();
  const daily =
    policy === 'DAILY' ||
    (policy === '' && remaining !== undefined && /^0+$/.test(remaining)) ||
    (policy === '' && /\bdaily\b/i.test(text(b.message).slice(0, 200)));
  if (daily) return { policy: 'DAILY', daily, pauseMs: DAILY_PAUSE_MS };
  const interval = Number(headers.get('x-hubspot-ratelimit-interval-milliseconds') ?? '');
  const pauseMs =
    Number.isFinite(interval) && interval > SECONDLY_PAUSE_MS
      ? Math.min(MAX_INTERVAL_PAUSE_MS, interval)
      : SECONDLY_PAUSE_MS;
  return { policy: /^[A-Z_]+$/.test(policy) ? policy : 'RATE', daily, pauseMs };
}

export interface HubSpotConnectorDeps {
  fetch: typeof fetch;
  clock: Clock;
  secrets: SecretRegistry;
  /** The service key (or a legacy private app's token) from the keychain; null when none is stored. */
  token: () => Promise<string | null>;
  /** HubSpot's API address; tests point it at the fake. */
  apiBase?: string;
}

/** The search request's body for a number, as HubSpot's reference shapes it. */
export function hubspotSearchBody(query: CrmQuery): object {
  const filter = (propertyName: string, value: string) => ({
    filters: [{ propertyName, operator: 'EQ', value }],
  });
  const groups = [filter('phone', query.e164), filter('mobilephone', query.e164)];
  if (query.national)
    groups.push(
      filter('hs_searchable_calculated_phone_number', query.national),
      filter('hs_searchable_calculated_mobile_number', query.national),
    );
  return {
    filterGroups: groups,
    properties: PROPERTIES,
    sorts: [{ propertyName: 'lastmodifieddate', direction: 'DESCENDING' }],
    limit: LIMIT,
  };
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/**
 * Whether one of the contact's numbers is the caller's: HubSpot's calculated E.164 when it has one
 * (it read the typed number with the contact's country), else the typed number read in the user's
 * region. Never the national digits alone: they are the same in several countries.
 */
export function isCallersNumber(properties: Record<string, unknown>, query: CrmQuery): boolean {
  return NUMBERS.some(({ typed, calculated }) => {
    const international = text(properties[calculated]).slice(0, 64);
    if (international) return toE164(international) === query.e164;
    const asTyped = text(properties[typed]).slice(0, 64);
    return asTyped !== '' && toE164(asTyped, query.region) === query.e164;
  });
}

const UI_DOMAIN = /^app(-[a-z0-9]{1,10})?\.hubspot\.com$/;

export class HubSpotConnector implements CrmConnector {
  readonly kind = 'hubspot' as const;
  private readonly d: HubSpotConnectorDeps;
  private readonly base: string;
  /** The account's contact-page prefix, once known; null when it could not be learned. */
  private account: Promise<string | null> | null = null;

  constructor(deps: HubSpotConnectorDeps) {
    this.d = deps;
    this.base = (deps.apiBase ?? HUBSPOT_API).replace(/\/+$/, '');
  }

  async lookup(query: CrmQuery, signal: AbortSignal): Promise<CrmAnswer> {
    const token = await this.d.token();
    if (!token) throw new CrmError('no-credentials', 'no HubSpot access token is stored');
    this.d.secrets.add(token);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const answer = await exchangeJson(
      this.d.fetch,
      `${this.base}${HUBSPOT_SEARCH_PATH}`,
      { method: 'POST', headers, body: JSON.stringify(hubspotSearchBody(query)) },
      signal,
    );
    const limit = hubspotLimit(answer.status, answer.headers, answer.body);
    if (limit) throw this.rateLimited(limit, answer.headers);
    if (answer.status < 200 || answer.status >= 300) throw statusError(answer.status, undefined);
    const results = (answer.body as { results?: unknown } | undefined)?.results;
    if (!Array.isArray(results))
      throw new CrmError('bad-answer', 'the HubSpot answer has no results list', {
        status: answer.status,
      });
    for (const result of results) {
      if (!result || typeof result !== 'object') continue;
      const { id, properties } = result as { id?: unknown; properties?: unknown };
      const p = (properties && typeof properties === 'object' ? properties : {}) as Record<
        string,
        unknown
      >;
      if (!isCallersNumber(p, query)) continue;
      const company = text(p.company);
      const name = [text(p.firstname), text(p.lastname)].filter(Boolean).join(' ') || company;
      if (!name) continue;
      const prefix = await this.contactPages(headers, signal);
      const contactId = typeof id === 'string' && /^\d{1,20}$/.test(id) ? id : undefined;
      const recordUrl = prefix && contactId ? `${prefix}${contactId}` : '';
      return {
        found: true,
        record: {
          name,
          company: company === name ? '' : company,
          recordUrl,
          ...(contactId ? { contactId } : {}),
        },
      };
    }
    return { found: false };
  }

  private rateLimited(limit: HubSpotLimit, headers: Headers): CrmError {
    const wait = retryAfterMs(headers, this.d.clock.now()) ?? limit.pauseMs;
    return new CrmError('rate-limited', `HubSpot's ${limit.policy} limit was reached`, {
      status: 429,
      retryAfterMs: wait,
    });
  }

  /**
   * `https://app.hubspot.com/contacts/<portalId>/record/0-1/` for this account (0-1 is HubSpot's
   * type id of contacts), learned once; null when the account details cannot be read (the lookup
   * still names the caller, without a link). A failure is asked again on a later lookup.
   */
  private contactPages(
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<string | null> {
    this.account ??= exchangeJson(
      this.d.fetch,
      `${this.base}${HUBSPOT_ACCOUNT_PATH}`,
      { method: 'GET', headers: { authorization: headers.authorization ?? '' } },
      signal,
    ).then(
      (answer) => {
        const body = (answer.body ?? {}) as { portalId?: unknown; uiDomain?: unknown };
        const portal = body.portalId;
        if (answer.status !== 200 || typeof portal !== 'number' || !Number.isSafeInteger(portal)) {
          this.account = null;
          return null;
        }
        const domain = text(body.uiDomain);
        const host = UI_DOMAIN.test(domain) ? domain : 'app.hubspot.com';
        return `https://${host}/contacts/${portal}/record/0-1/`;
      },
      () => {
        this.account = null;
        return null;
      },
    );
    return this.account;
  }
}
