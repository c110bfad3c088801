/**
 * The headless runner: the tray app's core without its windows. The same connection factory
 * (service client, token manager, engine), the same directory and the same credential source as
 * the app, with pops, dismisses and status changes printed as JSON lines instead of shown. Used for
 * servers, kiosks, scripts and black-box tests. `--demo` starts the app's demo (src-sim/demo.ts).
 */
import {
  directoryFetchers,
  REBUILD_MIN_INTERVAL_MS,
  serviceConnectionFactory,
  type Connection,
} from '../core/connection/connection.ts';
import { transportFor } from '../core/net/network.ts';
import { ProxyConfigError } from '../../src-shared/net/proxy.ts';
import { describeAuth, type NetTransport } from '../../src-shared/net/transport.ts';
import { readCaText } from '../../src-shared/net/trust.ts';
import { watchNetwork } from '../core/net/network-watch.ts';
import { Directory } from '../core/contacts/directory.ts';
import type { DemoService } from '../core/ports/ports.ts';
import { systemClock, type Clock } from '../../src-shared/process/clock.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
  type CredentialStore,
} from '../core/credentials/credential-store.ts';
import { credentialsSource } from '../core/credentials/credentials-source.ts';
import { KeytarCredentialStore } from '../core/credentials/keytar-store.ts';
import { FileCredentialStore } from '../core/credentials/file-credential-store.ts';
import type { ConnectionStatus } from '../core/events/contracts.ts';
import { recoveryPacer, type LastResort } from '../../src-shared/process/last-resort.ts';
import type { Logger, SecretRegistry } from '../../src-shared/process/log.ts';
import type { OutputGone } from '../../src-shared/process/output-stream.ts';
import { NO_POLICY, proxyPolicyOf, type Policy } from '../core/settings/policy.ts';
import { spawnProgramRunner } from '../core/ring-actions/program-runner.ts';
import type { ProgramRunner } from '../core/ring-actions/ring-actions.ts';
import { effectiveSettings, runnerRingActions } from './admin.ts';
import type { RunnerEnvironment } from './runner-environment.ts';
import type { Settings } from '../core/settings/types.ts';
import { UsageError, type HeadlessArgs } from './args.ts';
import { contactsProblemWords } from '../core/contacts/problem-words.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';
import { CrmFlow } from '../core/app/crm-flow.ts';
import { defaultCallLogFolder } from './call-log-folder.ts';
import { CallLogQueue } from '../core/call-log/queue.ts';
import { buildCallLogWriter } from '../core/call-log/build.ts';
import { crmLogKeychainAccount } from '../core/crm/build.ts';
import { loggedLine, RunnerCallLog } from './call-logging.ts';
import {
  dismissLine,
  faultLine,
  formatLine,
  popLine,
  enrichedLine,
  statusLine,
  noticeLine,
  featureLine,
  signedInLine,
  callingLine,
  dialLine,
  type OutputLine,
} from './output.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describeError } from '../../src-shared/api/service-errors.ts';
import { faultStatus, saidStatus } from '../core/events/status.ts';
import { enrolDevice } from '../core/org/enrolment.ts';
import { organisationConnection } from '../core/org/org-connection.ts';
import { orgKeychainAccount, OrgTokenSource } from '../core/org/org-token-source.ts';
import { DirectCallControl } from '../core/calls/direct-call-control.ts';
import { OrgCallControl } from '../core/org/org-call-control.ts';
import { ClaimedCallLog, relayCallClaimer } from '../core/org/claimed-call-log.ts';
import { CLAIM_DEVICE_FILE, ClaimDeviceStore } from '../core/org/claim-device.ts';
import type { CallControl, CallControlResult } from '../core/ports/call-control.ts';
import { controlPlace, dialThroughRunner, serveControl } from './control-socket.ts';
import { callRefusal } from '../../src-shared/api/call-api.ts';

export const EXIT = { ok: 0, failure: 1, usage: 2, needsAttention: 3, outputGone: 4 } as const;

/** A pop line waits at most this long for the first extension list, for a colleague's name. */
const FIRST_NAMES_WAIT_MS = 1_000;

