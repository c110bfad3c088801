/**
 * The direct event stream: one WebSocket to the service (docs/wire-protocol.md section 5), kept
 * alive by the stream engine (src-shared/stream/stream-engine.ts: back-off, connect time-out,
 * heartbeat, sleep and wake, make-before-break rotation, fault verdicts). What is this stream's own
 * (and, where phone systems differ, its `dialect`: src-shared/wire/):
 *
 * - Handshake: `Authorization: Bearer` and `User-Agent` headers; the token never goes in the URL
 *   (the standard service; Yeastar's wants it in the URL, which is then never logged).
 * - Subscribe: `{"topic_list":[...]}` right after open; `errcode` 0 means subscribed (ready), 10003
 *   means subscribed without the codes the key lacks a scope for (status degraded, with the remedy).
 * - Heartbeat: the text frame `heartbeat`, answered by `heartbeat response`.
 * - Replacement: make-before-break (the direct stream has no replay): on wake, after a clock jump
 *   and `rotateLeadMs` before the access token expires, a second socket is opened with a fresh
 *   token and subscribed, and only then is the old one closed. Events seen on both are removed
 *   downstream by event_id.
 * - Verdicts: 10002 (a frame before close 4002, close 4002, or a 401 handshake) invalidates the
 *   token and reconnects at once (once, while the back-off is at its base); 10001/10004 (or a 403
 *   handshake, or either as a frame while connected) need the user; a proxy or certificate fault
 *   needs the user or backs off (src-shared/net/net-errors.ts); anything else (1001, 1012, 4000, refused, 5xx)
 *   backs off.
 *
 * Frames other than heartbeats and acks are handed on untouched, as text, to `onFrame` listeners.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import { silentLogger, type Logger } from '../../../src-shared/process/log.ts';
import {
  describeErrcode,
  describeMeaning,
  describeError,
  ERRCODE,
  hintPhrase,
  type ErrorDescription,
} from '../../../src-shared/api/service-errors.ts';
import {
  StreamEngine,
  streamTuning,
  type StreamEnd,
  type StreamLink,
  type Verdict,
} from '../../../src-shared/stream/stream-engine.ts';
import type { HandshakeRejection } from '../../../src-shared/stream/socket.ts';
import { networkFault, unreachableFault } from '../../../src-shared/net/net-errors.ts';
import type {
  AccessToken,
  ConnectionStatus,
  EventSource,
  StreamSourceDeps,
  TokenSource,
  WakeReason,
} from './contracts.ts';
import { CALL_STATE_CHANGED } from '../../../src-shared/wire/envelope.ts';
import { faultStatus, faultVerdict, saidStatus, StatusHolder } from './status.ts';
import { phrase, type Phrase } from '../../../src-shared/i18n/phrase.ts';
import { DEFAULT_USER_AGENT } from '../../../src-shared/api/service-client.ts';
import type { StreamDialect } from '../../../src-shared/wire/phone-system.ts';
import { STANDARD_STREAM } from '../../../src-shared/wire/standard.ts';
import { CLOSE_TOKEN_EXPIRED, readControlFrame } from '../../../src-shared/wire/control-frame.ts';

export interface WebSocketSourceDeps extends StreamSourceDeps {
  baseUrl: string;
  /** Event codes to subscribe to, e.g. [30011]. */
  topics: number[];
  /** How long before the access token expires the replacement socket is opened; default 60 s. */
  rotateLeadMs?: number;
  /** The phone system's stream (src-shared/wire/); the standard service's by default. */
  dialect?: StreamDialect;
}

type Link = StreamLink<AccessToken, ConnectionStatus>;

export class WebSocketEventSource implements EventSource {
  readonly name: string;
  /** The socket's address without credentials: for words, logs and proxy decisions. */
  private readonly url: string;
  private readonly dialect: StreamDialect;
  private readonly tokens: TokenSource;
  private readonly topics: number[];
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly userAgent: string;
  private readonly engine: StreamEngine<AccessToken, ConnectionStatus>;
  private readonly frames: Emitter<[text: string, receivedAt: number]>;
  private readonly refusedChanges: Emitter<[codes: number[]]>;
  /** Codes the service refused (10003) on the last subscription. */
  private refused: number[] = [];
  private readonly current: StatusHolder;
  /** Connections on which the service said the token expired (10002 frame). */
  private readonly tokenExpired = new WeakSet<Link>();

