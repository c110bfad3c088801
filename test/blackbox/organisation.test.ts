/**
 * Organisation mode end to end (issue 26's done-when): the simulator sends its webhooks to the
 * relay; the relay's tenant admits its users only; one user signs in through the organisation's
 * OpenID provider (a real one, oidc-provider on 127.0.0.1) from the desktop's core (sign-in,
 * credential, relay-only engine), the other is the headless runner enrolled with a one-time code
 * (`--relay-url ... --enrol <code>`, a process of its own). Each gets only their own rings, and
 * neither side of the desktop holds the phone system's API key or secret.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import type { Pop } from '../../src-main/core/events/pipeline.ts';
import { DESKTOP_CLIENT_ID, startOidcProvider } from '../../rigs/oidc-provider.ts';
import { envWithout, ProcessGroup, until } from '../../rigs/processes.ts';
import { signInDesktop } from './org-desktop.ts';
import { RelayProcess, RunnerProcess, SimProcess } from './services.ts';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { wireFor } from '../../src-shared/wire/index.ts';

let group: ProcessGroup;
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
  await group?.cleanup();
});

describe('organisation mode: the relay between the phone system and its users', () => {
  it('gives a desktop signed in by OpenID Connect and an enrolled runner only their own rings, with no API secret on either; a revoke stops the runner at once', async () => {
    group = new ProcessGroup();
    const idp = await startOidcProvider({ accounts: { alice: { email: 'alice@example.org' } } });
    stops.push(() => idp.close());
    // Background traffic among other extensions, never 101 or 102.
    const sim = await new SimProcess(group, { traffic: 2, exclude: ['101', '102'] }).start();
    const usersFile = join(group.tempDir('blackbox-users-'), 'users.json');
    // The key codes are stored under, apart from the users (issue 33 item 4).
    const codeKeyFile = join(group.tempDir('blackbox-key-'), 'code.key');
    writeFileSync(codeKeyFile, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    const relay = await new RelayProcess(group, {
      tenant: sim.tenant,
      serviceUrl: sim.baseUrl,
      users: {
        file: usersFile,
        oidc: { issuer: idp.issuer, clientId: DESKTOP_CLIENT_ID },
        codeKeyFile,
      },
    }).start();
    await sim.control('POST', 'webhooks', { url: relay.webhookUrl(), secret: relay.webhookSecret });

    // The administrator: alice signs in with her organisation account; the runner's user enrols.
    await relay.users('add', 'alice', '--extension', '101', '--email', 'alice@example.org');
    const added = await relay.users('add', 'reception', '--extension', '102');
    const code = /enrolment code: (\S+)/.exec(added)![1]!;
    // A copy of the users file holds nothing a guessed code can be checked against offline.
    const usersText = readFileSync(usersFile, 'utf8');
    expect(usersText).toMatch(/"hash": "hmac:[0-9a-f]{64}"/);
    expect(usersText).not.toContain(createHash('sha256').update(code).digest('hex'));

    // The runner, enrolled with the code; its environment has no key and no secret.
    const runnerEnv = envWithout(['SCREENPOP_API_KEY', 'SCREENPOP_API_SECRET']);
    const runner = new RunnerProcess(
      await group.spawnRunner(
        'runner',
        [
          '--relay-url',
          // The relay's address as its administrator gives it (http on this computer; https
          // elsewhere, as README's step 3 says), not its stream's ws address.
          relay.url,
          '--relay-tenant',
          sim.tenant,
          '--enrol',
          code,
          '--heartbeat-sec',
          '2',
        ],
        { env: runnerEnv },
      ),
    );
    await runner.waitForState('connected', 60_000);
    expect(runner.lines.find((l) => l.type === 'signed-in')).toMatchObject({
      user: 'reception',
      via: 'device',
      extensions: ['102'],
    });

    const { desktop, desktopPops, keychain, account, identity } = await signInDesktop(
      relay,
      sim.tenant,
      idp,
      'alice',
      stops,
    );
    expect(identity()).toMatchObject({ user: 'alice', via: 'oidc', extensions: ['101'] });

    await expectEachGetsOwnRings(sim, desktopPops, runner, 4);
    expect(desktopPops.every((p) => p.to === '101')).toBe(true);
    expect(runner.pops().every((p) => p.to === '102')).toBe(true);

    // No API secret on the desktop side: not in the runner's environment, output or log, not in
    // the desktop's keychain; the runner never asked the phone system for a token.
    expect(runnerEnv.SCREENPOP_API_SECRET).toBeUndefined();
    const runnerText = runner.proc.stdout.map((l) => l.text).join('\n') + runner.proc.describe();
    expect(runnerText).not.toContain(sim.secret);
    expect(runnerText).not.toContain(sim.key);
    expect((await keychain.getSecret(account)) ?? '').not.toContain(sim.secret);
    expect(await keychain.getSecret(`${sim.key}@${new URL(sim.baseUrl).host}`)).toBeNull();
    expect(runner.badLines).toEqual([]);
    expect(runner.proc.running()).toBe(true);

    // The administrator revokes the runner's user: its session ends at once; it says why and
    // what to do, and stops (exit 3, needs attention); alice's desktop is untouched.
    await relay.users('revoke', 'reception');
    await runner.waitForState('needs-attention', 15_000);
    expect(runner.statuses().at(-1)).toMatchObject({
      reason: 'Your administrator has ended your access to calls through the relay.',
    });
    expect((await runner.proc.exit).code).toBe(3);
    expect(desktop.engine.status().state).toBe('connected');
  });
});

// Issue 26 item 1: the relay as the organisation's gateway. The API key and secret are only in the
// relay's environment; the relay keeps its own stream to the phone system besides the webhooks,
// and stores each event once; alice is mapped by the phone system's own extension list (her
// e-mail address there), without a relay user.
describe.each(['standard', 'yeastar-p-series'] as const)(
  'organisation mode with the relay as the gateway (%s)',
  (phoneSystem) => {
    it('gives each user only their own rings, once each from stream and webhooks together, with the API secret only in the relay', async () => {
      group = new ProcessGroup();
      const sim = await new SimProcess(group, { phoneSystem }).start();
      // The address the phone system's extension list gives extension 101 (asked as the relay asks).
      const service = new ServiceClient({
        baseUrl: sim.baseUrl,
        clock: systemClock,
        fetch,
        api: wireFor(phoneSystem).api,
      });
      const token = await service.getToken(sim.key, sim.secret);
      const email = (await service.listExtensions(token.accessToken)).find(
        (e) => e.number === '101',
      )!.email!;
      const idp = await startOidcProvider({ accounts: { alice: { email } } });
      stops.push(() => idp.close());
      const relay = await new RelayProcess(group, {
        tenant: sim.tenant,
        serviceUrl: sim.baseUrl,
        phoneSystem,
        users: {
          file: join(group.tempDir('blackbox-users-'), 'users.json'),
          oidc: { issuer: idp.issuer, clientId: DESKTOP_CLIENT_ID },
        },
        gateway: { apiKeyEnv: 'ACME_API_KEY', secretEnv: 'ACME_API_SECRET' },
        env: { ...process.env, ACME_API_KEY: sim.key, ACME_API_SECRET: sim.secret },
      }).start();
      expect(relay.configText()).not.toContain(sim.secret);
      // /healthz says the state of the relay's own stream to the phone system.
      let health: HealthAnswer | undefined;
      for (let i = 0; i < 100 && health?.upstream?.[sim.tenant]?.state !== 'connected'; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 200));
        health = (await (await fetch(relay.url + '/healthz')).json()) as HealthAnswer;
      }
      expect(health).toMatchObject({
        ok: true,
        upstream: { [sim.tenant]: { state: 'connected' } },
      });
      await sim.control('POST', 'webhooks', {
        url: relay.webhookUrl(),
        secret: relay.webhookSecret,
      });
      const added = await relay.users('add', 'reception', '--extension', '102');
      const code = /enrolment code: (\S+)/.exec(added)![1]!;
      const runnerEnv = envWithout(['SCREENPOP_API_KEY', 'SCREENPOP_API_SECRET']);
      const runner = new RunnerProcess(
        await group.spawnRunner(
          'runner',
          [
            '--relay-url',
            relay.url,
            '--relay-tenant',
            sim.tenant,
            '--enrol',
            code,
            '--heartbeat-sec',
            '2',
          ],
          { env: runnerEnv },
        ),
      );
      const { desktop, desktopPops, keychain, account, identity } = await signInDesktop(
        relay,
        sim.tenant,
        idp,
        'alice',
        stops,
      );
      // No relay user and no mapping for alice: the phone system's list said 101 is hers.
      expect(identity()).toMatchObject({ user: email, via: 'oidc', extensions: ['101'] });
      await runner.waitForState('connected', 30_000);

      await expectEachGetsOwnRings(sim, desktopPops, runner, 3);

      // Both ways in delivered the rings, and the relay kept each event once.
      const metrics = await (await fetch(relay.url + '/metrics')).text();
      expect(metrics).toMatch(
        new RegExp(`relay_upstream_state\\{tenant="${sim.tenant}",state="connected"\\} 1`),
      );
      const count = (result: string) =>
        Number(
          new RegExp(
            `relay_upstream_events_total\\{tenant="${sim.tenant}",result="${result}"\\} (\\d+)`,
          ).exec(metrics)?.[1] ?? 0,
        );
      // Nine rings came by both ways: whichever came second was a duplicate, kept once.
      const webhookDuplicates = Number(
        /^relay_webhooks_duplicate_total (\d+)$/m.exec(metrics)?.[1],
      );
      expect(count('stored') + count('duplicate')).toBeGreaterThanOrEqual(9);
      expect(webhookDuplicates + count('duplicate')).toBeGreaterThanOrEqual(9);

      // The API secret exists only in the relay's environment: not in its config file, not in
      // the runner's environment, output or log, not in the desktop's keychain.
      const runnerText = runner.proc.stdout.map((l) => l.text).join('\n') + runner.proc.describe();
      for (const secret of [sim.secret, sim.key]) {
        expect(Object.values(runnerEnv)).not.toContain(secret);
        expect(runnerText).not.toContain(secret);
        expect((await keychain.getSecret(account)) ?? '').not.toContain(secret);
      }
      expect(relay.proc.describe()).not.toContain(sim.secret);
      expect(runner.badLines).toEqual([]);

      // Issue 33 item 2: the administrator revokes alice by her address (she has no relay user:
      // the phone system's list maps her). Her desktop's session ends at once and stays ended;
      // the runner's user is untouched.
      expect(await relay.users('revoke', email)).toContain('refused from now on');
      await until(
        () => desktop.engine.status().state === 'needs-attention',
        'the revoked desktop to stop',
        15_000,
        () => JSON.stringify(desktop.engine.status()),
      );
      expect(desktop.engine.status().reason).toBe(
        'Your administrator has ended your access to calls through the relay.',
      );
      expect(runner.statuses().at(-1)).toMatchObject({ state: 'connected' });
    });
  },
);

interface HealthAnswer {
  ok: boolean;
  upstream?: Record<string, { state: string; since: string }>;
}

/**
 * Rings `count` times each to 101 (the desktop's user), 102 (the runner's) and 103 (nobody here),
 * then requires each side to have popped exactly its own rings, once, a second after the last.
 */
async function expectEachGetsOwnRings(
  sim: SimProcess,
  desktopPops: Pop[],
  runner: RunnerProcess,
  count: number,
): Promise<void> {
  const sent = { '101': [] as string[], '102': [] as string[] };
  for (let i = 0; i < count; i++) {
    sent['101'].push(await sim.ring(`+1415555${String(1000 + i)}`, '101'));
    sent['102'].push(await sim.ring(`+1415555${String(2000 + i)}`, '102'));
    await sim.ring(`+1415555${String(3000 + i)}`, '103');
  }
  await until(
    () => desktopPops.length >= count && runner.pops().length >= count,
    `both to pop their ${count} rings`,
    30_000,
    () => `desktop pops ${desktopPops.length}\n${runner.explain()}`,
  );
  await new Promise((r) => setTimeout(r, 1_000)); // anything more would have come by now
  expect(desktopPops.map((p) => p.callId).sort()).toEqual([...sent['101']].sort());
  expect(
    runner
      .pops()
      .map((p) => p.call_id)
      .sort(),
  ).toEqual([...sent['102']].sort());
}
