/**
 * The server's clock from an HTTP `Date` header (RFC 9110 section 6.6.1: an origin server with a clock
 * sends one on every response). It gives the offset estimator a reference before any event has
 * arrived, so that the very first events after start, a wake or a clock change (e.g. old rings
 * replayed by the relay) are judged against the server's time rather than against themselves.
 *
 * One unauthenticated HEAD request to the tenant's base address (no token, no API path, redirects
 * not followed); the header has whole seconds, so the reference is accurate to about ±0.5 s plus
 * half the round trip, ample for a 45-second staleness rule.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';

export interface ServerTimeSample {
  /** Server wall time in ms since the epoch (middle of the header's second). */
  serverMs: number;
  /** Local monotonic time the server's clock read `serverMs` (middle of the round trip). */
  atMonotonic: number;
}

export async function probeServerClock(opts: {
  baseUrl: string;
  clock: Clock;
  /** NetTransport's fetch (net/transport.ts): the probe goes the way every other call goes. */
  fetch: typeof fetch;
  timeoutMs?: number;
}): Promise<ServerTimeSample | undefined> {
  const url = new URL(opts.baseUrl);
  url.pathname = '/';
  url.search = '';
  url.hash = '';
  const before = opts.clock.monotonic();
  const response = await opts.fetch(url, {
    method: 'HEAD',
    redirect: 'manual',
    signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000),
  });
  const after = opts.clock.monotonic();
  await response.body?.cancel();
  const date = Date.parse(response.headers.get('date') ?? '');
  if (!Number.isFinite(date)) return undefined;
  return { serverMs: date + 500, atMonotonic: (before + after) / 2 };
}
