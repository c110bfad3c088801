/**
 * The gateway relay's own access token (src-relay/gateway/upstream.ts GatewayTokens) keeps the
 * desktop's token rules (src-main/core/api/token-manager.ts; docs/wire-protocol.md section 2),
 * against the service's token API as FakeService answers it:
 * - a refresh that fails for passing trouble (network, 5xx) or for the address is not followed by
 *   a login (get_token) on top: it would meet the same trouble, and every extra login counts
 *   towards an IP block (and, on a Yeastar, the live-token limit);
 * - a refused login (10001 key, 10004 address) is not repeated at the stream's reconnect pace
 *   (every 10 s at most): the refusal is answered from memory for LOGIN_HOLD_AFTER_REFUSAL_MS, then
 *   one login is tried again.
 * Before: the network-failed refresh made a second get_token call, and every get() after a 10001
 * made another (a reconnecting stream asks every few seconds).
 */
import { describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { SecretRegistry } from '../../src-shared/log.ts';
import { GatewayTokens, LOGIN_HOLD_AFTER_REFUSAL_MS } from '../../src-relay/gateway/upstream.ts';
import { FakeClock } from '../support/fake-clock.ts';
import { FakeService } from '../api/fake-service.ts';
import { rejection } from '../api/reject.ts';

function setup() {
  const clock = new FakeClock();
  const service = new FakeService(clock);
  const client = new ServiceClient({
    baseUrl: 'https://acme.example.com',
    clock,
    fetch: service.fetch,
    secrets: new SecretRegistry(),
  });
  const tokens = new GatewayTokens(client, { apiKey: service.key, secret: service.secret }, clock);
  return { clock, service, tokens };
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
    const { clock, service, tokens } = setup();
    for (const [errcode, kind] of [
      [10001, 'credentials'],
      [10004, 'ip'],
    ] as const) {
      const logins = service.counts.getToken;
      service.script('/get_token', { status: 403, body: { errcode, errmsg: 'NO' } });
      expect((await rejection(tokens.get())).kind).toBe(kind);
      expect(service.counts.getToken).toBe(logins + 1);
      // The stream reconnecting every 10 s for almost the whole hold: no login.
      for (let waited = 0; waited + 10_000 < LOGIN_HOLD_AFTER_REFUSAL_MS; waited += 10_000) {
        clock.sleep(10_000);
        expect((await rejection(tokens.get())).kind).toBe(kind);
      }
      expect(service.counts.getToken).toBe(logins + 1);
      clock.sleep(10_000);
      await tokens.get(); // the key is accepted again: a token
      expect(service.counts.getToken).toBe(logins + 2);
      tokens.invalidate((await tokens.get()).value);
    }
  });
});
