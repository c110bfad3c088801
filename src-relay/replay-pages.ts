import { Semaphore } from './semaphore.ts';
import type { EventStore, ReadResult } from './store/types.ts';

/**
 * Replay pages, read from the store on behalf of every session: at most 4 reads at once, and a
 * full page asked for again while it is being read, or within a second after, is the same page.
 * When a relay restarts, hundreds of desktops resume from about the same cursor: they share one
 * read of each page instead of each pulling its own copy of the backlog out of Redis (which cost
 * hundreds of MB of short-lived memory). Pages kept are bounded by the bytes of their bodies.
 *
 * Only a full page (`limit` events) is shared: it holds the same events whenever it is read. A
 * shorter one is the end of the stream as it was when read; a session that came later, and missed
 * what was appended since, reads its own.
 */
export class ReplayPages {
  private readonly reads = new Semaphore(4);
  private readonly pages = new Map<string, { result: Promise<ReadResult>; bytes: number }>();
  private bytes = 0;
  private readonly store: EventStore;
  private readonly keepMs: number;
  private readonly maxBytes: number;

  constructor(store: EventStore, options: { keepMs?: number; maxBytes?: number } = {}) {
    this.store = store;
    this.keepMs = options.keepMs ?? 1_000;
    this.maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  }

  async read(tenant: string, after: string, limit: number): Promise<ReadResult> {
    const key = `${tenant} ${after} ${limit}`;
    const kept = this.pages.get(key);
    if (kept) {
      const page = await kept.result.catch(() => null);
      if (page && page.events.length === limit) return page;
      return this.reads.run(() => this.store.readAfter(tenant, after, limit));
    }
    const entry = {
      result: this.reads.run(() => this.store.readAfter(tenant, after, limit)),
      bytes: 0,
    };
    this.pages.set(key, entry);
    entry.result.then(
      (page) => {
        if (this.pages.get(key) !== entry) return;
        if (page.events.length < limit) return this.forget(key, entry);
        for (const e of page.events) entry.bytes += e.body.length;
        this.bytes += entry.bytes;
        while (this.bytes > this.maxBytes && this.pages.size > 1)
          this.forget(this.pages.keys().next().value!);
        setTimeout(() => this.forget(key, entry), this.keepMs).unref();
      },
      () => this.forget(key, entry), // a failed read is not kept
    );
    return entry.result;
  }

  private forget(key: string, only?: { bytes: number }): void {
    const entry = this.pages.get(key);
    if (!entry || (only && entry !== only)) return;
    this.pages.delete(key);
    this.bytes -= entry.bytes;
  }
}
