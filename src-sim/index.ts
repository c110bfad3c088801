/** The simulator's in-process entry point: `startSimulator()` and its types. */
export type {
  Envelope,
  Extension,
  FailHttpOptions,
  SimApiKey,
  SimStats,
  Simulator,
  SimulatorOptions,
  TokenRule,
  TrafficOptions,
  WebhookInfo,
} from './types.ts';
export { startSimulator } from './simulator.ts';
export { signBody } from './webhook-signature.ts';
export { createScaledClock } from './scaled-clock.ts';
