import type { Clock } from '../src-main/core/clock.ts';
import type { Rng } from './rng.ts';
import type { CallBook } from './calls.ts';
import type { Extension, TrafficOptions } from './types.ts';

export interface TrafficGeneratorOptions {
  clock: Clock;
  rng: Rng;
  calls: CallBook;
  extensions: ReadonlyArray<Extension>;
}

export class TrafficGenerator {
  constructor(_opts: TrafficGeneratorOptions) {}
  start(_opts: TrafficOptions): void {
    throw new Error('not yet');
  }
  stop(): void {}
}
