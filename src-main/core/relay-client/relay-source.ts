/**
 * The webhook relay as an event source (docs/relay-protocol.md): one WebSocket to the
 * organisation's relay, which replays what this desktop missed and then streams live events. Kept
 * alive by the stream engine (src-shared/stream/stream-engine.ts: back-off, connect time-out,
 * heartbeat, sleep and wake, fault verdicts); what is this stream's own:
 *
 * - Handshake: `Authorization: Bearer <service access token>` (from the TokenSource) on the upgrade
 *   to `<relay>/v1/stream/<tenant>`; wss is required unless the relay is on this machine.
 * - Hello: right after open, the filter (the user's extensions, DIDs, opt-in event codes) and the
 *   last cursor this desktop processed; the relay replays everything after it, sends a `gap`
 *   notice first when retention no longer covers it, then `ready` (the connection is ready; while
 *   the replay runs, each frame keeps the connect time-out from running out).
 * - Heartbeat: `{"type":"heartbeat"}`, answered with the relay's cursor.
 * - Replacement: on wake the socket is dropped and a new one resumes from the cursor (nothing is
 *   missed, and no second session is held against the relay's per-token limit).
 * - Verdicts: a 401, or 10002 (the token invalidated first), and a close 4002 (re-authorise)
 *   reconnect at once, once while the back-off is at its base; a 403, an unknown tenant (404), a
 *   revoked device or user (close 4003, 46003), a user the relay cannot map (46004), and a sign-in
 *   refused again after an at-once retry need the user; a proxy or certificate fault needs the
 *   user or backs off; the rest backs off.
 * - Cursor: advanced by `cursor` frames (sent after each burst) and heartbeat answers; optionally
 *   persisted through a CursorStore so a restarted app resumes where it stopped. Only values in
 *   the cursor format are taken (from the relay and from the store); a hello the relay refuses
 *   (4400) before `ready` drops the cursor, so the next hello starts live instead of being refused
 *   for ever.
 * Event frames are handed on untouched, as text, to onFrame listeners.
 */
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import { silentLogger, type Logger } from '../../../src-shared/process/log.ts';
import { LatestWriter } from '../../../src-shared/kit/one-at-a-time.ts';
import type {
  AccessToken,
  ConnectionStatus,
  EventSource,
  StreamSourceDeps,
  WakeReason,
} from '../events/contracts.ts';
import { faultStatus, faultVerdict, saidStatus, StatusHolder } from '../events/status.ts';
import { phrase } from '../../../src-shared/i18n/phrase.ts';
import {
  describeErrcode,
  describeError,
  ERRCODE,
  ServiceError,
  type FaultId,
} from '../../../src-shared/api/service-errors.ts';
import { networkFault, unreachableFault } from '../../../src-shared/net/net-errors.ts';
import {
  CloseCode,
  decodeControl,
  isCursor,
  RELAY_ERRCODE,
  relayClientPath,
  sanitiseFilter,
  type RelayFilter,
  type RelayIdentity,
} from '../../../src-shared/relay/relay-protocol.ts';
import {
  StreamEngine,
  streamTuning,
  type StreamEnd,
  type StreamLink,
  type Verdict,
} from '../../../src-shared/stream/stream-engine.ts';
import type { HandshakeRejection } from '../../../src-shared/stream/socket.ts';
import { isSecureOrLoopback, WS_SCHEMES } from '../../../src-shared/net/loopback.ts';
import { DEFAULT_USER_AGENT } from '../../../src-shared/api/service-client.ts';
import type { CursorStore } from './cursor-store.ts';

export interface RelaySourceDeps extends StreamSourceDeps {
  /** The relay's address: https://relay.example.org (or wss://...); http/ws only for loopback. */
  relayUrl: string;
  tenant: string;
  filter: RelayFilter;
  cursorStore?: CursorStore;
  /** How long the status stays degraded after a gap notice. */
  gapStatusMs?: number;
  /**
   * Organisation mode: the relay says whose session this is (`ready`'s identity): the user's
   * extensions and numbers, which the relay enforces and the pipeline then matches on.
   */
  onIdentity?: (identity: RelayIdentity) => void;
}

