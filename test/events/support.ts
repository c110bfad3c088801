/**
 * Shared set-up for the event tests: a simulator as the far side, the real TokenManager and
 * ServiceClient in front of it. Waiting helpers are in ../../rigs/wait.ts.
 */
import type { Clock } from '../../src-shared/process/clock.ts';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { TokenManager } from '../../src-main/core/api/token-manager.ts';
import type { SimApiKey, Simulator } from '../../src-sim/index.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

export function tokenManagerFor(
  baseUrl: string,
  key: SimApiKey,
  clock: Clock,
  /** The service client's answer deadline in `clock`'s time (a scaled clock wants a larger one). */
  timeoutMs?: number,
): TokenManager {
  return new TokenManager({
    client: new ServiceClient({
      baseUrl,
      clock,
      fetch: directTransport().fetch,
      ...(timeoutMs !== undefined && { timeoutMs }),
    }),
    credentials: async () => ({ key: key.key, secret: key.secret }),
    clock,
  });
}

/** A number in international format for a caller from outside. */
export function outsideNumber(i: number): string {
  return `+1415555${String(1000 + (i % 9000)).padStart(4, '0')}`;
}

export type { Simulator };
