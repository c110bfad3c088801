import { framedBatch, type ClientSession, type FramedBatch } from './client-session.ts';
import { TenantFanout } from './fanout.ts';
import type { StoredEvent } from './store/types.ts';
import { FrameCache } from './ws-frames.ts';

/** Every connected session of this relay instance, by tenant, with each tenant's fan-out index. */
export class SessionRegistry {
  /** Frames of recent events, shared by every session (live and replaying). */
  readonly frames = new FrameCache();

  private readonly byTenant = new Map<string, TenantFanout<FramedBatch, ClientSession>>();

  /** The tenant's fan-out (created on first use). */
  fanout(tenant: string): TenantFanout<FramedBatch, ClientSession> {
    let fanout = this.byTenant.get(tenant);
    if (!fanout) this.byTenant.set(tenant, (fanout = new TenantFanout()));
    return fanout;
  }

  /**
   * Events the store published (in order per tenant): each tenant's run is framed once and offered
   * to the sessions of that tenant that may want it.
   */
  publish(events: readonly StoredEvent[]): void {
    let start = 0;
    for (let i = 1; i <= events.length; i++) {
      if (i < events.length && events[i]!.tenant === events[start]!.tenant) continue;
      const run = start === 0 && i === events.length ? events : events.slice(start, i);
      this.byTenant.get(events[start]!.tenant)?.publish(framedBatch(run, this.frames));
      start = i;
    }
  }

  count(): number {
    let n = 0;
    for (const fanout of this.byTenant.values()) n += fanout.size;
    return n;
  }

  /** The tenant's sessions of one user (organisation mode). */
  *ofUser(tenant: string, user: string): IterableIterator<ClientSession> {
    const fanout = this.byTenant.get(tenant);
    if (!fanout) return;
    for (const s of fanout.sessions()) if (s.identity?.user === user) yield s;
  }

  *all(): IterableIterator<ClientSession> {
    for (const fanout of this.byTenant.values()) yield* fanout.sessions();
  }
}
