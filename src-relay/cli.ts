import { homedir } from 'node:os';
import { parseArgs } from 'node:util';
import { systemClock } from '../src-shared/process/clock.ts';
import { LastResort } from '../src-shared/process/last-resort.ts';
import { whenToStop, type StopReason } from '../src-shared/process/stop-signal.ts';
import {
  SecretRegistry,
  createLogger,
  silentLogger,
  type Logger,
} from '../src-shared/process/log.ts';
import { stderrOutput, stdoutOutput } from '../src-shared/process/output-stream.ts';
import { checkConfig, type ConfigReport } from './check-config.ts';
import type { RelayConfig } from './config.ts';
import { loadConfig } from './config-env.ts';
import { startRelay, type RelayServer } from './server.ts';
import { StartupError } from './startup-errors.ts';
import { assertWsInternals } from './ws-internals.ts';
import { openStore } from './store/open-store.ts';
import type { EventStore } from './store/types.ts';
import { hasUserTenants, openUserStore } from './users/open-user-store.ts';
import { readCodeKey } from './users/code-key.ts';
import { relayTransport } from './outbound.ts';
import { readGatewayCredential, type GatewayCredential } from './gateway/credential.ts';
import type { UserStore } from './users/types.ts';
import { USERS_USAGE, usersCommand, UsersUsageError } from './users/users-cli.ts';
import { redisSecrets } from './store/redis-connection.ts';
import relayPackage from './package.json' with { type: 'json' };

const USAGE = `usage: npm run relay -- [--config <relay.json>] [--check-config]
       npm run relay -- users add|code|revoke|list ... (organisation mode; users --help)

  -c, --config <file>   the relay's JSON config (or RELAY_CONFIG=<file>); environment variables
                        override it (src-relay/README.md)
      --check-config    check the config (with the environment), the files it names and the
                        storage (Redis is contacted, a snapshot read), print what the relay would
                        do, and exit: 0 when it would start, 1 when it would not
  -h, --help            this text
      --version         the relay's version

Examples: deploy/relay/ (config, Dockerfile, compose file, systemd unit).
SIGTERM/SIGINT drain gracefully and exit 0 (1 if storage could not be closed cleanly, e.g. the
memory store's snapshot was not written). A relay that cannot start says what failed and exits 1.`;

// Every write to the two streams goes through their one writer (src-shared/process/output-stream.ts): a
// reader that went away (the log collector, `| head`) means no more output, never a write error
// caught in a loop; the relay serves on without its logs.
const stdout = stdoutOutput();
const stderr = stderrOutput();

/** How long past shutdownGraceMs a drain may take before the process gives up and exits 1. */
const SHUTDOWN_SLACK_MS = 15_000;

interface CliArgs {
  config?: string;
  checkConfig: boolean;
  help: boolean;
  version: boolean;
}

function readArgs(argv: string[]): CliArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', short: 'c' },
      'check-config': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    config: values.config,
    checkConfig: values['check-config'] ?? false,
    help: values.help ?? false,
    version: values.version ?? false,
  };
}

/** Every secret of the config, registered so that no log line or error can show one. */
function secretsOf(config: RelayConfig): SecretRegistry {
  const secrets = new SecretRegistry().hideHome(homedir());
  for (const t of Object.values(config.tenants)) for (const s of t.secrets) secrets.add(s);
  if (config.storage.kind === 'redis') for (const s of redisSecrets(config.storage)) secrets.add(s);
  return secrets;
}

/** `relay users ...` with the relay's own -c/--config (or RELAY_CONFIG). */
async function users(argv: string[]): Promise<number> {
  const rest: string[] = [];
  let configPath = process.env.RELAY_CONFIG || undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-c' || a === '--config') configPath = argv[++i];
    else if (a.startsWith('--config=')) configPath = a.slice('--config='.length);
    else if (a === '-h' || a === '--help') {
      stdout.write(USERS_USAGE + '\n');
      return 0;
    } else rest.push(a);
  }
  const config = loadConfig(configPath, process.env);
  try {
    return await usersCommand(rest, config, (line) => stdout.write(line + '\n'));
  } catch (err) {
    if (
      err instanceof UsersUsageError ||
      (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      stderr.write(`relay users: ${(err as Error).message}\n${USERS_USAGE}\n`);
      return 2;
    }
    stderr.write(`relay users: ${scrubAll((err as Error).message)}\n`);
    return 1;
  }
}

