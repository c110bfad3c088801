/**
 * The one lifecycle of a token that must be renewed (issue 37 item 1): the desktop's service token
 * (src-main/core/api/token-manager.ts), the relay gateway's (src-relay/gateway/upstream.ts) and the
 * organisation's ID token (src-main/core/org/org-token-source.ts) are its users. It holds:
 *
 * - the current pair, handed out while more than the renewal margin is left of it (the margin:
 *   `marginMs`, but never more than `marginShare` of the token's life, so that a short-lived
 *   token does not look stale from the start and renew in a loop);
 * - single flight: however many callers ask while a token is being obtained, one request is made
 *   and all of them get its answer; an answer for credentials dropped meanwhile is not kept;
 * - refresh, else sign in: the refresh token while more than TOKEN_RENEW_MARGIN_MS is left of it,
 *   and a sign-in only when there is none or it was refused (service-errors.ts refreshRefused);
 * - sign-ins under the one rule of sign-in-guard.ts (its policy is the user's: the relay also
 *   holds a refused login, `holdRefusedLogin`, which is the hold after a refusal);
 * - the secrets: every token is registered in the SecretRegistry when it arrives, and the tokens
 *   a newer pair replaced are retired from it after RETIRED_SECRETS_KEPT generations (they may
 *   still show up in a late log line meanwhile): the scrub list stays bounded however long the
 *   process runs;
 * - revocation: a replaced access token that is still valid is revoked (`del_token`, where the
 *   phone system has it) at once, or once the user says nothing runs on it any more
 *   (`settled()`), and every token held at `drop()`, within a time limit.
 *
 * Plain bookkeeping on the injected clock; what a token is obtained with (the credential store,
 * the service or provider) is the user's `TokenOperations`.
 */
import type { TokenPair } from './wire.ts';
import type { Clock } from '../process/clock.ts';
import { Generation } from '../kit/generation.ts';
import { silentLogger, type Logger, type SecretRegistry } from '../process/log.ts';
import { refreshRefused, serviceLost } from './service-errors.ts';
import {
  REVOKE_LIMIT_MS,
  revokeTokens,
  SignInGuard,
  type SignInPolicy,
  type TokenRevoker,
} from './sign-in-guard.ts';

/**
 * One minute: a refresh token with less left is not used (sign in instead), the relay's and the
 * organisation's tokens are renewed that far before their end, and the stream engine rotates its
 * connection that far before its token ends (stream-engine.ts rotateLeadMs), so that the rotation,
 * not an earlier ask, takes the new token.
 */
export const TOKEN_RENEW_MARGIN_MS = 60_000;
/** Replaced tokens stay registered as secrets for this many generations, then are forgotten. */
export const RETIRED_SECRETS_KEPT = 8;
/** Replaced access tokens waiting to be revoked, at most (the oldest is revoked beyond). */
const REPLACED_KEPT = 4;

/** A token and what renews it: the service's pair, or another token with its refresh token. */
export type RenewablePair = TokenPair;

/** How a user obtains its tokens. */
export interface TokenOperations<P extends RenewablePair> {
  /** Renews with the current pair's refresh token; absent where there is no such call. */
  refresh?: (current: P) => Promise<P>;
  /** Obtains a pair from the credentials (the key and secret, a stored sign-in...). */
  signIn: () => Promise<P>;
  /** A request's pair was kept (it is the current one now). */
  obtained?: (pair: P) => void;
  /**
   * A request failed: returns what its callers get instead. `kept`: the request still belongs to
   * the current credentials (not dropped meanwhile).
   */
  failed?: (error: unknown, kept: boolean) => unknown;
}

export interface TokenLifecycleOptions {
  clock: Clock;
  secrets: SecretRegistry;
  logger?: Logger;
  /** Renew this long before the token ends (TOKEN_RENEW_MARGIN_MS by default)... */
  marginMs?: number;
  /** ...but never earlier than this share of its life (1 by default: no cap). */
  marginShare?: number;
  /** The sign-in rule (sign-in-guard.ts), or null where signing in is not the service's. */
  signIn: SignInPolicy | null;
  /** Who revokes tokens (the service client); absent: nothing is revoked. */
  revoker?: TokenRevoker;
  /** How long revoking at drop() may take (REVOKE_LIMIT_MS by default). */
  releaseLimitMs?: number;
  /**
   * A replaced access token is revoked 'at-once', or 'when-settled': once `settled()` names
   * another token (a stream still runs on it until its replacement connection is ready), else at
   * `drop()`.
   */
  revokeReplaced?: 'at-once' | 'when-settled';
  /**
   * The tokens replaced and still registered as secrets, oldest first; by default the
   * lifecycle's own. Lifecycles that follow one another on one registry (the relay gateway's
   * lease terms, each with a lifecycle of its own) pass one list, so that what a dropped one
   * retired leaves the registry RETIRED_SECRETS_KEPT generations on as well: with a list each,
   * every term's last pair stayed registered for the life of the process.
   */
  retired?: string[];
}

