/**
 * The demo: the simulator on 127.0.0.1 with background calls among the other extensions, and a
 * demo extension that rings every few seconds, from an outside number or a colleague, then is
 * answered there, answered by a colleague of a ring group, or missed; a missed caller leaves a
 * voicemail, and every eighth call a text message arrives. One scenario, on the injected
 * clock, for the tray app's "Try the demo" (src-main/electron/main.ts) and `screenpop-headless --demo`.
 *
 * On Yeastar P-Series the simulator sends its default, member-style reports (as real PBXs were
 * captured sending them); the ring group is the PBX's Reception (6300) and every eighth call comes
 * through the Sales queue (6400), so the card names them; the missed caller goes to voicemail
 * (the PBX's call record says VOICEMAIL: the app's voicemail notice); the PBX has no SMS; and
 * every eighth call, four after the queue's, is an attended transfer: a colleague answers, holds
 * the caller and rings the demo extension ("Transferred by <colleague>", the caller kept).
 *
 * Every call is a script of steps on its own; a step never touches a call its script already ended
 * (the simulator forgets such a call and would throw), and a step that fails anyway is logged and
 * the demo goes on: nothing thrown here ever leaves a timer.
 * The key and secret are made up and die with the process: callers keep them in memory only.
 */
import type { Clock, TimerHandle } from '../src-shared/process/clock.ts';
import type { DemoService } from '../src-shared/demo-service.ts';
import type { Logger } from '../src-shared/process/log.ts';
import type { PhoneSystem } from '../src-shared/phone-systems/names.ts';
import { startSimulator } from './simulator.ts';
import type { Simulator } from './types.ts';

export interface DemoOptions {
  /** Runs the simulator (tokens, traffic) and the demo's own steps. */
  clock: Clock;
  logger: Logger;
  /** Seconds between rings to the demo extension; default 12. */
  ringEverySec?: number;
  /** The demo user's extension; default the simulator's first (101). */
  extension?: string;
  /** Background events per second among the other extensions; default 1. */
  trafficPerSec?: number;
  /** The simulator's /_sim/ control surface (127.0.0.1 only); default off. */
  control?: boolean;
  /** Seeds the simulator (key, names, traffic); default from the clock, so each start differs. */
  seed?: number;
  /**
   * The phone system the simulator plays; default the standard service. Yeastar P-Series has no
   * voicemail or SMS events, so its demo leaves those out.
   */
  phoneSystem?: PhoneSystem;
}

/** A running demo: what the app needs of it (DemoService), and the simulator for tests and logs. */
export interface Demo extends DemoService {
  readonly sim: Simulator;
  /** Rings so far (for tests and logs). */
  readonly rings: number;
}

const OUTSIDE_CALLERS = [
  '+14155550123',
  '+442079460958',
  '+12125550187',
  '+493090182345',
  '+61298765432',
];

const DEMO_TEXTS = [
  'Hi, this is about order 4711: could you call me back before 5 pm?',
  'Running 10 minutes late for our meeting, sorry!',
  'Thanks for your help today. The invoice arrived.',
];

/**
 * One demo call: who rings whom (through which queue or ring group, Yeastar), then what happens
 * after how long. A step `transfer` is an attended transfer from `from` to `to`.
 */
interface Script {
  from: string;
  to: string[];
  via?: string;
  steps: Array<{ afterMs: number; state: string; to?: string; from?: string }>;
}

/** The PBX's Reception ring group and Sales queue (src-sim/directory.ts createPbxLists). */
const DEMO_RING_GROUP = '6300';
const DEMO_QUEUE = '6400';

/**
 * The n-th call of the demo (n from 1): a cycle of answered here, ring group, missed, colleague
 * calling; on Yeastar P-Series (above) the missed caller leaves a voicemail, and every eighth call
 * is through the Sales queue, or an attended transfer.
 */
