/**
 * Organisation mode's call endpoint in tests (docs/relay-protocol.md 2.5): the simulator as a
 * Yeastar P-Series PBX (its call API, docs/phone-systems/yeastar-p-series.md section 10), a relay
 * that is its gateway with users kept in a file, and a second users tenant, "plain", that the
 * relay is no gateway of. What the PBX rang is read from its 30011 reports.
 */
import { join } from 'node:path';
import { systemClock } from '../../src-shared/process/clock.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { startRelay, type RelayServer } from '../../src-relay/server.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import { FileUserStore } from '../../src-relay/users/file-user-store.ts';
import { relayConfig, SECRET } from './helpers.ts';
import { addUser, enrol } from './users-support.ts';
import { memoryLogger } from '../memory-logger.ts';

export interface GatewayCallsRig {
  sim: Simulator;
  /** The gateway tenant (the simulator's). */
  tenant: string;
  relay: RelayServer;
  users: FileUserStore;
  logger: ReturnType<typeof memoryLogger>;
  secrets: SecretRegistry;
  /** Adds and enrols a user; answers the device credential. */
  credential(name: string, extensions: string[], tenant?: string): Promise<string>;
  /** The extensions each call rang, by call id, as the PBX reported them. */
  rang: Map<string, string[]>;
  close(): Promise<void>;
}

export async function startGatewayCallsRig(
  dir: string,
  opts: {
    rate?: { burst: number; perMinute: number };
    /** The gateway key's scopes (a key without the call permission). */ scopes?: string[];
  } = {},
): Promise<GatewayCallsRig> {
  const sim = await startSimulator({ phoneSystem: 'yeastar-p-series', extensions: 4 });
  const key = opts.scopes ? sim.createApiKey({ scopes: opts.scopes }) : sim.apiKey;
  const tenant = sim.tenant;
  const config = relayConfig(
    {
      [tenant]: {
        baseUrl: sim.baseUrl,
        phoneSystem: 'yeastar-p-series',
        access: 'users',
        gateway: { apiKeyEnv: 'UNUSED_KEY', secretEnv: 'UNUSED_SECRET' },
      },
      plain: { baseUrl: 'http://127.0.0.1:9/plain', secrets: [SECRET], access: 'users' },
    },
    { users: { file: join(dir, 'users.json') } },
  );
  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const store = new MemoryStore({ clock: systemClock, retention: config.retention });
  const users = new FileUserStore({ file: config.users.file!, clock: systemClock, pollMs: 200 });
  await users.open();
  const relay = await startRelay({
    config,
    store,
    clock: systemClock,
    logger,
    secrets,
    users,
    gateway: new Map([[tenant, { apiKey: key.key, secret: key.secret }]]),
    ...(opts.rate && { callRate: opts.rate }),
  });
  const rang = new Map<string, string[]>();
  sim.onSent((envelope) => {
    const data = envelope.data as { call_id?: unknown; members?: unknown };
    if (typeof data?.call_id !== 'string' || !Array.isArray(data.members)) return;
    for (const m of data.members as Array<Record<string, unknown>>) {
      const ext = (m.extension as { number?: string } | undefined)?.number;
      if (ext) rang.set(data.call_id, [...new Set([...(rang.get(data.call_id) ?? []), ext])]);
    }
  });
  return {
    sim,
    tenant,
    relay,
    users,
    logger,
    secrets,
    rang,
    async credential(name, extensions, t = tenant) {
      const enrolled = await enrol(
        relay.url,
        await addUser(users, name, extensions, [], null, t),
        t,
      );
      if (enrolled.status !== 200) throw new Error(`enrolment refused: ${enrolled.status}`);
      return enrolled.body.credential;
    },
    async close() {
      await relay.close();
      await store.close();
      await users.close();
      await sim.close();
    },
  };
}
