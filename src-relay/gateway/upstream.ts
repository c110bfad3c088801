/**
 * Gateway mode's upstream (docs/relay-protocol.md section 2.4): the relay's own event stream to a
 * tenant's phone system, with the API key and secret only the relay holds. The same engine as the
 * desktop's direct stream (src-shared/stream/stream-engine.ts: back-off, connect time-out,
 * heartbeat, make-before-break rotation before the access token expires) speaking the phone
 * system's wire format (src-shared/wire/); tokens from the shared service client
 * (src-shared/api/service-client.ts). Each frame is read as a webhook's body is
 * (webhook-handler.ts decodeDelivery) and stored with `store.append`, which keeps an event_id
 * once: the stream and the webhooks together deliver each event once.
 *
 * A relay has nobody to ask: every fault backs off and tries again (a revoked key too: its state
 * says "refused", and the log says so at most a few times a minute), and the relay never exits
 * for the upstream. Only the first token, at start, is a startup check (`start()` rejects with a
 * StartupError in words), so a wrong key or address is said at once rather than retried silently.
 */
import { delay, type Clock } from '../../src-shared/process/clock.ts';
import { Backoff, type BackoffPolicy } from '../../src-shared/kit/backoff.ts';
import { silentLogger, type Logger, type SecretRegistry } from '../../src-shared/process/log.ts';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import type { CallInfo } from '../../src-shared/api/call-api.ts';
import type { TokenPair } from '../../src-shared/api/wire.ts';
import { isServiceError, ServiceError, type FaultId } from '../../src-shared/api/service-errors.ts';
import {
  REVOKE_LIMIT_MS,
  SIGN_IN_POLICY,
  type SignInPolicy,
} from '../../src-shared/api/sign-in-guard.ts';
import {
  serviceTokenLifecycle,
  type TokenLifecycle,
} from '../../src-shared/api/token-lifecycle.ts';
import {
  StreamEngine,
  type StreamEnd,
  type Verdict,
} from '../../src-shared/stream/stream-engine.ts';
import type { CreateSocket } from '../../src-shared/stream/socket.ts';
import { CLOSE_TOKEN_EXPIRED, readControlFrame } from '../../src-shared/wire/control-frame.ts';
import { wireFor } from '../../src-shared/wire/index.ts';
import type { PhoneSystemWire } from '../../src-shared/wire/phone-system.ts';
import type { TenantConfig } from '../config.ts';
import { SampledLog } from '../log-sampler.ts';
import type { RelayMetrics, UpstreamState } from '../metrics.ts';
import { StartupError } from '../startup-errors.ts';
import { FencedError, type EventStore } from '../store/types.ts';
import { decodeDelivery } from '../webhook-handler.ts';
import { YeastarIntake } from '../yeastar-intake.ts';
import type { GatewayCredential } from './credential.ts';
import type { TermTokens } from './term-tokens.ts';

/**
 * The gateway's sign-in rule: the desktop's (src-shared/api/sign-in-guard.ts: at most 3 get_token in
 * 10 minutes, a token taken away soon after issue, the token limit; each held 5 minutes), and
 * also after the phone system refused the relay's login (its key: 10001; its address: 10004).
 * The stream reconnects every 10 s at most and would otherwise log in 360 times an hour with a
 * key or an address the phone system refuses, which can get the relay's address blocked; 5
 * minutes is 12 an hour, and a key or allowlist fixed in the phone system is picked up within 5
 * minutes.
 */
export const GATEWAY_SIGN_IN_POLICY: SignInPolicy = { ...SIGN_IN_POLICY, holdRefusedLogin: true };
/** Faults of a sign-in the rule holds, said in the relay's log. */
const HELD_FAULTS: ReadonlySet<FaultId> = new Set<FaultId>([
  'ys-token-limit',
  'ys-token-limit-likely',
  'shared-application',
  'sign-ins-held',
]);
interface AccessToken {
  value: string;
  expiresAt: number;
}

export interface UpstreamDeps {
  tenant: string;
  config: TenantConfig;
  credential: GatewayCredential;
  store: EventStore;
  clock: Clock;
  logger: Logger;
  metrics: RelayMetrics;
  fetch: typeof fetch;
  createSocket: CreateSocket;
  secrets: SecretRegistry;
  /** The engine's timings (tests shorten the back-off and heartbeat). */
  backoff?: { baseMs?: number; capMs?: number };
  heartbeatMs?: number;
  /** The lease's term this upstream runs in (leased-upstream.ts): its tokens written down. */
  term?: TermTokens;
  /** The replaced tokens of every term (leased-upstream.ts): GatewayTokensOptions `retired`. */
  retired?: string[];
}

