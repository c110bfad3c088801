/**
 * "Try the demo" as the tray app runs it (AppRuntime + serviceConnectionFactory + src-sim/demo.ts,
 * views faked), for ten simulated minutes on one fake clock shared by the app and the demo; the
 * sockets and HTTP between them are real. Every demo ring pops once and every popped call ends;
 * nothing throws out of a timer (FakeClock.advance would rethrow it) or a socket handler (Vitest
 * fails the file on an uncaught error). The demo it replaced threw after 35 s.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serviceConnectionFactory } from '../../src-main/core/connection/connection.ts';
import { AppRuntime } from '../../src-main/core/app/runtime.ts';
import { MemoryCredentialStore } from '../../src-main/core/credentials/credential-store.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { startDemo, type Demo } from '../../src-sim/demo.ts';
import { advanceWithRealIo, FakeClock } from '../../rigs/fake-clock.ts';
import { fakeViews, memoryHistory, MemorySettings } from '../../rigs/app-harness.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('demo mode of the app', () => {
  it('runs ten simulated minutes: every ring pops once, every popped call ends, no error', async () => {
    const clock = new FakeClock();
    const logger = memoryLogger();
    const secrets = new SecretRegistry();
    const views = fakeViews();
    const history = memoryHistory(clock, logger);
    let demo: Demo | undefined;
    const runtime = new AppRuntime({
      clock,
      logger,
      secrets,
      settings: new MemorySettings(),
      credentials: new MemoryCredentialStore(),
      history,
      views,
      connect: serviceConnectionFactory({
        clock,
        logger,
        secrets,
        transport: () => directTransport({ secrets }),
      }),
      startDemo: async () => (demo = await startDemo({ clock, logger, ringEverySec: 12 })),
      createProbe: () => {
        throw new Error('not used');
      },
    });
    cleanups.push(() => runtime.shutdown());
    await runtime.start();
    await runtime.startDemo();
    await vi.waitFor(() => expect(runtime.status().state).toBe('connected'), { timeout: 10_000 });

    await advanceWithRealIo(clock, 10 * 60_000);

    expect(demo?.rings).toBe(50);
    const entries = history.list().filter((e) => e.kind === 'call');
    // Each demo call popped once (one history entry, one notification) and none still rings (the
    // last rang at 590 s and ended within 8 s).
    expect(entries).toHaveLength(50);
    expect(views.notifier.shown).toHaveLength(50);
    // Each missed caller (calls 2, 6, 10, ...) left a voicemail; every eighth call brought an SMS.
    const kinds = history.list().map((e) => e.kind);
    expect(kinds.filter((k) => k === 'voicemail')).toHaveLength(13);
    expect(kinds.filter((k) => k === 'sms')).toHaveLength(6);
    expect(views.notifier.notices).toHaveLength(19);
    // Answered here, answered by the demo's colleague (every fourth call), or missed.
    expect(new Set(entries.map((e) => e.kind === 'call' && e.outcome))).toEqual(
      new Set(['answered', 'answered-elsewhere', 'missed']),
    );
    expect(runtime.status()).toMatchObject({ state: 'connected', demo: true });
    expect(logger.records.filter((r) => r.level === 'error' || r.level === 'warn')).toEqual([]);
  });
});
