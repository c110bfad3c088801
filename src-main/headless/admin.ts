/**
 * What the runner does for administrators, besides running:
 * - `effectiveSettings`: the flags, the environment and the organisation's policy made one
 *   Settings (flags over presets, locks over everything), the way the tray app sees its own;
 * - `--store-secret`: core/credentials/provision.ts;
 * - `--diagnostics <file>`: a connection test and the archive of src-main/core/diagnostics/.
 */
import { CallLogQueue, type CallLogWriter } from '../core/call-log/queue.ts';
import { defaultCallLogFolder } from './call-log-folder.ts';
import packageJson from '../../package.json' with { type: 'json' };
import { serviceProbe } from '../core/connection/service-probe.ts';
import { transportFor } from '../core/net/network.ts';
import { readCaText } from '../../src-shared/net/trust.ts';
import type { NetTransport } from '../../src-shared/net/transport.ts';
import { outboundAddress, testConnection } from '../core/connection/test-connection.ts';
import {
  keychainAccountOrNull,
  type CredentialStore,
} from '../core/credentials/credential-store.ts';
import type { LogRing } from '../core/diagnostics/bounded-log.ts';
import { Diagnostics, logSection } from '../core/diagnostics/diagnostics.ts';
import {
  aboutSection,
  connectionSection,
  connectionTestSection,
  keychainState,
  policySection,
  settingsSection,
} from '../core/diagnostics/sections.ts';
import { StatusTimeline } from '../core/diagnostics/bounded-log.ts';
import { RingActions, type ProgramRunner } from '../core/ring-actions/ring-actions.ts';
import { proxyPolicyOf, withLocks, type Policy } from '../core/settings/policy.ts';
import { DEFAULT_SETTINGS, type Settings } from '../core/settings/types.ts';
import type { TestConnectionResult } from '../ipc/contract.ts';
import type { RunnerEnvironment } from './runner-environment.ts';
import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger, SecretRegistry } from '../../src-shared/process/log.ts';
import type { HeadlessArgs } from './args.ts';
import {
  environmentLanguages,
  isLocale,
  resolveLocale,
  type Locale,
} from '../../src-shared/i18n/locales.ts';

/** The settings this run uses: flags (already over the policy's presets), then the policy's locks. */
export function effectiveSettings(
  args: HeadlessArgs,
  environment: Pick<RunnerEnvironment, 'apiKey'>,
  policy: Policy,
  logger: Logger,
): Settings {
  const wanted: Settings = {
    ...DEFAULT_SETTINGS,
    ...policy.settings,
    phoneSystem: args.phoneSystem,
    baseUrl: args.baseUrl,
    apiKey: environment.apiKey || policy.settings.apiKey || '',
    extensions: args.extensions,
    dids: args.dids,
    defaultRegion: args.region,
    staleRingSec: args.staleRingSec,
    relayUrl: args.relayUrl,
    relayTenant: args.relayTenant,
    eventSource: args.eventSource,
    features: args.features,
    caFile: args.caFile || policy.settings.caFile || '',
    contactsFile: args.contacts,
    crmLookup: args.crmLookup,
    demoMode: args.demo,
  };
  const settings = withLocks(wanted, policy);
  for (const key of Object.keys(policy.locked) as Array<keyof Settings>)
    if (JSON.stringify(wanted[key]) !== JSON.stringify(settings[key]))
      logger.warn('the policy locks this setting; the value given here is not used', {
        setting: key,
        managedBy: policy.managedBy,
      });
  return settings;
}

/**
 * The runner's language: the policy's locked `language` wins over --lang (with the same warning as
 * any lock); then --lang; then the policy's preset; then the environment (LANGUAGE, LANG, ...).
 * `system` means the environment's.
 */
export function runnerLocale(
  flag: string | null,
  env: Record<string, string | undefined>,
  policy: Policy,
  logger: Logger,
): Locale {
  const fromEnvironment = () => resolveLocale(environmentLanguages(env));
  const locked = policy.locked.language;
  if (locked !== undefined) {
    if (flag !== null && flag !== locked)
      logger.warn('the policy locks this setting; the value given here is not used', {
        setting: 'language',
        managedBy: policy.managedBy,
      });
    return locked === 'system' ? fromEnvironment() : locked;
  }
  if (flag !== null && isLocale(flag)) return flag;
  const preset = policy.settings.language;
  return preset !== undefined && preset !== 'system' ? preset : fromEnvironment();
}

/** The version of this checkout or build (package.json is bundled into the built runner). */
export function appVersion(): string {
  const version: unknown = packageJson.version;
  return typeof version === 'string' ? version : 'unknown';
}

export interface DiagnosticsRunDeps {
  args: HeadlessArgs;
  settings: Settings;
  policy: Policy;
  env: Record<string, string | undefined>;
  store: CredentialStore;
  logger: Logger;
  secrets: SecretRegistry;
  logRing: LogRing;
  clock: Clock;
  /** Sections other modules add (network decisions, ...). */
  diagnostics?: Diagnostics;
}

