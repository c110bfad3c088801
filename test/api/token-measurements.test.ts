/**
 * The invariants behind the token measurements (the figures themselves come from
 * bench/tokens.ts). Simulator over real sockets, one FakeClock for both sides.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_REFRESH_MARGIN_MS } from '../../src-main/core/api/token-manager.ts';
import { concurrentAtExpiry, longRun, sleepThenCall } from '../../rigs/token-scenarios.ts';

describe('token lifecycle measurements', () => {
  it('(a) 48 simulated hours, one API call a minute: no call fails for an expired token', async () => {
    const r = await longRun(48);
    expect(r.calls).toBe(48 * 60);
    expect(r.failedExpired).toBe(0);
    expect(r.failedOther).toBe(0);
    expect(r.succeeded).toBe(r.calls);
    expect(r.tokenExpiredRejections).toBe(0);
    // one login; then the refresh chain (each refresh brings a new 24-hour refresh token) never breaks
    expect(r.getToken).toBe(1);
    const period = 30 * 60_000 - DEFAULT_REFRESH_MARGIN_MS;
    expect(Math.abs(r.refreshToken - Math.floor((48 * 3600_000) / period))).toBeLessThanOrEqual(1);
  }, 120_000);

  it('(b) 100 concurrent calls at the instant of expiry cause one refresh', async () => {
    const wall = await concurrentAtExpiry(100, 'wall');
    expect(wall).toMatchObject({
      succeeded: 100,
      failed: 0,
      refreshes: 1,
      getTokens: 0,
      expiredSeenByFn: 0,
    });
    // the service expired every token behind our back: 100 calls get 10002, still one refresh
    const server = await concurrentAtExpiry(100, 'server');
    expect(server).toMatchObject({ succeeded: 100, failed: 0, refreshes: 1, getTokens: 0 });
    expect(server.expiredSeenByFn).toBe(100);
  });

  it('(c) after a three-hour sleep the first call succeeds with no 10002 seen', async () => {
    for (const callWake of [true, false]) {
      const r = await sleepThenCall(3, callWake);
      expect(r).toMatchObject({
        firstCallSucceeded: true,
        expiredSeenByCaller: 0,
        expiredSeenByFn: 0,
        tokenExpiredRejections: 0,
        refreshes: 1,
        getTokens: 0,
      });
    }
  });
});
