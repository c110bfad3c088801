/**
 * The generic HTTPS JSON lookup, for a CRM or an in-house system with its own API: GET the URL
 * template filled with the caller's number (a query value only: template.ts), with a bearer token
 * or Basic credentials from the keychain, and read name, company and record link from the JSON
 * answer by the configured field paths.
 *
 * Answers: 200 with a name at the name path is a record; 200 without one, and 404, mean "no one by
 * that number"; 401, 403, 429 and other errors are CrmErrors (http.ts).
 */
import type { SecretRegistry } from '../../../src-shared/process/log.ts';
import type { Clock } from '../../../src-shared/process/clock.ts';
import { CrmError, type CrmAnswer, type CrmConnector, type CrmQuery } from './connector.ts';
import { exchangeJson, retryAfterMs, statusError } from './http.ts';
import { fillLookupTemplate, pickField } from './template.ts';
import { digitsOf } from '../numbers/phone-number.ts';

export type CrmAuth = 'none' | 'bearer' | 'basic';

export interface GenericLookupConfig {
  urlTemplate: string;
  auth: CrmAuth;
  nameField: string;
  companyField: string;
  recordUrlField: string;
}

export interface GenericConnectorDeps {
  config: GenericLookupConfig;
  fetch: typeof fetch;
  clock: Clock;
  secrets: SecretRegistry;
  /** The token (bearer) or `user:password` (basic) from the keychain; null when none is stored. */
  secret: () => Promise<string | null>;
}

export class GenericJsonConnector implements CrmConnector {
  readonly kind = 'generic' as const;
  private readonly d: GenericConnectorDeps;

  constructor(deps: GenericConnectorDeps) {
    this.d = deps;
  }

  async lookup(query: CrmQuery, signal: AbortSignal): Promise<CrmAnswer> {
    const { config } = this.d;
    const url = fillLookupTemplate(config.urlTemplate, {
      number: query.e164,
      digits: query.national || digitsOf(query.e164),
    });
    if (!url) throw new CrmError('bad-answer', 'the lookup address is not usable');
    const headers: Record<string, string> = {};
    if (config.auth !== 'none') {
      const secret = await this.d.secret();
      if (!secret) throw new CrmError('no-credentials', 'no CRM token or password is stored');
      this.d.secrets.add(secret);
      if (config.auth === 'bearer') headers.authorization = `Bearer ${secret}`;
      else {
        const basic = Buffer.from(secret, 'utf8').toString('base64');
        this.d.secrets.add(basic);
        headers.authorization = `Basic ${basic}`;
      }
    }
    const answer = await exchangeJson(this.d.fetch, url, { method: 'GET', headers }, signal);
    if (answer.status === 404) return { found: false };
    if (answer.status < 200 || answer.status >= 300)
      throw statusError(answer.status, retryAfterMs(answer.headers, this.d.clock.now()));
    if (answer.body === undefined)
      throw new CrmError('bad-answer', 'the CRM answer is not JSON', { status: answer.status });
    const name = pickField(answer.body, config.nameField);
    if (!name) return { found: false };
    return {
      found: true,
      record: {
        name,
        company: config.companyField ? pickField(answer.body, config.companyField) : '',
        recordUrl: config.recordUrlField ? pickField(answer.body, config.recordUrlField) : '',
      },
    };
  }
}
