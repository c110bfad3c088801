/**
 * At most two live tokens per tenant whatever the number of relay instances (issue 40 item 2).
 *
 * A lease holder (lease.ts) that ends cleanly revokes its tokens (upstream.ts stop()); one killed
 * (SIGKILL, a crash, the host lost) or frozen past its term cannot, and its access token stays
 * valid until it expires (30 minutes on a Yeastar P-Series, which allows 8 per API application):
 * a crash-looping holder would use the application's tokens up. So each term writes down, in
 * Redis beside the lease (the tenant's slot), every access token it is given, before it uses it;
 * a token it revokes itself is struck off; and a new holder, on taking the lease and before it
 * signs in, revokes (`del_token`, sign-in-guard.ts revokeTokens) every still-valid token earlier
 * terms left, and strikes them off. A killed holder's token then lives only until the takeover
 * (about 1.2 leases), and the phone system sees at most the holder's token and, for the seconds a
 * rotation takes, its successor: 2.
 *
 * The tokens are secrets, kept sealed: each is written encrypted (AES-256-GCM) under a key derived
 * (HKDF-SHA256) from the tenant's API secret, which Redis never holds, and named by an HMAC of it.
 * Reading Redis therefore gives no token; whoever also holds the API secret can sign in anyway.
 * A token read back is registered with the log scrubber at once; none is ever logged.
 *
 * Where the phone system cannot revoke (the standard service: no `del_token`) nothing is written
 * (GatewayTokens records only with a client that can revoke) and nothing is swept: a killed
 * holder's token lives to its end.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger, SecretRegistry } from '../../src-shared/process/log.ts';
import {
  REVOKE_LIMIT_MS,
  revokeTokens,
  type TokenRevoker,
} from '../../src-shared/api/sign-in-guard.ts';
import type { TokenService } from '../../src-shared/api/token-lifecycle.ts';

/** Where the terms' tokens are written: the Redis store (redis-store.ts), a hash per tenant. */
export interface TermTokenBackend {
  /**
   * Sets `field` to `value` in the tenant's list, kept at least until `expiresAt` (ms since the
   * epoch); entries whose time (the number `value` starts with) is past `now` are dropped.
   */
  recordTermToken(
    tenant: string,
    field: string,
    value: string,
    expiresAt: number,
    now: number,
  ): Promise<void>;
  listTermTokens(tenant: string): Promise<Record<string, string>>;
  forgetTermTokens(tenant: string, fields: readonly string[]): Promise<void>;
}

export function isTermTokenBackend(store: object): store is TermTokenBackend {
  return 'recordTermToken' in store && 'listTermTokens' in store;
}

export interface TermTokensDeps {
  tenant: string;
  /** This term: the lease's token (lease.ts: owner and fencing number). */
  term: string;
  backend: TermTokenBackend;
  /** The tenant's API secret: the sealing key is derived from it. */
  apiSecret: string;
  clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>;
  logger: Logger;
  secrets: SecretRegistry;
  /** How long the takeover's revocations may take (REVOKE_LIMIT_MS by default). */
  limitMs?: number;
}

/** Tokens this term remembers having written (a few: one, two during a rotation). */
const RECORDED_KEPT = 8;

export class TermTokens {
  private readonly deps: TermTokensDeps;
  private readonly sealKey: Buffer;
  private readonly nameKey: Buffer;
  private readonly recorded = new Map<string, Promise<void>>();

  constructor(deps: TermTokensDeps) {
    this.deps = deps;
    const derive = (info: string) =>
      Buffer.from(
        hkdfSync('sha256', deps.apiSecret, 'screenpop-relay', `${info}:${deps.tenant}`, 32),
      );
    this.sealKey = derive('term-tokens-seal');
    this.nameKey = derive('term-tokens-name');
  }

