import type { Clock, TimerHandle } from '../src-shared/process/clock.ts';
import { CloseCode } from '../src-shared/relay/relay-protocol.ts';
import type { ClientOptions } from './config.ts';
import type { SessionRegistry } from './sessions.ts';

/**
 * Closes, every few seconds: idle clients (4000), sessions past their authorisation (4002: the
 * maximum age; an OpenID sign-in's counted from its token's issue),
 * and sockets that never said hello (4400). Times are monotonic, so a wall-clock step closes
 * nobody.
 */
export function startSweeper(
  clock: Clock,
  sessions: SessionRegistry,
  options: ClientOptions,
): { stop(): void } {
  let timer: TimerHandle | undefined;
  let stopped = false;
  const sweep = () => {
    const t = clock.monotonic();
    for (const s of sessions.all()) {
      if (t - s.lastHeard > options.idleTimeoutMs) s.close(CloseCode.idle, 'no heartbeat');
      else if (t > s.authDeadline)
        s.close(CloseCode.reauthenticate, 'authorisation expired; reconnect with a fresh token');
      else s.checkHello(t, options.helloTimeoutMs);
    }
    if (!stopped)
      timer = clock.setTimeout(sweep, Math.max(250, Math.min(5_000, options.idleTimeoutMs / 4)));
  };
  sweep();
  return {
    stop() {
      stopped = true;
      clock.clearTimeout(timer);
    },
  };
}
