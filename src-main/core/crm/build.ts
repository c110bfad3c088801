/**
 * The CRM lookup as the settings describe it: which connector, where its token or password is in
 * the keychain, and the lookup service around it. The tray app (app/runtime.ts) and the headless
 * runner build it the same way, each with its own transport (the one way out: proxy, CAs).
 *
 * Keychain: service `Screenpop`, account `crm-lookup@<host>`: `crm-lookup@api.hubapi.com` for
 * HubSpot's service key (or legacy private-app token), `crm-lookup@<host of the URL template>`
 * for the generic lookup's bearer token or `user:password`; `crm-log@<host of logUrl>` for the
 * generic connector's call-log signing secret (issue 39, docs/crm/call-log-webhook.md).
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import type { CrmLookupSettings } from '../settings/types.ts';
import type { CrmConnector } from './connector.ts';
import { GenericJsonConnector } from './generic.ts';
import { HUBSPOT_API, HubSpotConnector } from './hubspot.ts';
import { CrmLookup } from './lookup.ts';
import { lookupHost, lookupTemplateProblem } from './template.ts';
import { isSecureOrLoopback } from '../../../src-shared/net/loopback.ts';

export const CRM_ACCOUNT_PREFIX = 'crm-lookup@';

/** The keychain account of the lookup's token or password; null when no lookup is set up. */
export function crmKeychainAccount(
  settings: CrmLookupSettings,
  hubspotApi: string = HUBSPOT_API,
): string | null {
  if (settings.provider === 'hubspot') return `${CRM_ACCOUNT_PREFIX}${new URL(hubspotApi).host}`;
  if (settings.provider !== 'generic' || lookupTemplateProblem(settings.urlTemplate)) return null;
  return `${CRM_ACCOUNT_PREFIX}${lookupHost(settings.urlTemplate)}`;
}

export const CRM_LOG_ACCOUNT_PREFIX = 'crm-log@';

/**
 * The generic connector's call-log receiver as a URL, when it is usable: the generic connector,
 * an address, https or http only to this computer (the one rule, src-shared/net/loopback.ts).
 */
export function crmLogReceiver(settings: CrmLookupSettings): URL | null {
  if (settings.provider !== 'generic' || !settings.logUrl) return null;
  try {
    const url = new URL(settings.logUrl);
    return isSecureOrLoopback(url) ? url : null;
  } catch {
    return null;
  }
}

/** The keychain account of the call log's signing secret; null when no receiver is set up. */
export function crmLogKeychainAccount(settings: CrmLookupSettings): string | null {
  const url = crmLogReceiver(settings);
  return url ? `${CRM_LOG_ACCOUNT_PREFIX}${url.host}` : null;
}

export interface CrmBuildDeps {
  clock: Clock;
  logger: Logger;
  secrets: SecretRegistry;
  fetch: typeof fetch;
  /** Reads the lookup's secret (the keychain, or the runner's environment). */
  secret: (account: string) => Promise<string | null>;
  region: () => string;
  allowedSchemes: () => readonly string[];
  /**
   * HubSpot's API address (HUBSPOT_API by default), injected by code only: no environment or
   * setting of a shipped build sets it (the token goes there).
   */
  hubspotApi?: string;
}

/** The lookup service for these settings; null when the provider is 'none' (or not usable). */
export function buildCrmLookup(settings: CrmLookupSettings, deps: CrmBuildDeps): CrmLookup | null {
  const account = crmKeychainAccount(settings, deps.hubspotApi);
  if (!account) return null;
  const secret = () => deps.secret(account);
  let connector: CrmConnector;
  if (settings.provider === 'hubspot')
    connector = new HubSpotConnector({
      fetch: deps.fetch,
      clock: deps.clock,
      secrets: deps.secrets,
      token: secret,
      ...(deps.hubspotApi ? { apiBase: deps.hubspotApi } : {}),
    });
  else
    connector = new GenericJsonConnector({
      config: settings,
      fetch: deps.fetch,
      clock: deps.clock,
      secrets: deps.secrets,
      secret,
    });
  return new CrmLookup({
    clock: deps.clock,
    logger: deps.logger,
    connector,
    region: deps.region,
    allowedSchemes: deps.allowedSchemes,
    timeoutMs: settings.timeoutSec * 1000,
  });
}
