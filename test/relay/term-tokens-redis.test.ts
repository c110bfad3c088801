/**
 * At most two live tokens per tenant (issue 40 item 2; src-relay/gateway/term-tokens.ts): each
 * term of the upstream lease writes its access tokens down beside the lease, on a real
 * redis-server (the store's own hash and script), and the next holder revokes what a killed holder
 * left before it signs in. The tokens' far side is FakeService answering a Yeastar P-Series'
 * token calls and *Revoke Access Token* on the fake clock.
 * - a killed holder's token is revoked (`del_token`) by the next term, and struck off;
 * - a token the term revokes itself (its stop, a rotation) is struck off, so the next holder does
 *   not revoke it again; an expired one is dropped, not revoked;
 * - what Redis holds is sealed: no token in it, none in the log; written under another API secret
 *   it is unreadable, struck off and not revoked;
 * - the standard service (no `del_token`) writes nothing.
 * Before (term-tokens.ts with main's upstream.ts, 1891eb8): GatewayTokens wrote nothing down
 * ("expected [] to have a length of 1 but got +0"); and on main, the black box
 * (test/blackbox/relay-gateway-lease-redis.test.ts) counted 2 valid tokens after a SIGKILL's
 * takeover and 3 after a SIGSTOP's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { wireFor } from '../../src-shared/wire/index.ts';
import { GatewayTokens } from '../../src-relay/gateway/upstream.ts';
import { TermTokens } from '../../src-relay/gateway/term-tokens.ts';
import type { RedisStore } from '../../src-relay/store/redis-store.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import {
  openRedisStore,
  redisAvailable,
  startRedis,
  type RedisProcess,
} from '../../rigs/relay/helpers.ts';
import { FakeService } from '../api/fake-service.ts';

const MIN = 60_000;
const REVOKED = { status: 200, body: { errcode: 0, errmsg: 'SUCCESS' } };
const haveRedis = redisAvailable('test/relay/term-tokens-redis.test.ts');

describe.skipIf(!haveRedis)('the upstream tokens of the lease’s terms', () => {
  let redis: RedisProcess;
  let store: RedisStore;
  let n = 0;
  beforeAll(async () => {
    redis = await startRedis();
    store = await openRedisStore(redis.url, ['t0']);
  });
  afterAll(async () => {
    await store?.close();
    await redis?.stop();
  });

  function setup(phoneSystem: 'standard' | 'yeastar-p-series' = 'yeastar-p-series') {
    const tenant = `t${++n}`;
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
    const term = (name: string, apiSecret = service.secret) =>
      new TermTokens({ tenant, term: name, backend: store, apiSecret, clock, logger, secrets });
    const tokensOf = (t: TermTokens) =>
      new GatewayTokens(client, { apiKey: service.key, secret: service.secret }, clock, {
        logger,
        term: t,
      });
    const revoked = () =>
      service.requestsTo('/del_token').map((r) => r.url.searchParams.get('access_token'));
    const listed = () => store.listTermTokens(tenant);
    return { tenant, clock, service, client, logger, term, tokensOf, revoked, listed };
  }

  it('a killed holder’s token is revoked by the next term before it signs in', async () => {
    const { service, client, logger, term, tokensOf, revoked, listed } = setup();
    const killed = await tokensOf(term('a:1#1')).get(); // then SIGKILL: nothing given back
    const written = await listed();
    expect(Object.keys(written)).toHaveLength(1);
    expect(JSON.stringify(written)).not.toContain(killed.value);

    const next = term('b:2#2');
    service.script('/del_token', REVOKED);
    expect(await next.revokeEarlier(client)).toBe(1);
    expect(revoked()).toEqual([killed.value]);
    expect(await listed()).toEqual({});

    // Its own token is written down, and not revoked by itself.
    const own = await tokensOf(next).get();
    expect(own.value).not.toBe(killed.value);
    expect(Object.keys(await listed())).toHaveLength(1);
    expect(await next.revokeEarlier(client)).toBe(0);
    expect(revoked()).toHaveLength(1);
    const log = JSON.stringify(logger.records);
    expect(log).toContain('revoking the upstream tokens earlier terms left');
    for (const t of [killed.value, own.value]) expect(log).not.toContain(t);
  });

  it('a token the term revoked itself is struck off; an expired one is dropped, not revoked', async () => {
    const { clock, service, client, term, tokensOf, revoked, listed } = setup();
    const tokens = tokensOf(term('a:1#1'));
    const t = await tokens.get();
    expect(Object.keys(await listed())).toHaveLength(1);
    service.script('/del_token', REVOKED);
    await tokens.release();
    expect(revoked()).toEqual([t.value]);
    expect(await listed()).toEqual({});

    await tokensOf(term('b:2#2')).get(); // killed, and its token runs out
    expect(Object.keys(await listed())).toHaveLength(1);
    clock.sleep(31 * MIN);
    expect(await term('c:3#3').revokeEarlier(client)).toBe(0);
    expect(revoked()).toHaveLength(1);
    expect(await listed()).toEqual({});

    // An expired entry is also dropped when a later one is written (the list stays bounded).
    await tokensOf(term('d:4#4')).get();
    clock.sleep(31 * MIN);
    await tokensOf(term('e:5#5')).get();
    expect(Object.keys(await listed())).toHaveLength(1);
  });

  it('written under another API secret: unreadable, struck off, not revoked', async () => {
    const { client, term, tokensOf, revoked, listed } = setup();
    await tokensOf(term('a:1#1', 'an older secret')).get();
    expect(Object.keys(await listed())).toHaveLength(1);
    expect(await term('b:2#2').revokeEarlier(client)).toBe(0);
    expect(revoked()).toEqual([]);
    expect(await listed()).toEqual({});
  });

  it('the standard service (no del_token): nothing written', async () => {
    const { client, term, tokensOf, listed } = setup('standard');
    await tokensOf(term('a:1#1')).get();
    expect(await listed()).toEqual({});
    expect(await term('b:2#2').revokeEarlier(client)).toBe(0);
  });
});