/** What the service client offers the lifecycle of its token pair (api/service-client.ts). */
export interface TokenService extends TokenRevoker {
  refreshToken(refreshToken: string, currentRefreshExpiresAt?: number): Promise<TokenPair>;
}

/**
 * The lifecycle of the service's own token pair (the desktop's and the relay gateway's): refreshed
 * with `refresh_token` and revoked with `del_token` by `service`, signed in by `ops.signIn`.
 */
export function serviceTokenLifecycle(
  service: TokenService,
  ops: Omit<TokenOperations<TokenPair>, 'refresh'>,
  options: Omit<TokenLifecycleOptions, 'revoker'>,
): TokenLifecycle<TokenPair> {
  return new TokenLifecycle<TokenPair>(
    { refresh: (pair) => service.refreshToken(pair.refreshToken, pair.refreshExpiresAt), ...ops },
    { ...options, revoker: service },
  );
}

interface Held {
  value: string;
  expiresAt: number;
}

export class TokenLifecycle<P extends RenewablePair> {
  private readonly ops: TokenOperations<P>;
  private readonly clock: Clock;
  private readonly secrets: SecretRegistry;
  private readonly logger: Logger;
  private readonly marginMs: number;
  private readonly marginShare: number;
  private readonly guard: SignInGuard | null;
  private readonly revoker: TokenRevoker | undefined;
  private readonly releaseLimitMs: number;
  private readonly revokeReplaced: 'at-once' | 'when-settled';
  private readonly generation = new Generation();

  private pair: P | undefined;
  /** When the current pair was asked for (its age decides whether a refusal took it away). */
  private issuedAt = 0;
  /** When the connection to the far side was last lost (`connectionLost`); -Infinity: never. */
  private lostAt = -Infinity;
  /** The current pair's margin. */
  private margin = 0;
  private inflight: Promise<P> | undefined;
  /** Access tokens a newer pair replaced, still valid, waiting to be revoked. */
  private replaced: Held[] = [];
  /** Tokens replaced, still registered as secrets (oldest first; maybe shared: `retired`). */
  private readonly retired: string[];

  constructor(ops: TokenOperations<P>, options: TokenLifecycleOptions) {
    this.ops = ops;
    this.clock = options.clock;
    this.secrets = options.secrets;
    this.logger = options.logger ?? silentLogger;
    this.marginMs = options.marginMs ?? TOKEN_RENEW_MARGIN_MS;
    this.marginShare = options.marginShare ?? 1;
    this.guard = options.signIn ? new SignInGuard(options.clock, options.signIn) : null;
    this.revoker = options.revoker;
    this.retired = options.retired ?? [];
    this.releaseLimitMs = options.releaseLimitMs ?? REVOKE_LIMIT_MS;
    this.revokeReplaced = options.revokeReplaced ?? 'at-once';
  }

  /** The current pair, whatever is left of it. */
  current(): P | undefined {
    return this.pair;
  }

  /** The current pair while more than the margin is left of it. */
  fresh(now = this.clock.now()): P | undefined {
    return this.pair && this.pair.accessExpiresAt - this.margin > now ? this.pair : undefined;
  }

  /** The current pair while more than `minMs` is left of it. */
  usable(minMs: number, now = this.clock.now()): P | undefined {
    return this.pair && this.pair.accessExpiresAt - minMs > now ? this.pair : undefined;
  }

  /** When the current pair enters its margin (undefined: no pair). */
  renewAt(): number | undefined {
    return this.pair && this.pair.accessExpiresAt - this.margin;
  }

  /** A fresh pair: the current one, or one request shared by every caller meanwhile. */
  async get(): Promise<P> {
    return this.fresh() ?? this.acquire();
  }

  /** One request in flight at a time (refresh, else sign in); every caller meanwhile shares it. */
  acquire(): Promise<P> {
    if (this.inflight) return this.inflight;
    const kept = this.generation.ticket();
    const startedAt = this.clock.now();
    const flight: Promise<P> = this.obtain()
      .then(
        (pair) => {
          if (kept()) {
            this.adopt(pair, startedAt);
            this.ops.obtained?.(pair);
          }
          return pair;
        },
        (err: unknown) => {
          if (serviceLost(err)) this.connectionLost();
          throw this.ops.failed ? this.ops.failed(err, kept()) : err;
        },
      )
      .finally(() => {
        if (this.inflight === flight) this.inflight = undefined;
      });
    this.inflight = flight;
    return flight;
  }

