/**
 * The update decisions on the fake clock, with a fake updater port standing for electron-updater:
 * when the feed is checked, that a downloaded version installs only when the restart gate allows,
 * and that a setting or an installation that cannot update turns it all off.
 */
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { DEFAULT_SETTINGS, type UpdateSettings } from '../../src-main/core/settings/types.ts';
import type { UpdateSupport } from '../../src-main/core/updates/install-kind.ts';
import { QUIET_AFTER_CALL_MS, RestartGate } from '../../src-main/core/updates/restart-gate.ts';
import {
  UpdateController,
  type UpdaterPort,
} from '../../src-main/core/updates/update-controller.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

class FakeUpdater implements UpdaterPort {
  feeds: Array<{ url: string | null; channel: string }> = [];
  checks: number[] = [];
  installs: number[] = [];
  failNextCheck = false;
  private listeners = new Set<(version: string) => void>();
  private readonly clock: FakeClock;
  constructor(clock: FakeClock) {
    this.clock = clock;
  }
  configure(feed: { url: string | null; channel: string }): void {
    this.feeds.push(feed);
  }
  async check(): Promise<void> {
    this.checks.push(this.clock.monotonic());
    if (this.failNextCheck) {
      this.failNextCheck = false;
      throw new Error('getaddrinfo ENOTFOUND updates.acme.example');
    }
  }
  onDownloaded(listener: (version: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  install(): void {
    this.installs.push(this.clock.monotonic());
  }
  /** The feed had a newer version and it finished downloading. */
  download(version: string): void {
    for (const l of this.listeners) l(version);
  }
}

function setup(support: UpdateSupport = { ok: true }) {
  const clock = new FakeClock();
  const logger = memoryLogger();
  const port = new FakeUpdater(clock);
  const gate = new RestartGate({ clock, logger });
  const updates = new UpdateController({ clock, logger, port, support, gate });
  return { clock, logger, port, gate, updates };
}

const on: UpdateSettings = {
  enabled: true,
  channel: 'latest',
  feedUrl: 'https://updates.acme.example/screenpop',
};

describe('UpdateController', () => {
  it('points the updater at the organisation’s feed, checks a minute after start and every 4 hours', async () => {
    const { clock, port, updates } = setup();
    updates.apply(on);
    expect(port.feeds).toEqual([
      { url: 'https://updates.acme.example/screenpop', channel: 'latest' },
    ]);
    expect(updates.state()).toEqual({ state: 'idle' });
    await clock.advance(MIN - 1);
    expect(port.checks).toEqual([]);
    await clock.advance(1);
    await clock.advance(8 * HOUR);
    expect(port.checks).toEqual([MIN, MIN + 4 * HOUR, MIN + 8 * HOUR]);
  });

  it('uses the build’s own feed when no feed address is set', () => {
    const { port, updates } = setup();
    updates.apply(DEFAULT_SETTINGS.updates);
    expect(port.feeds).toEqual([{ url: null, channel: 'latest' }]);
  });

  it('keeps checking after a failed check, and logs it', async () => {
    const { clock, port, updates, logger } = setup();
    port.failNextCheck = true;
    updates.apply(on);
    await clock.advance(MIN + 4 * HOUR);
    expect(port.checks).toEqual([MIN, MIN + 4 * HOUR]);
    expect(logger.records.map((r) => r.msg)).toContain('update check failed; trying again later');
  });

  it('installs a downloaded version at once when no call has rung', async () => {
    const { clock, port, updates } = setup();
    updates.apply(on);
    await clock.advance(MIN);
    port.download('1.2.0');
    expect(port.installs).toEqual([MIN]);
    expect(updates.state()).toEqual({ state: 'installing', version: '1.2.0' });
  });

  it('never restarts while a call rings, nor within the quiet period after it', async () => {
    const { clock, port, updates, gate } = setup();
    updates.apply(on);
    await clock.advance(MIN);
    gate.setRinging(['call-1']);
    port.download('1.2.0');
    expect(updates.state()).toEqual({
      state: 'ready',
      version: '1.2.0',
      waitingFor: 'a call is ringing',
    });
    await clock.advance(10 * MIN);
    expect(port.installs).toEqual([]);
    gate.setRinging([]);
    const stopped = clock.monotonic();
    await clock.advance(QUIET_AFTER_CALL_MS - 1000);
    gate.setRinging(['call-2']);
    await clock.advance(30_000);
    gate.setRinging([]);
    const stoppedAgain = clock.monotonic();
    await clock.advance(QUIET_AFTER_CALL_MS);
    expect(stoppedAgain).toBeGreaterThan(stopped);
    expect(port.installs).toEqual([stoppedAgain + QUIET_AFTER_CALL_MS]);
  });

  it('does nothing when the updates setting is off, and stops a pending install when turned off', async () => {
    const { clock, port, updates, gate } = setup();
    updates.apply({ ...on, enabled: false });
    expect(updates.state()).toEqual({
      state: 'off',
      reason: 'turned off by the updates setting (updates.enabled)',
    });
    await clock.advance(24 * HOUR);
    expect(port.feeds).toEqual([]);
    expect(port.checks).toEqual([]);

    updates.apply(on);
    await clock.advance(MIN);
    gate.setRinging(['call-1']);
    port.download('1.2.0');
    updates.apply({ ...on, enabled: false });
    gate.setRinging([]);
    await clock.advance(24 * HOUR);
    expect(port.installs).toEqual([]);
    expect(port.checks).toEqual([24 * HOUR + MIN]);
  });

  it('stays off, with the reason, where the installation cannot update itself', async () => {
    const { clock, port, updates } = setup({
      ok: false,
      reason: 'installed from a deb package: updates come through the system’s package manager',
    });
    updates.apply(on);
    expect(updates.state()).toEqual({
      state: 'off',
      reason: 'installed from a deb package: updates come through the system’s package manager',
    });
    await clock.advance(24 * HOUR);
    expect(port.checks).toEqual([]);
  });

  it('keeps a downloaded version waiting when the feed changes, and tries again when installing fails', async () => {
    const { clock, port, updates, gate, logger } = setup();
    updates.apply(on);
    await clock.advance(MIN);
    gate.setRinging(['call-1']);
    port.download('1.2.0');
    updates.apply({ ...on, channel: 'beta' });
    expect(updates.state()).toMatchObject({ state: 'ready', version: '1.2.0' });
    port.install = () => {
      throw new Error('installer missing');
    };
    gate.setRinging([]);
    await clock.advance(QUIET_AFTER_CALL_MS);
    expect(updates.state()).toEqual({
      state: 'ready',
      version: '1.2.0',
      waitingFor: 'the installer could not start',
    });
    expect(logger.records.map((r) => r.msg)).toContain(
      'the update could not be installed; trying again later',
    );
  });

  it('stops checking and installing once stopped (quit)', async () => {
    const { clock, port, updates } = setup();
    updates.apply(on);
    updates.stop();
    port.download('1.2.0');
    await clock.advance(24 * HOUR);
    expect(port.checks).toEqual([]);
    expect(port.installs).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });
});