export interface RunnerDeps {
  args: HeadlessArgs;
  /** What the run takes from the environment, read by its entry (runner-environment.ts). */
  environment: RunnerEnvironment;
  write: (text: string) => void;
  logger: Logger;
  secrets: SecretRegistry;
  /** Resolves when the runner should stop (SIGINT/SIGTERM). */
  stopSignal: Promise<void>;
  /**
   * Resolves when `write` can no longer deliver (stdout's reader went away: EPIPE, or stopped
   * reading; src-shared/process/output-stream.ts): nobody reads the lines any more, so the runner stops
   * (cleanly, as on SIGTERM) with EXIT.outputGone.
   */
  outputGone?: Promise<OutputGone>;
  clock?: Clock;
  /**
   * The process's last resort (cli.ts installs it and guards the clock with it): each fault it
   * catches is printed as a `fault` line and the connection is rebuilt from the factory.
   */
  lastResort?: LastResort;
  /** The organisation's policy (presets already in `args`; its locks apply here). */
  policy?: Policy;
  /** Starts the policy's programs on ring (default: spawn without a shell). */
  runner?: ProgramRunner;
  /** The language of the human words in status and feature lines (English when not given). */
  words?: Translator;
  /**
   * The machine's non-loopback addresses (cli.ts: os.networkInterfaces). When one appears, the
   * network came back: the connection retries at once (core/net/network-watch.ts).
   */
  networkAddresses?: () => readonly string[];
}

/** Which service, with which key, and where its secret is. */
interface Service {
  baseUrl: string;
  apiKey: string;
  store: CredentialStore;
}

/**
 * The run, in phases, in order: what to connect to, the way out, the output's line queue, the
 * connection's maker, the names (directory, contacts file), the CRM lookup, then the connection
 * runs until told to stop. Each phase is a function below taking what the earlier ones built;
 * none reads the environment (cli.ts did, once: runner-environment.ts).
 */
export async function runHeadless(deps: RunnerDeps): Promise<number> {
  const clock = deps.clock ?? systemClock;
  const target = await whatToConnect(deps, clock);
  const transport = wayOut(deps, target.settings);
  if (!transport) {
    await target.demo?.close();
    return EXIT.needsAttention;
  }
  const lines = lineQueue(deps);
  const made = await connectionMaker(deps, clock, target, transport, lines.emit);
  if (!made) return EXIT.needsAttention;
  const live: Live = { connection: undefined };
  const directory = await names(deps, clock, target, live);
  const crm = crmLookup(deps, clock, target.settings, transport);
  const callLog = await callLogging(
    deps,
    clock,
    target.settings,
    transport,
    lines.emit,
    made.tokens,
  );
  return runUntilStopped(deps, clock, {
    target,
    transport,
    lines,
    newConnection: made.make,
    live,
    directory,
    crm,
    callLog,
  });
}

/** Where this runner's control socket is for these settings (null: none on this system). */
function controlPlaceOf(deps: RunnerDeps, settings: Settings) {
  return controlPlace(settings, { XDG_RUNTIME_DIR: deps.environment.runtimeDir });
}

/**
 * `screenpop-headless dial <number>` (issue 38): with the same settings as a run, call the number
 * from the user's extension (caller-first), print one line and return the exit code: 0 placed, 1
 * refused. Through a runner already running for this user with these settings when there is one
 * (its sign-in, control-socket.ts); else signed in for this dial alone, the token revoked after it
 * where the phone system can (Yeastar's del_token: the PBX's 8 tokens per application).
 */
