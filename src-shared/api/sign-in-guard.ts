/**
 * How often a client may sign in (get_token) with one API application, and what it says when it
 * stops: the one rule for "one API application, many computers" (issue 32 item 3;
 * docs/phone-systems/yeastar-p-series.md section 2).
 *
 * Two readings of a PBX are covered:
 * - **The token limit.** *Get Access Token* allows 8 valid tokens per application; past that the
 *   PBX refuses a new one (errcode 60002, or a code the guide does not explain: the errcode table
 *   names both, `ys-token-limit` and `ys-token-limit-likely`). A new token comes only when one
 *   expires (30 minutes) or is revoked, so asking again within seconds only adds refusals (and
 *   failed logins can get an address blocked): the refusal holds every sign-in for `holdMs`.
 * - **Each sign-in ends the others.** A public integration's notes report a P-Series where "each
 *   new get_token call invalidates previously issued tokens for the same client". Two computers on
 *   one application then knock each other off: a token is refused (10004) minutes after it was
 *   issued, the computer signs in again, which ends the other's token, and so on (9 sign-ins in
 *   60 s were seen). A token refused younger than `freshMs`, `freshRefusals` times within
 *   `windowMs`, is that pattern: sign-ins are held, and the words say that another computer uses
 *   the same API application, with the remedy. A PBX that restarts forgets every token too: its
 *   client does not report a token refused after it lost the connection (token-lifecycle.ts
 *   `connectionLost`), so restarts are not read as another computer.
 * And whatever the cause, no more than `maxSignIns` tokens are taken within `windowMs`.
 *
 * Refreshing a token (refresh_token) is not a sign-in: only get_token is counted and held. The
 * guard is plain bookkeeping on the injected clock, bounded (a few times kept), never throws.
 *
 * Its client is the one token lifecycle (token-lifecycle.ts), for the desktop's TokenManager
 * (src-main/core/api/token-manager.ts) and the relay's gateway (src-relay/gateway/upstream.ts
 * GatewayTokens), which also holds after its key or address
 * was refused (`holdRefusedLogin`: a relay has nobody to ask). Both give their tokens back with
 * `revokeTokens` below when they end.
 */
import type { Clock, TimerHandle } from '../process/clock.ts';
import type { Logger } from '../process/log.ts';
import { isServiceError, needsUser, ServiceError, type FaultId } from './service-errors.ts';

export interface SignInPolicy {
  /** The window over which sign-ins and refused fresh tokens are counted. */
  windowMs: number;
  /** Tokens taken with get_token within the window, at most. */
  maxSignIns: number;
  /** A token refused younger than this was taken away, not worn out. */
  freshMs: number;
  /** This many such refusals within the window: another computer signs in with the same application. */
  freshRefusals: number;
  /** How long sign-ins are held once one of the above is seen. */
  holdMs: number;
  /**
   * Also hold `holdMs` after get_token refused the key or the address (10001, 10004): for a
   * client with nobody to ask (the relay's gateway), which would otherwise sign in at each of its
   * stream's reconnects, and repeated failed logins can get an address blocked. A desktop asks
   * its user instead (needs attention) and leaves this off.
   */
  holdRefusedLogin?: boolean;
}

/**
 * The numbers. A desktop signs in once, then refreshes every 25 minutes and signs in again only
 * when its refresh token (24 hours) is refused: more than 3 sign-ins in 10 minutes is never normal.
 * A token 3 minutes old, refused twice in 10 minutes, is not a clock or a restart: something ends
 * it. 5 minutes of hold: long enough that two computers do not fight (one keeps its token and
 * works), short enough that the held one comes back soon after the other leaves.
 */
export const SIGN_IN_POLICY: SignInPolicy = {
  windowMs: 10 * 60_000,
  maxSignIns: 3,
  freshMs: 3 * 60_000,
  freshRefusals: 2,
  holdMs: 5 * 60_000,
};

/** Faults of a refused get_token that mean "no token now": held, never asked again at once. */
const LIMIT_FAULTS: ReadonlySet<FaultId> = new Set<FaultId>([
  'ys-token-limit',
  'ys-token-limit-likely',
]);

export class SignInGuard {
  private readonly clock: Pick<Clock, 'now'>;
  private readonly policy: SignInPolicy;
  private signIns: number[] = [];
  private refusals: number[] = [];
  /** When a fresh token was last refused (decides the words of a held sign-in); -Infinity: never. */
  private lastTakenAway = -Infinity;
  private held: { until: number; error: ServiceError } | null = null;

  constructor(clock: Pick<Clock, 'now'>, policy: SignInPolicy = SIGN_IN_POLICY) {
    this.clock = clock;
    this.policy = policy;
  }

  /**
   * Before a get_token: null when it may go, else the error to answer instead (its
   * `retryAfterMs` is what is left of the hold, so a network coming back does not end it).
   */
  beforeSignIn(): ServiceError | null {
    const now = this.clock.now();
    this.prune(now);
    if (this.held && now < this.held.until) return this.heldError(now);
    this.held = null;
    if (this.refusals.length >= this.policy.freshRefusals) {
      this.refusals = [];
      return this.hold(now, 'shared-application');
    }
    if (this.signIns.length >= this.policy.maxSignIns)
      return this.hold(
        now,
        now - this.lastTakenAway < this.policy.windowMs ? 'shared-application' : 'sign-ins-held',
      );
    return null;
  }

