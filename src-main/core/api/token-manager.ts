/**
 * Keeps a valid access token at hand (docs/wire-protocol.md section 2). Callers ask for a token
 * whenever they need one; the manager decides whether to hand out the current one, refresh it, or
 * exchange the key and secret again. See README.md beside this file for the whole lifecycle.
 *
 * Rules it holds to:
 * - Expiry is judged on the WALL clock (`clock.now()`) at every getToken and on wake(): timers do not
 *   run while a laptop sleeps, so a timer never proves a token is still valid.
 * - Single flight: however many callers arrive while a token is being obtained, one request is made
 *   and all of them get its result.
 * - 10001 and 10004 (and 10003 on the token calls) stop every retry and put the manager in
 *   `needs-attention` until the user acts (credentialsChanged() or retry()): repeated failed logins
 *   can get an IP blocked.
 * - Network errors, 5xx and 429 back off exponentially with full jitter, never sooner than
 *   Retry-After; during back-off getToken rejects at once with the last error (no hammering), unless
 *   the current token is still usable.
 * - The pair, single flight, refresh-else-sign-in, the sign-in rule (src-shared/api/sign-in-guard.ts:
 *   the phone system's token limit, another computer signing in with the same API application)
 *   and retiring old tokens from the secret registry are the one token lifecycle's
 *   (src-shared/api/token-lifecycle.ts), shared with the relay's gateway and the organisation's
 *   ID token; this manager adds the desktop's health (back-off, needs attention), its timers and
 *   the keychain.
 * - Tokens are revoked (`release()`, where the phone system has `del_token`) when the connection
 *   ends: sign-out, quit, new credentials. Within a time limit: quitting never waits on a PBX
 *   that does not answer.
 */
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
import type { AccessToken, TokenSource, WakeReason } from '../events/contracts.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { SecretRegistry, silentLogger } from '../../../src-shared/process/log.ts';
import { Backoff, TOKEN_BACKOFF, type BackoffPolicy } from '../../../src-shared/kit/backoff.ts';
import {
  REVOKE_LIMIT_MS,
  SIGN_IN_POLICY,
  type SignInPolicy,
} from '../../../src-shared/api/sign-in-guard.ts';
import {
  serviceTokenLifecycle,
  type TokenLifecycle,
} from '../../../src-shared/api/token-lifecycle.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import {
  isServiceError,
  needsUser,
  ServiceError,
  serviceLost,
} from '../../../src-shared/api/service-errors.ts';
import type { ServiceClient, TokenPair } from '../../../src-shared/api/service-client.ts';
import { KeychainUnavailableError } from '../credentials/credential-store.ts';

export interface Credentials {
  key: string;
  secret: string;
}

export type TokenHealth =
  | { state: 'ok' }
  | { state: 'backoff'; error: ServiceError; retryAt: number }
  | { state: 'needs-attention'; error: ServiceError };

/**
 * Refresh this long before the access token expires. Five minutes: the WebSocket client opens its
 * replacement socket with the fresh token before the old one is closed with 4002
 * (docs/wire-protocol.md section 5), which needs a token that outlives the old one by more than a reconnect; a slow or
 * flaky network gets several back-off attempts (1 s, 2 s, 4 s ... ) before the old token dies; and a
 * desktop clock a minute or two off does not make us present a token the server already considers
 * dead. It costs one refresh per 25 minutes instead of per 30.
 */
export const DEFAULT_REFRESH_MARGIN_MS = 5 * 60 * 1000;
/** While a refresh is failing, a token with at least this much life left is still handed out. */
export const MIN_USABLE_MS = 30 * 1000;
/**
 * How long the keychain may take to hand over the secret. An unlock prompt nobody answers (the
 * user is away) would otherwise hold every caller, and "Try again", for ever; after this the
 * manager needs attention and Try again asks the keychain anew.
 */
export const DEFAULT_CREDENTIALS_TIMEOUT_MS = 2 * 60 * 1000;
/** How long revoking the tokens may take when the connection ends (sign-in-guard.ts). */
export const DEFAULT_RELEASE_LIMIT_MS = REVOKE_LIMIT_MS;

