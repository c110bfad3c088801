/**
 * Test connection on a Yeastar P-Series while the app's connection runs (issue 32 item 3): a
 * test of the application the connection already signs in with uses its token (no get_token: one
 * would take one of the application's 8 tokens, and on a PBX that keeps one sign-in per
 * application it would end the running connection's own token); a test of a new secret takes a
 * token and gives it back (del_token); the connection ending revokes its token. The far side is
 * the simulator playing a P-Series that keeps one sign-in per application, on the real clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  serviceConnectionFactory,
  type Connection,
} from '../../src-main/core/connection/connection.ts';
import { SettingsService } from '../../src-main/core/settings-service/settings-service.ts';
import { serviceProbe } from '../../src-main/core/connection/service-probe.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import { credentialsSource } from '../../src-main/core/credentials/credentials-source.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src-main/core/settings/types.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { startSimulator, type TokenRule } from '../../src-sim/index.ts';
import { directTransport } from '../../rigs/direct-transport.ts';
import { MemorySettings } from '../../rigs/app-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(tokenRule: TokenRule = { kind: 'one-sign-in' }) {
  const sim = await startSimulator({ phoneSystem: 'yeastar-p-series', tokenRule });
  cleanups.push(() => sim.close());
  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const settings: Settings = {
    ...structuredClone(DEFAULT_SETTINGS),
    phoneSystem: 'yeastar-p-series',
    baseUrl: sim.baseUrl,
    apiKey: sim.apiKey.key,
    extensions: ['101'],
  };
  const credentials = new MemoryCredentialStore();
  await credentials.setSecret(keychainAccount(sim.apiKey.key, sim.baseUrl)!, sim.apiKey.secret);
  const transport = directTransport({ secrets });
  const connection: Connection = serviceConnectionFactory({
    clock: systemClock,
    logger,
    secrets,
    transport: () => transport,
  })({
    baseUrl: sim.baseUrl,
    settings,
    credentials: credentialsSource(credentials, () => settings),
  });
  let stopped = false;
  cleanups.push(async () => {
    if (!stopped) await connection.stop();
  });
  const service = new SettingsService({
    logger,
    secrets,
    settings: new MemorySettings(settings),
    credentials,
    startDemo: () => Promise.reject(new Error('no demo here')),
    createProbe: (input) =>
      serviceProbe(input, { clock: systemClock, logger, secrets, fetch: transport.fetch }),
    runningProbe: (target) => connection.runningProbe?.(target) ?? null,
    localAddress: async () => null,
    inspectContactsFile: async () => ({ ok: true, count: 0 }),
  });
  await service.load();
  const stop = async () => {
    stopped = true;
    await connection.stop();
  };
  return { sim, connection, service, stop, logger };
}

describe('Test connection beside a running Yeastar connection', () => {
  it('uses the running token: no get_token, however often it is clicked', async () => {
    const { sim, connection, service } = await setup();
    expect(await connection.fetchExtensions()).toHaveLength(20);
    expect(sim.stats().getToken).toBe(1);

    for (let click = 0; click < 3; click++) {
      const result = await service.testConnection({ settings: {} });
      expect(result.ok).toBe(true);
      expect(result.extensionCount).toBe(20);
    }
    expect(sim.stats().getToken).toBe(1);
    // The running connection still works: its token was not ended by a test's sign-in.
    expect(await connection.fetchExtensions()).toHaveLength(20);
    expect(sim.stats().tokenExpiredRejections).toBe(0);
  });

  it("says Yeastar's set-up checks: one application per desktop or the relay's gateway mode, Call Status Monitor", async () => {
    const { service } = await setup();
    const result = await service.testConnection({ settings: {} });
    expect(result.checks?.join(' ')).toContain('gateway mode');
    expect(result.checks?.join(' ')).toContain('Call Status Monitor');
  });

  it('a new secret typed in: its own token, given back at once (del_token)', async () => {
    const { sim, service } = await setup();
    const result = await service.testConnection({ settings: {}, secret: sim.apiKey.secret });
    expect(result.ok).toBe(true);
    expect(sim.stats().getToken).toBe(1);
    expect(sim.stats().delToken).toBe(1);
  });

  it('the connection ending (sign-out, quit, new credentials) revokes its token', async () => {
    const { sim, connection, stop } = await setup();
    await connection.fetchExtensions();
    await stop();
    expect(sim.stats().delToken).toBe(1);
  });

  it('while the connection holds its sign-ins (the token limit), the test says the same words and signs in no more', async () => {
    const { sim, connection, service } = await setup({ kind: 'limit', max: 1 });
    // Another computer holds the application's only token.
    const other = await fetch(`${sim.baseUrl}/openapi/v1.0/get_token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: sim.apiKey.key, password: sim.apiKey.secret }),
    });
    expect(((await other.json()) as { errcode: number }).errcode).toBe(0);
    await expect(connection.fetchExtensions()).rejects.toMatchObject({ fault: 'ys-token-limit' });
    const result = await service.testConnection({ settings: {} });
    expect(result.ok).toBe(false);
    expect(result.message).toContain('(8; errcode 60002)');
    expect(result.remedy).toContain('gateway mode');
    expect(sim.stats().getToken).toBe(2);
  });

  it('while the connection waits for a person (an address not allowed), the test signs in afresh to check the fix', async () => {
    const { sim, service, connection } = await setup({ kind: 'none' });
    sim.setAllowlist(sim.apiKey.key, ['192.0.2.1']); // 70087: this address is not allowed
    await expect(connection.fetchExtensions()).rejects.toMatchObject({ fault: 'ys-ip-forbidden' });
    sim.setAllowlist(sim.apiKey.key, []); // the administrator fixes it
    const result = await service.testConnection({ settings: {} });
    expect(result.ok).toBe(true);
    expect(sim.stats().delToken).toBe(1); // the test's own token, given back
  });
});
