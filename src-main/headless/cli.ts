/**
 * Entry point of screenpop-headless (bin/screenpop-headless.js, `npm run headless -- ...`).
 * stdout carries only the JSON lines of output.ts; every log line goes to stderr, redacted.
 */
import { readFileSync } from 'node:fs';
import { systemClock } from '../../src-shared/clock.ts';
import { LastResort } from '../../src-shared/last-resort.ts';
import { createLogger, SecretRegistry } from '../../src-shared/log.ts';
import { envProxyResolver } from '../core/net/proxy.ts';
import { readCaFile } from '../core/net/trust.ts';
import { parseHeadlessArgs, USAGE, UsageError } from './args.ts';
import { EXIT, runHeadless } from './runner.ts';
import { whenToStop } from './stop-signal.ts';

/** A clean stop that takes longer than this (a hung socket close) ends with exit code 1. */
const STOP_DEADLINE_MS = 10_000;

const secrets = new SecretRegistry();

async function main(): Promise<number> {
  let args;
  try {
    args = parseHeadlessArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`screenpop-headless: ${error.message}\n${USAGE}\n`);
    return EXIT.usage;
  }
  if (args.help) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (!args.demo && !process.env.SCREENPOP_API_KEY?.trim()) {
    process.stderr.write(
      `screenpop-headless: set SCREENPOP_API_KEY (and SCREENPOP_API_SECRET, or keep the secret in the keychain)\n${USAGE}\n`,
    );
    return EXIT.usage;
  }
  // A proxy the administrator set that cannot be used must not be gone around silently.
  try {
    envProxyResolver(process.env);
    if (args.caFile) readCaFile(args.caFile, (path) => readFileSync(path, 'utf8'));
  } catch (error) {
    process.stderr.write(`screenpop-headless: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  const logger = createLogger(
    { secrets, level: args.verbose ? 'debug' : 'info' },
    { app: 'screenpop-headless' },
  );
  // From here on nothing unexpected ends the process: it is logged, printed as a `fault` line, and
  // the connection is rebuilt (runner.ts).
  const lastResort = new LastResort({ logger, clock: systemClock, secrets });
  lastResort.installOn(process);
  const stopSignal = whenToStop(process).then((reason) => {
    logger.info('stop requested', { reason });
    setTimeout(() => {
      logger.error('did not stop cleanly in time; exiting', { deadlineMs: STOP_DEADLINE_MS });
      process.exit(EXIT.failure);
    }, STOP_DEADLINE_MS).unref();
  });
  return runHeadless({
    args,
    env: process.env,
    write: (text) => process.stdout.write(text),
    logger,
    secrets,
    stopSignal,
    clock: lastResort.guardClock(systemClock),
    lastResort,
  });
}

main().then(
  (code) => {
    process.exitCode = code;
    // Sockets and timers are closed; anything left (a keychain D-Bus handle) must not hold the exit.
    setTimeout(() => process.exit(code), 500).unref();
  },
  (error: unknown) => {
    process.stderr.write(
      `screenpop-headless: unexpected failure: ${secrets.scrub(error instanceof Error ? error.message : String(error))}\n`,
    );
    process.exit(EXIT.failure);
  },
);