  constructor(deps: WebSocketSourceDeps) {
    this.name = deps.name ?? 'direct';
    this.dialect = deps.dialect ?? STANDARD_STREAM;
    this.url = this.dialect.publicUrl(deps.baseUrl);
    const { baseUrl } = deps;
    this.tokens = deps.tokens;
    this.topics = [...deps.topics];
    this.clock = deps.clock;
    this.logger = (deps.logger ?? silentLogger).child({
      component: 'ws-source',
      source: this.name,
    });
    this.userAgent = deps.userAgent ?? DEFAULT_USER_AGENT;
    this.frames = new Emitter(this.logger, 'frame');
    this.refusedChanges = new Emitter(this.logger, 'refused-topics');
    this.current = new StatusHolder(this.logger);
    this.engine = new StreamEngine<AccessToken, ConnectionStatus>(
      {
        grant: () => this.tokens.getToken(),
        address: (token) => ({
          url: this.dialect.url(baseUrl, token.value),
          headers: this.dialect.headers(token.value, this.userAgent),
        }),
        opened: (link) => link.send(this.dialect.subscribe(this.topics)),
        message: (link, text) => this.onMessage(link, text),
        heartbeat: this.dialect.heartbeat,
        ended: (link, end) => this.judgeEnd(link, end),
        grantFailed: (error) => this.judgeTokenError(error),
        expiresAt: (token) => token.expiresAt,
        renewed: (current, next) => current.value !== next.value,
      },
      {
        clock: deps.clock,
        logger: this.logger,
        createSocket: deps.createSocket,
        status: (status) => this.current.set(status),
        replace: 'make-before-break',
        ...streamTuning(deps),
        ...(deps.rotateLeadMs !== undefined && { rotateLeadMs: deps.rotateLeadMs }),
      },
    );
  }

  start(): void {
    if (this.engine.isRunning) return;
    this.current.set(saidStatus('connecting', [phrase('status.connecting-service')]));
    this.engine.start();
  }

  async stop(): Promise<void> {
    if (!this.engine.isRunning) return;
    await this.engine.stop();
    this.current.set(saidStatus('offline', [phrase('status.stopped')]));
  }

  wake(reason: WakeReason): void {
    this.engine.wake(reason);
  }

  onFrame(listener: (text: string, receivedAt: number) => void): () => void {
    return this.frames.on(listener);
  }

  onStatus(listener: (status: ConnectionStatus) => void): () => void {
    return this.current.on(listener);
  }

  status(): ConnectionStatus {
    return this.current.get();
  }

  /** The subscribed codes the service refused for lack of scope (10003), as last subscribed. */
  refusedTopics(): number[] {
    return [...this.refused];
  }

  /** Every change of refusedTopics() from now on. */
  onRefusedTopics(listener: (codes: number[]) => void): () => void {
    return this.refusedChanges.on(listener);
  }

  // ---- receiving ----

  private onMessage(link: Link, text: string): void {
    if (text === this.dialect.heartbeatResponse) return;
    const control = readControlFrame(this.dialect, text);
    if (!control) {
      this.frames.emit(text, this.clock.now());
      return;
    }
    // The phone system's own table: 10004 is an address on one and a token on another.
    const { errcode, meaning, subscribed } = control;
    const kind = meaning?.kind;
    if (subscribed && !link.isReady) {
      this.onSubscribed(
        link,
        subscribed === 'partial' ? missingCodes(control.errmsg, this.topics) : [],
      );
    } else if (kind === 'credentials' || kind === 'ip' || kind === 'unsupported') {
      // The key was revoked or the IP blocked while connected (the server closes next), or the
      // answer is another phone system's.
      this.needAttention(describeMeaning(meaning, errcode));
    } else if (kind === 'expired') {
      this.logger.info('token expired on the socket', { conn: link.id });
      this.tokenExpired.add(link);
      this.tokens.invalidate(link.grant.value);
    } else {
      this.logger.warn('service error on the socket', { conn: link.id, errcode });
    }
  }

  private onSubscribed(link: Link, missing: number[]): void {
    this.noteRefused(missing);
    this.logger.info('subscribed', { conn: link.id, topics: this.topics });
    // Without a code other than calls' only its feature is off (features.ts says so, with the
    // remedy); the connection itself is fine. Without calls, nothing pops: that is degraded.
    if (!missing.includes(CALL_STATE_CHANGED)) {
      link.ready({ state: 'connected' });
      return;
    }
    const scope = describeErrcode(ERRCODE.insufficientScope);
    const reason: Phrase[] = [
      ...scope.words.reason,
      hintPhrase('scope-events', { codes: missing.join(', ') }),
      hintPhrase('scope-no-call-events'),
    ];
    const scopes = missing.map((code) => `event:${code}`).join(', ');
    link.ready(
      saidStatus(
        'degraded',
        reason,
        [...scope.words.remedy, hintPhrase('scope-missing', { scopes })],
        scope.errcode,
      ),
    );
  }