export async function runDial(deps: RunnerDeps): Promise<number> {
  const clock = deps.clock ?? systemClock;
  const number = deps.args.dial ?? '';
  const say = (result: Parameters<typeof dialLine>[0], via: 'runner' | 'own'): number => {
    deps.write(formatLine(dialLine(result, via, deps.words)));
    return result.ok ? EXIT.ok : EXIT.failure;
  };
  const effective = effectiveSettings(
    deps.args,
    deps.environment,
    deps.policy ?? NO_POLICY,
    deps.logger,
  );
  const place = !effective.demoMode ? controlPlaceOf(deps, effective) : null;
  if (place) {
    const answer = await dialThroughRunner(place, number, clock);
    if (answer === 'no-answer') {
      // The runner took the request and went away: the call may be up; not dialled twice.
      deps.logger.warn('the running runner did not answer the dial');
      return say(callRefusal('unreachable'), 'runner');
    }
    if (answer) return say(answer, 'runner');
  }
  const target = await whatToConnect(deps, clock);
  const settings = () => target.settings;
  // Organisation mode: through the relay (docs/relay-protocol.md 2.5) with this device's kept
  // sign-in, as a run resumes it (no new enrolment); the connection is made, never started.
  if (!target.service) return say(await organisationDial(deps, clock, target, number), 'own');
  const transport = wayOut(deps, target.settings);
  if (!transport) {
    await target.demo?.close();
    return EXIT.failure;
  }
  const make = (await connectionMaker(deps, clock, target, transport, () => {}))?.make;
  const connection = make?.() ?? null;
  try {
    const control = new DirectCallControl({
      connection: () => connection,
      settings,
      logger: deps.logger,
    });
    return say(await control.dial(number), 'own');
  } finally {
    // The stream was never started; the token is released (revoked where the system can).
    await connection?.stop();
    await target.demo?.close();
  }
}

/** The connection in force: the directory reads through it; the run replaces it. */
interface Live {
  connection: Connection | undefined;
}

type Lines = ReturnType<typeof lineQueue>;

/**
 * Phase 3: stdout's lines, in the order things happened, even when a pop waits for the first
 * extension list.
 */
function lineQueue({ write, logger }: RunnerDeps) {
  let queue = Promise.resolve();
  const emit = (line: OutputLine | Promise<OutputLine>): void => {
    queue = queue
      .then(async () => write(formatLine(await line)))
      .catch((error: unknown) => {
        // That line is lost, and said so; the lines after it still go out. A queue left rejected
        // would drop every later line and make each later emit an unhandled rejection, whose
        // fault line is one more emit: a fault loop.
        logger.error('a stdout line could not be made or written; it is left out', { error });
      });
  };
  return { emit, drained: () => queue };
}

/**
 * `dial` in organisation mode without a running runner: the relay's `POST /v1/calls/<tenant>`
 * through the tray app's OrgCallControl, with the device credential kept from the runner's
 * enrolment (keychain or --credential-file); nothing kept: not signed in to the organisation.
 */
async function organisationDial(
  deps: RunnerDeps,
  clock: Clock,
  target: Target,
  number: string,
): Promise<CallControlResult> {
  const transport = wayOut(deps, target.settings);
  if (!transport) return callRefusal('unreachable');
  const make = (await connectionMaker(deps, clock, target, transport, () => {}))?.make;
  const connection = make?.() ?? null;
  try {
    return await orgCallControl(deps.logger, target.settings, () => connection).dial(number);
  } finally {
    await connection?.stop();
  }
}

/** Organisation mode's CallControl, the tray app's: the relay decides the user's own extension. */
function orgCallControl(
  logger: Logger,
  settings: Settings,
  connection: () => Connection | null,
): CallControl {
  const mode: Settings = { ...settings, connectionMode: 'organisation' };
  return new OrgCallControl({ connection, settings: () => mode, logger });
}

/**
 * Phase 4: how a connection is made: the service's (its key and secret), or the relay's alone as
 * one of its users (null, after its status line, when the enrolment code is refused), with that
 * user's sign-in (`tokens`: the call log's claims use it too).
 */
async function connectionMaker(
  deps: RunnerDeps,
  clock: Clock,
  { settings, service }: Target,
  transport: NetTransport,
  emit: Lines['emit'],
): Promise<{ make: () => Connection; tokens: OrgTokenSource | null } | null> {
  const { args, logger, secrets } = deps;
  if (service) {
    const connect = serviceConnectionFactory({
      clock,
      logger,
      secrets,
      heartbeatMs: args.heartbeatSec * 1000,
      transport: () => transport,
    });
    const { baseUrl, apiKey, store } = service;
    const config = {
      baseUrl,
      settings,
      credentials: credentialsSource(store, () => ({ apiKey, baseUrl })),
    };
    return { make: () => connect(config), tokens: null };
  }
  const tokens = await organisationTokens(deps, settings, transport.fetch);
  if (!tokens) return null;
  const make = () =>
    organisationConnection(
      { relayUrl: settings.relayUrl, tenant: settings.relayTenant, settings, tokens },
      {
        clock,
        logger,
        transport,
        heartbeatMs: args.heartbeatSec * 1000,
        onIdentity: (identity) => emit(signedInLine(identity)),
      },
    );
  return { make, tokens };
}

