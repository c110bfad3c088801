/**
 * Black box: the runner (and the relay) behind squid asking for NTLM or Negotiate (squid.ts: squid
 * with its ntlm_fake_auth and negotiate_kerberos_auth helpers, and a real MIT Kerberos KDC started
 * here on 127.0.0.1). The runner is given only the proxy's address (HTTP_PROXY: the simulator
 * speaks plain http, and every connection still goes through a CONNECT tunnel), and for Negotiate
 * no password at all: the user's ticket from `kinit` in a credential cache (KRB5CCNAME). squid's
 * access log names the user of each tunnel it opened; the runner's log line `proxy-auth` says the
 * scheme, the legs, the connections and the milliseconds the handshake took (printed here).
 *
 * The hostile proxy that drops the connection between NTLM's legs is in
 * runner-hostile-proxy.test.ts; the tunnel's legs against scripted proxies in
 * test/net/proxy-auth.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { relayClientPath } from '../../src-shared/relay/relay-protocol.ts';
import { directTransport } from '../../rigs/direct-transport.ts';
import { TestClient } from '../../rigs/relay/helpers.ts';
import { envWithoutProxy } from './forward-proxy.ts';
import { RingLedger } from './ledger.ts';
import { ProcessGroup, sleep } from '../../rigs/processes.ts';
import { expectHealthy, HEARTBEAT_ARGS } from './scenario.ts';
import { RelayProcess, SimProcess, startRunner, type RunnerProcess } from './services.ts';
import { KerberosRealm, REALM, SquidProxy, squidAndKdcAvailable, USER } from '../../rigs/squid.ts';

const run = squidAndKdcAvailable(import.meta.filename);

/** No proxy, Kerberos setting or ticket cache of the machine running the tests. */
const cleanEnv = () => envWithoutProxy(['KRB5_CONFIG', 'KRB5CCNAME', 'KRB5_KTNAME']);

let group: ProcessGroup;
beforeEach(() => {
  group = new ProcessGroup();
});
afterEach(async () => {
  await group.cleanup();
});

function runnerThrough(sim: SimProcess, env: NodeJS.ProcessEnv): RunnerProcess {
  return startRunner(group, {
    baseUrl: sim.baseUrl,
    key: sim.key,
    secret: sim.secret,
    args: HEARTBEAT_ARGS,
    env: { ...cleanEnv(), ...env },
  });
}