export interface GatewayTokensOptions {
  logger?: Logger;
  /** The sign-in rule (GATEWAY_SIGN_IN_POLICY by default). */
  signIn?: SignInPolicy;
  /** How long giving the tokens back may take at stop (REVOKE_LIMIT_MS by default). */
  releaseLimitMs?: number;
  /**
   * When a token replaced by a refresh is revoked: 'at-once' (nothing holds it: no stream), or
   * 'when-settled' (the stream still runs on it until its replacement connection is ready, when
   * settled() is called; make-before-break rotation, section 4 of the phone system's doc).
   */
  revokeReplaced?: 'at-once' | 'when-settled';
  /**
   * The lease's term (term-tokens.ts), where the phone system can revoke: every token written
   * down before it is handed out, and struck off once revoked.
   */
  term?: TermTokens;
  /** One list for every term's tokens (token-lifecycle.ts `retired`; leased-upstream.ts). */
  retired?: string[];
}

/**
 * The access token of the relay's credential, on the one token lifecycle
 * (src-shared/api/token-lifecycle.ts): renewed when less than TOKEN_RENEW_MARGIN_MS is left of it, or
 * half its life for a short-lived one (the stream engine rotates its connection that far before
 * the token ends, so the rotation, not an earlier ask, takes the new token); refreshed, and
 * fetched again when refused; sign-ins (get_token) bounded and held by the desktop's rule
 * (GATEWAY_SIGN_IN_POLICY); a token replaced by a refresh revoked once nothing uses it, and the
 * tokens held revoked at stop (`del_token`, where the phone system has it: Yeastar's), so that
 * the whole organisation holds 1 token of the API application's 8, 2 for the seconds a rotation
 * takes. Replaced tokens leave the secret registry a few generations on.
 */
export class GatewayTokens {
  private readonly life: TokenLifecycle<TokenPair>;
  private released = false;
  private readonly term: TermTokens | undefined;

  constructor(
    client: ServiceClient,
    credential: GatewayCredential,
    clock: Clock,
    options: GatewayTokensOptions = {},
  ) {
    this.term = client.canRevoke ? options.term : undefined;
    this.life = serviceTokenLifecycle(
      this.term?.revoking(client) ?? client,
      { signIn: () => client.getToken(credential.apiKey, credential.secret) },
      {
        clock,
        secrets: client.secrets,
        logger: options.logger ?? silentLogger,
        marginShare: 1 / 2,
        signIn: options.signIn ?? GATEWAY_SIGN_IN_POLICY,
        releaseLimitMs: options.releaseLimitMs ?? REVOKE_LIMIT_MS,
        revokeReplaced: options.revokeReplaced ?? 'at-once',
        ...(options.retired && { retired: options.retired }),
      },
    );
  }

  async get(): Promise<AccessToken> {
    if (this.released) throw stoppedError();
    const next = await this.life.get();
    await this.term?.record(next.accessToken, next.accessExpiresAt);
    if (this.released) throw stoppedError();
    return { value: next.accessToken, expiresAt: next.accessExpiresAt };
  }

  /**
   * The service said `value` expired: the next get() refreshes (or signs in). A token refused
   * soon after it was issued counts towards "another computer uses the same application".
   */
  invalidate(value: string): void {
    this.life.invalidate(value);
  }

  /** The upstream ended without a token refusal (token-lifecycle.ts `connectionLost`). */
  connectionLost(): void {
    this.life.connectionLost();
  }

  /** The stream now runs on `value` (its connection is ready): tokens it replaced are revoked. */
  settled(value: string): void {
    this.life.settled(value);
  }

  /**
   * The relay stops: no more tokens, and the ones held are revoked, within `releaseLimitMs` (a
   * phone system that does not answer never holds the drain; the tokens then expire). Never
   * rejects.
   */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.life.drop();
  }
}

/** A get() after the relay stopped: no token is taken any more. */
function stoppedError(): ServiceError {
  return new ServiceError({ kind: 'network', message: 'the relay is stopping' });
}

/**
 * How long a frame's events are tried again after a storage fault (Redis failing over, a replica
 * catching up after it: "reached 0 of 1 replicas") before they are given up. The stream brings an
 * event once; dropped at the first fault, a ring whose webhook retries came after its answer never
 * popped (the Sentinel soak, minReplicas 1: 6 of 326 rings). Frames wait behind it, so the
 * desktops' order holds; a frame's time counts from its arrival, so a long outage costs each
 * queued frame at most one try once this has passed.
 */
