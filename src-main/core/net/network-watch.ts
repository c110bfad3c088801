/**
 * The headless runner's "the network came back" (the tray app has Electron's net.isOnline, see
 * electron/power.ts): the machine's addresses, sampled on the clock. A non-loopback address that
 * was not there at the last look (a cable plugged in, Wi-Fi joined, a VPN up, DHCP renewed with a
 * new address) wakes the connection with 'online', which retries at once instead of sitting out a
 * back-off grown during the outage. Losing an address wakes nothing: the sockets find that out.
 */
import type { Clock, TimerHandle } from '../../../src-shared/clock.ts';
import type { WakeReason } from '../events/contracts.ts';

export interface NetworkWatchDeps {
  /** The machine's non-loopback addresses now (os.networkInterfaces, flattened). */
  addresses: () => readonly string[];
  clock: Clock;
  wake: (reason: WakeReason) => void;
  /** Default 5 s, as the tray app's online poll. */
  pollMs?: number;
}

export function watchNetwork(deps: NetworkWatchDeps): () => void {
  const pollMs = deps.pollMs ?? 5_000;
  let known = new Set(deps.addresses());
  let timer: TimerHandle | undefined;
  let stopped = false;
  const poll = () => {
    if (stopped) return;
    const now = new Set(deps.addresses());
    const gained = [...now].some((a) => !known.has(a));
    known = now;
    if (gained) deps.wake('online');
    timer = deps.clock.setTimeout(poll, pollMs);
  };
  timer = deps.clock.setTimeout(poll, pollMs);
  return () => {
    stopped = true;
    deps.clock.clearTimeout(timer);
  };
}

/** Node's os.networkInterfaces() as the list watchNetwork compares: non-internal addresses. */
export function externalAddresses(
  interfaces: Record<string, ReadonlyArray<{ address: string; internal: boolean }> | undefined>,
): string[] {
  return Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((i) => !i.internal)
    .map((i) => i.address);
}
