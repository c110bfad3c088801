/**
 * The CRM lookup for the settings in force (rebuilt when its settings, its token or the transport
 * change) and Settings' "Test lookup" (a fresh lookup with the form's settings, no cache). The app
 * runtime owns one (the call presenter asks it for the lookup in force); the headless runner builds
 * its lookup with one too.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import type { CredentialStore } from '../credentials/credential-store.ts';
import type { Settings } from '../settings/types.ts';
import { buildCrmLookup } from '../crm/build.ts';
import { testCrmLookup } from '../crm/test-lookup.ts';
import type { CrmLookup } from '../crm/lookup.ts';
import { PLAIN_ENGLISH, type TranslatorSource } from '../../../src-shared/i18n/locale-state.ts';
import type { CrmTestResult } from '../ports/views.ts';

export interface CrmFlowDeps {
  clock: Clock;
  logger: Logger;
  secrets: SecretRegistry;
  /** Where the lookup's token is read (the keychain; the runner reads its environment first). */
  credentials: Pick<CredentialStore, 'getSecret'>;
  /** The settings in force (the lookup reads the region and the allowed schemes from them). */
  settings: () => Settings;
  /** The way out for these settings; without it no lookup is made (AppRuntimeDeps.crmNetwork). */
  crmNetwork?: (settings: Settings) => { fetch: typeof fetch };
  hubspotApi?: string;
  words?: TranslatorSource;
  /** The runtime's logger (its component), for what this says. */
  say: Logger;
}

export class CrmFlow {
  private readonly d: CrmFlowDeps;
  /** The CRM lookup for the settings in force; null when none is set up. */
  private crm: CrmLookup | null = null;

  constructor(deps: CrmFlowDeps) {
    this.d = deps;
  }

  /** The lookup in force, or null. */
  current(): CrmLookup | null {
    return this.crm;
  }

  /** Closes the lookup in force (shutdown). */
  close(): void {
    this.crm?.close();
    this.crm = null;
  }

  /** A new CRM lookup for these settings (the old one's answers and pauses are forgotten). */
  rebuild(settings: Settings): void {
    this.close();
    const network = this.d.crmNetwork;
    if (!network || settings.crmLookup.provider === 'none') return;
    try {
      this.crm = buildCrmLookup(settings.crmLookup, {
        clock: this.d.clock,
        logger: this.d.logger,
        secrets: this.d.secrets,
        fetch: network(settings).fetch,
        secret: (account) => this.d.credentials.getSecret(account),
        region: () => this.d.settings().defaultRegion,
        allowedSchemes: () => this.d.settings().crmAllowedSchemes,
        ...(this.d.hubspotApi ? { hubspotApi: this.d.hubspotApi } : {}),
      });
    } catch (err) {
      // An unusable proxy setting: no lookup (the connection's status says what is wrong).
      this.d.say.warn('CRM lookup not started', { error: err });
    }
  }

  /**
   * Settings' "Test lookup": `number` looked up with checked form settings `s` (not saved yet) and
   * the token `typed` in the form, else the one in the keychain; a fresh lookup, no cache.
   */
  async test(s: Settings, typed: string | undefined, number: string): Promise<CrmTestResult> {
    const t = (this.d.words ?? PLAIN_ENGLISH).current();
    if (typed) this.d.secrets.add(typed);
    let lookup: CrmLookup | null = null;
    if (this.d.crmNetwork && s.crmLookup.provider !== 'none')
      try {
        lookup = buildCrmLookup(s.crmLookup, {
          clock: this.d.clock,
          logger: this.d.logger,
          secrets: this.d.secrets,
          fetch: this.d.crmNetwork(s).fetch,
          secret: async (account) => typed || (await this.d.credentials.getSecret(account)),
          region: () => s.defaultRegion,
          allowedSchemes: () => s.crmAllowedSchemes,
          ...(this.d.hubspotApi ? { hubspotApi: this.d.hubspotApi } : {}),
        });
      } catch (err) {
        this.d.say.warn('CRM lookup test not started', { error: err });
      }
    return testCrmLookup(lookup, s.crmLookup, number, t, () => this.d.clock.now());
  }

  /** The CRM lookup's figures for the diagnostics (never a number, a name or the token). */
  stats(): ReturnType<CrmLookup['stats']> | null {
    return this.crm?.stats() ?? null;
  }
}
