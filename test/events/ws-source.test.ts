import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src-main/core/clock.ts';
import type { ConnectionStatus } from '../../src-main/core/events/contracts.ts';
import { EventPipeline, type Dismiss, type Pop } from '../../src-main/core/events/pipeline.ts';
import { WebSocketEventSource } from '../../src-main/core/events/ws-source.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { outsideNumber, sleepReal, tokenManagerFor, waitFor } from './support.ts';

const USER = { extensions: ['101'], dids: ['+1 (415) 555-0100'], defaultRegion: 'US' };

interface Rig {
  sim: Simulator;
  source: WebSocketEventSource;
  pipeline: EventPipeline;
  pops: Pop[];
  dismisses: Dismiss[];
  statuses: ConnectionStatus[];
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig(
  opts: {
    sim?: Simulator;
    clock?: Clock;
    heartbeatMs?: number;
    key?: Simulator['apiKey'];
    topics?: number[];
  } = {},
): Promise<Rig> {
  const sim = opts.sim ?? (await startSimulator());
  if (!opts.sim) cleanups.push(() => sim.close());
  const clock = opts.clock ?? systemClock;
  const tokens = tokenManagerFor(sim.baseUrl, opts.key ?? sim.apiKey, clock);
  const source = new WebSocketEventSource({
    baseUrl: sim.baseUrl,
    tokens,
    topics: opts.topics ?? [30011],
    clock,
    heartbeatMs: opts.heartbeatMs ?? 200,
    backoff: { baseMs: 50, capMs: 400 },
  });
  const pipeline = new EventPipeline({ clock, user: USER });
  pipeline.attach(source);
  const r: Rig = { sim, source, pipeline, pops: [], dismisses: [], statuses: [] };
  pipeline.onPop((p) => r.pops.push(p));
  pipeline.onDismiss((d) => r.dismisses.push(d));
  source.onStatus((s) => r.statuses.push(s));
  cleanups.push(() => source.stop());
  source.start();
  return r;
}

const connected = (r: Rig) => () => r.source.status().state === 'connected';

describe('WebSocketEventSource against the simulator', () => {
  it('subscribes, pops a ring for the user and dismisses it when answered', async () => {
    const r = await rig();
    await waitFor(connected(r), 'connected');
    const other = r.sim.ring({ from: '205', to: '102' });
    const callId = r.sim.ring({ from: outsideNumber(1), to: '101' });
    await waitFor(() => r.pops.length === 1, 'pop');
    expect(r.pops[0]).toMatchObject({
      callId,
      to: '101',
      from: outsideNumber(1),
      source: 'direct',
    });
    r.sim.setCallState(other, 'answered');
    r.sim.setCallState(callId, 'answered');
    await waitFor(() => r.dismisses.length === 1, 'dismiss');
    expect(r.dismisses[0]).toMatchObject({ callId, state: 'answered', to: '101' });
    expect(r.pops).toHaveLength(1);
  });
});
