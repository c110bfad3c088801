import { afterEach, describe, expect, it } from 'vitest';
import { TestClient, relayConfig, startMemoryRelay, startTokenService, SECRET } from './helpers.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function memoryRelay(baseUrl: string) {
  const { relay, store } = await startMemoryRelay(
    relayConfig({ acme: { baseUrl, secrets: [SECRET] } }),
  );
  cleanups.push(async () => {
    await relay.close();
    await store.close();
  });
  return relay;
}

describe('client token check against the tenant service', () => {
  it('asks under the tenant base address, path included (service-spec.md: paths are relative to it)', async () => {
    const service = await startTokenService(new Set(['tok']), new Set(), '/t/acme');
    cleanups.push(() => service.close());
    const relay = await memoryRelay(service.baseUrl);
    const client = await TestClient.connect(relay.clientUrl('acme'), 'tok', {
      extensions: ['101'],
    });
    cleanups.push(() => client.close());
    expect(client.controls.map((c) => c.type)).toEqual(['ready']);
    expect(service.calls()).toBe(1);
  });
});

describe('hello size', () => {
  it('admits the largest hello the protocol allows (200 entries of 40 characters per list)', async () => {
    const service = await startTokenService(new Set(['tok']));
    cleanups.push(() => service.close());
    const relay = await memoryRelay(service.baseUrl);
    const entries = (first: string) =>
      Array.from({ length: 200 }, (_, i) => `${first}${String(i).padStart(39, '0')}`);
    const client = await TestClient.connect(relay.clientUrl('acme'), 'tok', {
      extensions: entries('1'),
      dids: entries('+'),
      events: Array.from({ length: 200 }, (_, i) => 100_000_000 + i),
    });
    cleanups.push(() => client.close());
    expect(client.controls.map((c) => c.type)).toEqual(['ready']);
  });
});
