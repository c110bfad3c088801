/** Counts work in progress (webhooks being handled) so a drain can wait until there is none. */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  /** Counts `work` until it settles. */
  track(work: Promise<unknown>): void {
    this.count += 1;
    void work.finally(() => {
      this.count -= 1;
      if (this.count === 0) for (const w of this.waiters.splice(0)) w();
    });
  }

  /** Resolves when nothing is in flight, or after `timeoutMs`, whichever comes first. */
  async settled(timeoutMs: number): Promise<void> {
    if (this.count === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((r) => this.waiters.push(r)),
      new Promise<void>((r) => (timer = setTimeout(r, timeoutMs))),
    ]);
    clearTimeout(timer);
  }
}
