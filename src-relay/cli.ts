import { parseArgs } from 'node:util';
import { systemClock } from '../src-main/core/clock.ts';
import { LastResort } from '../src-main/core/last-resort.ts';
import { SecretRegistry, createLogger, type Logger } from '../src-main/core/log.ts';
import { loadConfig, type RelayConfig } from './config.ts';
import { startRelay, type RelayServer } from './server.ts';
import { openStore } from './store/open-store.ts';
import type { EventStore } from './store/types.ts';

const USAGE = `usage: npm run relay -- [--config <relay.json>]

  -c, --config <file>   the relay's JSON config (or RELAY_CONFIG=<file>); environment variables
                        override it (src-relay/README.md)
  -h, --help            this text

SIGTERM/SIGINT drain gracefully and exit 0 (1 if storage could not be closed cleanly, e.g. the
memory store's snapshot was not written).`;

/** How long past shutdownGraceMs a drain may take before the process gives up and exits 1. */
const SHUTDOWN_SLACK_MS = 15_000;

function readArgs(argv: string[]): { config?: string; help: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  return { config: values.config, help: values.help ?? false };
}

async function main(): Promise<void> {
  let args: ReturnType<typeof readArgs>;
  try {
    args = readArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`relay: ${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (args.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const config = loadConfig(args.config ?? (process.env.RELAY_CONFIG || undefined), process.env);
  const secrets = new SecretRegistry();
  for (const t of Object.values(config.tenants)) for (const s of t.secrets) secrets.add(s);
  if (config.storage.kind === 'redis')
    secrets.add(new URL(config.storage.url).password || undefined);
  const logger = createLogger({ level: config.logLevel, secrets }, { service: 'relay' });
  // The last resort (as in the app and the runner): a fault in a timer or a callback is logged,
  // secrets scrubbed, and the relay goes on serving.
  const lastResort = new LastResort({ logger, clock: systemClock, secrets });
  lastResort.installOn(process);
  const clock = lastResort.guardClock(systemClock);
  const store = await openStore(config, clock, logger);
  const relay = await startRelay({ config, store, logger, clock });
  process.stdout.write(`relay listening on ${relay.url} (storage: ${store.kind})\n`);

  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn('second signal during shutdown; exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    void shutdown(signal, config, relay, store, logger).then((code) => process.exit(code));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * Drain, then close the storage (the memory store writes its snapshot), then exit with 0, or 1 if
 * anything could not be closed cleanly. The process is held open until then: the relay's and the
 * store's timers do not keep Node alive by themselves, and without this hold Node would exit in
 * the middle of the drain, before the snapshot is written. A drain that hangs is cut at
 * shutdownGraceMs + 15 s.
 */
async function shutdown(
  signal: NodeJS.Signals,
  config: RelayConfig,
  relay: RelayServer,
  store: EventStore,
  logger: Logger,
): Promise<number> {
  logger.info('shutdown requested', { signal });
  const hold = setInterval(() => {}, 1_000);
  const deadline = setTimeout(() => {
    logger.error('shutdown did not finish in time; exiting', {
      limitMs: config.shutdownGraceMs + SHUTDOWN_SLACK_MS,
    });
    process.exit(1);
  }, config.shutdownGraceMs + SHUTDOWN_SLACK_MS);
  let code = 0;
  try {
    await relay.close();
  } catch (err) {
    code = 1;
    logger.error('drain failed', { err: (err as Error).message });
  }
  try {
    await store.close();
  } catch (err) {
    code = 1;
    logger.error('storage not closed cleanly', { err: (err as Error).message });
  }
  clearInterval(hold);
  clearTimeout(deadline);
  logger.info('relay stopped', { exitCode: code });
  return code;
}

main().catch((err: Error) => {
  process.stderr.write(`relay: ${err.message}\n`);
  process.exit(1);
});
