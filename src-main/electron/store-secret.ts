/**
 * `Screenpop --store-secret`: the administrator's pre-provisioning of the API secret (README
 * "Pre-provisioning the API secret"). A side job of the app's executable, apart from the tray app
 * main.ts starts: it reads standard input, writes the keychain and exits; no window.
 */
import { homedir } from 'node:os';
import { render } from '../../src-shared/i18n/phrase.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { createLogger, SecretRegistry } from '../../src-shared/process/log.ts';
import {
  KeychainUnavailableError,
  KeytarCredentialStore,
} from '../core/credentials/keytar-store.ts';
import { readAll, storeSecret } from '../core/credentials/provision.ts';
import { loadMachinePolicy, presetDefaults, withLocks } from '../core/settings/policy.ts';

/**
 * Stores the API secret from standard input in this user's keychain, for the service address and
 * API key the organisation's policy sets (README "Pre-provisioning the API secret"); no window.
 */
export async function provisionSecret(t: Translator): Promise<number> {
  const secrets = new SecretRegistry().hideHome(homedir());
  const logger = createLogger({ secrets }, { app: 'screenpop --store-secret' });
  try {
    const policy = await loadMachinePolicy(logger, process.platform);
    const account = await storeSecret(
      withLocks(presetDefaults(policy), policy),
      await readAll(process.stdin),
      new KeytarCredentialStore(),
      secrets,
    );
    process.stderr.write(`Screenpop: ${t.t('runner.secret-stored', { account })}\n`);
    return 0;
  } catch (err) {
    // A keychain that cannot be used says why and what to install, in the user's language.
    const error = secrets.scrub(
      err instanceof KeychainUnavailableError
        ? `${render(err.words, t)} (${err.detail})`
        : err instanceof Error
          ? err.message
          : String(err),
    );
    process.stderr.write(`Screenpop: ${t.t('runner.secret-not-stored', { error })}\n`);
    return 1;
  }
}
