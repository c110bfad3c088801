/**
 * Part 2 of `npm run bench:relay`: the gap each failover strategy leaves when the direct stream drops
 * (simulator, in process): hot standby against switch-on-failure, for a clean close and a stall.
 */
import { systemClock } from '../../src-shared/process/clock.ts';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { TokenManager } from '../../src-main/core/api/token-manager.ts';
import { EventPipeline } from '../../src-main/core/events/pipeline.ts';
import { WebSocketEventSource } from '../../src-main/core/events/ws-source.ts';
import { relayFilterFor } from '../../src-main/core/relay-client/filter.ts';
import { RelayEventSource } from '../../src-main/core/relay-client/relay-source.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { startRelay } from '../../src-relay/server.ts';
import { parseConfig } from '../../src-relay/config.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import { startSimulator } from '../../src-sim/index.ts';
// The same private redis-server (AOF, fsync always, temp dir, free port) and stand-in for the
// tenant's token check (extension/list) the relay tests use, and the relay as a child process.
import { directTransport } from '../../rigs/direct-transport.ts';
import { SECRET, pct, round, sleep } from './common.ts';

export interface GapResult {
  strategy: 'hot-standby' | 'switch-on-failure' | 'switch-on-failure+time-cursor';
  fault: 'close' | 'stall';
  ringsAfterFault: number;
  popped: number;
  lost: number;
  delayMs: { p50: number; max: number };
}

export const USER = { extensions: ['101'], dids: [], defaultRegion: 'US' };

export const DIRECT_HEARTBEAT_MS = 2000;

/**
 * One run: direct source + relay source into one pipeline; rings every 50 ms; the direct stream
 * fails after 1 s; rings go on for 2.5 heartbeat intervals more. The delay of a ring is the time
 * from the simulator's ring() to its pop; a ring not popped 3 s after the last ring is lost.
 */
export async function gapRun(
  strategy: GapResult['strategy'],
  fault: GapResult['fault'],
): Promise<GapResult> {
  const sim = await startSimulator();
  const config = {
    ...parseConfig({ tenants: { [sim.tenant]: { baseUrl: sim.baseUrl, secrets: [SECRET] } } }),
    port: 0,
  };
  const store = new MemoryStore({ clock: systemClock, retention: config.retention });
  const relay = await startRelay({ config, store, clock: systemClock, logger: silentLogger });
  sim.addWebhook({ url: relay.webhookUrl(sim.tenant), secret: SECRET });
  const net = directTransport();
  const tokens = new TokenManager({
    client: new ServiceClient({ baseUrl: sim.baseUrl, clock: systemClock, fetch: net.fetch }),
    credentials: async () => ({ key: sim.apiKey.key, secret: sim.apiKey.secret }),
    clock: systemClock,
  });
  const pipeline = new EventPipeline({ clock: systemClock, user: USER });
  const direct = new WebSocketEventSource({
    baseUrl: sim.baseUrl,
    tokens,
    topics: [30011],
    clock: systemClock,
    heartbeatMs: DIRECT_HEARTBEAT_MS,
    backoff: { baseMs: 200, capMs: 1000 },
    createSocket: net.createSocket,
  });
  let faultAt = 0;
  const relaySource = new RelayEventSource({
    relayUrl: relay.url,
    tenant: sim.tenant,
    tokens,
    filter: relayFilterFor(USER),
    clock: systemClock,
    backoff: { baseMs: 200, capMs: 1000 },
    createSocket: net.createSocket,
    // Switch-on-failure has no relay cursor of its own; the variant with a time cursor asks the
    // relay for everything since shortly before the failure (a cursor is `<ms>-<seq>`).
    ...(strategy === 'switch-on-failure+time-cursor'
      ? {
          cursorStore: {
            load: async () => `${Math.max(0, faultAt - 2 * DIRECT_HEARTBEAT_MS - 1000)}-0`,
            save: async () => {},
          },
        }
      : {}),
  });
  pipeline.attach(direct);
  pipeline.attach(relaySource);
  const popAt = new Map<string, number>();
  pipeline.onPop((p) => {
    if (!popAt.has(p.callId)) popAt.set(p.callId, performance.now());
  });
  direct.start();
  if (strategy === 'hot-standby') relaySource.start();
  else
    direct.onStatus((s) => {
      if (faultAt && s.state !== 'connected') relaySource.start();
    });
  const until = async (check: () => boolean, ms: number) => {
    const end = Date.now() + ms;
    while (!check() && Date.now() < end) await sleep(10);
  };
  await until(() => direct.status().state === 'connected', 5000);
  if (strategy === 'hot-standby') await sleep(300);

  const ringAt = new Map<string, number>();
  const afterFault: string[] = [];
  const total = Math.ceil((1000 + 2.5 * DIRECT_HEARTBEAT_MS) / 50);
  for (let i = 0; i < total; i++) {
    if (i === 20) {
      faultAt = Date.now();
      if (fault === 'close') sim.closeAllSockets(1001);
      else sim.stallSockets();
    }
    const callId = sim.ring({ from: `+1415555${1000 + i}`, to: '101' });
    ringAt.set(callId, performance.now());
    if (i >= 20) afterFault.push(callId);
    await sleep(50);
  }
  await until(() => afterFault.every((c) => popAt.has(c)), 3000);
  const delays = afterFault
    .filter((c) => popAt.has(c))
    .map((c) => popAt.get(c)! - ringAt.get(c)!)
    .sort((a, b) => a - b);
  await direct.stop();
  await relaySource.stop();
  tokens.stop();
  await relay.close();
  await store.close();
  await sim.close();
  return {
    strategy,
    fault,
    ringsAfterFault: afterFault.length,
    popped: delays.length,
    lost: afterFault.length - delays.length,
    delayMs: { p50: round(pct(delays, 50)), max: round(delays.at(-1) ?? NaN) },
  };
}

/** The failover-gap table, as printed. */
export function gapLines(gaps: readonly GapResult[]): string[] {
  const lines: string[] = [];
  lines.push('');
  lines.push(
    `failover gap: rings every 50 ms, direct heartbeat ${DIRECT_HEARTBEAT_MS} ms (dead after 2 silent intervals)`,
  );
  lines.push('fault  strategy                        rings  popped  lost  delay p50 / max (ms)');
  for (const g of gaps)
    lines.push(
      `${g.fault.padEnd(6)} ${g.strategy.padEnd(31)} ${String(g.ringsAfterFault).padStart(5)}  ${String(g.popped).padStart(6)}  ${String(g.lost).padStart(4)}  ${`${g.delayMs.p50} / ${g.delayMs.max}`.padStart(20)}`,
    );
  return lines;
}
