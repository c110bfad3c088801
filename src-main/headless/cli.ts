/**
 * Entry point of screenpop-headless (bin/screenpop-headless.js, `npm run headless -- ...`).
 * stdout carries only the JSON lines of output.ts; every log line goes to stderr, redacted.
 * Both are written through their one writer (src-shared/process/output-stream.ts), each with its own
 * meaning when its reader goes away: stdout gone is the consumer gone (the runner stops, exit 4);
 * stderr gone is nobody reading the logs (the runner carries on without them).
 */
import { systemClock } from '../../src-shared/process/clock.ts';
import { LastResort } from '../../src-shared/process/last-resort.ts';
import { jsonLine } from '../../src-shared/files/json-text.ts';
import { checkAtomicTarget, UnusableTargetError } from '../../src-shared/files/atomic-file.ts';
import { homedir, networkInterfaces } from 'node:os';
import { externalAddresses } from '../core/net/network-watch.ts';
import { envProxyResolver } from '../../src-shared/net/proxy.ts';
import { readCaFile, readCaText } from '../../src-shared/net/trust.ts';
import {
  createLogger,
  SecretRegistry,
  silentLogger,
  type LogRecord,
} from '../../src-shared/process/log.ts';
import {
  KeychainUnavailableError,
  KeytarCredentialStore,
} from '../core/credentials/keytar-store.ts';
import { render } from '../../src-shared/i18n/phrase.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { LogRing } from '../core/diagnostics/bounded-log.ts';
import { loadMachinePolicy, presetDefaults } from '../core/settings/policy.ts';
import { readAll, storeSecret } from '../core/credentials/provision.ts';
import { FileCredentialStore } from '../core/credentials/file-credential-store.ts';
import { createReadStream } from 'node:fs';
import { appVersion, effectiveSettings, runnerLocale, writeRunnerDiagnostics } from './admin.ts';
import { LANG_CODES, parseHeadlessArgs, preScan, usage, UsageError } from './args.ts';
import { environmentLanguages, isLocale, resolveLocale } from '../../src-shared/i18n/locales.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import { runnerEnvironment } from './runner-environment.ts';
import { EXIT, runDial, runHeadless } from './runner.ts';
import { inRunnerWords } from './output.ts';
import { whenToStop } from '../../src-shared/process/stop-signal.ts';
import { stderrOutput, stdoutOutput } from '../../src-shared/process/output-stream.ts';

/** A clean stop that takes longer than this (a hung socket close) ends with exit code 1. */
const STOP_DEADLINE_MS = 10_000;

