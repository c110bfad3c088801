import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import type { RelayConfig } from '../config.ts';
import { MemoryStore } from './memory-store.ts';
import { RedisStore } from './redis-store.ts';
import type { EventStore } from './types.ts';

/** The store the config asks for, opened (snapshot loaded / Redis connected and followed). */
export async function openStore(
  config: RelayConfig,
  clock: Clock,
  logger: Logger,
): Promise<EventStore> {
  if (config.storage.kind === 'redis') {
    const store = new RedisStore({
      storage: config.storage,
      keyPrefix: config.storage.keyPrefix,
      tenants: Object.keys(config.tenants),
      clock,
      logger: logger.child({ component: 'redis' }),
      retention: config.retention,
      commandTimeoutMs: config.storage.commandTimeoutMs,
    });
    await store.open();
    return store;
  }
  const store = new MemoryStore({
    clock,
    retention: config.retention,
    snapshotFile: config.storage.snapshotFile,
  });
  await store.open();
  return store;
}