/** Organisation mode's refusals (docs/relay-protocol.md 2.2, 2.3): a person must act. */
function signInStatus(fault: FaultId): ConnectionStatus {
  return faultStatus(
    'needs-attention',
    describeError(new ServiceError({ kind: 'sign-in', fault, message: fault })),
  );
}

/** ws(s) URL of a tenant's stream on the relay; refuses plain text to anything but loopback. */
export function relayStreamUrl(relayUrl: string, tenant: string): string {
  const url = new URL(relayUrl);
  if (url.protocol === 'https:') url.protocol = 'wss:';
  else if (url.protocol === 'http:') url.protocol = 'ws:';
  if (!isSecureOrLoopback(url, [WS_SCHEMES]))
    throw new Error('the relay address must use https (wss) unless it is on this computer');
  url.pathname = url.pathname.replace(/\/+$/, '') + relayClientPath(tenant);
  url.search = '';
  url.hash = '';
  return url.toString();
}

/**
 * An https (http for loopback) address on the relay for a path: enrolment and sign-in requests go
 * to the same relay, under the same rule, as the stream.
 */
export function relayHttpUrl(relayUrl: string, path: string): string {
  const url = new URL(relayStreamUrl(relayUrl, 'x'));
  url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
  url.pathname = url.pathname.replace(/\/v1\/stream\/x$/, '') + path;
  return url.toString();
}

type Link = StreamLink<AccessToken, ConnectionStatus>;

export class RelayEventSource implements EventSource {
  readonly name: string;
  private readonly deps: RelaySourceDeps;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly url: string;
  private readonly filter: RelayFilter;
  private readonly frames: Emitter<[text: string, receivedAt: number]>;
  private readonly current: StatusHolder;
  private readonly engine: StreamEngine<AccessToken, ConnectionStatus>;
  private cursor: string | null = null;
  private cursorLoaded: Promise<void> | undefined;
  private savedCursor: string | null = null;
  private readonly saver: LatestWriter;
  private gapTimer: TimerHandle | undefined;
  private gapStatus: ConnectionStatus | undefined;
  /** The ID token the open session signed in with (organisation single sign-on), renewed on 4002. */
  private signInGrant: string | undefined;

  constructor(deps: RelaySourceDeps) {
    this.deps = deps;
    this.name = deps.name ?? 'relay';
    this.clock = deps.clock;
    this.logger = (deps.logger ?? silentLogger).child({ component: 'relay-source' });
    this.url = relayStreamUrl(deps.relayUrl, deps.tenant);
    this.frames = new Emitter(this.logger, 'frame');
    this.current = new StatusHolder(this.logger);
    const { filter, dropped } = sanitiseFilter(deps.filter);
    if (dropped > 0)
      this.logger.warn('filter entries the relay would refuse were left out', { dropped });
    this.filter = filter;
    this.saver = new LatestWriter(() => this.saveCursor(), this.logger, 'relay cursor not saved');
    const userAgent = deps.userAgent ?? DEFAULT_USER_AGENT;
    this.engine = new StreamEngine<AccessToken, ConnectionStatus>(
      {
        grant: async () => {
          await this.cursorLoaded;
          return this.deps.tokens.getToken();
        },
        address: (token) => ({
          url: this.url,
          headers: { Authorization: `Bearer ${token.value}`, 'User-Agent': userAgent },
        }),
        opened: (link) =>
          link.send(
            JSON.stringify({ type: 'hello', v: 1, filter: this.filter, cursor: this.cursor }),
          ),
        message: (link, text) => this.onMessage(link, text),
        heartbeat: JSON.stringify({ type: 'heartbeat' }),
        ended: (link, end) => this.judgeEnd(link, end),
        grantFailed: (error) => faultVerdict(describeError(error)),
        connecting: () =>
          this.gapStatus && this.current.get().state === 'degraded'
            ? undefined
            : saidStatus('connecting', [phrase('status.connecting-relay')]),
      },
      {
        clock: deps.clock,
        logger: this.logger,
        createSocket: deps.createSocket,
        status: (status) => this.current.set(status),
        replace: 'drop',
        droppedStatus: () => saidStatus('connecting', [phrase('status.relay-reconnecting')]),
        ...streamTuning(deps),
      },
    );
  }

