import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../rigs/wait.ts';
import {
  TestClient,
  relayConfig,
  startMemoryRelay,
  startTokenService,
  SECRET,
} from '../../rigs/relay/helpers.ts';

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
  it('asks under the tenant base address, path included (docs/wire-protocol.md section 1: paths are relative to it)', async () => {
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
    // The longest DID (src-shared/rules/phone-number-rules.ts): 40 characters, 17 digits.
    const dids = Array.from(
      { length: 200 },
      (_, i) =>
        `+${String(i)
          .padStart(17, '0')
          .replace(/^(\d)/, `$1${' '.repeat(22)}`)}`,
    );
    const client = await TestClient.connect(relay.clientUrl('acme'), 'tok', {
      extensions: entries('1'),
      dids,
      events: Array.from({ length: 200 }, (_, i) => 100_000_000 + i),
    });
    cleanups.push(() => client.close());
    expect(client.controls.map((c) => c.type)).toEqual(['ready']);
  });
});

describe('token checks in flight', () => {
  it('asks the service at most maxInFlight at once; the rest wait their turn, and past maxQueued get 503 without a call', async () => {
    // A tenant service that holds every answer: each check stays in flight until released.
    const held: http.ServerResponse[] = [];
    const server = http.createServer((_req, res) => held.push(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { relay, store } = await startMemoryRelay(
      relayConfig(
        { acme: { baseUrl, secrets: [SECRET] } },
        { auth: { timeoutMs: 30_000, maxInFlight: 2, maxQueued: 1 } },
      ),
    );
    cleanups.push(async () => {
      await relay.close();
      await store.close();
    });
    const handshake = (token: string) =>
      TestClient.connect(relay.clientUrl('acme'), token, {}).catch((err: Error) => err);
    const first = ['made-up-1', 'made-up-2'].map(handshake);
    await waitFor(() => held.length === 2, 'two checks held at the service');
    const third = handshake('made-up-3'); // waits for a turn
    await waitFor(() => relay.metrics.authQueued() === 1, 'the third check queued');
    // The queue is full: refused at once, without a call.
    expect(String(await handshake('made-up-4'))).toMatch(/refused: 503/);
    expect(held).toHaveLength(2);
    const answer = (res: http.ServerResponse) => {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ errcode: 10002, errmsg: 'TOKEN EXPIRED' }));
    };
    answer(held[0]!);
    await waitFor(() => held.length === 3, 'the third check asked once a turn was free');
    answer(held[1]!);
    answer(held[2]!);
    for (const result of await Promise.all([...first, third]))
      expect(String(result)).toMatch(/refused: 401/);
  });
});
