/**
 * Black box: the relay's own connections out go through the one transport (src-relay/outbound.ts),
 * as the runner's do (runner-network.test.ts). The relay process (`node
 * dist-relay/screenpop-relay.cjs`) is given HTTPS_PROXY, a real forward proxy (tinyproxy; no
 * NO_PROXY, so loopback is not bypassed and the proxy's log proves the way), and RELAY_CA_FILE, a
 * private CA made with openssl; the tenant's phone system is the simulator serving https with a
 * certificate from that CA, which neither Node's roots nor the system's store know. A desktop is
 * admitted only if the relay checked its token there, through the proxy, trusting the CA. (Before
 * outbound.ts the relay checked tokens with Node's global fetch: no proxy, no CA file, and this
 * desktop was refused with 503.)
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { relayClientPath } from '../../src-shared/relay/relay-protocol.ts';
import { certToolsAvailable } from '../../rigs/certs.ts';
import { useTestCa } from '../support/test-ca.ts';
import { directTransport } from '../../rigs/direct-transport.ts';
import { TestClient } from '../../rigs/relay/helpers.ts';
import { envWithoutProxy, ForwardProxy, tinyproxyAvailable } from './forward-proxy.ts';
import { ProcessGroup } from '../../rigs/processes.ts';
import { RelayProcess, SimProcess } from './services.ts';

const run = tinyproxyAvailable(import.meta.filename) && certToolsAvailable(import.meta.filename);

/** The environment without any proxy or CA file of the machine running the tests. */
const cleanEnv = () => envWithoutProxy(['RELAY_CA_FILE']);

let group: ProcessGroup;
const ca = useTestCa('relay-network-ca-', run);
beforeEach(() => {
  group = new ProcessGroup();
});
afterEach(async () => {
  await group.cleanup();
});

/** The simulator on https, its certificate from the test CA; and a desktop's access token from it. */
async function httpsPhoneSystem(): Promise<{ sim: SimProcess; token: string }> {
  const sim = await new SimProcess(group, {
    tls: { ...ca().issue('phone-system'), caFile: ca().caFile },
    env: cleanEnv(),
  }).start();
  const client = new ServiceClient({
    baseUrl: sim.baseUrl,
    clock: systemClock,
    fetch: directTransport({ caFile: ca().caFile }).fetch,
  });
  const { accessToken } = await client.getToken(sim.key, sim.secret);
  return { sim, token: accessToken };
}

const streamUrl = (relay: RelayProcess, tenant: string) =>
  relay.url.replace(/^http/, 'ws') + relayClientPath(tenant);

describe.runIf(run)("the relay's connections out", { timeout: 60_000 }, () => {
  it("checks a desktop's token through HTTPS_PROXY, trusting RELAY_CA_FILE for an https phone system", async () => {
    const proxy = await new ForwardProxy(group).start();
    const { sim, token } = await httpsPhoneSystem();
    const relay = await new RelayProcess(group, {
      tenant: sim.tenant,
      serviceUrl: sim.baseUrl,
      env: { ...cleanEnv(), HTTPS_PROXY: proxy.url(), RELAY_CA_FILE: ca().caFile },
    }).start();

    const desktop = await TestClient.connect(streamUrl(relay, sim.tenant), token, {
      extensions: ['101'],
    });
    await desktop.close();
    // The check went through the proxy (a CONNECT to the phone system), and the relay says so.
    expect(proxy.connectsTo(sim.port), proxy.log()).toBeGreaterThanOrEqual(1);
    const log = relay.proc.stderr();
    expect(log).toContain(`"target":"https://127.0.0.1:${sim.port}"`);
    expect(log).toMatch(new RegExp(`"via":"proxy 127\\.0\\.0\\.1:${proxy.port}"`));
    // A made-up token is asked about the same way, and refused by the phone system (not by a fault).
    await expect(
      TestClient.connect(streamUrl(relay, sim.tenant), 'made-up-token', { extensions: ['101'] }),
    ).rejects.toThrow('handshake refused: 401');
  });

  it('without the CA file the phone system is not trusted: the desktop is refused, 503', async () => {
    const { sim, token } = await httpsPhoneSystem();
    const relay = await new RelayProcess(group, {
      tenant: sim.tenant,
      serviceUrl: sim.baseUrl,
      env: cleanEnv(),
    }).start();
    await expect(
      TestClient.connect(streamUrl(relay, sim.tenant), token, { extensions: ['101'] }),
    ).rejects.toThrow('handshake refused: 503');
  });
});