  /**
   * Writes down a token this term was given, once (callers await it before using the token).
   * Never rejects: Redis failing is logged, and the token used anyway (the lease is then lost
   * within a term, and the token revoked at this term's stop).
   */
  record(token: string, expiresAt: number): Promise<void> {
    const known = this.recorded.get(token);
    if (known) return known;
    const { backend, tenant, term, clock, logger } = this.deps;
    const now = clock.now();
    const done =
      expiresAt <= now
        ? Promise.resolve()
        : backend
            .recordTermToken(
              tenant,
              this.name(token),
              `${Math.floor(expiresAt)}|${term}|${this.seal(token)}`,
              expiresAt,
              now,
            )
            .catch((error: unknown) => logger.warn('upstream token not written down', { error }));
    this.recorded.set(token, done);
    for (const old of this.recorded.keys()) {
      if (this.recorded.size <= RECORDED_KEPT) break;
      this.recorded.delete(old);
    }
    return done;
  }

  /** Strikes off tokens revoked. Never rejects. */
  async forget(tokens: readonly string[]): Promise<void> {
    if (tokens.length === 0) return;
    const { backend, tenant, logger } = this.deps;
    await backend
      .forgetTermTokens(
        tenant,
        tokens.map((t) => this.name(t)),
      )
      .catch((error: unknown) => logger.warn('revoked upstream tokens not struck off', { error }));
  }

  /**
   * The service for this term's token lifecycle: the same, and a token it revoked is struck off
   * (one whose `del_token` failed stays, for the next holder to revoke).
   */
  revoking(service: TokenService): TokenService {
    return {
      get canRevoke() {
        return service.canRevoke;
      },
      refreshToken: (refreshToken, at) => service.refreshToken(refreshToken, at),
      revokeToken: async (token, timeoutMs) => {
        await service.revokeToken(token, timeoutMs);
        await this.forget([token]);
      },
    };
  }

  /**
   * At the start of this term, before its first sign-in: revokes every still-valid token that
   * earlier terms wrote down, then strikes them off (a `del_token` that failed too: the token
   * then expires by itself). Returns how many were found. Never rejects.
   */
  async revokeEarlier(revoker: TokenRevoker): Promise<number> {
    if (!revoker.canRevoke) return 0;
    const { backend, tenant, term, clock, logger, secrets } = this.deps;
    let entries: Record<string, string>;
    try {
      entries = await backend.listTermTokens(tenant);
    } catch (error) {
      logger.warn('earlier upstream tokens not read', { error });
      return 0;
    }
    const now = clock.now();
    const fields: string[] = [];
    const tokens: string[] = [];
    for (const [field, value] of Object.entries(entries)) {
      const first = value.indexOf('|');
      const last = value.lastIndexOf('|');
      if (first < 0 || last <= first || value.slice(first + 1, last) === term) continue;
      fields.push(field);
      const token = Number(value.slice(0, first)) > now ? this.open(value.slice(last + 1)) : null;
      if (token !== null) {
        secrets.add(token);
        tokens.push(token);
      }
    }
    if (fields.length === 0) return 0;
    logger.info('revoking the upstream tokens earlier terms left', {
      tokens: tokens.length,
      expiredOrUnreadable: fields.length - tokens.length,
    });
    await revokeTokens(revoker, tokens, {
      clock,
      logger,
      limitMs: this.deps.limitMs ?? REVOKE_LIMIT_MS,
    });
    await backend
      .forgetTermTokens(tenant, fields)
      .catch((error: unknown) => logger.warn('revoked upstream tokens not struck off', { error }));
    // Revoked, and no request of them left (revokeTokens logs counts only): the scrub list stays
    // bounded however many takeovers this instance makes.
    for (const token of tokens) secrets.remove(token);
    return tokens.length;
  }

  private name(token: string): string {
    return createHmac('sha256', this.nameKey).update(token).digest('base64url');
  }

  private seal(token: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The token sealed in `box`, or null (another API secret sealed it, or it is not ours). */
  private open(box: string): string | null {
    try {
      const raw = Buffer.from(box, 'base64url');
      if (raw.length < 29) return null;
      const decipher = createDecipheriv('aes-256-gcm', this.sealKey, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