const STORE_RETRY_MS = 15_000;
/**
 * Short: once the store takes writes again, the frames held here go first, in their order, before
 * the phone system's retries of later events (1, 2, 4 ... s) store those out of order (an answer
 * stored before its ring is a ring never shown). A try that is refused at once costs no round trip.
 */
const STORE_BACKOFF: BackoffPolicy = { baseMs: 100, capMs: 500, floorMs: 50 };

export class GatewayUpstream {
  readonly tenant: string;
  readonly client: ServiceClient;
  readonly tokens: GatewayTokens;
  private readonly wire: PhoneSystemWire;
  private readonly deps: UpstreamDeps;
  private readonly engine: StreamEngine<AccessToken, UpstreamState>;
  private readonly intake: YeastarIntake;
  private readonly lostLog: SampledLog;
  private readonly heldLog: SampledLog;
  private readonly catchUpLog: SampledLog;
  private current: UpstreamState = 'connecting';
  private since: number;
  private readonly expired = new WeakSet<object>();
  private storing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(deps: UpstreamDeps) {
    this.deps = deps;
    this.tenant = deps.tenant;
    this.wire = wireFor(deps.config.phoneSystem);
    this.since = deps.clock.now();
    this.client = new ServiceClient({
      baseUrl: deps.config.baseUrl,
      clock: deps.clock,
      fetch: deps.fetch,
      logger: deps.logger,
      secrets: deps.secrets,
      api: this.wire.api,
    });
    deps.secrets.add(deps.credential.secret);
    this.tokens = new GatewayTokens(this.client, deps.credential, deps.clock, {
      logger: deps.logger,
      // With a stream, a replaced token is in use until the rotated connection is ready.
      revokeReplaced: deps.config.gateway?.stream === false ? 'at-once' : 'when-settled',
      ...(deps.term && { term: deps.term }),
      ...(deps.retired && { retired: deps.retired }),
    });
    this.intake = new YeastarIntake(() => deps.clock.monotonic(), deps.store.callMemory);
    this.lostLog = new SampledLog(deps.logger, 'warn', 'upstream not connected', deps.clock, {
      perWindow: 3,
      windowMs: 60_000,
    });
    this.heldLog = new SampledLog(deps.logger, 'warn', 'upstream sign-in held', deps.clock, {
      perWindow: 3,
      windowMs: 60_000,
    });
    this.catchUpLog = new SampledLog(
      deps.logger,
      'warn',
      'upstream calls still ringing not asked',
      deps.clock,
      { perWindow: 3, windowMs: 60_000 },
    );
    const stream = this.wire.stream;
    const topics = [
      ...new Set([
        this.wire.callCode,
        ...(this.wire.callEndCodes ?? []),
        ...Object.values(this.wire.featureCodes).filter((c): c is number => c !== null),
      ]),
    ];
    const userAgent = 'Screenpop-relay';
    this.engine = new StreamEngine<AccessToken, UpstreamState>(
      {
        grant: () => this.tokens.get(),
        address: (token) => ({
          url: stream.url(deps.config.baseUrl, token.value),
          headers: stream.headers(token.value, userAgent),
        }),
        opened: (link) => link.send(stream.subscribe(topics)),
        message: (link, text) => this.onMessage(link, text),
        heartbeat: stream.heartbeat,
        ended: (link, end) => this.judgeEnd(link, end),
        grantFailed: (error) => this.judgeGrantError(error),
        connecting: () => (this.current === 'connected' ? 'reconnecting' : undefined),
        expiresAt: (token) => token.expiresAt,
        renewed: (current, next) => current.value !== next.value,
      },
      {
        clock: deps.clock,
        logger: deps.logger,
        createSocket: deps.createSocket,
        status: (state) => this.setState(state),
        replace: 'make-before-break',
        ...(deps.backoff && { backoff: deps.backoff }),
        ...(deps.heartbeatMs !== undefined && { heartbeatMs: deps.heartbeatMs }),
      },
    );
  }

  state(): { state: UpstreamState; since: number } {
    return { state: this.current, since: this.since };
  }

  /**
   * The first access token (a startup check: a refused key, a blocked address or an unreachable
   * service is a StartupError in words), then the stream, kept open from then on. A takeover of
   * the tenant's lease (leased-upstream.ts) starts with `firstTokenRequired: false`: the relay
   * already runs, and the stream's engine asks for the token, with its back-off.
   */
  async start(stream: boolean, options: { firstTokenRequired?: boolean } = {}): Promise<void> {
    if (options.firstTokenRequired !== false) {
      try {
        await this.tokens.get();
      } catch (err) {
        throw startupFailure(this.tenant, this.deps.config.baseUrl, err);
      }
    }
    if (stream) this.engine.start();
  }

