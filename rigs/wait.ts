/**
 * Waiting, in real time, for something that happens over real sockets or in a child process: poll a
 * condition until it holds (never sleep a fixed time and hope), and fail with what was awaited.
 */
export interface WaitOptions {
  /** Give up after this long; default 5 s. */
  timeoutMs?: number;
  /** Poll interval; default 10 ms. */
  intervalMs?: number;
  /** Extra text for the failure message (e.g. a child process's stderr). */
  detail?: () => string;
}

export async function waitFor(
  check: () => boolean,
  what: string,
  options: WaitOptions = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  while (!check()) {
    if (Date.now() > deadline) {
      const detail = options.detail?.();
      throw new Error(`timed out waiting for ${what}${detail ? `\n${detail}` : ''}`);
    }
    await sleepReal(options.intervalMs ?? 10);
  }
}

/** A real-time pause: only for asserting that something does NOT happen within a while. */
export function sleepReal(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
