/**
 * Organisation mode in tests: a relay whose tenant admits its users only, the users kept in a
 * file (or Redis), enrolment through the relay's own endpoint, and a day of one tenant's events
 * addressed to two users (docs/wire-protocol.md section 6 shapes).
 */
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { relayEnrolPath, type EnrolmentAnswer } from '../../src-shared/relay/relay-protocol.ts';
import { startRelay, type RelayDeps, type RelayServer } from '../../src-relay/server.ts';
import { MemoryStore } from '../../src-relay/store/memory-store.ts';
import { RedisStore } from '../../src-relay/store/redis-store.ts';
import { RedisUserStore } from '../../src-relay/users/redis-user-store.ts';
import { FileUserStore } from '../../src-relay/users/file-user-store.ts';
import type { UserStore } from '../../src-relay/users/types.ts';
import { newEnrolmentCode, secretHash } from '../../src-relay/users/secrets.ts';
import { relayConfig, SECRET, signed, postWebhook } from './helpers.ts';
import type { RelayConfig } from '../../src-relay/config.ts';

export function orgConfig(usersFile: string, overrides: Record<string, unknown> = {}): RelayConfig {
  return relayConfig(
    {
      acme: { baseUrl: 'http://127.0.0.1:9/acme', secrets: [SECRET], access: 'users' },
    },
    { users: { file: usersFile }, ...overrides },
  );
}

export async function startOrgRelay(
  config: RelayConfig,
  users?: UserStore,
  extra: Pick<RelayDeps, 'directory' | 'logger' | 'codeKey' | 'callApi' | 'callRate'> = {},
): Promise<{ relay: RelayServer; store: MemoryStore; users: UserStore; close(): Promise<void> }> {
  const store = new MemoryStore({ clock: systemClock, retention: config.retention });
  const userStore =
    users ?? new FileUserStore({ file: config.users.file!, clock: systemClock, pollMs: 200 });
  await userStore.open();
  if (userStore instanceof FileUserStore) userStore.follow();
  const relay = await startRelay({
    config,
    store,
    clock: systemClock,
    logger: silentLogger,
    users: userStore,
    ...extra,
  });
  return {
    relay,
    store,
    users: userStore,
    async close() {
      await relay.close();
      await store.close();
      await userStore.close();
    },
  };
}

/** Adds a user and returns a fresh enrolment code for them. */
/**
 * One relay instance of several sharing a Redis (`redisUrl`, keys under `prefix`): its events and
 * its users in that Redis, tenant acme admitting users. `close` ends the relay and both stores.
 */
export async function startRedisUsersRelay(
  redisUrl: string,
  prefix: string,
): Promise<{ relay: RelayServer; users: RedisUserStore; close(): Promise<void> }> {
  const tenants = {
    acme: { baseUrl: 'http://127.0.0.1:9/acme', secrets: [SECRET], access: 'users' as const },
  };
  const config = relayConfig(tenants, {
    storage: { kind: 'redis', url: redisUrl, keyPrefix: prefix },
  });
  const store = new RedisStore({
    url: redisUrl,
    keyPrefix: prefix,
    tenants: ['acme'],
    clock: systemClock,
    logger: silentLogger,
    blockMs: 500,
  });
  await store.open();
  const users = new RedisUserStore({ url: redisUrl, keyPrefix: prefix });
  await users.open();
  await users.follow();
  const relay = await startRelay({
    config,
    store,
    clock: systemClock,
    logger: silentLogger,
    users,
  });
  const close = async () => {
    await relay.close();
    await store.close();
    await users.close();
  };
  return { relay, users, close };
}

export async function addUser(
  users: UserStore,
  name: string,
  extensions: string[],
  dids: string[] = [],
  email: string | null = null,
  tenant = 'acme',
): Promise<string> {
  await users.addUser({ tenant, name, extensions, dids, email }, Date.now());
  const code = newEnrolmentCode();
  await users.issueCode(tenant, name, secretHash(code), 3_600_000, Date.now());
  return code;
}

export async function enrol(
  relayUrl: string,
  code: string,
  tenant = 'acme',
): Promise<{ status: number; body: EnrolmentAnswer & { errcode?: number; errmsg?: string } }> {
  const res = await fetch(relayUrl + relayEnrolPath(tenant), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ code, device: 'test device' }),
  });
  return { status: res.status, body: (await res.json()) as EnrolmentAnswer };
}

/** One envelope of the tenant. */
export function eventBody(eventId: string, event: number, data: Record<string, unknown>): string {
  return JSON.stringify({
    event,
    timestamp: 1763802000000,
    tenant: 'acme',
    data,
    event_id: eventId,
  });
}

/**
 * Events of one tenant for alice (extension 101, number +49 30 555 0001) and bob (102,
 * +49 30 555 0002), with what each of them must receive when both asked for every kind.
 */
export function twoUsersDay(): { bodies: string[]; alice: string[]; bob: string[] } {
  const e = (id: string, event: number, data: Record<string, unknown>) => ({
    id,
    body: eventBody(id, event, data),
  });
  const ring = (id: string, to: string) =>
    e(id, 30011, { call_id: `c-${id}`, from: '+442071234567', to, state: 'ringing' });
  const events = [
    ring('ring-101', '101'),
    ring('ring-102', '102'),
    ring('ring-did-alice', '+49 30 5550001'),
    ring('ring-did-bob', '4930 5550002'),
    ring('ring-103', '103'),
    e('vm-101', 30015, {
      voicemail_id: 'v1',
      extension: '101',
      from: '+4930123456',
      duration_sec: 3,
    }),
    e('vm-102', 30015, {
      voicemail_id: 'v2',
      extension: '102',
      from: '+4930123456',
      duration_sec: 9,
    }),
    e('sms-alice', 30031, {
      message_id: 'm1',
      from: '+4930123',
      to: '+4930 5550001',
      text: 'for alice only',
      received_at: 1,
    }),
    e('sms-bob', 30031, {
      message_id: 'm2',
      from: '+4930123',
      to: '102',
      text: 'for bob only',
      received_at: 1,
    }),
    e('presence-101', 30009, { extension: '101', presence_status: 'away' }),
    e('presence-102', 30009, { extension: '102', presence_status: 'available' }),
    e('trunk', 30007, { trunk: 'SIP-Main', status: 'unregistered' }),
    e('unknown-code', 39999, { extension: '101', anything: 'else' }),
  ];
  return {
    bodies: events.map((x) => x.body),
    alice: ['ring-101', 'ring-did-alice', 'vm-101', 'sms-alice', 'presence-101', 'trunk'],
    bob: ['ring-102', 'ring-did-bob', 'vm-102', 'sms-bob', 'presence-102', 'trunk'],
  };
}

export async function postAll(webhookUrl: string, bodies: string[]): Promise<void> {
  for (const body of bodies) {
    const res = await postWebhook(webhookUrl, body, signed(body));
    if (res.status !== 200) throw new Error(`webhook refused: ${res.status} ${res.body}`);
  }
}

/** Every kind of event a desktop asks for (voicemail, SMS, presence, trunk) and one it should not get. */
export const ALL_KINDS = [30015, 30031, 30009, 30007, 39999];