  /** The last position this source processed (for tests and diagnostics). */
  get position(): string | null {
    return this.cursor;
  }

  start(): void {
    if (this.engine.isRunning) return;
    this.cursorLoaded ??= (this.deps.cursorStore?.load() ?? Promise.resolve(null)).then(
      (c) => {
        const valid = typeof c === 'string' && isCursor(c) ? c : null;
        if (c !== null && valid === null)
          this.logger.warn('stored relay cursor is not a cursor; starting live');
        this.cursor ??= valid;
        this.savedCursor = valid;
      },
      (err: Error) => this.logger.warn('relay cursor not loaded; starting live', { error: err }),
    );
    this.engine.start();
  }

  async stop(): Promise<void> {
    if (!this.engine.isRunning) return;
    this.clock.clearTimeout(this.gapTimer);
    await this.engine.stop();
    await this.persistCursor();
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

  private onMessage(link: Link, text: string): void {
    const control = decodeControl(text);
    if (!control) {
      this.frames.emit(text, this.clock.now());
      return;
    }
    switch (control.type) {
      case 'ready':
        if (control.cursor !== null) this.advance(control.cursor);
        if (control.identity) this.deps.onIdentity?.(control.identity);
        this.signInGrant = control.identity?.via === 'oidc' ? link.grant.value : undefined;
        link.ready(this.gapStatus ?? { state: 'connected' });
        break;
      case 'cursor':
        this.advance(control.cursor);
        break;
      case 'heartbeat':
        if (control.cursor !== undefined) this.advance(control.cursor);
        break;
      case 'gap':
        this.logger.warn('relay gap notice', {
          requested: control.requested,
          oldest: control.oldest,
        });
        this.gapStatus = saidStatus('degraded', [phrase('status.relay-gap')]);
        this.current.set(this.gapStatus);
        this.clock.clearTimeout(this.gapTimer);
        this.gapTimer = this.clock.setTimeout(
          () => {
            this.gapStatus = undefined;
            if (link.isReady && this.engine.isRunning) this.current.set({ state: 'connected' });
          },
          this.deps.gapStatusMs ?? 5 * 60_000,
        );
        break;
      case 'error':
        this.logger.warn('relay reported an error', { code: control.code });
        break;
    }
  }

  /** Takes a position the relay gave; anything not in the cursor format is ignored (and logged). */
  private advance(cursor: unknown): void {
    if (typeof cursor !== 'string' || !isCursor(cursor)) {
      this.logger.warn('relay sent a position that is not a cursor; ignored');
      return;
    }
    this.cursor = cursor;
    void this.persistCursor();
  }

  /** Saves the cursor when a store is configured; one write at a time, the latest value wins. */
  private persistCursor(): Promise<void> {
    if (!this.deps.cursorStore) return Promise.resolve();
    return this.saver.write();
  }

  private async saveCursor(): Promise<void> {
    const c = this.cursor;
    if (c === null || c === this.savedCursor || !this.deps.cursorStore) return;
    await this.deps.cursorStore.save(c);
    this.savedCursor = c;
  }

  private judgeEnd(link: Link, end: StreamEnd): Verdict<ConnectionStatus> {
    if (end.rejection) return this.judgeRejection(link, end.rejection, end.atOnceSpent);
    // The relay lost (dropped, unreachable, silent, restarting): for a desktop reading only the
    // relay it is the far side, and the outage may be the phone system's, which forgets every
    // token; a token refused once it is back is then not another computer's doing
    // (token-lifecycle.ts connectionLost, sign-in-guard.ts). Not a 4002 or 4003: the relay's words.
    if (end.code !== CloseCode.reauthenticate && end.code !== CloseCode.revoked)
      this.deps.tokens.connectionLost?.();
    const failure = end.error ? networkFault(end.error, this.url, 'relay') : undefined;
    if (failure) {
      // A proxy or certificate fault, named: needs a person, or (an unreachable proxy) the back-off.
      const fault = describeError(failure);
      this.logger.warn('relay socket failed', { fault: fault.fault, error: failure });
      return faultVerdict(fault);
    }
    // The socket never opened: say where it went and what happened (refused, no such host...).
    const unreachable =
      end.error && !end.wasReady ? unreachableFault(end.error, this.url, 'relay') : undefined;
    if (unreachable) {
      this.logger.warn('relay not reached', { error: unreachable });
      return faultVerdict(describeError(unreachable));
    }
    this.logger.info('relay socket closed', { code: end.code });
    if (end.code === CloseCode.revoked)
      return { next: 'attention', status: signInStatus('access-revoked') };
    if (end.code === CloseCode.reauthenticate) {
      // A single sign-on session ends at the relay's maximum age after its ID token was issued:
      // reconnect with a renewed token (Auth0's, valid 10 h, would be refused as too old).
      if (this.signInGrant === link.grant.value) this.deps.tokens.invalidate(link.grant.value);
      return { next: 'at-once' };
    }
    if (end.foundDead && end.wasReady)
      return {
        next: 'back-off',
        status: saidStatus('connecting', [phrase('status.relay-went-silent')]),
      };
    if (end.code === CloseCode.badRequest && !end.wasReady && /cursor/i.test(end.reason)) {
      if (this.cursor) {
        // The relay refused the cursor in our hello: it would refuse every hello that carries it.
        this.logger.warn('the relay refused the hello; resuming without a cursor (starting live)');
        this.cursor = null;
      }
    }
    // 1012: the relay restarts; everyone reconnects, so spread them (jitter) but start small.
    return { next: 'back-off', status: saidStatus('offline', [phrase('status.relay-dropped')]) };
  }

  private judgeRejection(
    link: Link,
    rejection: HandshakeRejection,
    atOnceSpent: boolean,
  ): Verdict<ConnectionStatus> {
    const { status, errcode } = rejection;
    this.logger.warn('relay refused the connection', { status, errcode });
    if (errcode === RELAY_ERRCODE.revoked)
      return { next: 'attention', status: signInStatus('access-revoked') };
    if (errcode === RELAY_ERRCODE.notMapped)
      return { next: 'attention', status: signInStatus('not-mapped') };
    if (errcode === RELAY_ERRCODE.otherAccount)
      return { next: 'attention', status: signInStatus('other-account') };
    if (errcode === RELAY_ERRCODE.signInRequired && atOnceSpent)
      // Refused again with a credential just renewed (or a device the relay no longer knows).
      return {
        next: 'attention',
        status: signInStatus(
          link.grant.value.startsWith('sprd_') ? 'not-enrolled' : 'sign-in-expired',
        ),
      };
    if (status === 401 || errcode === ERRCODE.tokenExpired) {
      this.deps.tokens.invalidate(link.grant.value);
      return {
        next: 'at-once',
        ifWaiting: saidStatus('offline', [
          phrase('status.relay-refused', { status: String(status) }),
        ]),
      };
    }
    if (status === 403)
      return {
        next: 'attention',
        status: faultStatus(
          'needs-attention',
          describeErrcode(errcode ?? ERRCODE.insufficientScope),
        ),
      };
    if (status === 404)
      return {
        next: 'attention',
        status: saidStatus(
          'needs-attention',
          [phrase('status.relay-no-tenant')],
          [phrase('status.relay-no-tenant-remedy')],
        ),
      };
    return {
      next: 'back-off',
      status: saidStatus('offline', [phrase('status.relay-refused', { status: String(status) })]),
    };
  }
}
