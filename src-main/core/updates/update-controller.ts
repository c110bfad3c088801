/**
 * Updates, decided here and carried out by an UpdaterPort (electron-updater in
 * src-main/electron/updater.ts): check the organisation's feed a minute after start and every few
 * hours, let a newer version download, then restart to install it only when the RestartGate allows
 * (no call ringing, none in the last minutes). Off when this installation cannot update itself
 * (install-kind.ts) or the `updates` setting says so. Nothing here throws out of a timer.
 */
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import type { UpdateSettings } from '../settings/types.ts';
import type { UpdateSupport } from './install-kind.ts';
import type { RestartGate } from './restart-gate.ts';

export interface UpdaterPort {
  /** Points the updater at a feed; null url: the feed the build was published with. */
  configure(feed: { url: string | null; channel: string }): void;
  /** Checks the feed; a newer version downloads by itself and is then reported to onDownloaded. */
  check(): Promise<void>;
  onDownloaded(listener: (version: string) => void): () => void;
  /** Quits, installs the downloaded version and starts it. */
  install(): void;
}

export type UpdateState =
  | { state: 'off'; reason: string }
  | { state: 'idle' }
  | { state: 'ready'; version: string; waitingFor: string | null }
  | { state: 'installing'; version: string };

export interface UpdateControllerOptions {
  clock: Clock;
  logger: Logger;
  port: UpdaterPort;
  support: UpdateSupport;
  gate: RestartGate;
  /** First check after start (default 1 minute: let the connection come up first). */
  firstCheckMs?: number;
  /** Between checks (default 4 hours). */
  checkEveryMs?: number;
}

export class UpdateController {
  private readonly o: UpdateControllerOptions;
  private readonly logger: Logger;
  private current: UpdateState = { state: 'off', reason: 'not started' };
  private applied = '';
  private timer: TimerHandle | undefined;
  private cancelInstall: (() => void) | null = null;
  private readonly unsubscribe: () => void;
  private stopped = false;

  constructor(options: UpdateControllerOptions) {
    this.o = options;
    this.logger = options.logger.child({ component: 'updates' });
    this.unsubscribe = options.port.onDownloaded((version) => this.downloaded(version));
  }

  state(): UpdateState {
    return { ...this.current };
  }

  /** Applies the `updates` setting (at start and after every change). */
  apply(settings: UpdateSettings): void {
    if (this.stopped) return;
    const key = JSON.stringify(settings);
    if (key === this.applied) return;
    this.applied = key;
    this.clearTimer();
    if (!this.o.support.ok) return this.off(this.o.support.reason);
    if (!settings.enabled) return this.off('turned off by the updates setting (updates.enabled)');
    try {
      this.o.port.configure({ url: settings.feedUrl || null, channel: settings.channel });
    } catch (err) {
      this.logger.error('update feed could not be set', { error: err });
      return this.off('the update feed could not be set');
    }
    this.logger.info('updates on', {
      feed: settings.feedUrl || 'the feed this build was published with',
      channel: settings.channel,
    });
    if (this.current.state === 'ready') this.waitToInstall(this.current.version);
    else this.current = { state: 'idle' };
    this.schedule(this.o.firstCheckMs ?? 60_000);
  }

  stop(): void {
    this.stopped = true;
    this.clearTimer();
    this.cancelInstall?.();
    this.cancelInstall = null;
    this.unsubscribe();
  }

  private off(reason: string): void {
    this.cancelInstall?.();
    this.cancelInstall = null;
    this.current = { state: 'off', reason };
    this.logger.info('updates off', { reason });
  }

  private schedule(ms: number): void {
    this.clearTimer();
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      void this.check();
    }, ms);
  }

  private async check(): Promise<void> {
    try {
      await this.o.port.check();
    } catch (err) {
      this.logger.warn('update check failed; trying again later', { error: err });
    }
    if (!this.stopped && this.current.state !== 'off' && this.current.state !== 'installing') {
      this.schedule(this.o.checkEveryMs ?? 4 * 3_600_000);
    }
  }

  private downloaded(version: string): void {
    if (this.stopped || this.current.state === 'off' || this.current.state === 'installing') {
      this.logger.info('update downloaded but not installed now', { version });
      return;
    }
    this.logger.info('update downloaded', { version });
    this.waitToInstall(version);
  }

  private waitToInstall(version: string): void {
    this.cancelInstall?.();
    const decision = this.o.gate.decide();
    this.current = {
      state: 'ready',
      version,
      waitingFor: decision.restart ? null : decision.reason,
    };
    if (!decision.restart) {
      this.logger.info('update waits for a quiet moment', { version, reason: decision.reason });
    }
    this.cancelInstall = this.o.gate.whenAllowed(() => {
      this.cancelInstall = null;
      this.clearTimer();
      this.current = { state: 'installing', version };
      this.logger.info('restarting to install the update', { version });
      try {
        this.o.port.install();
      } catch (err) {
        this.logger.error('the update could not be installed; trying again later', { error: err });
        this.current = { state: 'ready', version, waitingFor: 'the installer could not start' };
        this.schedule(this.o.checkEveryMs ?? 4 * 3_600_000);
      }
    });
  }

  private clearTimer(): void {
    this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
