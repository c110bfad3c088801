import { expect } from 'vitest';
import { heartbeatFlood } from '../../rigs/relay/attacks.ts';
import type { RelayProcess } from '../../rigs/relay/relay-process.ts';

/**
 * Item 1, asserted: a client that floods heartbeats without reading is cut by the relay, whose
 * resident memory grows by less than `ceilingMiB` meanwhile. The flood ends the moment the relay
 * closes the socket (about a second on a quiet machine); its deadline only bounds a relay that never
 * does, and is long because on a loaded 2-core machine the relay needed over 10 s to queue enough
 * answers (the test failed with 'deadline' at load 20). Tests calling this allow FLOOD_TEST_MS.
 */
export const FLOOD_SECONDS = 25;
/**
 * The growth allowed during a flood. 40 MiB while the relay ran from its sources; built (issue 24)
 * it starts about 40 MiB lower and V8 grows its heap from there: the heartbeat-answers flood grew
 * it 36-40 MiB (peak 119-122 MiB) against 21-28 MiB from the sources (peak 147-148 MiB), three
 * runs each at load 9, and 48 MiB once in a `--changed main` run beside other test files. What
 * the relay holds for the client is bounded by maxBufferedBytes (4 MiB); the rest is V8's heap
 * growing with the frames' garbage, which depends on when the collector runs. So the ceiling has
 * room: 64 MiB. A relay that does not cut the client never ends the flood ('deadline').
 */
export const FLOOD_CEILING_MIB = 64;
export const FLOOD_TEST_MS = (FLOOD_SECONDS + 20) * 1000;

export async function expectFloodCut(
  relay: RelayProcess,
  token: string,
  options: { hello?: boolean; ceilingMiB?: number; seconds?: number } = {},
): Promise<void> {
  const r = await heartbeatFlood({
    relayUrl: relay.url,
    pid: relay.pid,
    token,
    seconds: options.seconds ?? FLOOD_SECONDS,
    hello: options.hello,
  });
  expect(r.ended).toBe('closed-by-relay');
  expect(r.peakMiB - r.startMiB).toBeLessThan(options.ceilingMiB ?? FLOOD_CEILING_MIB);
}
