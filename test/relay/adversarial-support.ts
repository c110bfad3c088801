import { expect } from 'vitest';
import { heartbeatFlood } from './attacks.ts';
import type { RelayProcess } from './relay-process.ts';

/**
 * Item 1, asserted: a client that floods heartbeats for up to 8 s without reading is cut by the
 * relay, whose resident memory grows by less than `ceilingMiB` meanwhile.
 */
export async function expectFloodCut(
  relay: RelayProcess,
  token: string,
  options: { hello?: boolean; ceilingMiB?: number; seconds?: number } = {},
): Promise<void> {
  const r = await heartbeatFlood({
    relayUrl: relay.url,
    pid: relay.pid,
    token,
    seconds: options.seconds ?? 8,
    hello: options.hello,
  });
  expect(r.ended).toBe('closed-by-relay');
  expect(r.peakMiB - r.startMiB).toBeLessThan(options.ceilingMiB ?? 40);
}