export interface TokenManagerDeps {
  client: ServiceClient;
  credentials: () => Promise<Credentials | null>;
  clock: Clock;
  logger?: Logger;
  secrets?: SecretRegistry;
  random?: () => number;
  refreshMarginMs?: number;
  backoff?: BackoffPolicy;
  credentialsTimeoutMs?: number;
  /** How often it may sign in (src-shared/api/sign-in-guard.ts); SIGN_IN_POLICY by default. */
  signIn?: SignInPolicy;
  releaseLimitMs?: number;
}

export class TokenManager implements TokenSource {
  private readonly credentials: () => Promise<Credentials | null>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly secrets: SecretRegistry;
  private readonly credentialsTimeoutMs: number;
  private readonly backoff: Backoff;
  /** The pair, single flight, refresh-else-sign-in, the sign-in rule, retiring and revoking. */
  private readonly life: TokenLifecycle<TokenPair>;

  private state: TokenHealth = { state: 'ok' };
  private refreshTimer: TimerHandle | undefined;
  private retryTimer: TimerHandle | undefined;
  private stopped = false;
  private readonly healthListeners: Emitter<[TokenHealth]>;

  constructor(deps: TokenManagerDeps) {
    const client = deps.client;
    this.credentials = deps.credentials;
    this.clock = deps.clock;
    this.logger = (deps.logger ?? silentLogger).child({ component: 'token-manager' });
    this.secrets = deps.secrets ?? new SecretRegistry();
    this.credentialsTimeoutMs = deps.credentialsTimeoutMs ?? DEFAULT_CREDENTIALS_TIMEOUT_MS;
    this.backoff = new Backoff(deps.backoff ?? TOKEN_BACKOFF, deps.random);
    this.healthListeners = new Emitter(this.logger, 'health');
    this.life = serviceTokenLifecycle(
      client,
      {
        signIn: async () => {
          const creds = await this.readKeychain();
          return client.getToken(creds.key, creds.secret);
        },
        obtained: (pair) => this.onSuccess(pair),
        failed: (err, kept) => {
          const error = this.toServiceError(err);
          if (kept) this.onFailure(error);
          return error;
        },
      },
      {
        clock: deps.clock,
        secrets: this.secrets,
        logger: this.logger,
        // Never more than a quarter of a token's life: a service (or the simulator at speed) with
        // short-lived tokens must not make every token look stale at once, which would refresh
        // in a loop.
        marginMs: deps.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS,
        marginShare: 1 / 4,
        signIn: deps.signIn ?? SIGN_IN_POLICY,
        releaseLimitMs: deps.releaseLimitMs ?? DEFAULT_RELEASE_LIMIT_MS,
        // The access token a refresh superseded stays valid until its own end: revoked with the
        // pair when the connection ends.
        revokeReplaced: 'when-settled',
      },
    );
  }

  /** A token with at least the refresh margin left (or, while refreshing fails, at least 30 s). */
  async getToken(): Promise<AccessToken> {
    if (this.state.state === 'needs-attention') throw this.state.error;
    const now = this.clock.now();
    const fresh = this.life.fresh(now);
    if (fresh) return toAccessToken(fresh);
    if (this.state.state === 'backoff' && now < this.state.retryAt) {
      const usable = this.life.usable(MIN_USABLE_MS, now);
      if (usable) return toAccessToken(usable);
      throw this.state.error;
    }
    try {
      return toAccessToken(await this.life.acquire());
    } catch (err) {
      // A refresh inside the margin failed for a passing reason: the current token still works.
      const still = this.life.usable(MIN_USABLE_MS);
      if (still && isServiceError(err) && err.retryable) return toAccessToken(still);
      throw err;
    }
  }

  async getAccessToken(): Promise<string> {
    return (await this.getToken()).value;
  }

  /** The service said this token is expired or unknown: never hand it out again. */
  invalidate(value: string): void {
    this.life.invalidate(value);
  }

  /** The stream or an API call lost the service (token-lifecycle.ts `connectionLost`). */
  connectionLost(): void {
    this.life.connectionLost();
  }