export function demoScript(
  n: number,
  extension: string,
  colleagues: readonly string[],
  phoneSystem: PhoneSystem = 'standard',
): Script {
  const yeastar = phoneSystem === 'yeastar-p-series';
  const colleague = colleagues.length > 0 ? colleagues[n % colleagues.length]! : undefined;
  const outside = OUTSIDE_CALLERS[n % OUTSIDE_CALLERS.length]!;
  const ringMs = 4_000 + (n % 3) * 2_000;
  if (yeastar && colleague && n % 8 === 4)
    // An attended transfer: the colleague answers, holds the caller and rings here; answered here,
    // the colleague hangs up (the transfer is complete).
    return {
      from: outside,
      to: [colleague],
      steps: [
        { afterMs: ringMs, state: 'answered', to: colleague },
        { afterMs: 3_000, state: 'transfer', from: colleague, to: extension },
        { afterMs: ringMs, state: 'answered', to: extension },
        { afterMs: 1_000, state: 'ended', to: colleague },
        { afterMs: 5_000, state: 'ended' },
      ],
    };
  switch (n % 4) {
    case 1:
      if (colleague)
        // A ring group: the colleague answers; the phone stops ringing here at the same moment.
        return {
          from: outside,
          to: [extension, colleague],
          ...(yeastar && { via: DEMO_RING_GROUP }),
          steps: [
            { afterMs: ringMs, state: 'answered', to: colleague },
            { afterMs: 0, state: 'ended', to: extension },
            { afterMs: 5_000, state: 'ended', to: colleague },
          ],
        };
      break;
    case 2:
      // Missed: it rings, then the caller hangs up (Yeastar: after leaving a voicemail).
      return {
        from: outside,
        to: [extension],
        steps: [{ afterMs: ringMs, state: yeastar ? 'voicemail' : 'ended' }],
      };
    case 3:
      if (colleague)
        // A colleague calls from their extension (the directory names them), answered here.
        return {
          from: colleague,
          to: [extension],
          steps: [
            { afterMs: ringMs, state: 'answered' },
            { afterMs: 5_000, state: 'ended' },
          ],
        };
      break;
  }
  return {
    from: outside,
    to: [extension],
    ...(yeastar && n % 8 === 0 && { via: DEMO_QUEUE }),
    steps: [
      { afterMs: ringMs, state: 'answered' },
      { afterMs: 5_000, state: 'ended' },
    ],
  };
}

export async function startDemo(options: DemoOptions): Promise<Demo> {
  const { clock, logger } = options;
  const phoneSystem = options.phoneSystem ?? 'standard';
  const sim = await startSimulator({
    clock,
    control: options.control ?? false,
    seed: options.seed ?? Math.floor(clock.now() / 1000) % 100_000,
    phoneSystem,
  });
  const notices = phoneSystem === 'standard';
  const numbers = sim.extensions.map((e) => e.number);
  const extension = options.extension ?? numbers[0] ?? '101';
  const colleagues = numbers.filter((n) => n !== extension).slice(0, 4);
  // Background chatter on the other extensions, so the demo shows filtering at work too. The
  // colleagues of the demo's ring groups are left out: each extension is in one call at a time.
  const others = numbers.filter((n) => n !== extension && !colleagues.includes(n));
  if (others.length > 0)
    sim.startTraffic({ ratePerSec: options.trafficPerSec ?? 1, ringTo: others });

  const timers = new Set<TimerHandle>();
  let closed = false;
  let rings = 0;
  /** Runs `step` after `ms` on the demo's clock; whatever it throws is logged, never rethrown. */
  const later = (ms: number, what: string, step: () => void): void => {
    const handle = clock.setTimeout(() => {
      timers.delete(handle);
      if (closed) return;
      try {
        step();
      } catch (error) {
        logger.warn('demo step failed; the demo goes on', {
          step: what,
          error,
        });
      }
    }, ms);
    timers.add(handle);
  };
  const play = (script: Script, callId: string, index: number): void => {
    const step = script.steps[index];
    if (!step) return;
    later(step.afterMs, step.state, () => {
      if (step.state === 'transfer' && step.from !== undefined && step.to !== undefined)
        sim.transfer(callId, { from: step.from, to: step.to, attended: true });
      else sim.setCallState(callId, step.state, step.to !== undefined ? { to: step.to } : {});
      play(script, callId, index + 1);
    });
  };
  const ringEveryMs = (options.ringEverySec ?? 12) * 1000;
  const ringAfter = (ms: number): void =>
    later(ms, 'ring', () => {
      ringAfter(ringEveryMs);
      rings++;
      const script = demoScript(rings, extension, colleagues, phoneSystem);
      play(
        script,
        sim.ring({
          from: script.from,
          to: script.to,
          ...(script.via !== undefined && { via: script.via }),
        }),
        0,
      );
      const n = rings;
      // The caller who was missed leaves a voicemail once the phone stopped ringing.
      if (notices && n % 4 === 2)
        later((script.steps[0]?.afterMs ?? 4_000) + 1_000, 'voicemail', () =>
          sim.voicemail({ extension, from: script.from, durationSec: 12 + ((n * 7) % 50) }),
        );
      if (notices && n % 8 === 0)
        later(3_000, 'sms', () =>
          sim.sms({
            from: OUTSIDE_CALLERS[n % OUTSIDE_CALLERS.length]!,
            to: extension,
            text: DEMO_TEXTS[(n / 8) % DEMO_TEXTS.length]!,
          }),
        );
    });
  ringAfter(Math.min(2_000, ringEveryMs));
  logger.info('demo simulator started', { baseUrl: sim.baseUrl, extension, phoneSystem });
  return {
    sim,
    baseUrl: sim.baseUrl,
    apiKey: sim.apiKey.key,
    secret: sim.apiKey.secret,
    tenant: sim.tenant,
    extension,
    phoneSystem,
    get rings() {
      return rings;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const t of timers) clock.clearTimeout(t);
      timers.clear();
      sim.stopTraffic();
      await sim.close();
    },
  };
}
