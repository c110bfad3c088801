/**
 * What the settings keep in the keychain: the API secret (under the key and address it belongs
 * to), the CRM lookup's token, the generic connector's call-log signing secret, and whether each
 * is there. The settings service decides when; this
 * is how, so a keychain that refuses or cannot be read is handled in one place.
 */
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import {
  keychainAccount,
  keychainAccountOrNull as accountFor,
  KeychainUnavailableError,
  type CredentialStore,
} from '../credentials/credential-store.ts';
import type { Settings } from '../settings/types.ts';
import { crmKeychainAccount, crmLogKeychainAccount } from '../crm/build.ts';
import { english, phrase } from '../../../src-shared/i18n/phrase.ts';
import type { OrganisationAccount, OrgSignInState } from '../org/org-account.ts';
import { refusal, type SettingsRefusal } from './settings-port.ts';

export interface SettingsKeychainDeps {
  logger: Logger;
  secrets: SecretRegistry;
  credentials: CredentialStore;
  organisation?: Pick<OrganisationAccount, 'stored'>;
}

/** What the keychain holds for the settings in force. */
export interface KeychainHolds {
  hasSecret: boolean;
  hasCrmSecret: boolean;
  /** The generic connector's call-log signing secret (crm/build.ts crmLogKeychainAccount). */
  hasCrmLogSecret: boolean;
  /** Organisation mode: the sign-in stored for the settings' relay and tenant. */
  orgSignIn: OrgSignInState | null;
}

/** Stores the API secret typed in Settings under the account of `settings`' key and address. */
export async function storeApiSecret(
  d: SettingsKeychainDeps,
  settings: Settings,
  secret: string,
): Promise<{ ok: true } | SettingsRefusal> {
  d.secrets.add(secret);
  const account = accountFor(settings.apiKey, settings.baseUrl);
  if (!account) {
    return refusal(
      settings.apiKey.trim() ? 'baseUrl' : 'apiKey',
      phrase('status.settings.secret-needs-address'),
    );
  }
  try {
    await d.credentials.setSecret(account, secret);
    return { ok: true };
  } catch (err) {
    d.logger.error('the secret could not be stored in the keychain', { error: err });
    // The cause and its remedy (not installed, no Secret Service, locked...), in the user's
    // language; a store that does not say is taken as refused.
    const words =
      err instanceof KeychainUnavailableError
        ? err.words
        : new KeychainUnavailableError('refused', String(err), process.platform).words;
    return { ok: false, field: 'secret', words, message: english(words) };
  }
}

/** The CRM lookup's token or `user:password`, into the keychain under its account. */
export async function storeCrmSecret(
  d: SettingsKeychainDeps,
  settings: Settings,
  crmSecret: string,
): Promise<{ ok: true } | SettingsRefusal> {
  d.secrets.add(crmSecret);
  const account = crmKeychainAccount(settings.crmLookup);
  if (!account) return refusal('crmLookup', phrase('status.crm.secret-needs-lookup'));
  try {
    await d.credentials.setSecret(account, crmSecret);
    return { ok: true };
  } catch (err) {
    d.logger.error('the CRM token could not be stored in the keychain', { error: err });
    return refusal('crmSecret', phrase('status.crm.secret-not-stored'));
  }
}

/**
 * The generic connector's call-log signing secret, into the keychain under the account of the
 * settings' receiver (crm-log@<host>); refused at its field while no receiver is set up.
 */
export async function storeCrmLogSecret(
  d: SettingsKeychainDeps,
  settings: Settings,
  logSecret: string,
): Promise<{ ok: true } | SettingsRefusal> {
  d.secrets.add(logSecret);
  const account = crmLogKeychainAccount(settings.crmLookup);
  if (!account) return refusal('crmLookup.logUrl', phrase('status.crm.log-secret-needs-url'));
  try {
    await d.credentials.setSecret(account, logSecret);
    return { ok: true };
  } catch (err) {
    d.logger.error('the call log signing secret could not be stored in the keychain', {
      error: err,
    });
    return refusal('crmLogSecret', phrase('status.crm.log-secret-not-stored'));
  }
}

/** Deletes the API secret of `apiKey` at `baseUrl` from the keychain (a failure is logged). */
export async function deleteApiSecret(
  d: SettingsKeychainDeps,
  apiKey: string,
  baseUrl: string,
): Promise<void> {
  const account = accountFor(apiKey, baseUrl);
  if (!account) return;
  await d.credentials.deleteSecret(account).then(
    (deleted) => deleted && d.logger.info('the API secret was removed from the keychain'),
    (err: unknown) =>
      d.logger.error('the API secret could not be removed from the keychain', { error: err }),
  );
}

/**
 * What the keychain holds for `settings` (a keychain that cannot be read holds nothing, logged);
 * `organisation` says whether the settings are organisation mode.
 */
export async function readKeychain(
  d: SettingsKeychainDeps,
  settings: Settings,
  organisation: boolean,
): Promise<KeychainHolds> {
  const crmAccount = crmKeychainAccount(settings.crmLookup);
  const hasCrmSecret = crmAccount
    ? (await d.credentials.getSecret(crmAccount).catch(() => null)) !== null
    : false;
  const logAccount = crmLogKeychainAccount(settings.crmLookup);
  const hasCrmLogSecret = logAccount
    ? (await d.credentials.getSecret(logAccount).catch(() => null)) !== null
    : false;
  const { apiKey, baseUrl } = settings;
  const orgSignIn = organisation
    ? await (d.organisation?.stored(settings) ?? Promise.resolve(null)).catch((err: unknown) => {
        d.logger.warn('keychain could not be read', { error: err });
        return null;
      })
    : null;
  let hasSecret = false;
  if (apiKey && baseUrl) {
    try {
      hasSecret = (await d.credentials.getSecret(keychainAccount(apiKey, baseUrl))) !== null;
    } catch (err) {
      d.logger.warn('keychain could not be read', { error: err });
    }
  }
  return { hasSecret, hasCrmSecret, hasCrmLogSecret, orgSignIn };
}
