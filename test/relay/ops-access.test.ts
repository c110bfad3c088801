import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { relayConfig, startMemoryRelay } from '../../rigs/relay/helpers.ts';

// /metrics and /healthz's detail name tenants (issue 33 item 5): with metricsFrom "loopback" only
// a client on this host reads them. A client from another address is this host's own non-loopback
// address, which the kernel reports as the socket's remote address.
const external = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe('who may read /metrics', () => {
  it.skipIf(!external)(
    'answers 404 to a client not on this host with metricsFrom "loopback", 200 on loopback',
    async () => {
      const config = relayConfig(
        { acme: { baseUrl: 'http://127.0.0.1:9', secrets: ['s'.repeat(20)] } },
        { host: '0.0.0.0', metricsFrom: 'loopback' },
      );
      const { relay } = await startMemoryRelay(config);
      closers.push(() => relay.close());
      const port = new URL(relay.url).port;
      const local = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(local.status).toBe(200);
      expect(await local.text()).toContain('relay_webhooks_received_total');
      const remote = await fetch(`http://${external}:${port}/metrics`);
      expect(remote.status).toBe(404);
      expect(await remote.text()).not.toContain('relay_');
      // Health stays answerable from anywhere (a load balancer's probe), without tenant detail.
      const health = await fetch(`http://${external}:${port}/healthz`);
      expect(await health.json()).toEqual({ ok: true });
    },
  );

  it.skipIf(!external)('keeps answering everyone by default (metricsFrom "anywhere")', async () => {
    const config = relayConfig(
      { acme: { baseUrl: 'http://127.0.0.1:9', secrets: ['s'.repeat(20)] } },
      { host: '0.0.0.0' },
    );
    const { relay } = await startMemoryRelay(config);
    closers.push(() => relay.close());
    const port = new URL(relay.url).port;
    expect((await fetch(`http://${external}:${port}/metrics`)).status).toBe(200);
  });
});