/**
 * Phase 5: colleagues' names, read over the connection in force as the tray app's are
 * (connection.ts), and the contacts file. A contacts file that gives nothing is a usage error,
 * said with what was found in it: the user asked for names from it, and a runner that pops
 * "unknown caller" all day helps no one.
 */
async function names(
  { args, logger }: RunnerDeps,
  clock: Clock,
  { settings, demo }: Target,
  live: Live,
): Promise<Directory> {
  const fetchers = directoryFetchers(() => live.connection);
  const directory = new Directory({
    clock,
    logger,
    fetchExtensions: fetchers.fetchExtensions,
    // Yeastar P-Series: its queues and ring groups (a pop's group_name), and with
    // --directory pbx-contacts (its default there) its company contacts; through the same token.
    fetchGroups: fetchers.fetchGroups,
    ...(args.directory === 'pbx-contacts' && { fetchPbxContacts: fetchers.fetchCompanyContacts }),
    defaultRegion: settings.defaultRegion,
  });
  if (settings.contactsFile) {
    const loaded = await directory.loadContactsFile(settings.contactsFile);
    if (!loaded.ok) {
      await demo?.close();
      throw new UsageError([
        phrase('runner.usage.flag-problem', {
          flag: `--contacts ${settings.contactsFile}`,
          problem: contactsProblemWords(loaded.problem),
        }),
      ]);
    }
  }
  return directory;
}

/**
 * Phase 6: the CRM lookup after each pop, built as the tray app builds it (core/app/crm-flow.ts),
 * through the same transport (proxy, CAs) as the connection; its token from SCREENPOP_CRM_TOKEN,
 * else the keychain (crm-lookup@<host>).
 */
function crmLookup(
  { environment, logger, secrets }: RunnerDeps,
  clock: Clock,
  settings: Settings,
  transport: NetTransport,
) {
  const { crmToken } = environment;
  const flow = new CrmFlow({
    clock,
    logger,
    secrets,
    say: logger,
    credentials: {
      getSecret: async (account) => {
        if (crmToken) return crmToken;
        return new KeytarCredentialStore().getSecret(account).catch(() => null);
      },
    },
    settings: () => settings,
    crmNetwork: () => transport,
  });
  flow.rebuild(settings);
  if (crmToken) secrets.add(crmToken);
  return { flow, lookup: flow.current() };
}

/**
 * Phase 6b: the call log (--crm-log, issue 39): the durable queue in its folder, writing to the
 * CRM the lookup uses with the lookup's token; a `logged` line per call logged. Null when off.
 * In organisation mode (`orgTokens`: the user's sign-in at the relay) each call's log is claimed
 * at the relay first, as the tray app does (core/org/claimed-call-log.ts): of the desktops and
 * runners a call rang, one logs it. This runner's id in the claims is kept in the queue's folder
 * (core/org/claim-device.ts), so a call it claimed before a restart is still its own after it.
 */
