/**
 * HubSpot: the CRM search API (`POST /crm/v3/objects/contacts/search`) with a private app's access
 * token (`Authorization: Bearer pat-…`, scope `crm.objects.contacts.read`), as HubSpot's API
 * reference describes it (docs/crm/hubspot.md has the facts we rely on and where each comes from).
 *
 * One search per number: filter groups are OR'ed, so one request asks for the number in `phone` or
 * `mobilephone` as E.164, or in HubSpot's calculated searchable forms (digits without the country
 * code). Those forms collide across countries (+44 20 7946 0958 and +1 207-946-0958 are both
 * 2079460958), so the search only finds candidates: a contact is named only when one of its
 * numbers is the caller's E.164 (HubSpot's calculated international form `hs_calculated_phone_number`
 * / `_mobile_number` when it has one, else the number as typed read in the user's region, with
 * phone-number.ts, the project's one reading of a number). The most recently modified such contact
 * wins (sorted by `lastmodifieddate`); further pages are never fetched. The record link is HubSpot's own contact page,
 * built from the account's `portalId` and `uiDomain` (`GET /account-info/v3/details`, asked once).
 *
 * A 429 says which limit was hit (`policyName`: SECONDLY or DAILY); HubSpot does not promise a
 * Retry-After, so without one the lookup pauses 1 s for the per-second limit and an hour for the
 * daily one (the daily quota resets at midnight in the account's time zone).
 */
import type { Clock } from '../../../src-shared/clock.ts';
import type { SecretRegistry } from '../../../src-shared/log.ts';
import { CrmError, type CrmAnswer, type CrmConnector, type CrmQuery } from './connector.ts';
import { exchangeJson, retryAfterMs, statusError } from './http.ts';
import { toE164 } from '../phone-number.ts';

export const HUBSPOT_API = 'https://api.hubapi.com';
export const HUBSPOT_SEARCH_PATH = '/crm/v3/objects/contacts/search';
export const HUBSPOT_ACCOUNT_PATH = '/account-info/v3/details';

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
const DAILY_PAUSE_MS = 60 * 60_000;

export interface HubSpotConnectorDeps {
  fetch: typeof fetch;
  clock: Clock;
  secrets: SecretRegistry;
  /** The private app's access token from the keychain; null when none is stored. */
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
    if (answer.status === 429) throw this.rateLimited(answer.headers, answer.body);
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
      const recordUrl =
        prefix && typeof id === 'string' && /^\d{1,20}$/.test(id) ? `${prefix}${id}` : '';
      return { found: true, record: { name, company: company === name ? '' : company, recordUrl } };
    }
    return { found: false };
  }

  private rateLimited(headers: Headers, body: unknown): CrmError {
    const policy = text((body as { policyName?: unknown } | undefined)?.policyName).toUpperCase();
    const wait =
      retryAfterMs(headers, this.d.clock.now()) ??
      (policy === 'DAILY' ? DAILY_PAUSE_MS : SECONDLY_PAUSE_MS);
    return new CrmError('rate-limited', `HubSpot's ${policy || 'rate'} limit was reached`, {
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
