/**
 * --demo: the simulator in-process, background calls among the other extensions, and a ring for the
 * user's extension every few seconds, from an outside number or a colleague, answered or missed.
 */
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import type { Logger } from '../core/log.ts';

export interface Demo {
  sim: Simulator;
  startRinging(): void;
  stopRinging(): void;
}

const OUTSIDE = ['+14155550123', '+12125550188', '+442079460018', '+33145780012', '+61298765432'];

export async function startDemo(opts: {
  extension: string;
  logger: Logger;
  everyMs?: number;
}): Promise<Demo> {
  const sim = await startSimulator({ extensions: 20 });
  opts.logger.info('demo: simulator started', { baseUrl: sim.baseUrl, extension: opts.extension });
  const colleagues = sim.extensions.map((e) => e.number).filter((n) => n !== opts.extension);
  const timers = new Set<NodeJS.Timeout>();
  let n = 0;
  const later = (fn: () => void, ms: number) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const ringOnce = () => {
    n++;
    const from =
      n % 3 === 0 && colleagues.length > 0
        ? colleagues[n % colleagues.length]!
        : OUTSIDE[n % OUTSIDE.length]!;
    const callId = sim.ring({ from, to: opts.extension });
    later(() => sim.setCallState(callId, n % 4 === 0 ? 'ended' : 'answered'), 2_500);
    later(() => sim.setCallState(callId, 'ended'), 3_500);
  };
  let interval: NodeJS.Timeout | undefined;
  return {
    sim,
    startRinging() {
      sim.startTraffic({ ratePerSec: 5, excludeExtensions: [opts.extension] });
      later(ringOnce, 1_000);
      interval = setInterval(ringOnce, opts.everyMs ?? 5_000);
    },
    stopRinging() {
      clearInterval(interval);
      for (const t of timers) clearTimeout(t);
      timers.clear();
      sim.stopTraffic();
    },
  };
}