async function callLogging(
  { args, environment, logger, secrets }: RunnerDeps,
  clock: Clock,
  settings: Settings,
  transport: NetTransport,
  emit: Lines['emit'],
  orgTokens: OrgTokenSource | null,
): Promise<{ queue: CallLogQueue; calls: RunnerCallLog; claims: ClaimedCallLog | null } | null> {
  if (args.crmLog === 'none') return null;
  const { crmToken, crmLogSecret } = environment;
  if (crmLogSecret) secrets.add(crmLogSecret);
  const logAccount = crmLogKeychainAccount(settings.crmLookup);
  const writer = buildCallLogWriter(settings.crmLookup, {
    clock,
    secrets,
    fetch: transport.fetch,
    // The signing secret from --crm-log-secret-file or SCREENPOP_CRM_LOG_SECRET, the lookup's
    // token from SCREENPOP_CRM_TOKEN; else each from the keychain under its account.
    secret: async (account) =>
      (account === logAccount ? crmLogSecret : crmToken) ||
      new KeytarCredentialStore().getSecret(account).catch(() => null),
  });
  if (!writer) {
    logger.warn(
      '--crm-log: no CRM to log calls to (--crm hubspot, or --crm generic with --crm-log-url); nothing is logged',
    );
    return null;
  }
  // Said at the start, not at the first call: the queue would stop there, holding every call.
  if (logAccount && !crmLogSecret) {
    const stored = await new KeytarCredentialStore().getSecret(logAccount).catch(() => null);
    if (!stored)
      logger.warn(
        '--crm-log-url: no signing secret (--crm-log-secret-file, SCREENPOP_CRM_LOG_SECRET or the keychain); calls wait in the queue until one is given',
        { account: logAccount },
      );
  }
  const folder = args.crmLogFolder ?? defaultCallLogFolder();
  const queue = new CallLogQueue({
    folder,
    writer,
    clock,
    logger,
    onLogged: (e) => emit(loggedLine(writer.kind, e)),
  });
  await queue.start();
  logger.info('call log queue started', { ...queue.status() });
  const claims = orgTokens
    ? await claimedLog({ folder, settings, tokens: orgTokens, queue, clock, logger, transport })
    : null;
  const calls = new RunnerCallLog(args.crmLog, args.extensions, claims ?? queue, clock, (error) =>
    logger.warn('a call could not be queued for the CRM', { error }),
  );
  return { queue, calls, claims };
}

/** Organisation mode: the queue behind the relay's claims, with this runner's kept id. */
async function claimedLog(o: {
  folder: string;
  settings: Settings;
  tokens: OrgTokenSource;
  queue: CallLogQueue;
  clock: Clock;
  logger: Logger;
  transport: NetTransport;
}): Promise<ClaimedCallLog> {
  // Beside the queue's files (which it ignores: its own are named by a hash), read at start.
  const device = await new ClaimDeviceStore({
    path: join(o.folder, CLAIM_DEVICE_FILE),
    logger: o.logger,
  }).load();
  const claim = relayCallClaimer({
    relayUrl: o.settings.relayUrl,
    tenant: o.settings.relayTenant,
    tokens: o.tokens,
    fetch: o.transport.fetch,
    device,
  });
  return new ClaimedCallLog({
    sink: o.queue,
    claim,
    active: () => true,
    clock: o.clock,
    logger: o.logger,
  });
}

/** What the last phase runs. */
interface Built {
  target: Target;
  transport: NetTransport;
  lines: Lines;
  newConnection: () => Connection;
  live: Live;
  directory: Directory;
  crm: ReturnType<typeof crmLookup>;
  callLog: Awaited<ReturnType<typeof callLogging>>;
}

/**
 * Phase 7: the connection runs, its events printed as lines, rebuilt after an unexpected error,
 * until told to stop, it needs attention, or stdout is gone; then everything stops in order.
 */
