/**
 * The call-log writer for the CRM the lookup uses: HubSpot's Calls with the lookup's own token
 * (keychain account crm-lookup@api.hubapi.com; it needs the write scope too, docs/crm/hubspot.md),
 * or the generic connector's signed POST to the settings' `crmLookup.logUrl` with its signing
 * secret (keychain account crm-log@<host of logUrl>; the runner: SCREENPOP_CRM_LOG_SECRET or
 * --crm-log-secret-file). The tray app and the runner build it the same way.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import type { SecretRegistry } from '../../../src-shared/process/log.ts';
import type { CrmLookupSettings } from '../settings/types.ts';
import { crmKeychainAccount, crmLogKeychainAccount, crmLogReceiver } from '../crm/build.ts';
import { GenericCallWriter } from './generic-log.ts';
import { HubSpotCallWriter } from './hubspot-calls.ts';
import type { CallLogWriter } from './queue.ts';
import { CrmError } from '../crm/connector.ts';
export interface CallLogWriterDeps {
  clock: Clock;
  secrets: SecretRegistry;
  fetch: typeof fetch;
  /** Reads a secret by its keychain account (the lookup's token, the call log's signing secret). */
  secret: (account: string) => Promise<string | null>;
  hubspotApi?: string;
}

/** The writer for these settings; null when nothing can be logged (no CRM, no receiver). */
export function buildCallLogWriter(
  settings: CrmLookupSettings,
  deps: CallLogWriterDeps,
): CallLogWriter | null {
  if (settings.provider === 'hubspot') {
    const account = crmKeychainAccount(settings, deps.hubspotApi);
    if (!account) return null;
    return new HubSpotCallWriter({
      fetch: deps.fetch,
      clock: deps.clock,
      secrets: deps.secrets,
      token: () => deps.secret(account),
      ...(deps.hubspotApi ? { apiBase: deps.hubspotApi } : {}),
    });
  }
  const receiver = crmLogReceiver(settings);
  const account = crmLogKeychainAccount(settings);
  if (!receiver || !account) return null;
  return new GenericCallWriter({
    fetch: deps.fetch,
    clock: deps.clock,
    secrets: deps.secrets,
    url: receiver.href,
    secret: () => deps.secret(account),
  });
}

/**
 * A writer that follows the settings in force (the tray app: the user may switch CRM): each write
 * goes to the writer built for the current CRM settings (rebuilt when they change). With no CRM
 * set up, a write fails as `no-credentials`, which stops the queue until the settings change
 * (the app calls the queue's resume() then).
 */
export function settingsCallLogWriter(
  settings: () => CrmLookupSettings,
  deps: (settings: CrmLookupSettings) => CallLogWriterDeps,
): CallLogWriter {
  let built: { key: string; writer: CallLogWriter | null } | null = null;
  const current = (): CallLogWriter => {
    const s = settings();
    const key = JSON.stringify(s);
    if (built?.key !== key) built = { key, writer: buildCallLogWriter(s, deps(s)) };
    if (!built.writer) throw new CrmError('no-credentials', 'no CRM is set up to log calls to');
    return built.writer;
  };
  return {
    get kind() {
      return settings().provider === 'generic' ? 'generic' : 'hubspot';
    },
    create: async (record, marker, signal) => current().create(record, marker, signal),
    update: async (id, record, marker, signal) => current().update(id, record, marker, signal),
    find: async (marker, signal) => current().find(marker, signal),
  };
}
