import { afterEach, describe, expect, it } from 'vitest';
import { TestClient, relayConfig, startMemoryRelay, startTokenService, SECRET } from './helpers.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('client token check against the tenant service', () => {
  it('asks under the tenant base address, path included (service-spec.md: paths are relative to it)', async () => {
    const service = await startTokenService(new Set(['tok']), new Set(), '/t/acme');
    cleanups.push(() => service.close());
    const { relay, store } = await startMemoryRelay(
      relayConfig({ acme: { baseUrl: service.baseUrl, secrets: [SECRET] } }),
    );
    cleanups.push(async () => {
      await relay.close();
      await store.close();
    });
    const client = await TestClient.connect(relay.clientUrl('acme'), 'tok', {
      extensions: ['101'],
    });
    cleanups.push(() => client.close());
    expect(client.controls.map((c) => c.type)).toEqual(['ready']);
    expect(service.calls()).toBe(1);
  });
});