async function runUntilStopped(deps: RunnerDeps, clock: Clock, built: Built): Promise<number> {
  const { args, logger } = deps;
  const { target, lines, newConnection, live, directory, crm } = built;
  const { demo } = target;
  const { emit } = lines;
  // The policy's programs on ring, as in the tray app (links need a browser: not here).
  const ringActions = deps.policy?.onRing.length
    ? runnerRingActions(deps.policy.onRing, deps.runner ?? spawnProgramRunner(logger), logger)
    : null;

  let attention: ((s: ConnectionStatus) => void) | undefined;
  const needsAttention = new Promise<ConnectionStatus>((resolve) => (attention = resolve));
  let detach: Array<() => void> = [];
  const open = (): void => {
    const current = newConnection();
    live.connection = current;
    detach = printEvents(deps, current, {
      ...built,
      ringActions,
      onAttention: (s) => attention?.(s),
    });
    current.engine.start();
  };
  /** Stops the connection; the last status line stays the one that explains why. */
  const close = async (): Promise<void> => {
    for (const off of detach.splice(0)) off();
    const old = live.connection;
    live.connection = undefined;
    await old?.stop();
  };

  // After an unexpected error, whatever state the engine was left in is dropped: a new connection
  // from the factory, at most once per REBUILD_MIN_INTERVAL_MS (the pops already made stay made).
  let stopping = false;
  let rebuilding = Promise.resolve();
  const pacer = recoveryPacer(clock, REBUILD_MIN_INTERVAL_MS, () => {
    rebuilding = rebuilding.then(async () => {
      if (stopping) return;
      logger.warn('rebuilding the connection after an unexpected error');
      await close();
      if (!stopping) open();
    });
  });
  const offFault = deps.lastResort?.onFault((fault) => {
    emit(faultLine(fault));
    pacer.trigger();
  });

  open();
  directory.start();
  // `screenpop-headless dial` run by this user uses this runner's sign-in (control-socket.ts):
  // its dial goes through this runner's own CallControl, so the ring is known as the user's own.
  // In organisation mode through the relay (OrgCallControl, as the tray app), on this connection.
  const place = !demo ? controlPlaceOf(deps, target.settings) : null;
  const calls: CallControl = target.service
    ? new DirectCallControl({
        connection: () => live.connection ?? null,
        settings: () => target.settings,
        logger,
      })
    : orgCallControl(logger, target.settings, () => live.connection ?? null);
  const control = place
    ? await serveControl({ place, clock, logger, dial: (number) => calls.dial(number) })
    : null;
  // The demo's simulator is on this machine: no network to come back.
  const stopWatching =
    deps.networkAddresses && !args.demo
      ? watchNetwork({
          addresses: deps.networkAddresses,
          clock,
          wake: (reason) => {
            logger.info('a network address appeared; reconnecting now');
            live.connection?.wake(reason);
          },
        })
      : undefined;
  const outcome = await Promise.race([
    deps.stopSignal.then(() => 'stop' as const),
    needsAttention.then(() => 'attention' as const),
    // Never settles without a stdout to watch.
    (deps.outputGone ?? new Promise<never>(() => {})).then((gone) => {
      logger.warn('stdout is gone: nobody reads the lines any more; stopping', {
        code: gone.code,
        exitCode: EXIT.outputGone,
      });
      return 'output-gone' as const;
    }),
  ]);
  logger.info(outcome === 'attention' ? 'needs attention; stopping' : 'stopping');
  stopping = true;
  stopWatching?.();
  await control?.close();
  pacer.cancel();
  offFault?.();
  await rebuilding;
  directory.stop();
  crm.flow.close();
  await built.callLog?.calls.stop();
  built.callLog?.claims?.stop();
  built.callLog?.queue.close();
  await close();
  await ringActions?.stop();
  await demo?.close();
  await lines.drained();
  const code =
    outcome === 'stop' ? EXIT.ok : outcome === 'attention' ? EXIT.needsAttention : EXIT.outputGone;
  // "stopping" said it began; this says it is done (sockets closed, every line written).
  logger.info('stopped', { exitCode: code });
  return code;
}

/** What the runner connects to (the run's phases follow: wayOut, then the connection). */
interface Target {
  settings: Settings;
  /** The service with its key and secret store; null in organisation mode (the relay alone). */
  service: Service | null;
  /** The demo's simulator, for --demo. */
  demo: DemoService | undefined;
}

/**
 * Phase 1: the settings in force (flags over the policy's presets, its locks over both), and what
 * they connect to: the relay alone as one of its users, the demo's simulator, or the service.
 */
async function whatToConnect(deps: RunnerDeps, clock: Clock): Promise<Target> {
  const { args, logger, secrets } = deps;
  let demo: DemoService | undefined;
  let service: Service | null = null;
  // Flags over the policy's presets, its locks over both (a locked region, demoMode, ... wins).
  const effective = effectiveSettings(args, deps.environment, deps.policy ?? NO_POLICY, logger);
  let settings: Settings;
  if (args.organisation) {
    // The relay alone, as one of its users: no API key, no secret, no phone-system address.
    settings = effective;
  } else if (effective.demoMode) {
    // Loaded only for --demo: the simulator is not part of a normal run. The same demo as the
    // tray app's, ringing every 5 s.
    const { startDemo } = await import('../../src-sim/demo.ts');
    demo = await startDemo({
      clock,
      logger,
      extension: effective.extensions[0] ?? '101',
      ringEverySec: 5,
      // The demo's simulator speaks the phone system the client will (a locked one included).
      phoneSystem: effective.phoneSystem,
    });
    service = await inMemory(demo.baseUrl, demo.apiKey, demo.secret, secrets);
    settings = {
      ...effective,
      baseUrl: demo.baseUrl,
      apiKey: demo.apiKey,
      // The demo is the direct stream alone, as in the tray app, on this computer: no proxy.
      eventSource: 'direct',
      relayUrl: '',
      proxyMode: 'none',
      proxyUrl: '',
    };
  } else {
    settings = effective;
    service = await serviceFromEnv(deps.environment, settings.baseUrl, settings.apiKey, secrets);
  }
  return { settings, service, demo };
}

