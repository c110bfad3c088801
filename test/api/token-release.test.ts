/**
 * TokenManager.release(): when the connection ends (sign-out, quit, new credentials) the tokens
 * it holds are revoked with Yeastar's *Revoke Access Token* (`GET del_token?access_token=`,
 * answered `{"errcode":0,"errmsg":"SUCCESS"}`), so that they stop counting against the
 * application's 8 valid tokens; within 1.5 s, so that a PBX that does not answer never holds a
 * quit (its shortest limit is 2 s, quit-sequence.ts). The far side is FakeService answering as
 * that page says, on a FakeClock.
 */
import { describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { DEFAULT_RELEASE_LIMIT_MS, TokenManager } from '../../src-main/core/api/token-manager.ts';
import { QUIT_DEADLINE_MS } from '../../src-main/core/app/quit-sequence.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { wireFor } from '../../src-shared/wire/index.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';
import { FakeService } from './fake-service.ts';

const MIN = 60_000;
const REVOKED = { status: 200, body: { errcode: 0, errmsg: 'SUCCESS' } };

function setup(phoneSystem: 'yeastar-p-series' | 'standard' = 'yeastar-p-series') {
  const clock = new FakeClock();
  const service = new FakeService(clock);
  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const client = new ServiceClient({
    baseUrl: 'https://pbx.example.com:8088',
    clock,
    fetch: service.fetch,
    secrets,
    logger,
    api: wireFor(phoneSystem).api,
  });
  const manager = new TokenManager({
    client,
    clock,
    secrets,
    logger,
    random: () => 0.5,
    credentials: async () => ({ key: service.key, secret: service.secret }),
  });
  return { clock, service, manager, logger };
}

describe('TokenManager.release: tokens revoked when the connection ends', () => {
  it('revokes the token it holds with del_token, and no log line carries the token', async () => {
    const { service, manager, logger } = setup();
    const token = (await manager.getToken()).value;
    service.script('/del_token', REVOKED);
    await manager.release();
    const revokes = service.requestsTo('/del_token');
    expect(revokes).toHaveLength(1);
    expect(revokes[0]!.method).toBe('GET');
    expect(revokes[0]!.url.searchParams.get('access_token')).toBe(token);
    expect(revokes[0]!.headers.get('user-agent')).toMatch(/^Screenpop\//);
    expect(JSON.stringify(logger.records)).not.toContain(token);
    expect(logger.records.some((r) => r.msg === 'tokens revoked')).toBe(true);
  });

  it('after a refresh, revokes the superseded token too while it is still valid', async () => {
    const { clock, service, manager } = setup();
    const first = (await manager.getToken()).value;
    await clock.advance(26 * MIN); // refreshed at 25 minutes; the first lives until 30
    const second = (await manager.getToken()).value;
    expect(second).not.toBe(first);
    service.script('/del_token', REVOKED, 2);
    await manager.release();
    const revoked = service
      .requestsTo('/del_token')
      .map((r) => r.url.searchParams.get('access_token'));
    expect(revoked.sort()).toEqual([first, second].sort());
  });

  it('a PBX that does not answer: release ends within 1.5 s, inside the shortest quit limit', async () => {
    const { clock, service, manager, logger } = setup();
    await manager.getToken();
    service.script('/del_token', 'hang');
    let done = false;
    const released = manager.release().then(() => (done = true));
    await clock.advance(DEFAULT_RELEASE_LIMIT_MS - 1);
    expect(done).toBe(false);
    await clock.advance(1);
    await flushMicrotasks();
    await released;
    expect(done).toBe(true);
    expect(DEFAULT_RELEASE_LIMIT_MS).toBeLessThan(Math.min(...Object.values(QUIT_DEADLINE_MS)));
    expect(logger.records.some((r) => r.msg.includes('not revoked in time'))).toBe(true);
  });

  it('the standard service publishes no revocation: release sends nothing', async () => {
    const { service, manager } = setup('standard');
    await manager.getToken();
    await manager.release();
    expect(service.requestsTo('/del_token')).toHaveLength(0);
  });
});
