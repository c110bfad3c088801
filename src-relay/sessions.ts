import type { ClientSession } from './client-session.ts';
import { TenantFanout } from './fanout.ts';
import type { StoredEvent } from './store/types.ts';

/** Every connected session of this relay instance, by tenant, with each tenant's fan-out index. */
export class SessionRegistry {
  private readonly byTenant = new Map<string, TenantFanout<ClientSession>>();

  /** The tenant's fan-out (created on first use). */
  fanout(tenant: string): TenantFanout<ClientSession> {
    let fanout = this.byTenant.get(tenant);
    if (!fanout) this.byTenant.set(tenant, (fanout = new TenantFanout()));
    return fanout;
  }

  /** An event the store published: offered to the sessions of its tenant that may want it. */
  publish(event: StoredEvent): void {
    this.byTenant.get(event.tenant)?.publish(event);
  }

  count(): number {
    let n = 0;
    for (const fanout of this.byTenant.values()) n += fanout.size;
    return n;
  }

  *all(): IterableIterator<ClientSession> {
    for (const fanout of this.byTenant.values()) yield* fanout.sessions();
  }
}
