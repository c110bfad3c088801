/**
 * The façade the Electron app and the headless runner use: event sources (direct WebSocket, webhook
 * relay, or both as hot standby) feeding one EventPipeline, with one combined connection status.
 *
 * Modes: 'direct' = the WebSocket only; 'relay' = the relay only; 'auto' = the WebSocket, plus the
 * relay when one is configured, both attached at once (the pipeline's dedupe removes the doubles, so
 * a failing source costs nothing but its own reconnect).
 */
import type { Clock, TimerHandle } from '../../src-shared/process/clock.ts';
import { silentLogger, type Logger } from '../../src-shared/process/log.ts';
import type { ConnectionStatus, EventSource, TokenSource, WakeReason } from './events/contracts.ts';
import type { DedupeOptions } from './events/dedupe.ts';
import {
  EventPipeline,
  type DialTicket,
  type Dismiss,
  type Envelope,
  type OwnCall,
  type Pop,
  type PipelineStats,
  type UserNumbers,
} from './events/pipeline.ts';
import type { CreateSocket } from '../../src-shared/stream/socket.ts';
import { combineStatuses, StatusHolder } from './events/status.ts';
import { WebSocketEventSource } from './events/ws-source.ts';
import { probeServerClock } from './events/server-clock.ts';
import { Emitter } from '../../src-shared/kit/emitter.ts';
import {
  ALL_FEATURES_ON,
  featureStatuses,
  topicsFor,
  type FeatureStatus,
  type FeatureToggles,
} from './events/features.ts';
import type { Notice } from './events/notices.ts';
import type { CallRecord } from './events/pipeline.ts';
import type { PhoneSystemWire } from '../../src-shared/wire/phone-system.ts';
import type { UacstaCalls } from './calls/uacsta-match.ts';
import type { FrameDecoder } from '../../src-shared/wire/envelope.ts';
import { STANDARD_WIRE } from '../../src-shared/wire/standard.ts';

export type EngineMode = 'auto' | 'direct' | 'relay';

export interface EngineDeps {
  baseUrl: string;
  tokens: TokenSource;
  clock: Clock;
  logger?: Logger;
  user: UserNumbers;
  staleRingMs?: number;
  mode?: EngineMode;
  createRelaySource?: () => EventSource;
  /** The transport's socket factory and fetch (net/transport.ts): both required, see contracts.ts. */
  createSocket: CreateSocket;
  /**
   * Voicemail, SMS, trunk status, presence: on or off (features.ts). The WebSocket subscribes to
   * 30011 and the codes of the features that are on; default: all on.
   */
  features?: FeatureToggles;
  /** Event codes the WebSocket subscribes to, when not derived from `features` (tests). */
  topics?: number[];
  /** A voicemail or SMS older than this is history, not a notification. Default 1 hour. */
  staleNoticeMs?: number;
  /**
   * The phone system's wire format (src-shared/wire/): the direct stream's dialect, decoder and
   * event codes; the standard service's by default. The relay always hands on the core's envelopes.
   */
  wire?: PhoneSystemWire;
  /**
   * Remote answer (uaCSTA, calls/uacsta-match.ts): when given and the phone system has such
   * reports (`wire.stream.remoteAnswer`), the direct stream also subscribes to them and feeds them,
   * with every ring of the stream's call reports, to this table.
   */
  uacsta?: UacstaCalls;
  heartbeatMs?: number;
  dedupe?: DedupeOptions;
  /**
   * Read the server's clock from the HTTP Date header of a HEAD request to the base address on
   * start, every 5 minutes, on wake and after a clock jump (server-clock.ts); default true.
   */
  serverClock?: boolean;
  fetch: typeof fetch;
}

/** At most one server-clock probe per this interval. */
const PROBE_INTERVAL_MS = 5_000;
/**
 * While started, the server clock is also read this often: the offset estimator forgets samples
 * after 10 minutes, and a quiet user of the relay alone may get no event for hours, after which a
 * replay of missed rings would be judged against itself (age 0) instead of against the server.
 */
const PROBE_REFRESH_MS = 5 * 60_000;

