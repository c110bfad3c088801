/**
 * The one rule for sign-ins with one API application (src-shared/api/sign-in-guard.ts), on a
 * FakeClock: at most 3 get_token in 10 minutes, tokens taken away soon after issue, the token
 * limit; each held for 5 minutes, with the words of the fault table.
 */
import { describe, expect, it } from 'vitest';
import { SIGN_IN_POLICY, SignInGuard } from '../../src-shared/api/sign-in-guard.ts';
import { describeError, ServiceError } from '../../src-shared/api/service-errors.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const MIN = 60_000;

function guard() {
  const clock = new FakeClock();
  return { clock, guard: new SignInGuard(clock) };
}

describe('SignInGuard', () => {
  it('a fourth sign-in within 10 minutes is held for 5 minutes, then allowed once the window moves on', async () => {
    const { clock, guard: g } = guard();
    for (let i = 0; i < 3; i++) {
      expect(g.beforeSignIn()).toBeNull();
      g.signedIn();
      await clock.advance(MIN);
    }
    const held = g.beforeSignIn();
    expect(held?.fault).toBe('sign-ins-held');
    expect(held?.retryAfterMs).toBe(SIGN_IN_POLICY.holdMs);
    expect(held?.retryable).toBe(true);
    await clock.advance(2 * MIN);
    expect(g.beforeSignIn()?.retryAfterMs).toBe(3 * MIN);
    await clock.advance(8 * MIN); // the three sign-ins have left the window
    expect(g.beforeSignIn()).toBeNull();
  });

  it('two tokens refused younger than 3 minutes: another computer uses the same application', async () => {
    const { clock, guard: g } = guard();
    g.signedIn();
    g.tokenRefused(4 * MIN); // worn out, not taken away
    g.tokenRefused(30_000);
    expect(g.beforeSignIn()).toBeNull();
    g.signedIn();
    await clock.advance(10_000);
    g.tokenRefused(10_000);
    const held = g.beforeSignIn();
    expect(held?.fault).toBe('shared-application');
    expect(describeError(held).reason).toContain('Another computer uses the same API application');
    expect(describeError(held).needsUser).toBe(false);
  });

  it('the token limit holds sign-ins for 5 minutes; a refused secret does not', async () => {
    const { clock, guard: g } = guard();
    const refusedSecret = new ServiceError({
      kind: 'credentials',
      fault: 'ys-credentials',
      message: 'x',
    });
    expect(g.refusedSignIn(refusedSecret)).toBe(0);
    expect(g.beforeSignIn()).toBeNull();
    const limit = new ServiceError({
      kind: 'rate-limit',
      fault: 'ys-token-limit',
      errcode: 60002,
      message: 'get_token: the service answered errcode 60002',
    });
    expect(g.refusedSignIn(limit)).toBe(5 * MIN);
    await clock.advance(MIN);
    const held = g.beforeSignIn();
    expect(held).toMatchObject({ fault: 'ys-token-limit', errcode: 60002, retryAfterMs: 4 * MIN });
    await clock.advance(4 * MIN);
    expect(g.beforeSignIn()).toBeNull();
  });

  it('reset (new credentials, the user asks) lets a sign-in go at once', () => {
    const { guard: g } = guard();
    for (let i = 0; i < 3; i++) g.signedIn();
    expect(g.beforeSignIn()).not.toBeNull();
    g.reset();
    expect(g.beforeSignIn()).toBeNull();
  });

  it('a refused key holds sign-ins only for a client with nobody to ask (holdRefusedLogin: the relay)', () => {
    const refused = new ServiceError({ kind: 'credentials', errcode: 10001, message: 'refused' });
    const desktop = guard().guard;
    expect(desktop.refusedSignIn(refused)).toBe(0); // the desktop asks its user instead
    expect(desktop.beforeSignIn()).toBeNull();
    const clock = new FakeClock();
    const relay = new SignInGuard(clock, { ...SIGN_IN_POLICY, holdRefusedLogin: true });
    expect(relay.refusedSignIn(refused)).toBe(SIGN_IN_POLICY.holdMs);
    expect(relay.beforeSignIn()).toMatchObject({ kind: 'credentials', errcode: 10001 });
  });
});