/** The runner's `proxy-auth` log lines (one per change of scheme or identity). */
function authLines(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((l) => l.includes('"msg":"proxy-auth"') || l.includes('"proxy-auth"'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l.slice(l.indexOf('{'))) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/** The runner's last `connected` status line. */
function connectedStatus(runner: RunnerProcess) {
  return runner
    .statuses()
    .filter((s) => s.state === 'connected')
    .at(-1);
}

function everything(runner: RunnerProcess): string {
  return runner.proc.stdout.map((l) => l.text).join('\n') + runner.proc.stderr();
}

describe.runIf(run)('proxy authentication through squid', { timeout: 90_000 }, () => {
  it('NTLM: a full NEGOTIATE / CHALLENGE / AUTHENTICATE exchange per tunnel, and it pops', async () => {
    const squid = await new SquidProxy(group, { ntlm: true }).start();
    const sim = await new SimProcess(group, {
      traffic: 3,
      exclude: ['101'],
      env: cleanEnv(),
    }).start();
    const password = 'Ntlm-Pa55-word';
    const runner = runnerThrough(sim, { HTTP_PROXY: squid.url(`CORP%5Cagent7:${password}`) });
    await runner.waitForState('connected', 60_000);
    const ledger = new RingLedger(runner);
    await ledger.ringAndSettle(sim);
    expectHealthy(runner, ledger, 1);
    // squid's NTLM helper authenticated each tunnel as CORP\agent7 (its log escapes the backslash).
    const users = squid.tunnelsTo(sim.port);
    expect(users.length, squid.log()).toBeGreaterThanOrEqual(2);
    for (const user of users) expect(user).toMatch(/^CORP\\{1,2}agent7$/);
    const [line] = authLines(runner.proc.stderr());
    expect(connectedStatus(runner)).toMatchObject({ proxy_auth: 'NTLM as CORP\\agent7' });
    expect(line, runner.proc.stderr()).toMatchObject({
      scheme: 'NTLM',
      as: 'CORP\\agent7',
      legs: 2,
    });
    console.log(
      `NTLM through squid: ${users.length} tunnels, ${squid.challengesTo(sim.port)} answers 407; first handshake: ${JSON.stringify(line)}`,
    );
    expect(everything(runner)).not.toContain(password);
    // Nor an NTLM message (base64 of `NTLMSSP\0` starts `TlRMTVNTUA`).
    expect(everything(runner)).not.toContain('TlRMTVNTUA');
  });

  it('Negotiate with a Kerberos ticket from a real KDC, no password anywhere: the runner pops and the relay checks tokens through it', async () => {
    const realm = await new KerberosRealm(group).start();
    const squid = await new SquidProxy(group, { negotiate: realm }).start();
    const ticket = realm.kinit('agent7.cc');
    const sim = await new SimProcess(group, {
      traffic: 3,
      exclude: ['101'],
      env: cleanEnv(),
    }).start();
    const runner = runnerThrough(sim, { HTTP_PROXY: squid.url(), ...ticket });
    await runner.waitForState('connected', 60_000);
    const ledger = new RingLedger(runner);
    await ledger.ringAndSettle(sim);
    await ledger.ringAndSettle(sim);
    expectHealthy(runner, ledger, 2);
    const users = squid.tunnelsTo(sim.port);
    expect(users.length, squid.log()).toBeGreaterThanOrEqual(2);
    for (const user of users) expect(user).toBe(`${USER}@${REALM}`);
    const [line] = authLines(runner.proc.stderr());
    expect(line, runner.proc.stderr()).toMatchObject({
      scheme: 'Negotiate',
      as: `${USER}@${REALM}`,
      legs: 1,
      connections: 1,
    });
    // No Kerberos token (SPNEGO's `YII...`) anywhere the runner writes.
    expect(everything(runner)).not.toMatch(/Negotiate YII|"YII[A-Za-z0-9+/]{20}/);
    // The status names the scheme and who, never a token.
    expect(connectedStatus(runner)).toMatchObject({
      proxy_auth: `Negotiate as ${USER}@${REALM}`,
    });
    console.log(
      `Negotiate through squid: ${users.length} tunnels as ${users[0]}, ${squid.challengesTo(sim.port)} answers 407 (one per tunnel before the scheme was known, none after); first handshake: ${JSON.stringify(line)}`,
    );

    // The relay's connections out go through the same transport: its token check is a tunnel
    // through squid, authenticated with the relay's own ticket.
    const relay = await new RelayProcess(group, {
      tenant: sim.tenant,
      serviceUrl: sim.baseUrl,
      env: { ...cleanEnv(), HTTP_PROXY: squid.url(), ...realm.kinit('relay.cc') },
    }).start();
    const client = new ServiceClient({
      baseUrl: sim.baseUrl,
      clock: systemClock,
      fetch: directTransport().fetch,
    });
    const { accessToken } = await client.getToken(sim.key, sim.secret);
    const before = squid.challengesTo(sim.port);
    const desktop = await TestClient.connect(
      relay.url.replace(/^http/, 'ws') + relayClientPath(sim.tenant),
      accessToken,
      { extensions: ['101'] },
    );
    await desktop.close();
    // Admitted: the relay checked the token at the simulator, through squid (asked once, then
    // Negotiate; squid logs the tunnel itself when it closes, and the relay keeps it for the next).
    expect(squid.challengesTo(sim.port), squid.log()).toBeGreaterThan(before);
    const [relayLine] = authLines(relay.proc.stderr());
    expect(relayLine, relay.proc.stderr()).toMatchObject({ scheme: 'Negotiate', legs: 1 });
    console.log(`the relay through squid: ${JSON.stringify(relayLine)}`);
  });

  it('the relay in gateway mode: its token calls and its event stream go through squid with Negotiate', async () => {
    const realm = await new KerberosRealm(group).start();
    const squid = await new SquidProxy(group, { negotiate: realm }).start();
    const sim = await new SimProcess(group, { env: cleanEnv() }).start();
    const relay = await new RelayProcess(group, {
      tenant: sim.tenant,
      serviceUrl: sim.baseUrl,
      gateway: { apiKeyEnv: 'ACME_API_KEY', secretEnv: 'ACME_API_SECRET' },
      env: {
        ...cleanEnv(),
        HTTP_PROXY: squid.url(),
        ...realm.kinit('gateway.cc'),
        ACME_API_KEY: sim.key,
        ACME_API_SECRET: sim.secret,
      },
    }).start();
    // The gateway signs in (get_token) and opens its own stream, both through squid.
    const upstreamState = async () => {
      const health = (await (await fetch(relay.url + '/healthz')).json()) as {
        upstream?: Record<string, { state: string }>;
      };
      return health.upstream?.[sim.tenant]?.state ?? '';
    };
    let state = '';
    for (let i = 0; i < 150 && state !== 'connected'; i++) {
      if (i > 0) await sleep(200);
      state = await upstreamState();
    }
    expect(state, relay.proc.describe() + squid.log()).toBe('connected');
    const [line] = authLines(relay.proc.stderr());
    expect(line, relay.proc.stderr()).toMatchObject({
      scheme: 'Negotiate',
      as: `${USER}@${REALM}`,
    });
    // The stream rides the proxy: when squid stops, the relay's stream drops with it (a stream
    // that went around the proxy would stay connected). squid logs each tunnel as it closes it.
    await squid.proc.stop();
    for (let i = 0; i < 50 && state === 'connected'; i++) {
      await sleep(200);
      state = await upstreamState();
    }
    expect(state, relay.proc.stderr()).not.toBe('connected');
    const users = squid.tunnelsTo(sim.port);
    expect(users.length, squid.log()).toBeGreaterThanOrEqual(1);
    for (const user of users) expect(user).toBe(`${USER}@${REALM}`);
    console.log(
      `the relay's gateway through squid: ${users.length} tunnel(s) as ${users[0]} (token call and stream; the token call's kept connection carries the stream), ${squid.challengesTo(sim.port)} answers 407; first handshake: ${JSON.stringify(line)}; after squid stopped the stream was ${state}`,
    );
  });

  it('a proxy offering Negotiate and Basic: Negotiate with a ticket, Basic without one', async () => {
    const realm = await new KerberosRealm(group).start();
    const squid = await new SquidProxy(group, { negotiate: realm, basic: true }).start();
    const sim = await new SimProcess(group, {
      traffic: 3,
      exclude: ['101'],
      env: cleanEnv(),
    }).start();
    const basic = `${USER}:Basic-Pa55`;
    const withTicket = runnerThrough(sim, {
      HTTP_PROXY: squid.url(basic),
      ...realm.kinit('both.cc'),
    });
    await withTicket.waitForState('connected', 60_000);
    expect(authLines(withTicket.proc.stderr())[0]).toMatchObject({ scheme: 'Negotiate' });
    await withTicket.proc.stop();
    expect(squid.tunnelsTo(sim.port).every((u) => u === `${USER}@${REALM}`)).toBe(true);

    // No ticket (an empty cache): Negotiate cannot start, so the configured Basic is used.
    const without = runnerThrough(sim, {
      HTTP_PROXY: squid.url(basic),
      KRB5_CONFIG: realm.env().KRB5_CONFIG!,
      KRB5CCNAME: `FILE:${realm.dir}/no-such.cc`,
    });
    await without.waitForState('connected', 60_000);
    const ledger = new RingLedger(without);
    await ledger.ringAndSettle(sim);
    expectHealthy(without, ledger, 1);
    expect(authLines(without.proc.stderr())[0]).toMatchObject({ scheme: 'Basic', as: USER });
    expect(squid.tunnelsTo(sim.port)).toContain(USER);
  });

  it('a Kerberos ticket that expires mid-day: needs attention, saying to sign in again', async () => {
    const realm = await new KerberosRealm(group).start();
    const squid = await new SquidProxy(group, { negotiate: realm }).start();
    const sim = await new SimProcess(group, {
      traffic: 3,
      exclude: ['101'],
      env: cleanEnv(),
    }).start();
    const ticket = realm.kinit('short.cc', '8s');
    const issued = Date.now();
    const runner = runnerThrough(sim, { HTTP_PROXY: squid.url(), ...ticket });
    await runner.waitForState('connected', 60_000);
    await sleep(Math.max(0, 9_000 - (Date.now() - issued)));
    // The ticket has expired: the next connection cannot authenticate.
    const mark = runner.lines.length;
    await sim.control('POST', 'faults/close', { code: 1012 });
    await runner.waitForDrop(mark);
    const exit = await runner.proc.exit;
    expect(runner.statuses().at(-1), runner.explain()).toMatchObject({
      state: 'needs-attention',
      reason: `Your Kerberos sign-in for the proxy localhost:${squid.port} is missing or has expired.`,
    });
    expect(exit.code).toBe(3);
  });
});