async function main(): Promise<number | undefined> {
  if (process.argv[2] === 'users') return users(process.argv.slice(3));
  let args: CliArgs;
  try {
    args = readArgs(process.argv.slice(2));
  } catch (err) {
    stderr.write(`relay: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    stdout.write(USAGE + '\n');
    return 0;
  }
  if (args.version) {
    stdout.write(`screenpop-relay ${relayPackage.version}\n`);
    return 0;
  }
  // Before anything else: a `ws` whose internals changed would serve clients nothing, silently.
  assertWsInternals();
  const configPath = args.config ?? (process.env.RELAY_CONFIG || undefined);
  const config = loadConfig(configPath, process.env);
  const secrets = secretsOf(config);
  const report = checkConfig(config, Date.now(), process.env);
  if (args.checkConfig) return checkOnly(configPath, config, report, secrets);
  if (report.errors.length > 0)
    throw new StartupError(`the config cannot be used:\n  ${report.errors.join('\n  ')}`);

  const logger = createLogger({ level: config.logLevel, secrets }, { service: 'relay' });
  for (const warning of report.warnings) logger.warn('config warning', { warning });
  // The last resort (as in the app and the runner): a fault in a timer or a callback is logged,
  // secrets scrubbed, and the relay goes on serving.
  const lastResort = new LastResort({ logger, clock: systemClock, secrets });
  lastResort.installOn(process);
  // Faults in a loop starve every socket, timer and signal handler: no drain can run, so the
  // process ends now (exit 1, as a crash; the orchestrator restarts it).
  lastResort.onLoop(() => process.exit(1));
  const clock = lastResort.guardClock(systemClock);
  // SIGTERM, Ctrl+C, or (under `npm run relay`) npm going away: the shared rule
  // (src-shared/process/stop-signal.ts). Listened for before the relay starts and says it is listening: a
  // stop sent the moment that line is read met Node's default action (killed by the signal, no
  // drain, no snapshot). A second signal while draining means "now".
  const stopRequested = whenToStop(process, {
    onRepeat: (signal) => {
      logger.warn('second signal during shutdown; exiting now', { signal });
      process.exit(1);
    },
  });
  // Gateway mode: the phone system's key and secret, from files or the environment (never the
  // JSON), registered for scrubbing before anything can log.
  const gateway = new Map<string, GatewayCredential>();
  for (const [name, tenant] of Object.entries(config.tenants))
    if (tenant.gateway) {
      const credential = readGatewayCredential(name, tenant.gateway, process.env);
      secrets.add(credential.secret);
      secrets.add(credential.apiKey);
      gateway.set(name, credential);
    }
  // Organisation mode: the key enrolment codes are stored under (users/code-key.ts).
  const codeKey = hasUserTenants(config) ? readCodeKey(config.users, process.env) : null;
  if (codeKey !== null) secrets.add(codeKey);
  // Every connection out (token checks, gateways, single sign-on) through one transport: the
  // environment's proxy, the config's CA file (outbound.ts; checked above by checkConfig).
  const outbound = relayTransport(config, process.env, { logger, secrets });
  const store = await openStore(config, clock, logger);
  let relay: RelayServer;
  let userStore: UserStore | null = null;
  try {
    userStore = await openUserStore(config, clock, logger, { follow: true });
    relay = await startRelay({
      config,
      store,
      logger,
      clock,
      users: userStore,
      codeKey,
      gateway,
      secrets,
      fetch: outbound.fetch,
      createSocket: outbound.createSocket,
    });
  } catch (err) {
    await userStore?.close().catch(() => {});
    await store.close().catch(() => {});
    throw err;
  }
  stdout.write(`relay listening on ${relay.url} (storage: ${store.kind})\n`);

  void stopRequested
    .then((reason) => shutdown(reason, config, relay, store, userStore, logger))
    .then((code) => process.exit(code));
  return undefined;
}

/** --check-config: the report, then the storage opened and closed again; 0 when all is well. */
async function checkOnly(
  path: string | undefined,
  config: RelayConfig,
  report: ConfigReport,
  secrets: SecretRegistry,
): Promise<number> {
  if (report.errors.length === 0) {
    try {
      const store = await openStore(config, systemClock, silentLogger);
      // The readiness check too (a Cluster: every primary asked for its cluster_state).
      const answered = await store.ping().then(
        () => null,
        (err: unknown) => err,
      );
      const cluster = store.storageHealth?.().cluster;
      await store.close();
      if (answered) throw answered;
      report.summary.push(
        `storage opened and closed again: ${store.kind} answers${cluster ? ` (cluster_state:${cluster.state}, ${cluster.primaries} primaries, ${cluster.replicas} replicas)` : ''}`,
      );
    } catch (err) {
      report.errors.push(err instanceof Error ? err.message : String(err));
    }
  }
  const lines = [
    `relay config: ${path ?? '(no file)'} with the environment's RELAY_* overrides`,
    ...report.summary.map((s) => `  ${s}`),
    ...report.warnings.map((w) => `warning: ${w}`),
    ...report.errors.map((e) => `error: ${e}`),
    report.errors.length === 0
      ? `config OK${report.warnings.length ? ` (${report.warnings.length} warning${report.warnings.length === 1 ? '' : 's'})` : ''}: the relay would start`
      : `config NOT OK (${report.errors.length} error${report.errors.length === 1 ? '' : 's'}): the relay would not start`,
  ];
  stdout.write(secrets.scrub(lines.join('\n')) + '\n');
  return report.errors.length === 0 ? 0 : 1;
}

/**
 * Drain, then close the storage (the memory store writes its snapshot), then exit with 0, or 1 if
 * anything could not be closed cleanly. The process is held open until then: the relay's and the
 * store's timers do not keep Node alive by themselves, and without this hold Node would exit in
 * the middle of the drain, before the snapshot is written. A drain that hangs is cut at
 * shutdownGraceMs + 15 s.
 */
async function shutdown(
  reason: StopReason,
  config: RelayConfig,
  relay: RelayServer,
  store: EventStore,
  userStore: UserStore | null,
  logger: Logger,
): Promise<number> {
  logger.info('shutdown requested', { reason });
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
    logger.error('drain failed', { error: err });
  }
  try {
    await store.close();
  } catch (err) {
    code = 1;
    logger.error('storage not closed cleanly', { error: err });
  }
  await userStore?.close().catch(() => {});
  clearInterval(hold);
  clearTimeout(deadline);
  logger.info('relay stopped', { exitCode: code });
  return code;
}

main().then(
  (code) => {
    // Help and --check-config end here (a Redis client closed a moment ago must not hold the exit).
    if (code !== undefined) process.exit(code);
  },
  (err: unknown) => {
    // A failure to start: what failed, in words (startup-errors.ts); no secret, no stack.
    const message = err instanceof Error ? err.message : String(err);
    stderr.write(`relay: cannot start: ${scrubAll(message)}\n`);
    process.exit(1);
  },
);

/** The environment's secrets, for an error thrown before the config (and its registry) existed. */
function scrubAll(text: string): string {
  const secrets = new SecretRegistry();
  for (const [name, value] of Object.entries(process.env))
    if (value && /^RELAY_TENANT_.*_SECRETS$/.test(name))
      for (const s of value.split(',')) secrets.add(s.trim() || undefined);
  return secrets.scrub(text);
}
