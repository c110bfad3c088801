import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import type { RelayConfig } from '../config.ts';
import { FileUserStore } from './file-user-store.ts';
import { RedisUserStore } from './redis-user-store.ts';
import type { UserStore } from './types.ts';

/** True when some tenant admits the relay's users (organisation mode). */
export function hasUserTenants(config: RelayConfig): boolean {
  return Object.values(config.tenants).some((t) => t.access === 'users');
}

/**
 * The users' store the config asks for (beside the event store: Redis with Redis, else the users
 * file), opened; `follow` (the running relay) also starts noticing changes made by other
 * processes. Null when no tenant has `access: "users"`.
 */
export async function openUserStore(
  config: RelayConfig,
  clock: Clock,
  logger: Logger,
  options: { follow: boolean },
): Promise<UserStore | null> {
  if (!hasUserTenants(config)) return null;
  if (config.storage.kind === 'redis') {
    const store = new RedisUserStore({
      storage: config.storage,
      keyPrefix: config.storage.keyPrefix,
      logger,
      commandTimeoutMs: config.storage.commandTimeoutMs,
    });
    await store.open();
    if (options.follow) await store.follow();
    return store;
  }
  // config.ts requires the file when a tenant has users and the storage is memory.
  const store = new FileUserStore({ file: config.users.file!, clock, logger });
  await store.open();
  if (options.follow) store.follow();
  return store;
}