/**
 * Phase 2: the way out, HTTPS_PROXY / NO_PROXY and --ca-file, for the API calls and both sockets
 * alike; null (after printing the needs-attention status) when the proxy asked for cannot be used.
 */
function wayOut(deps: RunnerDeps, settings: Settings): NetTransport | null {
  const { logger, secrets } = deps;
  try {
    return transportFor(
      // The demo's simulator is on this computer: never through a proxy.
      // Without a policy: the system's (HTTPS_PROXY / NO_PROXY); a policy may set or lock another.
      {
        proxyMode: settings.proxyMode,
        proxyUrl: settings.proxyUrl,
        proxyAuth: settings.proxyAuth,
        caFile: settings.caFile,
      },
      {
        env: deps.environment.proxyVariables,
        readFile: readCaText,
        logger,
        secrets,
        proxyPolicy: proxyPolicyOf(deps.policy ?? NO_POLICY),
      },
    );
  } catch (error) {
    // A proxy was asked for (the policy's, or the setting's) and cannot be used: fail closed with
    // a status saying whose it is, rather than connect around it.
    if (!(error instanceof ProxyConfigError) || !error.words) throw error;
    logger.error('the proxy setting cannot be used; not connecting around it', { error });
    deps.write(
      formatLine(
        statusLine(
          saidStatus('needs-attention', error.words.reason, error.words.remedy),
          deps.words,
        ),
      ),
    );
    return null;
  }
}

/**
 * Organisation mode's credential: this device's enrolment, from `--enrol <code>` (exchanged at the
 * relay now; cli.ts reads `--enrol -` and `--enrol-file` into it) or kept from an earlier run in the
 * keychain (`org:<tenant>@<relay host>`), or in `--credential-file` (0600) where none exists. A
 * machine without either keeps it for this run only, and says so. Null (after printing the
 * needs-attention status) when the code is refused.
 */
async function organisationTokens(
  deps: RunnerDeps,
  settings: Settings,
  fetch: typeof globalThis.fetch,
): Promise<OrgTokenSource | null> {
  const { logger, secrets, args } = deps;
  const clock = deps.clock ?? systemClock;
  const account = orgKeychainAccount(settings.relayUrl, settings.relayTenant);
  // --credential-file: the administrator's choice for a machine without a keychain (checked for
  // its mode by cli.ts before the run; each read checks again).
  let store: CredentialStore = args.credentialFile
    ? new FileCredentialStore(args.credentialFile)
    : new KeytarCredentialStore();
  const usable = await store.getSecret(account).then(
    () => true,
    (error: unknown) => {
      logger.warn(
        args.credentialFile
          ? 'the credential file cannot be used; the enrolment is kept for this run only'
          : 'the keychain cannot be used; the enrolment is kept for this run only (--credential-file keeps it across runs)',
        { error },
      );
      return false;
    },
  );
  if (!usable) store = new MemoryCredentialStore();
  const tokens = new OrgTokenSource({ store, account, fetch, clock, logger, secrets });
  if (!args.enrol) return tokens;
  try {
    const answer = await enrolDevice({
      relayUrl: settings.relayUrl,
      tenant: settings.relayTenant,
      code: args.enrol,
      label: `screenpop-headless on ${hostname()}`,
      fetch,
      secrets,
    });
    await tokens.save({ kind: 'device', credential: answer.credential });
    logger.info('enrolled', { user: answer.identity.user, device: answer.device });
    return tokens;
  } catch (error) {
    const fault = describeError(error);
    deps.write(
      formatLine(
        statusLine(faultStatus(fault.needsUser ? 'needs-attention' : 'offline', fault), deps.words),
      ),
    );
    return null;
  }
}

