/**
 * ConnectionSupervisor through its public surface: a plan the test sets, connections the test
 * plays (FakeConnection, the engine's far side), the fake clock.
 */
import type { Notice } from '../../src-main/core/events/notices.ts';
import { describe, expect, it } from 'vitest';
import {
  ConnectionSupervisor,
  NOT_SET_UP,
  type ConnectionPlan,
} from '../../src-main/core/connection/connection-supervisor.ts';
import type { DismissEvent, PopEvent } from '../../src-main/core/ports/ports.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { render } from '../../src-shared/i18n/phrase.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';
import { FakeConnection } from '../../rigs/app-harness.ts';

const ACME = {
  ...DEFAULT_SETTINGS,
  baseUrl: 'https://acme.example.com',
  apiKey: 'key1',
  extensions: ['101'],
};

function harness() {
  const clock = new FakeClock();
  const logger = memoryLogger();
  const credentials = new MemoryCredentialStore();
  let plan: ConnectionPlan = { connect: true, settings: ACME, credentials, demo: false };
  const connections: FakeConnection[] = [];
  const calls = { pops: [] as string[], dismissed: [] as string[], clears: 0 };
  const directory = { starts: 0, stops: 0, forgets: 0, refreshes: 0 };
  const notices = { got: [] as string[], featureSets: 0, resets: 0 };
  let changes = 0;
  let failConnect: Error | null = null;
  const supervisor = new ConnectionSupervisor({
    clock,
    logger,
    connect: (config) => {
      if (failConnect) throw failConnect;
      const c = new FakeConnection(config);
      connections.push(c);
      return c;
    },
    plan: () => plan,
    calls: {
      handlePop: (pop: PopEvent) => calls.pops.push(pop.callId),
      handleDismiss: (d: DismissEvent) => calls.dismissed.push(d.callId),
      clear: () => calls.clears++,
    },
    notices: {
      handle: (n: Notice) => notices.got.push(n.type),
      setFeatures: () => notices.featureSets++,
      reset: () => notices.resets++,
    },
    directory: {
      start: () => directory.starts++,
      stop: () => directory.stops++,
      forgetExtensions: () => directory.forgets++,
      refreshNow: async () => directory.refreshes++,
    },
  });
  supervisor.onChange(() => changes++);
  return {
    clock,
    logger,
    credentials,
    supervisor,
    connections,
    calls,
    notices,
    directory,
    changes: () => changes,
    setPlan: (p: ConnectionPlan) => (plan = p),
    failConnect: (err: Error | null) => (failConnect = err),
  };
}