  /**
   * Runs an API call with a valid token. On 10002 the token is invalidated, refreshed once (shared
   * with every other caller doing the same) and the call retried once. 10001/10004 answered to an
   * API call put the manager in needs-attention like they do on the token calls.
   */
  async call<T>(fn: (accessToken: string) => Promise<T>): Promise<T> {
    const token = await this.getAccessToken();
    try {
      return await fn(token);
    } catch (err) {
      if (!isServiceError(err) || err.kind !== 'expired') throw this.noteCallError(err);
      this.invalidate(token);
      const fresh = await this.getAccessToken();
      try {
        return await fn(fresh);
      } catch (again) {
        if (isServiceError(again) && again.kind === 'expired') this.invalidate(fresh);
        throw this.noteCallError(again);
      }
    }
  }

  health(): TokenHealth {
    return this.state;
  }

  onHealth(listener: (h: TokenHealth) => void): () => void {
    return this.healthListeners.on(listener);
  }

  /** The user asks to try again now (after fixing the key, the allowlist or the network). */
  retry(): void {
    this.backoff.reset();
    this.life.resetSignIns();
    this.clearRetryTimer();
    this.setHealth({ state: 'ok' });
    if (!this.life.fresh()) this.background();
    else this.scheduleRefresh(); // needs-attention had cleared it
  }

  /** The key or secret changed: forget every token of the old one and start over. */
  credentialsChanged(): void {
    // The old application's tokens hold slots of its 8 (sign-in-guard.ts): give them back.
    void this.life.drop();
    this.backoff.reset();
    this.life.resetSignIns();
    this.clearRetryTimer();
    this.clearRefreshTimer();
    this.setHealth({ state: 'ok' });
    this.background();
  }

  /**
   * The machine woke, or the network came back: re-judge everything on the wall clock. When the
   * network came back ('online'), a back-off wait is over at once: the failures it counted were
   * the network's, and a phone app must not sit out the rest of a wait grown during the outage.
   * A Retry-After the service sent is still obeyed (backoff.ts: always).
   */
  wake(reason?: WakeReason): void {
    if (this.stopped || this.state.state === 'needs-attention') return;
    const now = this.clock.now();
    if (this.state.state === 'backoff') {
      this.clearRetryTimer();
      // A wait the service asked for (429 + Retry-After) is kept: the network was not its cause.
      if (reason === 'online' && this.state.error.retryAfterMs === undefined) {
        // As retry(): callers asking meanwhile join the request instead of getting the old error.
        this.backoff.reset();
        this.setHealth({ state: 'ok' });
        this.background();
      } else if (now >= this.state.retryAt) this.background();
      else this.scheduleRetry(this.state.retryAt - now);
      return;
    }
    if (this.life.current() && !this.life.fresh(now)) this.background();
    else this.scheduleRefresh();
  }

  /** No more timers. getToken still works on demand (without scheduling anything). */
  stop(): void {
    this.stopped = true;
    this.clearRefreshTimer();
    this.clearRetryTimer();
  }

  /**
   * The connection ends (sign-out, quit, new credentials): no more timers, and the tokens this
   * manager holds are revoked where the phone system can (`del_token`), so that they stop
   * counting against the application's 8. Bounded by `releaseLimitMs`; never rejects.
   */
  async release(): Promise<void> {
    this.stop();
    await this.life.drop();
  }

  // --- internals -----------------------------------------------------------------------------

  /** The credentials callback, bounded by `credentialsTimeoutMs` on the injected clock. */
  private readCredentials(): Promise<Credentials | null> {
    return new Promise((resolve, reject) => {
      const seconds = Math.round(this.credentialsTimeoutMs / 1000);
      const timer = this.clock.setTimeout(
        () => reject(new Error(`the keychain did not answer within ${seconds} s`)),
        this.credentialsTimeoutMs,
      );
      this.credentials().then(
        (creds) => {
          this.clock.clearTimeout(timer);
          resolve(creds);
        },
        (err: unknown) => {
          this.clock.clearTimeout(timer);
          reject(err);
        },
      );
    });
  }

