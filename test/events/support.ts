/**
 * Shared set-up for the event tests: a simulator as the far side, the real TokenManager and
 * ServiceClient in front of it, and helpers to wait for things over real sockets.
 */
import type { Clock } from '../../src-main/core/clock.ts';
import { ServiceClient } from '../../src-main/core/api/service-client.ts';
import { TokenManager } from '../../src-main/core/api/token-manager.ts';
import type { SimApiKey, Simulator } from '../../src-sim/index.ts';

export function tokenManagerFor(baseUrl: string, key: SimApiKey, clock: Clock): TokenManager {
  return new TokenManager({
    client: new ServiceClient({ baseUrl, clock }),
    credentials: async () => ({ key: key.key, secret: key.secret }),
    clock,
  });
}

/** Polls `check` every 10 ms (real time) until it returns true; fails after `timeoutMs`. */
export async function waitFor(
  check: () => boolean,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function sleepReal(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A number in international format for a caller from outside. */
export function outsideNumber(i: number): string {
  return `+1415555${String(1000 + (i % 9000)).padStart(4, '0')}`;
}

export type { Simulator };