export class ScreenpopEngine {
  readonly pipeline: EventPipeline;
  private readonly sources: EventSource[] = [];
  private readonly sourceStatus = new Map<string, ConnectionStatus>();
  private readonly detach: Array<() => void> = [];
  private readonly logger: Logger;
  /** The sources' statuses combined (status.ts); its listeners are onStatus's. */
  private readonly combined: StatusHolder;
  private started = false;
  private readonly probe: (() => void) | undefined;
  private readonly clock: Clock;
  private probeTimer: TimerHandle | undefined;
  private readonly features: FeatureToggles;
  private readonly direct: WebSocketEventSource | undefined;
  private readonly featureChanges: Emitter<[FeatureStatus[]]>;
  private readonly wire: PhoneSystemWire;
  private readonly uacsta: UacstaCalls | undefined;

  constructor(deps: EngineDeps) {
    const mode = deps.mode ?? 'auto';
    this.clock = deps.clock;
    this.logger = (deps.logger ?? silentLogger).child({ component: 'engine' });
    this.combined = new StatusHolder(this.logger);
    this.pipeline = new EventPipeline({
      clock: deps.clock,
      logger: deps.logger ?? silentLogger,
      user: deps.user,
      ...(deps.staleRingMs !== undefined ? { staleRingMs: deps.staleRingMs } : {}),
      ...(deps.dedupe ? { dedupe: deps.dedupe } : {}),
      ...(deps.staleNoticeMs !== undefined ? { staleNoticeMs: deps.staleNoticeMs } : {}),
      onClockJump: () => this.probe?.(),
    });
    if (deps.serverClock ?? true) this.probe = this.serverClockProber(deps);
    if (mode === 'relay' && !deps.createRelaySource)
      throw new Error("event source mode 'relay' needs a relay (relayUrl is empty)");
    this.features = deps.features ?? ALL_FEATURES_ON;
    this.featureChanges = new Emitter(this.logger, 'features');
    this.wire = deps.wire ?? STANDARD_WIRE;
    this.uacsta = deps.uacsta;
    if (mode !== 'relay') {
      this.direct = new WebSocketEventSource({
        baseUrl: deps.baseUrl,
        tokens: deps.tokens,
        dialect: this.wire.stream,
        topics: [
          ...(deps.topics ??
            topicsFor(
              this.features,
              this.wire.featureCodes,
              this.wire.callCode,
              this.wire.callEndCodes,
            )),
          ...(deps.uacsta && this.wire.stream.remoteAnswer
            ? [this.wire.stream.remoteAnswer.code]
            : []),
        ],
        clock: deps.clock,
        logger: deps.logger ?? silentLogger,
        createSocket: deps.createSocket,
        ...(deps.heartbeatMs !== undefined ? { heartbeatMs: deps.heartbeatMs } : {}),
      });
      this.sources.push(this.direct);
    }
    if (mode !== 'direct' && deps.createRelaySource) this.sources.push(deps.createRelaySource());
    for (const source of this.sources) this.sourceStatus.set(source.name, source.status());
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const source of this.sources) {
      // The direct stream speaks the phone system's format; the relay hands on the core's own.
      const decode =
        source === this.direct ? this.withRemoteAnswer(this.wire.stream.decoder()) : undefined;
      this.detach.push(this.pipeline.attach(source, decode));
      this.detach.push(
        source.onStatus((status) => {
          this.sourceStatus.set(source.name, status);
          this.updateCombined();
        }),
      );
      source.start();
    }
    if (this.direct)
      this.detach.push(
        this.direct.onRefusedTopics(() => this.featureChanges.emit(this.featureStatuses())),
      );
    this.probe?.();
    this.scheduleProbeRefresh();
    this.logger.info('started', { sources: this.sources.map((s) => s.name) });
  }

  /**
   * The direct stream's decoder, also feeding remote answer's table (when there is one): each
   * uaCSTA report, and each ring (and its end) of the call reports. Never throws (the table's
   * methods do not).
   */
  private withRemoteAnswer(decode: FrameDecoder): FrameDecoder {
    const table = this.uacsta;
    const reports = this.wire.stream.remoteAnswer;
    if (!table || !reports) return decode;
    const callCode = this.wire.callCode;
    return (text, receivedAt, nowMonotonic) => {
      const uacsta = text.includes(String(reports.code)) ? reports.decode(text) : undefined;
      if (uacsta?.ok) {
        table.noteReport(uacsta.report);
        return { ok: true, envelopes: [] };
      }
      const result = decode(text, receivedAt, nowMonotonic);
      if (result.ok)
        for (const e of result.envelopes) {
          const { call_id: callId, to, state } = e.data;
          if (e.event !== callCode || typeof callId !== 'string' || typeof to !== 'string')
            continue;
          table.noteRing(to, callId, state === 'ringing');
        }
      return result;
    };
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.clock.clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    this.pipeline.stop();
    await Promise.all(this.sources.map((s) => s.stop()));
    for (const off of this.detach.splice(0)) off();
    for (const source of this.sources)
      this.sourceStatus.set(source.name, { state: 'offline', reason: 'Stopped.' });
    this.updateCombined();
  }

  wake(reason: WakeReason): void {
    for (const source of this.sources) source.wake(reason);
    this.probe?.();
  }

  onPop(listener: (pop: Pop) => void): () => void {
    return this.pipeline.onPop(listener);
  }

  onDismiss(listener: (dismiss: Dismiss) => void): () => void {
    return this.pipeline.onDismiss(listener);
  }

  /** A dial is about to be sent: its ring is the user's own call, not a pop (own-dials.ts). */
  expectOwnDial(number: string): DialTicket {
    return this.pipeline.expectOwnDial(number);
  }

  /** Rings of calls the user dialled from Screenpop (never popped): "Calling <number>…". */
  onOwnCall(listener: (call: OwnCall) => void): () => void {
    return this.pipeline.onOwnCall(listener);
  }

  /** A call the user answered ended there (pipeline.onHangup): the call's end, for its log. */
  onHangup(listener: (hangup: Dismiss) => void): () => void {
    return this.pipeline.onHangup(listener);
  }

  onEvent(listener: (envelope: Envelope) => void): () => void {
    return this.pipeline.onEvent(listener);
  }

  /** Calls' records once they ended, where the phone system sends them (pipeline.onRecord). */
  onCallRecord(listener: (record: CallRecord) => void): () => void {
    return this.pipeline.onRecord(listener);
  }

  /**
   * Voicemail, SMS, trunk and presence notices (pipeline.onNotice), of the features that are on: a
   * phone system may carry a feature on a code subscribed for calls anyway (Yeastar's voicemail
   * rides on the 30012 call record, which also ends rings), so a feature that is off says nothing.
   */
  onNotice(listener: (notice: Notice) => void): () => void {
    return this.pipeline.onNotice((notice) => {
      if (this.features[notice.type]) listener(notice);
    });
  }

  /**
   * Each feature beyond calls: on, off in the settings, or off because the key lacks its scope
   * (with the remedy). Only the direct WebSocket learns of refused codes; through the relay alone
   * a feature that is on is reported on.
   */
  featureStatuses(): FeatureStatus[] {
    return featureStatuses(
      this.features,
      this.direct?.refusedTopics() ?? [],
      this.wire.featureCodes,
    );
  }

  /** Every change of featureStatuses() from now on. */
  onFeatureStatus(listener: (statuses: FeatureStatus[]) => void): () => void {
    return this.featureChanges.on(listener);
  }

  /** Every change of the combined status from now on (not replayed: read status()). */
  onStatus(listener: (status: ConnectionStatus) => void): () => void {
    return this.combined.on(listener);
  }

  status(): ConnectionStatus {
    return this.combined.get();
  }

  /** Each source's own status, by source name (for a diagnostics view). */
  sourceStatuses(): Record<string, ConnectionStatus> {
    return Object.fromEntries(this.sourceStatus);
  }

  updateUser(user: UserNumbers): void {
    this.pipeline.setUser(user);
  }

  stats(): PipelineStats {
    return this.pipeline.stats();
  }

  private scheduleProbeRefresh(): void {
    if (!this.probe) return;
    this.probeTimer = this.clock.setTimeout(() => {
      this.probe?.();
      this.scheduleProbeRefresh();
    }, PROBE_REFRESH_MS);
  }

  /** A rate-limited, fire-and-forget reading of the server's clock for the pipeline. */
  private serverClockProber(deps: EngineDeps): () => void {
    let lastAt = -Infinity;
    return () => {
      const now = deps.clock.monotonic();
      if (!this.started || now - lastAt < PROBE_INTERVAL_MS) return;
      lastAt = now;
      probeServerClock({
        baseUrl: deps.baseUrl,
        clock: deps.clock,
        fetch: deps.fetch,
      }).then(
        (sample) => {
          if (sample && this.started)
            this.pipeline.noteServerTime(sample.serverMs, sample.atMonotonic);
          else if (!sample) this.logger.debug('no Date header from the server');
        },
        (error: unknown) =>
          this.logger.debug('server clock probe failed', {
            error,
          }),
      );
    };
  }

  private updateCombined(): void {
    this.combined.set(
      combineStatuses([...this.sourceStatus].map(([name, status]) => ({ name, status }))),
    );
  }
}
