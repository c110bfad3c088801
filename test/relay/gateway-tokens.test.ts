/**
 * The gateway relay's own access token (src-relay/gateway/upstream.ts GatewayTokens) keeps the
 * desktop's token rules (src-main/core/api/token-manager.ts; docs/wire-protocol.md section 2),
 * against the service's token API as FakeService answers it:
 * - a refresh that fails for passing trouble (network, 5xx) or for the address is not followed by
 *   a login (get_token) on top: it would meet the same trouble, and every extra login counts
 *   towards an IP block (and, on a Yeastar, the live-token limit);
 * - a refused login (10001 key, 10004 address) is not repeated at the stream's reconnect pace
 *   (every 10 s at most): the refusal is answered from memory for GATEWAY_SIGN_IN_POLICY.holdMs, then
 *   one login is tried again.
 * Before: the network-failed refresh made a second get_token call, and every get() after a 10001
 * made another (a reconnecting stream asks every few seconds).
 *
 * And one API application's rule (issue 32 item 3; src-shared/api/sign-in-guard.ts, the desktop's), on
 * a Yeastar P-Series as FakeService answers its token calls and *Revoke Access Token*:
 * - the token limit (60002) and tokens taken away soon after issue hold sign-ins; at most 3
 *   get_token in 10 minutes, whatever the cause;
 * - a token replaced by a refresh is revoked (`del_token`) once the stream has moved to the new one
 *   (at once without a stream), and the tokens held are revoked at stop, within 1.5 s.
 * Before: GatewayTokens signed in at each of the stream's asks after a 60002 or a taken-away
 * token, and never called del_token (no release(), no settled()).
 *
 * And the secret registry of a relay that runs for days stays bounded (issue 37 item 1): tokens a
 * refresh replaced leave it a few generations on. Before: every token the gateway was ever given
 * stayed registered (only the desktop's TokenManager retired them), so the scrub list grew with
 * each refresh.
 */
import { describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { REVOKE_LIMIT_MS } from '../../src-shared/api/sign-in-guard.ts';
import { RETIRED_SECRETS_KEPT } from '../../src-shared/api/token-lifecycle.ts';
import { wireFor } from '../../src-shared/wire/index.ts';
import {
  GatewayTokens,
  GATEWAY_SIGN_IN_POLICY,
  type GatewayTokensOptions,
} from '../../src-relay/gateway/upstream.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';
import { FakeService } from '../api/fake-service.ts';
import { rejection } from '../api/reject.ts';

const MIN = 60_000;
const REVOKED = { status: 200, body: { errcode: 0, errmsg: 'SUCCESS' } };

function setup(
  phoneSystem: 'standard' | 'yeastar-p-series' = 'standard',
  options: GatewayTokensOptions = {},
) {
  const clock = new FakeClock();
  const service = new FakeService(clock);
  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const client = new ServiceClient({
    baseUrl: 'https://acme.example.com',
    clock,
    fetch: service.fetch,
    secrets,
    logger,
    api: wireFor(phoneSystem).api,
  });
  const tokens = new GatewayTokens(client, { apiKey: service.key, secret: service.secret }, clock, {
    logger,
    ...options,
  });
  const revoked = () =>
    service.requestsTo('/del_token').map((r) => r.url.searchParams.get('access_token'));
  return { clock, service, tokens, logger, revoked, secrets, client };
}

describe('the gateway relay’s access token', () => {
  it('a refresh that fails for the network or a 5xx is not followed by a login', async () => {
    const { clock, service, tokens } = setup();
    for (const trouble of ['network', { status: 503, body: 'down' }] as const) {
      const t = await tokens.get();
      const logins = service.counts.getToken;
      clock.sleep(t.expiresAt - clock.now() - 30_000); // inside the renewal margin
      service.script('/refresh_token', trouble);
      const err = await rejection(tokens.get());
      expect(err.retryable).toBe(true);
      expect(service.counts.getToken).toBe(logins);
      // The trouble passes: the next get() refreshes (no login either).
      const next = await tokens.get();
      expect(next.value).not.toBe(t.value);
      expect(service.counts.getToken).toBe(logins);
    }
  });

  it('a refresh refused for the address is not followed by a login', async () => {
    const { clock, service, tokens } = setup();
    const t = await tokens.get();
    clock.sleep(t.expiresAt - clock.now() - 30_000);
    service.script('/refresh_token', { status: 403, body: { errcode: 10004 } });
    expect((await rejection(tokens.get())).kind).toBe('ip');
    expect(service.counts.getToken).toBe(1);
  });

  it('a refused refresh token (10002) is replaced by a login', async () => {
    const { clock, service, tokens } = setup();
    const t = await tokens.get();
    clock.sleep(t.expiresAt - clock.now() - 30_000);
    service.script('/refresh_token', { status: 401, body: { errcode: 10002, errmsg: 'NO' } });
    expect((await tokens.get()).value).not.toBe(t.value);
    expect(service.counts.getToken).toBe(2);
  });

  it('a refused login is answered from memory until the hold is over, then tried once', async () => {
    for (const [errcode, kind] of [
      [10001, 'credentials'],
      [10004, 'ip'],
    ] as const) {
      const { clock, service, tokens } = setup();
      const logins = service.counts.getToken;
      service.script('/get_token', { status: 403, body: { errcode, errmsg: 'NO' } });
      expect((await rejection(tokens.get())).kind).toBe(kind);
      expect(service.counts.getToken).toBe(logins + 1);
      // The stream reconnecting every 10 s for almost the whole hold: no login.
      for (let waited = 0; waited + 10_000 < GATEWAY_SIGN_IN_POLICY.holdMs; waited += 10_000) {
        clock.sleep(10_000);
        expect((await rejection(tokens.get())).kind).toBe(kind);
      }
      expect(service.counts.getToken).toBe(logins + 1);
      clock.sleep(10_000);
      await tokens.get(); // the key is accepted again: a token
      expect(service.counts.getToken).toBe(logins + 2);
    }
  });

  it('a token the service expired is followed by a refresh, not a sign-in', async () => {
    const { service, tokens } = setup();
    tokens.invalidate((await tokens.get()).value);
    await tokens.get();
    expect(service.counts).toMatchObject({ getToken: 1, refreshToken: 1 });
  });
});

describe('the gateway relay’s token on one API application (issue 32 item 3)', () => {
  it('the token limit (60002) holds sign-ins for 5 minutes instead of asking at each reconnect', async () => {
    const { clock, service, tokens } = setup('yeastar-p-series');
    service.script('/get_token', {
      status: 200,
      body: { errcode: 60002, errmsg: 'MAX LIMITATION EXCEEDED' },
    });
    expect((await rejection(tokens.get())).fault).toBe('ys-token-limit');
    // The stream asks every 10 s for almost 5 minutes: no get_token.
    for (let waited = 0; waited + 10_000 < 5 * MIN; waited += 10_000) {
      clock.sleep(10_000);
      const held = await rejection(tokens.get());
      expect(held.fault).toBe('ys-token-limit');
      expect(held.retryAfterMs).toBeGreaterThan(0);
    }
    expect(service.counts.getToken).toBe(1);
    clock.sleep(10_000);
    await tokens.get();
    expect(service.counts.getToken).toBe(2);
  });

  it('tokens taken away soon after issue (another computer signs in): sign-ins held, said as a shared application', async () => {
    const { clock, service, tokens } = setup('yeastar-p-series');
    let signIns = 0;
    let held;
    for (let i = 0; i < 6 && !held; i++) {
      const token = await tokens.get().catch((err: unknown) => err);
      if (!(token && typeof token === 'object' && 'value' in token)) {
        held = token as { fault: string };
        break;
      }
      signIns = service.counts.getToken;
      clock.sleep(30_000);
      // Another computer's sign-in ended both the access and the refresh token.
      service.script('/refresh_token', {
        status: 200,
        body: { errcode: 10002, errmsg: 'TOKEN EXPIRED' },
      });
      tokens.invalidate(token.value as string);
    }
    expect(held).toMatchObject({ fault: 'shared-application' });
    expect(signIns).toBeLessThanOrEqual(2);
    expect(service.counts.getToken).toBe(signIns);
  });

  it('a PBX that restarted (the upstream lost, then every token refused) twice in minutes: signed in again each time, not held', async () => {
    const { clock, service, tokens } = setup('yeastar-p-series');
    for (let i = 0; i < 2; i++) {
      const token = await tokens.get();
      clock.sleep(30_000);
      // The restart: the stream dropped (upstream.ts judgeEnd), then the token and its refresh
      // token unknown to the PBX that came back.
      tokens.connectionLost();
      service.script('/refresh_token', {
        status: 200,
        body: { errcode: 10002, errmsg: 'TOKEN EXPIRED' },
      });
      tokens.invalidate(token.value);
    }
    await expect(tokens.get()).resolves.toMatchObject({ value: expect.any(String) });
    expect(service.counts.getToken).toBe(3);
  });

  it('at most 3 sign-ins in 10 minutes, whatever the cause', async () => {
    const { clock, service, tokens } = setup('yeastar-p-series');
    let last: unknown;
    for (let i = 0; i < 4; i++) {
      // Each token worn out after 3 minutes (not taken away), its refresh token refused.
      last = await tokens.get().catch((err: unknown) => err);
      clock.sleep(3 * MIN);
      if (last && typeof last === 'object' && 'value' in last)
        tokens.invalidate(String(last.value));
      service.script('/refresh_token', {
        status: 200,
        body: { errcode: 10002, errmsg: 'TOKEN EXPIRED' },
      });
    }
    expect(service.counts.getToken).toBe(3);
    expect(last).toMatchObject({ fault: 'sign-ins-held' });
  });

  it('with a stream, a token replaced by a refresh is revoked once the stream runs on the new one', async () => {
    const { clock, service, tokens, revoked } = setup('yeastar-p-series', {
      revokeReplaced: 'when-settled',
    });
    const first = await tokens.get();
    tokens.settled(first.value);
    clock.sleep(first.expiresAt - clock.now() - 30_000); // inside the renewal margin
    const second = await tokens.get();
    expect(second.value).not.toBe(first.value);
    await flushMicrotasks();
    expect(revoked()).toEqual([]); // the stream still runs on the first
    service.script('/del_token', REVOKED);
    tokens.settled(second.value);
    await flushMicrotasks();
    expect(revoked()).toEqual([first.value]);
  });

  it('a short-lived token is renewed in the last half of its life, when the stream rotates, not before', async () => {
    const { clock, service, tokens } = setup('yeastar-p-series');
    service.accessLifeSec = 75;
    const first = await tokens.get();
    clock.sleep(30_000); // 45 s left: more than half (37.5 s), less than a minute
    expect((await tokens.get()).value).toBe(first.value);
    clock.sleep(8_000);
    expect((await tokens.get()).value).not.toBe(first.value);
    expect(service.counts.refreshToken).toBe(1);
  });

  it('without a stream, a token replaced by a refresh is revoked at once', async () => {
    const { clock, service, tokens, revoked } = setup('yeastar-p-series');
    const first = await tokens.get();
    clock.sleep(first.expiresAt - clock.now() - 30_000);
    service.script('/del_token', REVOKED);
    await tokens.get();
    await flushMicrotasks();
    expect(revoked()).toEqual([first.value]);
  });

  it('at stop the tokens held are revoked, no log line carries one, and no token is taken after', async () => {
    const { service, tokens, logger, revoked } = setup('yeastar-p-series');
    const token = await tokens.get();
    service.script('/del_token', REVOKED);
    await tokens.release();
    expect(revoked()).toEqual([token.value]);
    expect(logger.records.some((r) => r.msg === 'tokens revoked')).toBe(true);
    expect(JSON.stringify(logger.records)).not.toContain(token.value);
    await rejection(tokens.get());
    expect(service.counts.getToken).toBe(1);
  });

  it('a PBX that does not answer: stop ends within 1.5 s', async () => {
    const { clock, service, tokens, logger } = setup('yeastar-p-series');
    await tokens.get();
    service.script('/del_token', 'hang');
    let done = false;
    const released = tokens.release().then(() => (done = true));
    await clock.advance(REVOKE_LIMIT_MS - 1);
    expect(done).toBe(false);
    await clock.advance(1);
    await flushMicrotasks();
    await released;
    expect(done).toBe(true);
    expect(logger.records.some((r) => r.msg.includes('not revoked in time'))).toBe(true);
  });

  it('the standard service publishes no revocation: stop sends nothing', async () => {
    const { service, tokens } = setup('standard');
    await tokens.get();
    await tokens.release();
    expect(service.requestsTo('/del_token')).toHaveLength(0);
  });

  it('a long-running gateway: tokens replaced by refreshes leave the secret registry, which stays bounded', async () => {
    const { clock, tokens, secrets } = setup();
    const seen: string[] = [];
    for (let i = 0; i < 40; i++) {
      const t = await tokens.get();
      seen.push(t.value);
      clock.sleep(t.expiresAt - clock.now() - 30_000); // inside the renewal margin: refresh
    }
    const current = (await tokens.get()).value;
    const registered = seen.filter((t) => secrets.scrub(t) !== t);
    expect(secrets.scrub(current)).not.toBe(current);
    expect(registered.length).toBeLessThanOrEqual(RETIRED_SECRETS_KEPT);
    expect(registered).not.toContain(seen[0]);
  });

  it('a relay’s lease terms one after another: the tokens each term held leave the secret registry too, which stays bounded', async () => {
    // Each term of the upstream lease runs a GatewayUpstream of its own (leased-upstream.ts), so a
    // GatewayTokens of its own, on the relay's one registry; one `retired` list follows them all.
    // Before: each term's last pair stayed registered for good (bench/relay-memory.ts: 7 pairs
    // after 6 takeovers, and growing), and every log line's scrub went through all of them.
    const { clock, service, client, secrets, logger } = setup();
    const retired: string[] = [];
    const seen: string[] = [];
    for (let term = 0; term < 20; term++) {
      const tokens = new GatewayTokens(
        client,
        { apiKey: service.key, secret: service.secret },
        clock,
        { logger, retired },
      );
      seen.push((await tokens.get()).value);
      await tokens.release();
      clock.sleep(MIN);
    }
    const registered = seen.filter((t) => secrets.scrub(t) !== t);
    expect(registered.length).toBeLessThanOrEqual(RETIRED_SECRETS_KEPT);
    expect(registered).not.toContain(seen[0]);
    expect(registered).toContain(seen[seen.length - 1]);
  });
});