/**
 * `--diagnostics <file>`: tests the connection with the settings in force (when there is a key
 * and a secret to test), then writes the archive. Returns the test's result.
 */
/** --diagnostics reads the call-log queue's folder; it writes nothing to the CRM. */
const NOT_WRITING: CallLogWriter = {
  kind: 'hubspot',
  create: () => Promise.reject(new Error('not writing')),
  update: () => Promise.reject(new Error('not writing')),
  find: () => Promise.resolve(null),
};

export async function writeRunnerDiagnostics(
  path: string,
  d: DiagnosticsRunDeps,
): Promise<TestConnectionResult> {
  const { settings, clock, logger, secrets } = d;
  const envSecret = d.env.SCREENPOP_API_SECRET || null;
  if (envSecret) secrets.add(envSecret);
  const account = keychainAccountOrNull(settings.apiKey, settings.baseUrl);
  let stored = false;
  let secret = envSecret;
  if (!secret && account) {
    secret = await d.store.getSecret(account).catch((err: unknown) => {
      logger.warn('keychain could not be read', { error: err });
      return null;
    });
    stored = secret !== null;
  }
  // The same proxy and CA decisions as a run (HTTPS_PROXY / NO_PROXY, the policy's proxy and CA).
  let transport: NetTransport | null = null;
  let networkProblem: string | null = null;
  try {
    transport = transportFor(settings, {
      env: d.env,
      readFile: readCaText,
      logger,
      secrets,
      proxyPolicy: proxyPolicyOf(d.policy),
    });
  } catch (err) {
    networkProblem = err instanceof Error ? err.message : String(err);
  }
  const fetch = transport?.fetch;
  const result: TestConnectionResult = !fetch
    ? { ok: false, message: networkProblem ?? '', remedy: 'Fix HTTPS_PROXY or the proxy setting.' }
    : await testConnection(
        {
          phoneSystem: settings.phoneSystem,
          baseUrl: settings.baseUrl,
          apiKey: settings.apiKey,
          secret,
          extensions: settings.extensions,
          defaultRegion: settings.defaultRegion,
        },
        {
          logger,
          localAddress: outboundAddress,
          createProbe: (input) => serviceProbe(input, { clock, logger, secrets, fetch }),
        },
      );
  const at = clock.now();
  logger.info('connection test for diagnostics', { ok: result.ok });
  const diagnostics = d.diagnostics ?? new Diagnostics();
  const timeline = new StatusTimeline();
  diagnostics.add(
    aboutSection({
      app: 'screenpop-headless',
      version: appVersion(),
      now: () => clock.now(),
      extra: { secretFrom: envSecret ? 'SCREENPOP_API_SECRET' : 'keychain' },
    }),
  );
  diagnostics.add(
    settingsSection(
      () => settings,
      () => keychainState(stored),
    ),
  );
  diagnostics.add(policySection(d.policy));
  diagnostics.add(
    connectionSection(
      () => ({ note: 'written by --diagnostics: the runner was not watching for calls' }),
      timeline,
    ),
  );
  diagnostics.add(connectionTestSection(() => ({ at, result })));
  diagnostics.add(logSection(() => d.logRing.snapshot()));
  diagnostics.add({
    name: 'network',
    collect: () => (transport ? transport.decisions() : { problem: networkProblem }),
  });
  // The call-log queue's folder as it is (counts, ages, states; never a number, a note or an id).
  const callLogFolder = d.args.crmLogFolder ?? defaultCallLogFolder();
  const callLog = await new CallLogQueue({
    folder: callLogFolder,
    writer: NOT_WRITING,
    clock,
    logger,
  })
    .inspect()
    .catch((error: unknown) => ({
      problem: error instanceof Error ? error.message : String(error),
    }));
  diagnostics.add({ name: 'call-log', collect: () => callLog });
  await diagnostics.write(path, { secrets, now: clock.now() });
  return result;
}

/**
 * The policy's `onRing` programs for the runner: once per call (a call that rings two of the
 * user's numbers pops twice), links skipped (no browser here).
 */
export function runnerRingActions(
  actions: Policy['onRing'],
  runner: ProgramRunner,
  logger: Logger,
): {
  runOnce(pop: { callId: string; from: string; to: string }, name: string | null): void;
  /** Stops every program still running (the runner stopping). */
  stop(): Promise<void>;
} {
  const ring = new RingActions({
    actions,
    urlOpener: { open: () => {} },
    runner,
    logger,
    allowedSchemes: () => [],
  });
  const seen = new Set<string>();
  return {
    stop: () => ring.stop(),
    runOnce(pop, name) {
      if (seen.has(pop.callId)) return;
      seen.add(pop.callId);
      // Insertion order: the oldest call ids go first.
      if (seen.size > 1000) seen.delete(seen.values().next().value as string);
      ring.run(
        { from: pop.from, to: pop.to, call_id: pop.callId, caller_name: name ?? '' },
        { openLinks: false },
      );
    },
  };
}
