import { systemClock } from '../src-main/core/clock.ts';
import { SecretRegistry, createLogger } from '../src-main/core/log.ts';
import { loadConfig } from './config.ts';
import { startRelay } from './server.ts';
import { openStore } from './store/open-store.ts';

/**
 * `npm run relay -- [--config relay.json]` (or RELAY_CONFIG=relay.json). Environment variables
 * override the file (src-relay/README.md). SIGTERM/SIGINT drain gracefully.
 */
function configPath(argv: string[]): string | undefined {
  const i = argv.indexOf('--config');
  if (i >= 0) return argv[i + 1];
  return process.env.RELAY_CONFIG || undefined;
}

async function main(): Promise<void> {
  const config = loadConfig(configPath(process.argv.slice(2)), process.env);
  const secrets = new SecretRegistry();
  for (const t of Object.values(config.tenants)) for (const s of t.secrets) secrets.add(s);
  if (config.storage.kind === 'redis')
    secrets.add(new URL(config.storage.url).password || undefined);
  const logger = createLogger({ level: config.logLevel, secrets }, { service: 'relay' });
  const store = await openStore(config, systemClock, logger);
  const relay = await startRelay({ config, store, logger, clock: systemClock });
  process.stdout.write(`relay listening on ${relay.url} (storage: ${store.kind})\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutdown requested', { signal });
    try {
      await relay.close();
      await store.close();
      process.exitCode = 0;
    } catch (err) {
      logger.error('shutdown failed', { err: (err as Error).message });
      process.exitCode = 1;
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: Error) => {
  process.stderr.write(`relay: ${err.message}\n`);
  process.exit(1);
});