/** A secret given to this process (environment, demo): kept in memory, registered for scrubbing. */
async function inMemory(
  baseUrl: string,
  apiKey: string,
  secret: string,
  secrets: SecretRegistry,
): Promise<Service> {
  secrets.add(secret);
  const store = new MemoryCredentialStore();
  await store.setSecret(keychainAccount(apiKey, baseUrl), secret);
  return { baseUrl, apiKey, store };
}

/** The key (environment or policy) with SCREENPOP_API_SECRET, or the secret from the keychain. */
async function serviceFromEnv(
  { apiSecret }: RunnerEnvironment,
  baseUrl: string,
  apiKey: string,
  secrets: SecretRegistry,
): Promise<Service> {
  if (apiKey && apiSecret) return inMemory(baseUrl, apiKey, apiSecret, secrets);
  return { baseUrl, apiKey, store: new KeytarCredentialStore() };
}

/** Who hears a connection's events, besides stdout. */
interface Listeners extends Built {
  ringActions: ReturnType<typeof runnerRingActions> | null;
  onAttention: (status: ConnectionStatus) => void;
}

/**
 * A connection's events as stdout's lines, in the order they happened: status (with the proxy's
 * sign-in once connected), pops named from the directory then the CRM, dismisses, notices,
 * features; and the policy's programs on a ring. Returns the listeners' removers.
 */
function printEvents(
  deps: RunnerDeps,
  { engine }: Connection,
  { target, transport, lines, directory, crm, callLog, ringActions, onAttention }: Listeners,
): Array<() => void> {
  const { emit } = lines;
  const { settings } = target;
  const lookup = crm.lookup;
  const detach = [
    engine.onStatus((s) => {
      const proxyAuth = s.state === 'connected' ? transport.proxyAuthInUse() : undefined;
      emit({
        ...statusLine(s, deps.words),
        ...(proxyAuth && { proxy_auth: describeAuth(proxyAuth) }),
      });
      if (s.state === 'needs-attention') onAttention(s);
    }),
    engine.onPop((p) => {
      const named = directory.firstLoad(FIRST_NAMES_WAIT_MS).then(() => directory.identify(p.from));
      emit(
        named.then((who) =>
          popLine(p, who, {
            group: p.callPath ? directory.groupOf(p.callPath) : null,
            transferredByName:
              p.transferredBy === undefined ? null : directory.lookup(p.transferredBy),
            t: deps.words,
          }),
        ),
      );
      ringActions?.runOnce(p, directory.lookup(p.from));
      callLog?.calls.pop(p);
      // After the pop line, never before it: a colleague is not looked up.
      if (lookup)
        void named.then(async (who) => {
          if (who?.source === 'directory') return;
          const result = await lookup.lookup(p.from);
          emit(enrichedLine(p, who, result, lookup.provider));
          if (result.status === 'found' && result.contactId)
            callLog?.calls.contact(p.callId, result.contactId);
        });
    }),
    engine.onDismiss((d) => {
      emit(dismissLine(d));
      callLog?.calls.dismiss(d);
    }),
    // The end of a call answered here: logged with its talk time (--crm-log).
    engine.onHangup?.((h) => void callLog?.calls.hangup(h)) ?? (() => {}),
    // A ring of a call dialled from Screenpop (`dial`): never a pop (core/events/own-dials.ts).
    engine.onOwnCall?.((c) => {
      emit(callingLine(c));
      callLog?.calls.own(c);
    }) ?? (() => {}),
    // A call's record: a call dialled from the runner is logged as OUTBOUND from it (--crm-log).
    engine.onCallRecord?.((r) => callLog?.calls.record(r)) ?? (() => {}),
    engine.onNotice((n) =>
      emit(
        n.type === 'voicemail'
          ? directory
              .firstLoad(FIRST_NAMES_WAIT_MS)
              .then(() => noticeLine(n, directory.lookup(n.from)))
          : noticeLine(n, null),
      ),
    ),
    engine.onFeatureStatus((features) => {
      for (const f of features) if (f.state === 'no-scope') emit(featureLine(f, deps.words));
    }),
  ];
  // What this phone system has no event for is said once, at the start (nothing is subscribed).
  for (const f of engine.featureStatuses())
    if (f.state === 'not-offered' && settings.features[f.feature]) emit(featureLine(f, deps.words));
  return detach;
}