  /** The key and secret from the keychain (the sign-in's credentials), or a ServiceError. */
  private async readKeychain(): Promise<Credentials> {
    let creds: Credentials | null;
    try {
      creds = await this.readCredentials();
    } catch (err) {
      // A keychain that names its trouble (not installed, no Secret Service...) keeps its words
      // and remedy; anything else (a time-out) is "could not be read".
      const keychain = err instanceof KeychainUnavailableError ? err : null;
      throw new ServiceError({
        kind: 'credentials',
        fault: keychain?.fault ?? 'keychain-unreadable',
        ...(keychain ? { values: keychain.values } : {}),
        message: this.secrets.scrub(
          `The API secret could not be read from the system keychain (${err instanceof Error ? err.message : String(err)})`,
        ),
      });
    }
    if (!creds || !creds.key || !creds.secret) {
      throw new ServiceError({
        kind: 'credentials',
        fault: 'no-credentials',
        message: 'No API key and secret are set up',
      });
    }
    this.secrets.add(creds.secret);
    return creds;
  }

  private onSuccess(pair: TokenPair): void {
    this.backoff.reset();
    this.clearRetryTimer();
    this.logger.info('access token obtained', {
      expiresAt: new Date(pair.accessExpiresAt).toISOString(),
      refreshExpiresAt: new Date(pair.refreshExpiresAt).toISOString(),
    });
    this.setHealth({ state: 'ok' });
    this.scheduleRefresh();
  }

  private onFailure(error: ServiceError): void {
    if (needsUser(error.kind)) {
      this.enterNeedsAttention(error);
      return;
    }
    // A held sign-in carries what is left of its hold as retryAfterMs (sign-in-guard.ts).
    const delay = this.backoff.next(error.retryAfterMs);
    const retryAt = this.clock.now() + delay;
    this.logger.warn('token request failed; backing off', {
      kind: error.kind,
      errcode: error.errcode,
      httpStatus: error.httpStatus,
      error,
      attempt: this.backoff.attempts,
      delayMs: delay,
    });
    this.setHealth({ state: 'backoff', error, retryAt });
    this.scheduleRetry(delay);
  }

  private enterNeedsAttention(error: ServiceError): void {
    this.clearRetryTimer();
    this.clearRefreshTimer();
    // Tokens of a key the service no longer accepts are worth nothing; keep them on an IP problem,
    // where they work again as soon as the allowlist is fixed.
    if (error.kind === 'credentials') this.life.discard();
    this.logger.warn('token manager needs attention', {
      kind: error.kind,
      errcode: error.errcode,
      error,
    });
    this.setHealth({ state: 'needs-attention', error });
  }

  private noteCallError(err: unknown): unknown {
    if (isServiceError(err) && (err.kind === 'credentials' || err.kind === 'ip'))
      this.enterNeedsAttention(err);
    if (serviceLost(err)) this.connectionLost();
    return err;
  }

  private background(): void {
    if (this.stopped || this.state.state === 'needs-attention') return;
    this.life.acquire().catch(() => {
      // already recorded in health by onFailure
    });
  }

  private scheduleRefresh(): void {
    this.clearRefreshTimer();
    const renewAt = this.life.renewAt();
    if (this.stopped || renewAt === undefined) return;
    const due = Math.max(0, renewAt - this.clock.now());
    this.refreshTimer = this.clock.setTimeout(() => {
      this.refreshTimer = undefined;
      this.background();
    }, due);
  }

  private scheduleRetry(delay: number): void {
    this.clearRetryTimer();
    if (this.stopped) return;
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      this.background();
    }, delay);
  }

  private clearRefreshTimer(): void {
    this.clock.clearTimeout(this.refreshTimer);
    this.refreshTimer = undefined;
  }

  private clearRetryTimer(): void {
    this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private setHealth(next: TokenHealth): void {
    if (next.state === 'ok' && this.state.state === 'ok') return;
    this.state = next;
    this.healthListeners.emit(next);
  }

  private toServiceError(err: unknown): ServiceError {
    if (isServiceError(err)) return err;
    const detail = err instanceof Error ? err.message : String(err);
    return new ServiceError({
      kind: 'network',
      message: this.secrets.scrub(`token request failed: ${detail}`),
    });
  }
}

function toAccessToken(pair: TokenPair): AccessToken {
  return { value: pair.accessToken, expiresAt: pair.accessExpiresAt };
}