  private noteRefused(codes: number[]): void {
    const sorted = [...codes].sort((a, b) => a - b);
    if (sorted.join() === this.refused.join()) return;
    this.refused = sorted;
    if (sorted.length > 0)
      this.logger.warn('event codes refused for lack of scope', { codes: sorted });
    this.refusedChanges.emit([...sorted]);
  }

  // ---- verdicts ----

  private judgeEnd(link: Link, end: StreamEnd): Verdict<ConnectionStatus> {
    const expired = this.tokenExpired.has(link) || end.code === CLOSE_TOKEN_EXPIRED;
    if (expired) this.tokens.invalidate(link.grant.value);
    // Ended without the service refusing the token: it may have restarted (sign-in-guard.ts).
    else if (!end.rejection) this.tokens.connectionLost?.();
    const failure = end.error ? networkFault(end.error, this.url, 'subscribe') : undefined;
    if (failure) {
      // A proxy or certificate fault, named: a person fixes those (needs attention); an
      // unreachable proxy is retried after the back-off like an unreachable service.
      const fault = describeError(failure);
      this.logger.warn('socket failed', { fault: fault.fault, error: failure });
      return faultVerdict(fault);
    }
    if (end.rejection) return this.judgeRejection(link, end.rejection);
    if (expired)
      return {
        next: 'at-once',
        status: saidStatus('connecting', [phrase('status.token-expired-reconnecting')]),
      };
    if (end.wasReady) {
      const why = end.foundDead
        ? phrase('status.went-silent')
        : phrase('status.closed', { code: String(end.code) });
      return { next: 'back-off', status: saidStatus('connecting', [why]) };
    }
    // The socket never opened: say where it went and what happened (refused, no such host...).
    const unreachable = end.error ? unreachableFault(end.error, this.url, 'subscribe') : undefined;
    if (unreachable) return faultVerdict(describeError(unreachable));
    return { next: 'back-off', status: saidStatus('offline', [phrase('status.cannot-reach')]) };
  }

  private judgeRejection(link: Link, rejection: HandshakeRejection): Verdict<ConnectionStatus> {
    // The refusal's errcode, or the one its bare status stands for (401 token, 403 address), read
    // through the phone system's table; one a person must fix (a key, an address) stops retries.
    const errcode = rejection.errcode ?? this.dialect.refusedStatus[rejection.status];
    const meaning =
      errcode === undefined
        ? undefined
        : this.dialect.errcodes(errcode, { errmsg: rejection.errmsg });
    if (errcode !== undefined) {
      const fault = describeMeaning(meaning, errcode);
      if (fault.needsUser) return { next: 'attention', status: this.attentionStatus(fault) };
    }
    if (meaning?.kind === 'expired') {
      this.tokens.invalidate(link.grant.value);
      return {
        next: 'at-once',
        status: saidStatus('connecting', [phrase('status.token-refused')]),
      };
    }
    this.tokens.connectionLost?.();
    return {
      next: 'back-off',
      status: saidStatus(
        'offline',
        [phrase('status.service-refused', { status: rejection.status })],
        undefined,
        rejection.errcode,
      ),
    };
  }

  private judgeTokenError(error: unknown): Verdict<ConnectionStatus> {
    const fault = describeError(error);
    this.logger.warn('cannot get an access token', {
      fault: fault.fault,
      errcode: fault.errcode,
      error,
    });
    return fault.needsUser
      ? { next: 'attention', status: this.attentionStatus(fault) }
      : { next: 'back-off', status: faultStatus('offline', fault) };
  }

  private attentionStatus(fault: ErrorDescription): ConnectionStatus {
    this.logger.warn('needs attention; not retrying until the user acts', {
      fault: fault.fault,
      errcode: fault.errcode,
    });
    return faultStatus('needs-attention', fault);
  }

  private needAttention(fault: ErrorDescription): void {
    this.engine.needAttention(this.attentionStatus(fault));
  }
}

/** The subscribed codes a 10003 message names (all of them when it names none we asked for). */
export function missingCodes(errmsg: string, topics: number[]): number[] {
  const named = (errmsg.match(/\d+/g) ?? []).map(Number).filter((n) => topics.includes(n));
  return named.length > 0 ? [...new Set(named)] : [...topics];
}