  /**
   * `pair` is the current one now (obtained here, or by the user's own sign-in flow): registered
   * as secrets, the one it replaced retired and revoked by the rule.
   */
  adopt(pair: P, issuedAt = this.clock.now()): void {
    const old = this.pair;
    this.secrets.add(pair.accessToken);
    this.secrets.add(pair.refreshToken);
    this.pair = pair;
    this.issuedAt = issuedAt;
    this.margin = Math.min(
      this.marginMs,
      Math.max(0, (pair.accessExpiresAt - issuedAt) * this.marginShare),
    );
    if (!old) return;
    this.retire(old, pair);
    if (old.accessToken === pair.accessToken || old.accessExpiresAt <= this.clock.now()) return;
    const value = { value: old.accessToken, expiresAt: old.accessExpiresAt };
    if (this.revokeReplaced === 'at-once') {
      void this.revoke([value]);
      return;
    }
    this.replaced.push(value);
    if (this.replaced.length > REPLACED_KEPT) void this.revoke(this.replaced.splice(0, 1));
  }

  /**
   * The far side said `value` expired or is unknown: never handed out again (the next ask
   * renews). A token refused soon after it was issued counts towards "another computer uses the
   * same application" (sign-in-guard.ts), unless the connection to the far side was lost since
   * the token was issued (`connectionLost`): a phone system that restarts forgets every token, and
   * two restarts within minutes are not a colleague's desktop. Returns whether it was the current
   * one.
   */
  invalidate(value: string): boolean {
    const pair = this.pair;
    if (!pair || pair.accessToken !== value || pair.accessExpiresAt === 0) return false;
    const ageMs = this.clock.now() - this.issuedAt;
    const afterLoss = this.lostAt >= this.issuedAt;
    this.logger.info('access token invalidated by the far side', {
      ageSec: Math.round(ageMs / 1000),
      ...(afterLoss && { afterConnectionLost: true }),
    });
    if (!afterLoss) this.guard?.tokenRefused(ageMs);
    this.pair = { ...pair, accessExpiresAt: 0 };
    return true;
  }

  /**
   * The connection to the far side ended without it saying the token was refused (closed or
   * dropped, unreachable, a 5xx): it may have restarted, which forgets every token. A token issued
   * before this and refused after it was not taken away by another computer (`invalidate`).
   */
  connectionLost(): void {
    this.lostAt = this.clock.now();
  }

  /** Something now runs on `value`: the replaced tokens it left are revoked. */
  settled(value: string): void {
    const gone = this.replaced.filter((t) => t.value !== value);
    if (gone.length === 0) return;
    this.replaced = this.replaced.filter((t) => t.value === value);
    void this.revoke(gone);
  }

  /** New credentials, or the user asks to try again now: sign-ins are counted afresh. */
  resetSignIns(): void {
    this.guard?.reset();
  }

  /** The current pair is worth nothing (its key was refused): forgotten, not revoked. */
  discard(): void {
    if (this.pair) this.retire(this.pair);
    this.pair = undefined;
  }

  /**
   * The credentials change or the connection ends: a request in flight is not kept, and every
   * token held that is still valid is revoked, within the time limit. Never rejects.
   */
  async drop(): Promise<void> {
    this.generation.bump();
    this.inflight = undefined;
    const held = [...this.replaced];
    if (this.pair)
      held.push({ value: this.pair.accessToken, expiresAt: this.pair.accessExpiresAt });
    this.replaced = [];
    this.discard();
    await this.revoke(held);
  }

  private async obtain(): Promise<P> {
    const pair = this.pair;
    const { refresh, signIn } = this.ops;
    if (refresh && pair && pair.refreshExpiresAt - TOKEN_RENEW_MARGIN_MS > this.clock.now()) {
      try {
        return await refresh(pair);
      } catch (err) {
        // Only a refused refresh token means sign in again (service-errors.ts refreshRefused).
        if (!refreshRefused(err)) throw err;
        this.logger.info('refresh token refused; signing in again', { errcode: err.errcode });
      }
    }
    // The sign-in rule holds sign-ins from a refusal on, said with what is left of the hold.
    return this.guard ? this.guard.signIn(signIn) : signIn();
  }

  private async revoke(tokens: Held[]): Promise<void> {
    if (!this.revoker) return;
    const now = this.clock.now();
    await revokeTokens(
      this.revoker,
      tokens.filter((t) => t.expiresAt > now).map((t) => t.value),
      { clock: this.clock, logger: this.logger, limitMs: this.releaseLimitMs },
    );
  }

  /** The tokens of `old` that `replacement` does not carry on: forgotten a few generations on. */
  private retire(old: P, replacement?: P): void {
    for (const t of [old.accessToken, old.refreshToken]) {
      if (
        t !== replacement?.accessToken &&
        t !== replacement?.refreshToken &&
        !this.retired.includes(t)
      )
        this.retired.push(t);
    }
    while (this.retired.length > RETIRED_SECRETS_KEPT) this.secrets.remove(this.retired.shift());
  }
}
