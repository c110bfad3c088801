/**
 * Connection supervision: at most one connection to the service at a time, rebuilt (the old one
 * stopped, a new one built) through one queue, so that a save during a rebuild waits its turn;
 * pause and resume; wake and "try again now"; a rebuild after an unexpected error, at most every
 * 30 s; and the connection's status. What to connect to is not decided here: `plan()` (the
 * settings service's) says, each time a rebuild runs.
 */
import type { Notice } from '../events/notices.ts';
import type { FeatureStatus } from '../events/features.ts';
import type { Clock } from '../../../src-shared/process/clock.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import { recoveryPacer, type Fault } from '../../../src-shared/process/last-resort.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import type { CredentialStore } from '../credentials/credential-store.ts';
import { credentialsSource } from '../credentials/credentials-source.ts';
import type { ConnectionStatus, WakeReason } from '../events/contracts.ts';
import { UserNumberMatcher } from '../events/numbers.ts';
import type { Settings } from '../settings/types.ts';
import {
  directoryFetchers,
  REBUILD_MIN_INTERVAL_MS,
  type Connection,
  type ConnectionFactory,
  type ProbeTarget,
} from './connection.ts';
import type { ConnectionProbe } from './test-connection.ts';
import type { DirectoryEntry } from '../contacts/directory.ts';
import type { PbxContact, PbxGroup } from '../../../src-shared/api/pbx-lists.ts';
import type { CallRecordEvent, DismissEvent, PopEvent } from '../ports/ports.ts';
import type { OwnCall } from '../events/own-dials.ts';
import { english, phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import { saidStatus } from '../events/status.ts';
import { SerialQueue } from '../../../src-shared/kit/one-at-a-time.ts';
import type { RelayIdentity } from '../../../src-shared/relay/relay-protocol.ts';

/** What the next rebuild connects to, or why it does not connect. */
export type ConnectionPlan =
  | {
      connect: true;
      /** The settings the connection runs with (in demo mode: the demo's service and extension). */
      settings: Settings;
      /** Where its secret is (the keychain, or the demo's memory). */
      credentials: CredentialStore;
      demo: boolean;
    }
  | { connect: false; status: ConnectionStatus };

/** The status before anything is set up (and until a plan says otherwise). */
export const NOT_SET_UP: ConnectionStatus = saidStatus(
  'needs-attention',
  [phrase('status.not-set-up')],
  [phrase('status.not-set-up-remedy')],
);

/** Where a connection's calls go. */
export interface CallSink {
  handlePop(pop: PopEvent): void;
  handleDismiss(dismiss: DismissEvent): void;
  /** A call the user answered ended (the call's end time, for its log). */
  handleHangup?(hangup: DismissEvent): void;
  /** A call's record once it ended (the talk time), where the phone system sends one. */
  handleRecord?(record: CallRecordEvent): void;
  /** A ring of a call the user dialled from Screenpop (never a pop): its log (issue 39). */
  handleOwnCall?(call: OwnCall): void;
  /** The connection went away for good (not rebuilt keeping the cards): its calls are over. */
  clear(): void;
}

/** The extension list, loaded over the connection in force. */
/** Where voicemail, SMS, trunk and presence notices go (NoticePresenter), and the features' states. */
export interface NoticeSink {
  handle(notice: Notice): void;
  setFeatures(features: readonly FeatureStatus[]): void;
  /** The connection went away for good: what it said of trunks, presence and scopes is void. */
  reset(): void;
}

export interface DirectoryControl {
  start(): void;
  stop(): void;
  /** Another service's names must not be shown for this one's numbers while its list loads. */
  forgetExtensions(): void;
  refreshNow(): Promise<unknown>;
}

export interface ConnectionSupervisorDeps {
  clock: Clock;
  logger: Logger;
  connect: ConnectionFactory;
  plan: () => ConnectionPlan;
  calls: CallSink;
  notices: NoticeSink;
  directory: DirectoryControl;
}

/** The connection's part of the app's status. */
export interface SupervisedStatus {
  /** The connection's status, or offline "Paused." while paused. */
  connection: ConnectionStatus;
  paused: boolean;
  /** The last unexpected error the last resort caught; null if none. */
  fault: Fault | null;
  /** Organisation mode: who the relay says is signed in; null until it has (or in API-key mode). */
  identity: RelayIdentity | null;
}

export class ConnectionSupervisor {
  private readonly d: ConnectionSupervisorDeps;
  private readonly logger: Logger;
  private readonly changes: Emitter<[]>;
  private connection: Connection | null = null;
  /** The settings the connection in force runs with (demo mode: the demo's). */
  private connectionSettings: Settings | null = null;
  private detach: Array<() => void> = [];
  private connectionStatus: ConnectionStatus = NOT_SET_UP;
  private paused = false;
  private lastFault: Fault | null = null;
  /** Serializes rebuilds (a save during a rebuild waits its turn). */
  private readonly queue = new SerialQueue();
  /** Rebuilds after unexpected errors, at most once per 30 s (a fault that repeats is no loop). */
  private readonly recovery: { trigger(): void; cancel(): void };
  /** The numbers that reach the user on the connection in force (demo: the demo's extension). */
  private userNumbers: UserNumberMatcher | null = null;
  /** The service (address and key) the directory's extension list came from. */
  private directoryService = '';
  /** Organisation mode: who the relay said this is, for the connection in force. */
  private identity: RelayIdentity | null = null;

  /** The directory's reads over the connection in force (connection.ts directoryFetchers). */
  private readonly fetchers = directoryFetchers(() => this.connection);

  constructor(deps: ConnectionSupervisorDeps) {
    this.d = deps;
    this.logger = deps.logger;
    this.changes = new Emitter(deps.logger, 'connection status');
    this.recovery = recoveryPacer(deps.clock, REBUILD_MIN_INTERVAL_MS, () => {
      if (this.connection) void this.enqueue(() => this.reconnect({ keepCards: true }));
    });
  }

  status(): SupervisedStatus {
    return {
      connection: this.paused
        ? saidStatus('offline', [phrase('status.paused')])
        : this.connectionStatus,
      paused: this.paused,
      fault: this.lastFault,
      identity: this.identity,
    };
  }

  /** Called whenever status() may have changed. */
  onChange(listener: () => void): () => void {
    return this.changes.on(listener);
  }

  /**
   * Queues a rebuild: stops the connection in force and, when the plan says so and not paused,
   * starts a new one; then runs `after` in the same turn of the queue (nothing else in between).
   */
  rebuild(after?: () => Promise<void>): Promise<void> {
    return this.enqueue(async () => {
      await this.reconnect();
      await after?.();
    });
  }

  /** Stops the connection for good (shutdown); queued behind any rebuild. */
  stop(): Promise<void> {
    this.recovery.cancel();
    return this.enqueue(() => this.disconnect());
  }

  async setPaused(paused: boolean): Promise<void> {
    if (paused === this.paused) return;
    this.paused = paused;
    this.logger.info(paused ? 'paused' : 'resumed');
    await this.enqueue(() => (paused ? this.disconnect() : this.reconnect()));
    this.changes.emit();
  }

  isPaused(): boolean {
    return this.paused;
  }

  wake(reason: WakeReason): void {
    if (!this.paused) this.connection?.wake(reason);
  }

  /** "Try again now" from the tray: resume if paused, else retry the connection at once. */
  async retryNow(): Promise<void> {
    if (this.paused) return this.setPaused(false);
    this.logger.info('retry requested by the user');
    this.connection?.retry();
    if (this.connection) void this.d.directory.refreshNow();
  }

  /**
   * The process's last resort caught an unexpected error: the status says so, and the connection
   * is rebuilt from scratch, whatever state the error left it in; the calls on screen stay.
   */
  recoverFromFault(fault: Fault): void {
    this.lastFault = fault;
    this.logger.warn('rebuilding the connection after an unexpected error', {
      faults: fault.count,
    });
    this.changes.emit();
    this.recovery.trigger();
  }

  /** The whole extension list over the connection in force. */
  fetchExtensions(): Promise<DirectoryEntry[]> {
    return this.fetchers.fetchExtensions();
  }

  /** The PBX's queues and ring groups over the connection in force (none where it has none). */
  fetchGroups(): Promise<PbxGroup[]> {
    return this.fetchers.fetchGroups();
  }

  /** The PBX's company contacts over the connection in force (none where it has none). */
  fetchCompanyContacts(): Promise<PbxContact[]> {
    return this.fetchers.fetchCompanyContacts();
  }

  /** Test connection's probe on the running token, when the test is about this connection's application. */
  runningProbe(target: ProbeTarget): ConnectionProbe | null {
    return this.connection?.runningProbe?.(target) ?? null;
  }

  /** The connection in force and the settings it runs with; null while there is none. */
  inForce(): { connection: Connection; settings: Settings } | null {
    return this.connection && this.connectionSettings
      ? { connection: this.connection, settings: this.connectionSettings }
      : null;
  }

  /** Whether `to` is one of the user's numbers on the connection in force. */
  isUserNumber(to: string): boolean {
    return this.userNumbers?.matches(to) ?? false;
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    return this.queue
      .run(task)
      .catch((err: unknown) => this.logger.error('connection change failed', { error: err }));
  }

  private async disconnect(options: { keepCards?: boolean } = {}): Promise<void> {
    const old = this.connection;
    this.connection = null;
    this.connectionSettings = null;
    for (const off of this.detach.splice(0)) off();
    if (!options.keepCards) {
      this.d.calls.clear();
      this.d.notices.reset();
      this.identity = null;
    }
    if (old) await old.stop();
    this.d.directory.stop();
  }

  /** Stops the old connection and, when the plan says so and not paused, starts a new one. */
  private async reconnect(options: { keepCards?: boolean } = {}): Promise<void> {
    await this.disconnect(options);
    const plan = this.d.plan();
    if (!plan.connect) {
      this.setConnectionStatus(plan.status);
      return;
    }
    if (this.paused) return;
    const { settings } = plan;
    const { baseUrl, apiKey } = settings;
    const organisation = settings.connectionMode === 'organisation' && !plan.demo;
    // Organisation mode: the relay says whose numbers these are (onIdentity below), not settings.
    this.userNumbers = new UserNumberMatcher({
      extensions: organisation ? (this.identity?.extensions ?? []) : settings.extensions,
      dids: organisation ? (this.identity?.dids ?? []) : settings.dids,
      defaultRegion: settings.defaultRegion,
    });
    const credentials = credentialsSource(plan.credentials, () => ({ apiKey, baseUrl }));
    let connection: Connection;
    try {
      connection = this.d.connect({ baseUrl, settings, credentials });
    } catch (err) {
      this.logger.error('connection could not be set up', { error: err });
      // Words of its own (an unusable proxy setting) in the user's language; else the settings
      // check's own words name the field and are English (see the log).
      const own = (err as { words?: { reason: Words; remedy: Words } } | null)?.words;
      if (own) {
        this.setConnectionStatus(saidStatus('needs-attention', own.reason, own.remedy));
        return;
      }
      const reason =
        err instanceof Error ? err.message : english([phrase('status.settings-unusable')]);
      const remedy = [phrase('status.settings-unusable-remedy')];
      this.setConnectionStatus({
        state: 'needs-attention',
        reason,
        remedy: english(remedy),
        words: {
          remedy,
          ...(err instanceof Error ? {} : { reason: [phrase('status.settings-unusable')] }),
        },
      });
      return;
    }
    this.connection = connection;
    this.connectionSettings = settings;
    const service = JSON.stringify(
      organisation ? [settings.relayUrl, settings.relayTenant] : [baseUrl, apiKey],
    );
    if (service !== this.directoryService) {
      this.d.directory.forgetExtensions();
      this.directoryService = service;
    }
    const { engine } = connection;
    const calls = this.d.calls;
    this.detach.push(
      engine.onPop((pop) => calls.handlePop(pop)),
      engine.onDismiss((dismiss) => calls.handleDismiss(dismiss)),
      engine.onStatus((status) => this.setConnectionStatus(status)),
      engine.onNotice((notice) => this.d.notices.handle(notice)),
      engine.onFeatureStatus((features) => this.d.notices.setFeatures(features)),
    );
    if (engine.onCallRecord)
      this.detach.push(engine.onCallRecord((record) => calls.handleRecord?.(record)));
    if (engine.onHangup)
      this.detach.push(engine.onHangup((hangup) => calls.handleHangup?.(hangup)));
    if (engine.onOwnCall) this.detach.push(engine.onOwnCall((call) => calls.handleOwnCall?.(call)));
    if (connection.onIdentity)
      this.detach.push(
        connection.onIdentity((identity) => {
          this.identity = identity;
          this.userNumbers = new UserNumberMatcher({
            extensions: identity.extensions,
            dids: identity.dids,
            defaultRegion: settings.defaultRegion,
          });
          this.changes.emit();
        }),
      );
    this.d.notices.setFeatures(engine.featureStatuses());
    this.setConnectionStatus(saidStatus('connecting', [phrase('status.connecting')]));
    engine.start();
    this.d.directory.start();
    this.logger.info('connected to the service', { demo: plan.demo, mode: settings.eventSource });
  }

  private setConnectionStatus(status: ConnectionStatus): void {
    this.connectionStatus = status;
    this.changes.emit();
  }
}
