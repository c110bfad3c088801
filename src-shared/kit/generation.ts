/**
 * Tells a late callback from a current one. An asynchronous step (a token fetch, a socket's
 * events) takes a ticket when it starts; whatever ends the work it belongs to (stop, a new
 * connection, new credentials) calls `bump()`, and from then on that ticket says it is stale, so
 * its answer is dropped instead of being applied to what replaced it.
 */
export class Generation {
  private current = 0;

  /** Makes every ticket taken so far stale. */
  bump(): void {
    this.current++;
  }

  /** A ticket: true until the next bump(). */
  ticket(): () => boolean {
    const taken = this.current;
    return () => taken === this.current;
  }
}
