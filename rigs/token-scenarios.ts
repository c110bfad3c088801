/**
 * The token-lifecycle measurements (src-main/core/api/README.md), against the simulator over real sockets with the
 * client and the simulator sharing one FakeClock. Used by test/api/token-measurements.test.ts (which
 * asserts the invariants) and by bench/tokens.ts (which prints the figures).
 *
 * On a fake clock the network takes no simulated time, so the client's per-request time-out is set
 * longer than one simulated step: a request still in flight while the test moves time forward must
 * not be aborted by time that did not really pass.
 */
import { ServiceClient } from '../src-shared/api/service-client.ts';
import { isServiceError } from '../src-shared/api/service-errors.ts';
import { TokenManager } from '../src-main/core/api/token-manager.ts';
import { SecretRegistry } from '../src-shared/process/log.ts';
import { startSimulator } from '../src-sim/index.ts';
import type { Simulator } from '../src-sim/index.ts';
import { FakeClock } from './fake-clock.ts';
import { directTransport } from './direct-transport.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export interface Rig {
  clock: FakeClock;
  sim: Simulator;
  client: ServiceClient;
  manager: TokenManager;
  secrets: SecretRegistry;
  /** Errors each API call's function saw (before call()'s retry hid them), by kind. */
  seenByFn: Map<string, number>;
  /** manager.call(listExtensions), recording what the function saw. */
  listExtensions(): Promise<number>;
  /** What the manager's credentials callback returns from now on. */
  setCredentials(c: { key: string; secret: string } | null): void;
  close(): Promise<void>;
}

export async function startRig(
  opts: { extensions?: number; random?: () => number; key?: { key: string; secret: string } } = {},
): Promise<Rig> {
  const clock = new FakeClock();
  const sim = await startSimulator({ clock, extensions: opts.extensions ?? 20 });
  const secrets = new SecretRegistry();
  const client = new ServiceClient({
    baseUrl: sim.baseUrl,
    clock,
    secrets,
    timeoutMs: 2 * MINUTE,
    fetch: directTransport({ secrets }).fetch,
  });
  let creds: { key: string; secret: string } | null = opts.key ?? {
    key: sim.apiKey.key,
    secret: sim.apiKey.secret,
  };
  const manager = new TokenManager({
    client,
    clock,
    secrets,
    random: opts.random ?? (() => 0.5),
    credentials: async () => creds,
  });
  const seenByFn = new Map<string, number>();
  const rig: Rig = {
    clock,
    sim,
    client,
    manager,
    secrets,
    seenByFn,
    async listExtensions() {
      const list = await manager.call(async (token) => {
        try {
          return await client.listExtensions(token);
        } catch (err) {
          const kind = isServiceError(err) ? err.kind : 'other';
          seenByFn.set(kind, (seenByFn.get(kind) ?? 0) + 1);
          throw err;
        }
      });
      return list.length;
    },
    setCredentials(c) {
      creds = c;
    },
    async close() {
      manager.stop();
      await sim.close();
    },
  };
  return rig;
}

export interface LongRunResult {
  simulatedHours: number;
  calls: number;
  succeeded: number;
  /** Calls whose caller got a 10002 (after call()'s one refresh-and-retry): must be 0. */
  failedExpired: number;
  failedOther: number;
  /** 10002 answers the simulator gave at all (a dead token presented): ideally 0. */
  tokenExpiredRejections: number;
  getToken: number;
  refreshToken: number;
  realMs: number;
}

/** (a) An API call every simulated minute for `hours`. */
export async function longRun(hours = 48): Promise<LongRunResult> {
  const rig = await startRig();
  const started = performance.now();
  let succeeded = 0;
  let failedExpired = 0;
  let failedOther = 0;
  const calls = hours * 60;
  try {
    for (let i = 0; i < calls; i++) {
      try {
        await rig.listExtensions();
        succeeded++;
      } catch (err) {
        if (isServiceError(err) && err.kind === 'expired') failedExpired++;
        else failedOther++;
      }
      await rig.clock.advance(MINUTE);
    }
    const stats = rig.sim.stats();
    return {
      simulatedHours: hours,
      calls,
      succeeded,
      failedExpired,
      failedOther,
      tokenExpiredRejections: stats.tokenExpiredRejections,
      getToken: stats.getToken,
      refreshToken: stats.refreshToken,
      realMs: Math.round(performance.now() - started),
    };
  } finally {
    await rig.close();
  }
}

export interface ConcurrentResult {
  callers: number;
  succeeded: number;
  failed: number;
  refreshes: number;
  getTokens: number;
  /** 10002 answers the callers' functions saw (call() retried them). */
  expiredSeenByFn: number;
}

/**
 * (b) `callers` concurrent API calls at the instant of expiry. `how`: 'wall' — the wall clock is at
 * the token's expiry (the refresh timer never ran: the machine slept); 'server' — the service expired
 * every token without the client knowing (expireAllTokens), so every call gets a 10002 first.
 */
export async function concurrentAtExpiry(
  callers = 100,
  how: 'wall' | 'server' = 'wall',
): Promise<ConcurrentResult> {
  const rig = await startRig();
  try {
    const token = await rig.manager.getToken();
    if (how === 'wall') rig.clock.sleep(token.expiresAt - rig.clock.now());
    else rig.sim.expireAllTokens();
    const before = rig.sim.stats();
    const results = await Promise.allSettled(
      Array.from({ length: callers }, () => rig.listExtensions()),
    );
    const after = rig.sim.stats();
    return {
      callers,
      succeeded: results.filter((r) => r.status === 'fulfilled').length,
      failed: results.filter((r) => r.status === 'rejected').length,
      refreshes: after.refreshToken - before.refreshToken,
      getTokens: after.getToken - before.getToken,
      expiredSeenByFn: rig.seenByFn.get('expired') ?? 0,
    };
  } finally {
    await rig.close();
  }
}

export interface SleepResult {
  sleptHours: number;
  firstCallSucceeded: boolean;
  /** 10002 seen by the caller of the first call after wake: must be 0. */
  expiredSeenByCaller: number;
  /** 10002 answers inside that call (that call() would have hidden by refreshing): 0 when expiry was judged right. */
  expiredSeenByFn: number;
  /** 10002 answers the simulator gave (a dead token presented at all). */
  tokenExpiredRejections: number;
  refreshes: number;
  getTokens: number;
}

/** (c) A laptop that sleeps `hours` (FakeClock.sleep: wall jumps, timers do not run), then wakes. */
export async function sleepThenCall(hours = 3, callWake = true): Promise<SleepResult> {
  const rig = await startRig();
  try {
    await rig.listExtensions();
    await rig.clock.advance(10 * MINUTE);
    rig.clock.sleep(hours * HOUR);
    if (callWake) rig.manager.wake();
    const before = rig.sim.stats();
    let firstCallSucceeded = false;
    let expiredSeenByCaller = 0;
    try {
      await rig.listExtensions();
      firstCallSucceeded = true;
    } catch (err) {
      if (isServiceError(err) && err.kind === 'expired') expiredSeenByCaller++;
    }
    const after = rig.sim.stats();
    return {
      sleptHours: hours,
      firstCallSucceeded,
      expiredSeenByCaller,
      expiredSeenByFn: rig.seenByFn.get('expired') ?? 0,
      tokenExpiredRejections: after.tokenExpiredRejections - before.tokenExpiredRejections,
      refreshes: after.refreshToken - before.refreshToken,
      getTokens: after.getToken - before.getToken,
    };
  } finally {
    await rig.close();
  }
}