  /** Closes the stream, then gives the tokens back (bounded: see GatewayTokens.release). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.engine.stop();
    await this.tokens.release();
  }

  private setState(state: UpstreamState): void {
    if (state === this.current) return;
    this.current = state;
    this.since = this.deps.clock.now();
    if (state === 'connected') this.deps.logger.info('upstream connected', { state });
    else this.lostLog.write({ state });
  }

  private onMessage(
    link: { grant: AccessToken; isReady: boolean; ready(s: UpstreamState): void },
    text: string,
  ): void {
    const stream = this.wire.stream;
    if (text === stream.heartbeatResponse) return;
    const control = readControlFrame(stream, text);
    if (control !== undefined) {
      if (control.subscribed && !link.isReady) {
        const caughtUp = this.current === 'connected'; // a rotation: the older socket heard it all
        link.ready('connected');
        // The stream runs on this token now (a rotation has closed the older connection).
        this.tokens.settled(link.grant.value);
        if (!caughtUp) this.catchUp(link.grant.value);
      } else if (control.meaning?.kind === 'expired') {
        this.expired.add(link);
        this.tokens.invalidate(link.grant.value);
      } else this.deps.logger.warn('upstream error frame', { errcode: control.errcode });
      return;
    }
    // One frame after the other, as they came: the store's order is the desktops' order.
    const arrived = this.deps.clock.monotonic();
    this.storing = this.storing.then(() => this.store(text, arrived));
  }

  /**
   * The stream has no replay: what rang while no socket of this tenant was subscribed (a
   * takeover of the lease, a reconnect) is heard only by webhook. Where the phone system answers
   * *Query Calls* (a Yeastar P-Series: `call/query`, docs/phone-systems/yeastar-p-series.md
   * section 10), the calls in which an extension still rings are asked for once the socket is
   * subscribed, and each is stored as the 30011 report of its members, so a call still ringing
   * when this stream starts pops. Stamped with the time the question was sent: a report the
   * stream brings after it (the call answered meanwhile) is later, so the ring never outlives
   * its answer on a desktop. A refusal (the application lacks the call permission: 10005) or a
   * fault is logged, a few times a minute at most; the stream goes on.
   */
  private catchUp(token: string): void {
    if (!this.client.controlsCalls) return;
    const askedAt = this.deps.clock.now();
    const arrived = this.deps.clock.monotonic();
    const types = ['inbound', 'internal'] as const;
    void Promise.all(types.map((type) => this.client.queryCalls(token, { type })))
      .then((lists) => {
        const seen = new Set<string>();
        for (const call of lists.flat()) {
          if (seen.has(call.callId)) continue;
          seen.add(call.callId);
          if (!call.members.some((m) => m.kind === 'extension' && m.status === 'RING')) continue;
          const text = JSON.stringify({ type: this.wire.callCode, sn: '', msg: reportOf(call) });
          this.storing = this.storing.then(() => this.store(text, arrived, askedAt));
        }
      })
      .catch((err: unknown) => this.catchUpLog.write({ error: err }));
  }

  private async store(text: string, arrived: number, receivedAt?: number): Promise<void> {
    const { deps } = this;
    const now = receivedAt ?? deps.clock.now();
    let decoded;
    try {
      decoded = await decodeDelivery(deps.tenant, deps.config, Buffer.from(text), this.intake, now);
    } catch (err) {
      // The shared call memory's write of a term that ended: the next holder decodes it.
      if (err instanceof FencedError) {
        deps.metrics.upstream(deps.tenant, 'fenced');
        return;
      }
      // The shared call memory failed: this frame is not stored (a takeover's catch-up asks again).
      deps.metrics.upstream(deps.tenant, 'rejected');
      deps.logger.warn('upstream frame not decoded: call memory unavailable', { error: err });
      return;
    }
    if (!decoded.ok) {
      deps.metrics.upstream(deps.tenant, 'rejected');
      deps.logger.debug('upstream frame not an event', { reason: decoded.reason });
      return;
    }
    // The frame's events together (one Redis script: one round trip, one fsync, one batch).
    const events = decoded.events.map((event) => ({
      tenant: deps.tenant,
      ...event,
      receivedAt: now,
    }));
    const backoff = new Backoff(STORE_BACKOFF);
    let results;
    for (;;) {
      try {
        results = await deps.store.appendAll(events);
        break;
      } catch (err) {
        // A term of the tenant's lease that ended (leased-upstream.ts): the next holder stores them.
        const fenced = err instanceof FencedError;
        const left = arrived + STORE_RETRY_MS - deps.clock.monotonic();
        if (!fenced && !this.stopped && left > 0) {
          // Stored again by event id: a try that reached Redis is a duplicate, not a second copy.
          await delay(deps.clock, Math.min(backoff.next(), left));
          continue;
        }
        for (const _ of decoded.events)
          deps.metrics.upstream(deps.tenant, fenced ? 'fenced' : 'storage-error');
        if (!fenced)
          deps.logger.error('upstream event not stored', {
            error: err,
            tries: backoff.attempts + 1,
          });
        return;
      }
    }
    for (const result of results) {
      if (result.status === 'duplicate') deps.metrics.upstream(deps.tenant, 'duplicate');
      else {
        deps.metrics.stored += 1;
        deps.metrics.upstream(deps.tenant, 'stored');
      }
    }
  }

