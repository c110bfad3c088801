/**
 * OS hints that the event connection may be dead: the machine resumed or the screen was unlocked
 * (wake 'resume'), or the network came back (wake 'online'). Electron's main process has no online
 * event, so net.isOnline() is sampled on the clock and a false -> true change wakes the engine.
 */
import type { PowerMonitor } from 'electron';
import type { Clock, TimerHandle } from '../../src-shared/process/clock.ts';
import type { WakeReason } from '../core/events/contracts.ts';

export interface PowerWatchDeps {
  powerMonitor: Pick<PowerMonitor, 'on' | 'removeListener'>;
  isOnline: () => boolean;
  clock: Clock;
  wake: (reason: WakeReason) => void;
  onlinePollMs?: number;
}

export function watchPower(deps: PowerWatchDeps): () => void {
  const resume = () => deps.wake('resume');
  deps.powerMonitor.on('resume', resume);
  deps.powerMonitor.on('unlock-screen', resume);
  let online = deps.isOnline();
  let timer: TimerHandle | undefined;
  let stopped = false;
  const poll = () => {
    if (stopped) return;
    const now = deps.isOnline();
    if (now && !online) deps.wake('online');
    online = now;
    timer = deps.clock.setTimeout(poll, deps.onlinePollMs ?? 5_000);
  };
  timer = deps.clock.setTimeout(poll, deps.onlinePollMs ?? 5_000);
  return () => {
    stopped = true;
    deps.clock.clearTimeout(timer);
    deps.powerMonitor.removeListener('resume', resume);
    deps.powerMonitor.removeListener('unlock-screen', resume);
  };
}
