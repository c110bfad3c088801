/**
 * Black box: the runner behind a real forward proxy (tinyproxy) and against servers whose TLS
 * certificates come from a private CA made with openssl (rigs/certs.ts). The simulator
 * serves https/wss and the relay wss, both on 127.0.0.1; the runner is given HTTPS_PROXY (with no
 * NO_PROXY: loopback is not bypassed, so the proxy's log proves each connection went through it)
 * and `--ca-file`. Faults: a proxy that wants a password and gets a wrong one, a proxy that is down,
 * a certificate for another host, an expired one, and one from a CA the runner was not given.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { certToolsAvailable } from '../../rigs/certs.ts';
import { useTestCa } from '../support/test-ca.ts';
import { envWithoutProxy, ForwardProxy, tinyproxyAvailable } from './forward-proxy.ts';
import { RingLedger } from './ledger.ts';
import { freePort, ProcessGroup, sleep } from '../../rigs/processes.ts';
import { expectHealthy, HEARTBEAT_ARGS } from './scenario.ts';
import { RelayProcess, SimProcess, startRunner, type RunnerProcess } from './services.ts';

const run = tinyproxyAvailable(import.meta.filename) && certToolsAvailable(import.meta.filename);

/** The environment without any proxy of the machine running the tests. */
const cleanEnv = () => envWithoutProxy();

let group: ProcessGroup;
const ca = useTestCa('runner-network-ca-', run);
beforeEach(() => {
  group = new ProcessGroup();
});
afterEach(async () => {
  await group.cleanup();
});

async function tlsSim(cert: { certFile: string; keyFile: string }): Promise<SimProcess> {
  return new SimProcess(group, {
    traffic: 3,
    exclude: ['101'],
    tls: { ...cert, caFile: ca().caFile },
    // The simulator's webhooks go to the relay's https: it trusts the test CA the usual Node way.
    env: { ...cleanEnv(), NODE_EXTRA_CA_CERTS: ca().caFile },
  }).start();
}

const certFiles = ({ certFile, keyFile }: { certFile: string; keyFile: string }) => ({
  certFile,
  keyFile,
});

function runnerFor(
  sim: SimProcess,
  env: NodeJS.ProcessEnv,
  args: string[] = ['--ca-file', ca().caFile],
): RunnerProcess {
  return startRunner(group, {
    baseUrl: sim.baseUrl,
    key: sim.key,
    secret: sim.secret,
    args: [...HEARTBEAT_ARGS, ...args],
    env,
  });
}

/** The runner's flags for the test CA and this relay, in `mode`. */
function relayArgs(sim: SimProcess, relay: RelayProcess, mode: 'auto' | 'relay'): string[] {
  const url = relay.url.replace(/^http/, 'ws');
  return [
    '--ca-file',
    ca().caFile,
    '--relay-url',
    url,
    '--relay-tenant',
    sim.tenant,
    '--event-source',
    mode,
  ];
}

/** Every stdout line and the stderr of the runner, where no secret may appear. */
function everything(runner: RunnerProcess): string {
  return runner.proc.stdout.map((l) => l.text).join('\n') + runner.proc.stderr();
}

