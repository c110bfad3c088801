/**
 * The headless runner's "the network came back" (the tray app has Electron's net.isOnline, see
 * electron/power.ts): the machine's addresses, sampled on the clock. A non-loopback address that
 * was not there at the last look (a cable plugged in, Wi-Fi joined, a VPN up, DHCP renewed with a
 * new address) wakes the connection with 'online', which retries at once instead of sitting out a
 * back-off grown during the outage. Losing an address wakes nothing: the sockets find that out.
 */
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
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
  // os.networkInterfaces() can throw (a sandbox without netlink, an odd interface): then this look
  // sees nothing new, and the timer keeps going; a throw must never leave a timer callback.
  const look = (): Set<string> | undefined => {
    try {
      return new Set(deps.addresses());
    } catch {
      return undefined;
    }
  };
  let known = look() ?? new Set<string>();
  let timer: TimerHandle | undefined;
  let stopped = false;
  const poll = () => {
    if (stopped) return;
    const now = look();
    if (now) {
      const gained = [...now].some((a) => !known.has(a));
      known = now;
      if (gained) deps.wake('online');
    }
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
