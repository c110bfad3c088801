import type { Clock } from '../../../src-shared/process/clock.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import type { CreateSocket } from '../../../src-shared/stream/socket.ts';
import type { Words } from '../../../src-shared/i18n/phrase.ts';
import type { StreamTuning, WakeReason } from '../../../src-shared/stream/stream-engine.ts';
import type { FaultId } from '../../../src-shared/api/service-errors.ts';

/**
 * Contracts between the pieces of the event pipeline. They are shared by the direct WebSocket
 * source (src-main/core/events), the webhook-relay source (src-main/core/relay-client) and the
 * token manager (src-main/core/api), so that each can be built and tested on its own.
 */

import type { ConnectionState } from '../../../src-shared/ui/connection-state.ts';
export type { ConnectionState } from '../../../src-shared/ui/connection-state.ts';

export interface ConnectionStatus {
  state: ConnectionState;
  /** Plain-words reason, safe to show (no secrets). */
  reason?: string;
  /** What the user can do about it (the errcode's remedy). */
  remedy?: string;
  errcode?: number;
  /**
   * The reason and remedy as catalogue phrases (src-shared/i18n/phrase.ts), for the edge to say
   * in the user's language; `reason` and `remedy` are their English (logs, the runner's JSON).
   */
  words?: { reason?: Words; remedy?: Words };
  /** Which fault of service-errors.ts this is, when it is one (organisation mode: sign in again). */
  fault?: FaultId;
}

/** A bearer access token and the wall-clock time (ms since epoch) at which it stops working. */
export interface AccessToken {
  value: string;
  expiresAt: number;
}

/** Where event sources get their credential. The token manager implements it. */
export interface TokenSource {
  /** A token valid now (refreshed or re-issued as needed). Rejects with a typed service error. */
  getToken(): Promise<AccessToken>;
  /** The service said this token is expired or unknown (10002): never hand it out again. */
  invalidate(value: string): void;
  /**
   * The connection ended without the service saying the token was refused (dropped, closed,
   * unreachable): a restart forgets every token, so a refusal after it is not another computer
   * taking the token away (sign-in-guard.ts). Absent where signing in is not counted.
   */
  connectionLost?(): void;
}

/** What both sources take besides their own settings (the direct WebSocket's, the relay's). */
export interface StreamSourceDeps extends StreamTuning {
  tokens: TokenSource;
  clock: Clock;
  logger?: Logger;
  /**
   * The socket factory: NetTransport's (net/transport.ts), so that the socket goes through the
   * proxy and trusts the CAs the settings name; tests pass a scripted far side. Required: no
   * source can fall back on a plain WebSocket that bypasses both.
   */
  createSocket: CreateSocket;
  userAgent?: string;
  /** The source's name in the combined status ("relay: ..."). */
  name?: string;
}

/** Why a source should reconnect at once instead of waiting for its back-off timer. */
export type { WakeReason };

/**
 * A stream of event envelopes (the direct WebSocket, the webhook relay). Frames are handed on as
 * the raw JSON text, untouched: parsing, validation and dedupe happen once, after the merge point.
 */
export interface EventSource {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
  /** An OS hint (resume, network back, wall-clock jump) that the connection may be dead. */
  wake(reason: WakeReason): void;
  onFrame(listener: (text: string, receivedAt: number) => void): () => void;
  /**
   * Every change of this source's status from now on. The status as it is now is not replayed to
   * a new listener: read it with status(). (StatusHolder in status.ts keeps this promise.)
   */
  onStatus(listener: (status: ConnectionStatus) => void): () => void;
  /** The status now (`offline`, "Not started.", before start()). */
  status(): ConnectionStatus;
}
