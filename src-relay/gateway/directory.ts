/**
 * Gateway mode's e-mail directory (the `EmailDirectory` seam of users/oidc.ts): a signed-in user's
 * extensions from the phone system's own extension list (`email_addr`), asked with the relay's
 * credential, so single sign-on needs neither a relay user nor a mapping in the config for each
 * agent. The list is kept `ttlMs` (5 minutes) and fetched again after; one fetch at a time, and a
 * failed fetch is not remembered (the sign-in answers 503, "retry later").
 */
import type { Clock } from '../../src-shared/process/clock.ts';
import type { Extension } from '../../src-shared/api/wire.ts';
import type { EmailDirectory } from '../users/oidc.ts';
import type { GatewayUpstream } from './upstream.ts';
import { canonicalEmail } from '../../src-shared/rules/email-address.ts';

const DEFAULT_TTL_MS = 5 * 60_000;

/** What the directory needs of a tenant's upstream: its client, and a token to ask with. */
type DirectorySource = Pick<GatewayUpstream, 'client'> & {
  tokens: Pick<GatewayUpstream['tokens'], 'get'>;
};

interface Cached {
  byEmail: Map<string, string[]>;
  at: number;
}

export class GatewayDirectory implements EmailDirectory {
  private readonly cache = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<Cached>>();

  private readonly upstreams: ReadonlyMap<string, DirectorySource>;
  private readonly clock: Clock;
  private readonly ttlMs: number;

  constructor(
    upstreams: ReadonlyMap<string, DirectorySource>,
    clock: Clock,
    ttlMs = DEFAULT_TTL_MS,
  ) {
    this.upstreams = upstreams;
    this.clock = clock;
    this.ttlMs = ttlMs;
  }

  async extensionsFor(tenant: string, email: string): Promise<string[] | null> {
    const upstream = this.upstreams.get(tenant);
    if (!upstream) return null;
    let cached = this.cache.get(tenant);
    if (!cached || this.clock.monotonic() - cached.at >= this.ttlMs) {
      let fetching = this.pending.get(tenant);
      if (!fetching) {
        fetching = this.fetch(upstream).finally(() => this.pending.delete(tenant));
        this.pending.set(tenant, fetching);
      }
      cached = await fetching;
      this.cache.set(tenant, cached);
    }
    const want = canonicalEmail(email);
    return want === null ? null : (cached.byEmail.get(want) ?? null);
  }

  private async fetch(upstream: DirectorySource): Promise<Cached> {
    const token = await upstream.tokens.get();
    const list: Extension[] = await upstream.client.listExtensions(token.value);
    const byEmail = new Map<string, string[]>();
    for (const e of list) {
      const key = e.email ? canonicalEmail(e.email) : null;
      if (key) byEmail.set(key, [...(byEmail.get(key) ?? []), e.number]);
    }
    return { byEmail, at: this.clock.monotonic() };
  }
}
