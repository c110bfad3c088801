/**
 * The demo mode: the project's simulator, started inside the app on 127.0.0.1, with its control
 * surface and background traffic, and a demo extension that rings every few seconds. Its key and
 * secret are kept in memory only (never the keychain): they are made up and die with the process.
 */
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../log.ts';
import { startSimulator } from '../../../src-sim/index.ts';

export interface DemoService {
  baseUrl: string;
  apiKey: string;
  secret: string;
  /** The simulator's tenant: its name on a relay (set as relayTenant, its address being 127.0.0.1). */
  tenant: string;
  /** The extension the demo user answers. */
  extension: string;
  close(): Promise<void>;
}

export interface DemoOptions {
  clock: Clock;
  logger: Logger;
  /** Mean seconds between rings to the demo extension. */
  ringEverySec?: number;
}

const DEMO_CALLERS = ['+14155550123', '+442079460958', '+12125550187', '+493090182345'];

export async function startDemoService(options: DemoOptions): Promise<DemoService> {
  const { clock, logger } = options;
  const sim = await startSimulator({
    control: true,
    seed: Math.floor(clock.now() / 1000) % 100_000,
  });
  const extension = sim.extensions[0]?.number ?? '101';
  const colleague = sim.extensions[1]?.number;
  // Background chatter on other extensions, so the demo shows filtering at work too.
  const others = sim.extensions.slice(2, 8).map((e) => e.number);
  if (others.length) sim.startTraffic({ ratePerSec: 0.5, ringTo: others });

  // Our own rings to the demo extension: a caller from the directory or a phone number, then,
  // a few seconds later, answered here, answered by a colleague, or missed.
  let n = 0;
  let timer: TimerHandle | undefined;
  let closed = false;
  const ringEvery = (options.ringEverySec ?? 12) * 1000;
  const step = () => {
    if (closed) return;
    n++;
    const internal = sim.extensions[2 + (n % Math.max(1, sim.extensions.length - 2))]?.number;
    const from =
      n % 3 === 0 && internal
        ? internal
        : (DEMO_CALLERS[n % DEMO_CALLERS.length] ?? '+14155550123');
    const to = n % 4 === 1 && colleague ? [extension, colleague] : [extension];
    const callId = sim.ring({ from, to });
    const endAfter = 4000 + (n % 3) * 2000;
    clock.setTimeout(() => {
      if (closed) return;
      try {
        if (n % 4 === 1 && colleague) sim.setCallState(callId, 'answered', { to: colleague });
        else if (n % 2 === 0) sim.setCallState(callId, 'answered');
        else sim.setCallState(callId, 'ended');
        clock.setTimeout(() => !closed && sim.setCallState(callId, 'ended'), 5000);
      } catch (err) {
        logger.debug('demo call step failed', { error: err });
      }
    }, endAfter);
    timer = clock.setTimeout(step, ringEvery);
  };
  timer = clock.setTimeout(step, 2000);
  logger.info('demo simulator started', { baseUrl: sim.baseUrl, extension });
  return {
    baseUrl: sim.baseUrl,
    apiKey: sim.apiKey.key,
    secret: sim.apiKey.secret,
    tenant: sim.tenant,
    extension,
    async close() {
      closed = true;
      clock.clearTimeout(timer);
      sim.stopTraffic();
      await sim.close();
    },
  };
}