  /** get_token answered a token. */
  signedIn(): void {
    const now = this.clock.now();
    this.prune(now);
    this.signIns.push(now);
    this.signIns = this.signIns.slice(-this.policy.maxSignIns);
  }

  /**
   * get_token was refused. A refusal meaning "no more tokens now" (the token limit) holds
   * sign-ins; returns how long (0 for any other refusal).
   */
  refusedSignIn(error: ServiceError): number {
    const held =
      LIMIT_FAULTS.has(error.fault) || (this.policy.holdRefusedLogin && needsUser(error.kind));
    if (!held) return 0;
    const now = this.clock.now();
    this.held = { until: now + this.policy.holdMs, error };
    return this.policy.holdMs;
  }

  /**
   * One get_token under the rule: refused at once while held; counted when it answers; a refusal
   * that holds (the token limit, a refused key for a relay) is answered as the hold, with what is
   * left of it. `take` is the call itself.
   */
  async signIn<T>(take: () => Promise<T>): Promise<T> {
    const held = this.beforeSignIn();
    if (held) throw held;
    try {
      const answer = await take();
      this.signedIn();
      return answer;
    } catch (err) {
      if (isServiceError(err) && this.refusedSignIn(err) > 0) throw this.beforeSignIn() ?? err;
      throw err;
    }
  }

  /** The far side refused a token (10004, 401) that was `ageMs` old. */
  tokenRefused(ageMs: number): void {
    if (ageMs < 0 || ageMs >= this.policy.freshMs) return;
    const now = this.clock.now();
    this.prune(now);
    this.lastTakenAway = now;
    this.refusals.push(now);
    this.refusals = this.refusals.slice(-this.policy.freshRefusals);
  }

  /** New credentials, or the user asks to try again now: start counting afresh. */
  reset(): void {
    this.signIns = [];
    this.refusals = [];
    this.lastTakenAway = -Infinity;
    this.held = null;
  }

  private hold(now: number, fault: 'shared-application' | 'sign-ins-held'): ServiceError {
    const minutes = Math.round(this.policy.windowMs / 60_000);
    const error = new ServiceError({
      kind: 'rate-limit',
      fault,
      message:
        fault === 'shared-application'
          ? 'sign-in held: tokens were refused minutes after they were issued; another computer signs in with the same API application'
          : `sign-in held: ${this.signIns.length} sign-ins within ${minutes} minutes`,
    });
    this.held = { until: now + this.policy.holdMs, error };
    return this.heldError(now);
  }

  private heldError(now: number): ServiceError {
    const { until, error } = this.held!;
    return new ServiceError({
      kind: error.kind,
      fault: error.fault,
      message: error.message,
      retryAfterMs: until - now,
      ...(error.errcode !== undefined && { errcode: error.errcode }),
      ...(error.httpStatus !== undefined && { httpStatus: error.httpStatus }),
    });
  }

  private prune(now: number): void {
    const from = now - this.policy.windowMs;
    this.signIns = this.signIns.filter((t) => t > from);
    this.refusals = this.refusals.filter((t) => t > from);
  }
}

/**
 * How long giving tokens back may take when a connection ends. Below the shortest time the
 * desktop's quit sequence allows (2 s at shutdown, quit-sequence.ts), and a small part of the
 * relay's drain: a PBX that does not answer never holds a quit or a stop; a token not revoked
 * simply expires (30 minutes on a Yeastar).
 */
export const REVOKE_LIMIT_MS = 1_500;

/** What revoking needs of the service client (src-shared/api/service-client.ts). */
export interface TokenRevoker {
  readonly canRevoke: boolean;
  revokeToken(accessToken: string, timeoutMs?: number): Promise<void>;
}

/**
 * Revokes access tokens (`del_token`, where the phone system has it) so that they stop counting
 * against the application's 8, all of them within `limitMs` on the injected clock. Never
 * rejects; logs how it went (counts only, never a token).
 */
export async function revokeTokens(
  client: TokenRevoker,
  tokens: readonly string[],
  deps: { clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>; logger: Logger; limitMs: number },
): Promise<void> {
  if (!client.canRevoke || tokens.length === 0) return;
  const { clock, logger, limitMs } = deps;
  let timer: TimerHandle | undefined;
  const limit = new Promise<'late'>((resolve) => {
    timer = clock.setTimeout(() => resolve('late'), limitMs);
  });
  const revoked = Promise.allSettled(tokens.map((t) => client.revokeToken(t, limitMs)));
  const outcome = await Promise.race([revoked, limit]);
  clock.clearTimeout(timer);
  if (outcome === 'late')
    logger.info('tokens not revoked in time; they expire by themselves', { limitMs });
  else {
    const failed = outcome.filter((o) => o.status === 'rejected').length;
    logger.info('tokens revoked', { revoked: tokens.length - failed, failed });
  }
}