// Stacks and paths in the log and the diagnostics archive say ~, not the user's account name.
const secrets = new SecretRegistry().hideHome(homedir());
// Every write to the two streams goes through these: a write error never reaches the last resort.
const stdout = stdoutOutput();
const stderr = stderrOutput();

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const early = preScan(argv);
  // The language of the runner's words (terminal text: no bidi marks); JSON keys stay English.
  let t = createTranslator(
    early.lang && isLocale(early.lang)
      ? early.lang
      : resolveLocale(environmentLanguages(process.env)),
    { isolate: false },
  );
  // A usage error is two lines: what is wrong, and where the help is (not the whole help).
  const usageError = (words: string): number => {
    stderr.write(`screenpop-headless: ${words}\n${t.t('runner.usage.see-help')}\n`);
    return EXIT.usage;
  };
  if (early.lang && !isLocale(early.lang))
    return usageError(t.t('runner.bad-lang', { codes: LANG_CODES.join(', '), given: early.lang }));
  // Asked for: on stdout, before anything is read or logged (a help is not a run).
  if (early.help) {
    stdout.write(`${usage(t)}\n`);
    return EXIT.ok;
  }
  if (early.version) {
    stdout.write(`screenpop-headless ${appVersion()}\n`);
    return EXIT.ok;
  }
  // Every log line goes to stderr and into a ring that --diagnostics puts in its archive. Until the
  // command line is known to be usable, the lines are held: a usage error is not preceded by the
  // policy's "no policy file" (only held warnings and errors are written then).
  const logRing = new LogRing();
  let held: LogRecord[] | null = [];
  const release = (all: boolean): void => {
    for (const r of held ?? [])
      if (all || r.level === 'warn' || r.level === 'error') stderr.write(jsonLine(r));
    held = null;
  };
  const logger = createLogger(
    {
      secrets,
      level: early.verbose ? 'debug' : 'info',
      sink: logRing.tee((r) => (held ? held.push(r) : stderr.write(jsonLine(r)))),
    },
    { app: 'screenpop-headless' },
  );
  // What the run takes from the environment (the key, the secret, the CRM token, the proxy), once.
  const environment = runnerEnvironment(process.env);
  // The organisation's policy, as the tray app reads it: presets are the flags' defaults.
  const policy = await loadMachinePolicy(logger, process.platform, early.policy);
  // A language the policy locks (or presets, without --lang) is the runner's from here on.
  const locale = runnerLocale(early.lang, process.env, policy, logger);
  if (locale !== t.locale) t = createTranslator(locale, { isolate: false });
  let args;
  try {
    args = parseHeadlessArgs(argv, presetDefaults(policy));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    release(false);
    return usageError(render(inRunnerWords(error.words), t));
  }
  // The call log's signing secret from its file (never from the command line: `ps` shows it).
  if (args.crmLogSecretFile) {
    let secret = '';
    let problem = '';
    try {
      const text = await readAll(createReadStream(args.crmLogSecretFile), 4096);
      secret =
        text
          .split(/\r?\n/)
          .find((line) => line.trim() !== '')
          ?.trim() ?? '';
      if (!secret) problem = 'empty';
    } catch (error) {
      problem = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    }
    if (problem) {
      release(false);
      return usageError(
        t.t('runner.crm-log-secret-unreadable', { file: args.crmLogSecretFile, error: problem }),
      );
    }
    secrets.add(secret);
    environment.crmLogSecret = secret;
  }
  // The one-shot commands log what they do (the policy's lines first).
  if (args.storeSecret || args.diagnostics) release(true);
  // The runner says which flags a lock overrides when it runs; here only for the one-shot commands.
  const settings = effectiveSettings(
    args,
    environment,
    policy,
    args.storeSecret || args.diagnostics ? logger : silentLogger,
  );
  if (args.storeSecret) {
    if (process.stdin.isTTY) {
      stderr.write(
        `screenpop-headless: ${t.t('runner.pipe-secret')}\n  printf %s "$SECRET" | screenpop-headless --store-secret --base-url https://acme.example.com\n`,
      );
      return EXIT.usage;
    }
    try {
      const account = await storeSecret(
        settings,
        await readAll(process.stdin),
        new KeytarCredentialStore(),
        secrets,
      );
      stderr.write(`screenpop-headless: ${t.t('runner.secret-stored', { account })}\n`);
      return EXIT.ok;
    } catch (error) {
      stderr.write(
        `screenpop-headless: ${t.t('runner.secret-not-stored', { error: secrets.scrub(keychainWords(error, t)) })}\n`,
      );
      return EXIT.failure;
    }
  }
  if (args.diagnostics) {
    const path = args.diagnostics;
    // Before the connection test: a device, a pipe or a folder is refused at once, by name.
    try {
      await checkAtomicTarget(path, { createFolder: false });
    } catch (error) {
      if (!(error instanceof UnusableTargetError)) throw error;
      stderr.write(
        `screenpop-headless: ${t.t('runner.diagnostics-target', { path, what: error.what })}\n`,
      );
      return EXIT.usage;
    }
    const result = await writeRunnerDiagnostics(path, {
      args,
      settings,
      policy,
      env: process.env,
      store: new KeytarCredentialStore(),
      logger,
      secrets,
      logRing,
      clock: systemClock,
    }).catch((error: unknown) => {
      logger.error('diagnostics could not be written', { error });
      return null;
    });
    if (!result) return EXIT.failure;
    stderr.write(
      `screenpop-headless: ${t.t('runner.diagnostics-written', { path, result: result.ok ? 'passed' : 'failed' })}\n`,
    );
    return EXIT.ok;
  }
  // Organisation mode: the enrolment code from where it was given, and the credential file.
  if (args.organisation) {
    if (args.enrolFrom === 'command-line')
      stderr.write(`screenpop-headless: ${t.t('runner.enrol-on-command-line')}\n`);
    if (args.enrolFrom === 'stdin' || args.enrolFrom === 'file') {
      const source =
        args.enrolFrom === 'file' ? (args.enrolFile ?? '') : t.t('runner.stdin-source');
      let code = '';
      let problem = '';
      try {
        const text =
          args.enrolFrom === 'file'
            ? await readAll(createReadStream(args.enrolFile ?? ''), 1024)
            : await readAll(process.stdin, 1024);
        code =
          text
            .split(/\r?\n/)
            .find((line) => line.trim() !== '')
            ?.trim() ?? '';
        if (!code) problem = 'empty';
      } catch (error) {
        problem = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      }
      if (problem) {
        stderr.write(
          `screenpop-headless: ${t.t('runner.enrol-unreadable', { source, error: problem })}\n`,
        );
        return EXIT.usage;
      }
      secrets.add(code);
      args = { ...args, enrol: code };
    }
    if (args.credentialFile) {
      try {
        await new FileCredentialStore(args.credentialFile).check();
      } catch (error) {
        stderr.write(
          `screenpop-headless: ${t.t('runner.credential-file-unusable', { error: (error as Error).message })}\n`,
        );
        return EXIT.usage;
      }
    }
  }
  // Organisation mode needs no key: the relay's own credential stands in for it.
  if (!settings.demoMode && !args.organisation && !settings.apiKey) {
    // A lock on apiKey without a value: SCREENPOP_API_KEY is not used, so asking for it would
    // send the administrator round in circles.
    const words =
      args.demo && policy.locked.demoMode === false
        ? t.t('runner.demo-locked', { managedBy: policy.managedBy })
        : Object.hasOwn(policy.locked, 'apiKey')
          ? t.t('runner.key-locked-empty', { managedBy: policy.managedBy })
          : t.t('runner.needs-key');
    release(false);
    return usageError(words);
  }
  release(true);
  // Without SCREENPOP_API_SECRET the secret comes from the keychain: a keychain module that is not
  // installed (an optional dependency) or cannot load is said now, with what to install, before
  // anything connects; never a file instead.
  if (!args.demo && !environment.apiSecret && !args.credentialFile) {
    try {
      await new KeytarCredentialStore().check();
    } catch (error) {
      stderr.write(`screenpop-headless: ${keychainWords(error, t)}\n`);
      return EXIT.usage;
    }
  }
  // A proxy the administrator set that cannot be used must not be gone around silently.
  try {
    envProxyResolver(environment.proxyVariables);
    if (settings.caFile) readCaFile(settings.caFile, readCaText);
  } catch (error) {
    stderr.write(`screenpop-headless: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  // `dial <number>`: one line and out (0 placed, 1 refused), through a running runner's sign-in
  // when there is one (runner.ts runDial).
  if (args.dial !== null)
    return runDial({
      args,
      environment,
      write: (text) => stdout.write(text),
      logger,
      secrets,
      stopSignal: new Promise<void>(() => {}),
      clock: systemClock,
      policy,
      words: t,
    });
  // From here on nothing unexpected ends the process: it is logged, printed as a `fault` line, and
  // the connection is rebuilt (runner.ts).
  const lastResort = new LastResort({ logger, clock: systemClock, secrets });
  lastResort.installOn(process);
  // Faults in a loop (src-shared/process/last-resort.ts) starve every timer and signal handler: no clean
  // stop can run, so the process ends now, as a bug (exit 1; systemd's on-failure restarts it).
  lastResort.onLoop(() => process.exit(EXIT.failure));
  let deadline: NodeJS.Timeout | undefined;
  const stopWithin = (): void => {
    deadline ??= setTimeout(() => {
      logger.error('did not stop cleanly in time; exiting', { deadlineMs: STOP_DEADLINE_MS });
      process.exit(EXIT.failure);
    }, STOP_DEADLINE_MS).unref();
  };
  const stopSignal = whenToStop(process).then((reason) => {
    logger.info('stop requested', { reason });
    stopWithin();
  });
  const outputGone = stdout.gone.then((gone) => {
    stopWithin();
    return gone;
  });
  return runHeadless({
    args,
    environment,
    write: (text) => stdout.write(text),
    outputGone,
    logger,
    secrets,
    stopSignal,
    clock: lastResort.guardClock(systemClock),
    lastResort,
    policy,
    words: t,
    networkAddresses: () => externalAddresses(networkInterfaces()),
  }).catch((error: unknown) => {
    // A contacts file that gives nothing is found only once the run has started.
    if (!(error instanceof UsageError)) throw error;
    stderr.write(`screenpop-headless: ${render(inRunnerWords(error.words), t)}\n`);
    return EXIT.usage;
  });
}

/** A keychain error in the user's language (cause, remedy, the library's own words); else its message. */
function keychainWords(error: unknown, t: Translator): string {
  if (error instanceof KeychainUnavailableError)
    return `${render(error.words, t)} (${error.detail})`;
  return error instanceof Error ? error.message : String(error);
}

main().then(
  (code) => {
    process.exitCode = code;
    // Sockets and timers are closed; anything left (a keychain D-Bus handle) must not hold the exit.
    setTimeout(() => process.exit(code), 500).unref();
  },
  (error: unknown) => {
    stderr.write(
      `screenpop-headless: unexpected failure: ${secrets.scrub(error instanceof Error ? error.message : String(error))}\n`,
    );
    process.exit(EXIT.failure);
  },
);
