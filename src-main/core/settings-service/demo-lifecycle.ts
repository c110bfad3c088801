/**
 * The demo's simulator while demo mode is on: started once for the phone system the settings
 * name, started again for another, closed when demo mode is left or the app stops. Its made-up
 * secret lives in memory only (`credentials`) and is registered with the log's SecretRegistry.
 * SettingsService asks it what runs; the lifecycle is here, apart from the settings' own rules.
 */
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import { keychainAccount, MemoryCredentialStore } from '../credentials/credential-store.ts';
import type { PhoneSystem } from '../settings/types.ts';
import type { DemoService } from '../ports/ports.ts';

export interface DemoLifecycleDeps {
  /** Starts the demo's simulator playing `phoneSystem`. */
  start: (phoneSystem: PhoneSystem) => Promise<DemoService>;
  secrets: SecretRegistry;
  logger: Logger;
}

export class DemoLifecycle {
  /** The running demo's secret, for the connection it serves (never the keychain). */
  readonly credentials = new MemoryCredentialStore();
  private readonly d: DemoLifecycleDeps;
  private service: DemoService | null = null;

  constructor(deps: DemoLifecycleDeps) {
    this.d = deps;
  }

  /** The demo that runs, or null. */
  get running(): DemoService | null {
    return this.service;
  }

  /**
   * Runs the demo while `demoMode` is on, playing `phoneSystem` (another choice is another demo);
   * a failure to start is logged, and `running` stays null (the plan then says so).
   */
  async follow(demoMode: boolean, phoneSystem: PhoneSystem): Promise<void> {
    if (this.service && (this.service.phoneSystem ?? 'standard') !== phoneSystem)
      await this.close();
    if (demoMode && !this.service)
      await this.start(phoneSystem).catch((err: unknown) =>
        this.d.logger.error('demo could not start', { error: err }),
      );
  }

  /** Starts the demo's simulator (once). */
  async start(phoneSystem: PhoneSystem): Promise<DemoService> {
    if (this.service) return this.service;
    const demo = await this.d.start(phoneSystem);
    this.d.secrets.add(demo.secret);
    await this.credentials.setSecret(keychainAccount(demo.apiKey, demo.baseUrl), demo.secret);
    this.service = demo;
    return demo;
  }

  /** Closes the demo's simulator, if it runs (demo mode left, or shutdown). */
  async close(): Promise<void> {
    await this.service?.close().catch(() => {});
    this.service = null;
  }
}