describe('ConnectionSupervisor', () => {
  it('builds the connection the plan asks for, with its credentials, and reports its status', async () => {
    const t = harness();
    await t.credentials.setSecret(keychainAccount('key1', 'https://acme.example.com'), 's3cret');
    expect(t.supervisor.status()).toEqual({
      connection: NOT_SET_UP,
      paused: false,
      fault: null,
      identity: null,
    });
    await t.supervisor.rebuild();
    const [c] = t.connections;
    expect(c?.started).toBe(true);
    expect(c?.config.baseUrl).toBe('https://acme.example.com');
    expect(await c?.config.credentials()).toEqual({ key: 'key1', secret: 's3cret' });
    expect(t.supervisor.status().connection).toMatchObject({
      state: 'connecting',
      reason: 'Connecting…',
    });
    const before = t.changes();
    c?.status({ state: 'connected' });
    expect(t.supervisor.status().connection).toEqual({ state: 'connected' });
    expect(t.changes()).toBe(before + 1);
    c?.pop('call-1');
    expect(t.calls.pops).toEqual(['call-1']);
    expect(t.supervisor.isUserNumber('101')).toBe(true);
    expect(t.supervisor.isUserNumber('102')).toBe(false);
    expect(await t.supervisor.fetchExtensions()).toEqual([
      { number: '102', callerIdName: 'Grace Hopper' },
    ]);
  });

  it('a rebuild stops the old connection, ends its calls and no longer listens to it', async () => {
    const t = harness();
    await t.supervisor.rebuild();
    await t.supervisor.rebuild();
    const [old, current] = t.connections;
    expect(old?.stopped).toBe(true);
    expect(current?.started).toBe(true);
    expect(t.calls.clears).toBe(2);
    old?.pop('late');
    old?.status({ state: 'offline' });
    expect(t.calls.pops).toEqual([]);
    expect(t.supervisor.status().connection.state).toBe('connecting');
    // Same service: the directory keeps its names; another service: they are forgotten first.
    expect(t.directory.forgets).toBe(1);
    t.setPlan({
      connect: true,
      settings: { ...ACME, baseUrl: 'https://other.example.com' },
      credentials: t.credentials,
      demo: false,
    });
    await t.supervisor.rebuild();
    expect(t.directory.forgets).toBe(2);
  });

  it('does not connect when the plan says why not, and shows why', async () => {
    const t = harness();
    const why = { state: 'needs-attention' as const, reason: 'No key.', remedy: 'Add one.' };
    t.setPlan({ connect: false, status: why });
    await t.supervisor.rebuild();
    expect(t.connections).toHaveLength(0);
    expect(t.supervisor.status().connection).toEqual(why);
    await expect(t.supervisor.fetchExtensions()).rejects.toThrow('not connected');
  });

  it('runs one rebuild at a time, in order, and a failed step does not stop the next', async () => {
    const t = harness();
    await t.supervisor.rebuild();
    let release!: () => void;
    const first = t.connections[0]!;
    first.stop = () => new Promise<void>((resolve) => (release = resolve));
    const order: string[] = [];
    void t.supervisor.rebuild(async () => {
      order.push('second');
      throw new Error('closing the demo failed');
    });
    const third = t.supervisor.rebuild(async () => {
      order.push('third');
    });
    await Promise.resolve();
    expect(t.connections).toHaveLength(1); // the second waits for the first to stop
    release();
    await third;
    expect(order).toEqual(['second', 'third']);
    expect(t.connections).toHaveLength(3);
    expect(t.connections[1]?.stopped).toBe(true);
    expect(t.connections[2]?.started).toBe(true);
    expect(t.logger.records.map((r) => r.msg)).toContain('connection change failed');
  });

  it('a connection that cannot be built leaves a status that says why, not a crash', async () => {
    const t = harness();
    t.failConnect(new Error('The relay address is not a wss:// URL.'));
    await t.supervisor.rebuild();
    expect(t.supervisor.status().connection).toMatchObject({
      state: 'needs-attention',
      reason: 'The relay address is not a wss:// URL.',
      remedy: 'Check the connection settings.',
    });
    t.failConnect(null);
    await t.supervisor.rebuild();
    expect(t.connections).toHaveLength(1);
  });

  it("a proxy the policy asks for that cannot be used: needs attention naming the policy, in the user's language", async () => {
    const t = harness();
    // What the real transport throws for proxyMode manual without a usable address.
    let thrown: unknown;
    try {
      transportFor(
        { proxyMode: 'manual', proxyUrl: '', caFile: '' },
        {
          logger: t.logger,
          secrets: new SecretRegistry(),
          readFile: () => '',
          proxyPolicy: 'Acme IT',
        },
      );
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    t.failConnect(thrown as Error);
    await t.supervisor.rebuild();
    const status = t.supervisor.status().connection;
    expect(status).toMatchObject({
      state: 'needs-attention',
      reason:
        'The policy of Acme IT sends connections through a proxy, but the proxy address it gives is missing or was refused: Screenpop does not connect around the proxy.',
      remedy:
        'Ask Acme IT to correct proxyUrl in the policy (the log names what is wrong with it).',
    });
    expect(render(status.words!.reason!, createTranslator('de', { isolate: false }))).toBe(
      'Die Richtlinie von Acme IT leitet Verbindungen über einen Proxy, aber die angegebene Proxy-Adresse fehlt oder wurde abgelehnt: Screenpop verbindet sich nicht am Proxy vorbei.',
    );
    expect(t.connections).toHaveLength(0);
  });

  it('pause stops the connection and ends its calls; wake and retry reach only a live one; resume rebuilds', async () => {
    const t = harness();
    await t.supervisor.rebuild();
    const first = t.connections[0]!;
    await t.supervisor.setPaused(true);
    expect(first.stopped).toBe(true);
    expect(t.supervisor.status()).toMatchObject({
      connection: { state: 'offline', reason: 'Paused.' },
      paused: true,
    });
    t.supervisor.wake('resume');
    expect(first.wakes).toEqual([]);
    await t.supervisor.rebuild(); // a settings change while paused builds nothing
    expect(t.connections).toHaveLength(1);
    await t.supervisor.setPaused(false);
    const second = t.connections[1]!;
    expect(second.started).toBe(true);
    t.supervisor.wake('online');
    expect(second.wakes).toEqual(['online']);
    await t.supervisor.retryNow();
    expect(second.retries).toBe(1);
    expect(t.directory.refreshes).toBe(1);
    await t.supervisor.setPaused(true);
    await t.supervisor.retryNow(); // "try again" while paused resumes
    expect(t.supervisor.isPaused()).toBe(false);
    expect(t.connections).toHaveLength(3);
  });

  it('after an unexpected error: the status carries it, and the rebuild keeps the calls, at most every 30 s', async () => {
    const t = harness();
    await t.supervisor.rebuild();
    const clears = t.calls.clears;
    const fault = { origin: 'timer' as const, message: 'TypeError: x', at: 5, count: 1 };
    t.supervisor.recoverFromFault(fault);
    await flushMicrotasks();
    expect(t.connections).toHaveLength(2);
    expect(t.calls.clears).toBe(clears);
    expect(t.supervisor.status().fault).toEqual(fault);
    t.supervisor.recoverFromFault({ ...fault, count: 2, at: 6 });
    await flushMicrotasks();
    expect(t.connections).toHaveLength(2);
    await t.clock.advance(30_000);
    await flushMicrotasks();
    expect(t.connections).toHaveLength(3);
  });

  it('stop ends the connection for good and cancels a pending recovery', async () => {
    const t = harness();
    await t.supervisor.rebuild();
    t.supervisor.recoverFromFault({ origin: 'timer', message: 'x', at: 1, count: 1 });
    t.supervisor.recoverFromFault({ origin: 'timer', message: 'x', at: 2, count: 2 });
    expect(t.clock.pendingTimers()).toBe(1); // the second rebuild waits for its 30 s
    await t.supervisor.stop();
    expect(t.connections.every((c) => c.stopped)).toBe(true);
    expect(t.clock.pendingTimers()).toBe(0); // nothing left to hold the process
    const built = t.connections.length;
    await t.clock.advance(60_000);
    await flushMicrotasks();
    expect(t.connections).toHaveLength(built);
  });
});