  private judgeEnd(link: { grant: AccessToken }, end: StreamEnd): Verdict<UpstreamState> {
    const wasConnected = end.wasReady || this.current === 'connected';
    const lost: UpstreamState = wasConnected ? 'reconnecting' : this.current;
    const errcode =
      end.rejection &&
      (end.rejection.errcode ?? this.wire.stream.refusedStatus[end.rejection.status]);
    const kind = errcode === undefined ? undefined : this.wire.stream.errcodes(errcode)?.kind;
    if (this.expired.has(link) || end.code === CLOSE_TOKEN_EXPIRED || kind === 'expired') {
      this.tokens.invalidate(link.grant.value);
      return { next: 'at-once', status: lost };
    }
    if (kind === 'credentials' || kind === 'ip') return { next: 'back-off', status: 'refused' };
    this.tokens.connectionLost();
    return { next: 'back-off', status: lost === 'connecting' ? 'connecting' : 'reconnecting' };
  }

  private judgeGrantError(error: unknown): Verdict<UpstreamState> {
    const kind = isServiceError(error) ? error.kind : undefined;
    this.deps.logger.debug('upstream token failed', { kind });
    // Sign-ins held (sign-in-guard.ts): the token limit, or another computer signing in with
    // the same API application; said, a few times a minute at most.
    if (isServiceError(error) && HELD_FAULTS.has(error.fault))
      this.heldLog.write({
        fault: error.fault,
        error,
        retryAfterMs: error.retryAfterMs,
      });
    return {
      next: 'back-off',
      status: kind === 'credentials' || kind === 'ip' ? 'refused' : 'reconnecting',
    };
  }
}

/** A call of *Query Calls* as the 30011 report that lists its members (the same fields). */
function reportOf(call: CallInfo): { call_id: string; members: Array<Record<string, unknown>> } {
  return {
    call_id: call.callId,
    members: call.members.map((m) => {
      const common = { channel_id: m.channelId ?? '', member_status: m.status };
      if (m.kind === 'extension') return { extension: { number: m.number, ...common } };
      if (m.kind === 'inbound') return { inbound: { from: m.number, to: '', ...common } };
      return { outbound: { from: '', to: m.number, ...common } };
    }),
  };
}

/** The first token failed at start: what failed and what to change, no secret. */
function startupFailure(tenant: string, baseUrl: string, err: unknown): Error {
  const where = `tenants.${tenant}.gateway: the phone system at ${baseUrl}`;
  if (!isServiceError(err)) return new StartupError(`${where} could not be asked for a token.`);
  const said = `(${err.message.slice(0, 200)})`;
  switch (err.kind) {
    case 'credentials':
      return new StartupError(
        `${where} refused the gateway's API key and secret ${said}. Check the key and secret files (or variables) named in tenants.${tenant}.gateway, and that the API is enabled for them.`,
      );
    case 'ip':
      return new StartupError(
        `${where} does not accept API calls from this relay's address ${said}. Add the relay's public IP address to the API's allowed addresses in the phone system.`,
      );
    case 'network':
    case 'timeout':
      return new StartupError(
        `${where} cannot be reached ${said}. Check tenants.${tenant}.baseUrl and that this host may connect to it.`,
      );
    default:
      return new StartupError(
        `${where} did not give a token ${said}. Check tenants.${tenant}.baseUrl (it must be the phone system's API address).`,
      );
  }
}
