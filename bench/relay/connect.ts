/**
 * `npm run bench:relay` connect cost (BENCH_ONLY=connect or BENCH_CONNECT_ROUNDS): clients connecting
 * to one relay with new tokens, the same tokens again, and the floor server, rounds interleaved.
 */
import { relayClientPath } from '../../src-shared/relay/relay-protocol.ts';
// The same private redis-server (AOF, fsync always, temp dir, free port) and stand-in for the
// tenant's token check (extension/list) the relay tests use, and the relay as a child process.
import { startTokenService } from '../../rigs/relay/helpers.ts';
import { spawnRelay } from '../../rigs/relay/relay-process.ts';
import {
  SECRET,
  TOKENS,
  connectClients,
  loadAverage,
  relayStart,
  round3,
  sleep,
  spawnFloor,
} from './common.ts';

export interface ConnectRow {
  round: number;
  /** relay-cold: every token new to the relay (one check at the service each); relay-warm: the
   * same tokens again within the answer cache's lifetime; floor: bench/floor-server.ts. */
  variant: 'relay-cold' | 'relay-warm' | 'floor';
  clients: number;
  connected: number;
  seconds: number;
  serviceChecks: number;
  load: string;
}

/**
 * Connect cost (issue 24 item 5): `count` clients connecting (100 at a time) to one relay process,
 * rounds interleaved: every token new (the relay asks the service for each), the same tokens again
 * (answers cached: no call), and the floor server (no check at all), the load average beside each.
 */
export async function connectCase(count: number, rounds: number): Promise<ConnectRow[]> {
  const service = await startTokenService(TOKENS);
  const relay = await spawnRelay({
    env: {
      RELAY_LOG_LEVEL: 'warn',
      RELAY_STORAGE: 'memory',
      RELAY_TENANT_ACME_SECRETS: SECRET,
      RELAY_TENANT_ACME_BASE_URL: service.baseUrl,
    },
    ...relayStart(),
  });
  const floor = await spawnFloor();
  const rows: ConnectRow[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      const runs: [ConnectRow['variant'], string][] = [
        ['relay-cold', relay.url],
        ['relay-warm', relay.url],
        ['floor', floor.url],
      ];
      for (const [variant, base] of round % 2 ? runs : [runs[2]!, runs[0]!, runs[1]!]) {
        const clients: { close(): void }[] = [];
        const calls = service.calls();
        const load = loadAverage();
        const t0 = performance.now();
        await connectClients(
          base.replace(/^http/, 'ws') + relayClientPath('acme'),
          count,
          clients,
          (i) => ({
            extension: 100 + (i % 100),
            token: `bench-client-token-r${round}-${i}`,
            onControl: () => {},
            onEvent: () => {},
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        rows.push({
          round,
          variant,
          clients: count,
          connected: clients.length,
          seconds: round3(seconds),
          serviceChecks: service.calls() - calls,
          load,
        });
        for (const c of clients) c.close();
        // Let the relay release the sessions (the per-token and per-address caps) before the next run.
        await sleep(1500);
      }
    }
  } finally {
    await floor.stop();
    await relay.stop();
    await service.close();
  }
  return rows;
}

/** The connect-cost table, as printed. */
export function connectLines(connect: readonly ConnectRow[]): string[] {
  const lines: string[] = [];
  lines.push('');
  lines.push(
    'connect cost: relay-cold = every token new (one check at the service each, answered by this process), relay-warm = the same tokens again (cached answers), floor = bench/floor-server.ts (no check)',
  );
  lines.push('round  variant     connected  seconds  service checks  load (1/5/15 min)');
  for (const c of connect)
    lines.push(
      `${String(c.round).padStart(5)}  ${c.variant.padEnd(10)}  ${`${c.connected}/${c.clients}`.padStart(9)}  ${String(c.seconds).padStart(7)}  ${String(c.serviceChecks).padStart(14)}  ${c.load}`,
    );
  return lines;
}