describe.runIf(run)(
  'screenpop-headless behind a proxy, with a private CA',
  { timeout: 90_000 },
  () => {
    it('goes through HTTPS_PROXY for the API, the service socket and the relay socket, trusting --ca-file', async () => {
      const proxy = await new ForwardProxy(group).start();
      const sim = await tlsSim(ca().issue('sim'));
      const relay = await new RelayProcess(group, {
        tenant: sim.tenant,
        serviceUrl: sim.baseUrl,
        tls: certFiles(ca().issue('relay')),
        env: { ...cleanEnv(), NODE_EXTRA_CA_CERTS: ca().caFile },
      }).start();
      await sim.control('POST', 'webhooks', {
        url: relay.webhookUrl(),
        secret: relay.webhookSecret,
      });
      const runner = runnerFor(
        sim,
        { ...cleanEnv(), HTTPS_PROXY: proxy.url() },
        relayArgs(sim, relay, 'auto'),
      );
      await runner.waitForState('connected', 60_000);
      const ledger = new RingLedger(runner);
      await ledger.ringAndSettle(sim);
      await ledger.ringAndSettle(sim);
      expectHealthy(runner, ledger, 2);
      // get_token, extension/list, the server-clock HEAD and the subscribe socket: one tunnel each
      // (no keep-alive), so at least four to the simulator; the relay's socket is one more.
      expect(proxy.connectsTo(sim.port), proxy.log()).toBeGreaterThanOrEqual(4);
      expect(proxy.connectsTo(relay.port), proxy.log()).toBeGreaterThanOrEqual(1);
      expect(runner.proc.stderr()).toMatch(/"via":"proxy 127\.0\.0\.1:\d+"/);
    });

    it('authenticates to a Basic proxy, and a wrong password is a plain status naming the proxy, never shown', async () => {
      const auth = { user: 'agent7', password: 'pr0xy-Pa55word' };
      const proxy = await new ForwardProxy(group, auth).start();
      const sim = await tlsSim(ca().issue('sim-auth'));
      const good = runnerFor(sim, { ...cleanEnv(), https_proxy: proxy.url() });
      await good.waitForState('connected', 60_000);
      const ledger = new RingLedger(good);
      await ledger.ringAndSettle(sim);
      expectHealthy(good, ledger, 1);
      expect(proxy.connectsTo(sim.port)).toBeGreaterThanOrEqual(2);
      expect(everything(good)).not.toContain(auth.password);
      await good.proc.stop();

      const wrong = { user: 'agent7', password: 'Wr0ng-pa55word' };
      const bad = runnerFor(sim, { ...cleanEnv(), HTTPS_PROXY: proxy.url(wrong) });
      const exit = await bad.proc.exit;
      const status = bad.statuses().at(-1);
      expect(status, bad.explain()).toMatchObject({ state: 'needs-attention' });
      expect(String(status?.reason)).toBe(
        `The proxy 127.0.0.1:${proxy.port} did not accept the proxy user name and password.`,
      );
      expect(exit.code).toBe(3);
      expect(everything(bad)).not.toContain(wrong.password);
      expect(everything(bad)).not.toContain(
        Buffer.from(`${wrong.user}:${wrong.password}`).toString('base64'),
      );
    });

    it('says which proxy is down and keeps trying with a back-off, not a tight loop', async () => {
      const sim = await tlsSim(ca().issue('sim-down'));
      const port = await freePort(); // nothing listens there
      const runner = runnerFor(sim, {
        ...cleanEnv(),
        HTTPS_PROXY: `http://someone:d0wn-proxy-secret@127.0.0.1:${port}`,
      });
      await runner.waitFor(
        () => runner.statuses().some((s) => String(s.reason).includes('proxy')),
        'a status about the proxy',
        20_000,
      );
      const status = runner.statuses().find((s) => String(s.reason).includes('proxy'));
      expect(status).toMatchObject({
        state: 'offline',
        reason: `The proxy 127.0.0.1:${port} cannot be reached.`,
      });
      await sleep(6_000);
      expect(runner.proc.running(), runner.explain()).toBe(true);
      // A back-off, not a loop: a handful of attempts in those seconds, each logged once.
      const attempts = runner.proc.stderr().match(/could not be reached \(ECONNREFUSED\)/g) ?? [];
      expect(attempts.length).toBeGreaterThanOrEqual(1);
      expect(attempts.length).toBeLessThan(40);
      expect(everything(runner)).not.toContain('d0wn-proxy-secret');
    });

    it("names the relay's host when the relay's certificate is for another name, and stops", async () => {
      const sim = await tlsSim(ca().issue('sim-ok'));
      const relay = await new RelayProcess(group, {
        tenant: sim.tenant,
        serviceUrl: sim.baseUrl,
        tls: certFiles(ca().issue('relay-other', { hosts: ['DNS:relay.other.example'] })),
        env: { ...cleanEnv(), NODE_EXTRA_CA_CERTS: ca().caFile },
      }).start();
      // The relay alone: its socket's fault is the status (in auto mode the direct stream's state
      // decides the combined one, see status.ts combineStatuses).
      const runner = runnerFor(sim, cleanEnv(), relayArgs(sim, relay, 'relay'));
      const exit = await runner.proc.exit;
      const host = `127.0.0.1:${relay.port}`;
      expect(runner.statuses().at(-1), runner.explain()).toMatchObject({
        state: 'needs-attention',
        reason: `The certificate ${host} presented is for another name: it is not ${host}'s.`,
      });
      expect(exit.code).toBe(3);
    });

    for (const [what, issue, args, words] of [
      [
        'a certificate for another host',
        () => ca().issue('other-host', { hosts: ['DNS:other.example'] }),
        ['--ca-file'],
        (host: string) =>
          `The certificate ${host} presented is for another name: it is not ${host}'s.`,
      ],
      [
        'an expired certificate',
        () => ca().issue('expired', { expired: true }),
        ['--ca-file'],
        (host: string) => `${host}'s certificate has expired or is not valid yet.`,
      ],
      [
        'a certificate from a CA it was not given',
        () => ca().issue('untrusted'),
        [],
        (host: string) => `${host}'s certificate is not from an authority this computer trusts.`,
      ],
    ] as const) {
      it(`stops with a plain status naming the host for ${what}, without a retry loop`, async () => {
        const sim = await tlsSim(issue());
        const runner = runnerFor(sim, cleanEnv(), args.length ? ['--ca-file', ca().caFile] : []);
        const exit = await runner.proc.exit;
        const host = new URL(sim.baseUrl).host;
        expect(runner.statuses().at(-1), runner.explain()).toMatchObject({
          state: 'needs-attention',
          reason: words(host),
        });
        // Exit code 3 (needs attention): it stopped instead of retrying.
        expect(exit.code).toBe(3);
      });
    }
  },
);
