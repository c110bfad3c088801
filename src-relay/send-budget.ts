/** What the budget needs of a session: its last reported unsent bytes, and the current count. */
export interface BudgetHolder {
  reportedUnsent: number;
  unsentBytes(): number;
}

/**
 * Unsent bytes of all client sockets together, against one budget (`clients.sendBudgetBytes`).
 * Each socket is also bounded on its own (`maxBufferedBytes`), but hundreds of clients that stop
 * reading would each fill theirs: past the budget, only sockets that are keeping up (little
 * unsent) are written to; the others wait (a replay) or are dropped to resume later (live).
 *
 * Sessions report their count after each write; the total is recounted from every session at
 * most every 100 ms when it looks exhausted (a socket's buffer also shrinks without a write).
 */
export class SendBudget {
  /** A socket with less than this unsent is keeping up, whatever the budget. */
  static readonly KEEPING_UP_BYTES = 64 * 1024;
  private total = 0;
  private lastRecount = Number.NEGATIVE_INFINITY;
  private readonly limitBytes: number;
  private readonly holders: () => Iterable<BudgetHolder>;
  private readonly monotonic: () => number;

  constructor(limitBytes: number, holders: () => Iterable<BudgetHolder>, monotonic: () => number) {
    this.limitBytes = limitBytes;
    this.holders = holders;
    this.monotonic = monotonic;
  }

  get unsent(): number {
    return this.total;
  }

  report(holder: BudgetHolder, bytes: number): void {
    this.total += bytes - holder.reportedUnsent;
    holder.reportedUnsent = bytes;
  }

  exhausted(): boolean {
    if (this.total <= this.limitBytes) return false;
    const now = this.monotonic();
    if (now - this.lastRecount >= 100) {
      this.lastRecount = now;
      let total = 0;
      for (const h of this.holders()) {
        h.reportedUnsent = h.unsentBytes();
        total += h.reportedUnsent;
      }
      this.total = total;
    }
    return this.total > this.limitBytes;
  }

  /** May a socket with `unsent` bytes already queued be given more now? */
  allows(unsent: number): boolean {
    return unsent < SendBudget.KEEPING_UP_BYTES || !this.exhausted();
  }
}
