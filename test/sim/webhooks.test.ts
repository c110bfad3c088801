import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { signBody, startSimulator } from '../../src-sim/index.ts';
import type { Simulator } from '../../src-sim/index.ts';
import { retryDelayMs } from '../../src-sim/webhooks.ts';
import { getToken, openSocket } from './helpers.ts';
import { waitFor } from '../../rigs/wait.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

/** A webhook receiver on 127.0.0.1 whose answer each test chooses: a status, or silence. */
async function startReceiver(clock: { now(): number }) {
  const received: Received[] = [];
  let answer: number | 'hang' = 200;
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks), at: clock.now() });
      if (answer === 'hang') hanging.push(res);
      else res.writeHead(answer).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/screenpop`,
    received,
    answerWith: (a: number | 'hang') => (answer = a),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('webhook signature', () => {
  it('matches the known-answer vector of docs/wire-protocol.md', () => {
    expect(signBody("It's a Secret to Everybody", 'Hello, World!')).toBe(
      'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    );
    expect(signBody("It's a Secret to Everybody", Buffer.from('Hello, World!'))).toBe(
      'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    );
    expect(signBody('other', 'Hello, World!')).not.toBe(
      signBody("It's a Secret to Everybody", 'Hello, World!'),
    );
  });

  it('retries after 1 s, 2 s, 4 s ... capped at one hour', () => {
    expect([1, 2, 3, 4, 12, 13, 20].map(retryDelayMs)).toEqual([
      1000, 2000, 4000, 8000, 2_048_000, 3_600_000, 3_600_000,
    ]);
  });
});

describe('simulator webhook delivery', () => {
  let sim: Simulator | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  afterEach(async () => {
    await sim?.close();
    await receiver?.close();
  });

  it('POSTs the exact WebSocket frame bytes, signed, only for the configured events', async () => {
    const clock = new FakeClock();
    sim = await startSimulator({ clock });
    receiver = await startReceiver(clock);
    const secret = 'whsec_ünïcode-secret';
    const id = sim.addWebhook({ url: receiver.url, secret, events: [30011] });
    expect(sim.listWebhooks()).toEqual([
      { id, tenant: sim.tenant, url: receiver.url, events: [30011] },
    ]);
    const socket = await openSocket(sim, (await getToken(sim)).access_token);
    await socket.subscribe([30011]);
    sim.emit(30009, { extension: '101' });
    sim.ring({ from: '+4930123456', to: '101' });
    await socket.waitFrames(2);
    await waitFor(() => sim!.stats().webhookDelivered === 1, 'delivery', { timeoutMs: 3000 });
    const [got] = receiver.received;
    expect(receiver.received).toHaveLength(1);
    expect(got!.body.toString('utf8')).toBe(socket.frames[1]);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['x-service-signature']).toBe(signBody(secret, got!.body));
    expect(sim.stats()).toMatchObject({
      webhookAttempts: 1,
      webhookDelivered: 1,
      webhookPending: 0,
    });
    socket.close();

    sim.removeWebhook(id);
    sim.ring({ from: '+4930123456', to: '102' });
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received).toHaveLength(1);
  });

  it("carries only its own tenant's events, as a webhook configured in that tenant's console", async () => {
    sim = await startSimulator();
    receiver = await startReceiver({ now: () => Date.now() });
    const globex = await startReceiver({ now: () => Date.now() });
    try {
      sim.addWebhook({ url: receiver.url, secret: 's3cret' });
      sim.addWebhook({ url: globex.url, secret: 'g-s3cret', tenant: 'globex' });
      const forGlobex = sim.emit(30009, { extension: '101' }, { tenant: 'globex' });
      const forAcme = sim.emit(30009, { extension: '101' });
      await waitFor(() => sim!.stats().webhookDelivered === 2, 'two deliveries', {
        timeoutMs: 3000,
      });
      const ids = (r: { received: Received[] }) =>
        r.received.map((x) => (JSON.parse(x.body.toString()) as { event_id: string }).event_id);
      expect(ids(receiver)).toEqual([forAcme.event_id]);
      expect(ids(globex)).toEqual([forGlobex.event_id]);
    } finally {
      await globex.close();
    }
  });

  it('retries a non-2xx answer on the sim clock: 1 s, 2 s, 4 s, then stops on success', async () => {
    const clock = new FakeClock();
    sim = await startSimulator({ clock });
    receiver = await startReceiver(clock);
    receiver.answerWith(500);
    sim.addWebhook({ url: receiver.url, secret: 's3cret' });
    const t0 = clock.now();
    sim.ring({ from: '+15551234', to: '101' });
    const r = receiver;
    // Time moves only once the simulator has seen the failure, so its retry timer is already set.
    const failed = (n: number) =>
      waitFor(() => sim!.stats().webhookFailedAttempts === n, `${n} failures`, { timeoutMs: 3000 });
    await failed(1);
    for (const [wait, total] of [
      [1000, 2],
      [2000, 3],
      [4000, 4],
    ] as const) {
      await clock.advance(wait - 1);
      await new Promise((res) => setTimeout(res, 30));
      expect(r.received).toHaveLength(total - 1);
      if (total === 4) r.answerWith(204);
      await clock.advance(1);
      await waitFor(() => r.received.length === total, `attempt ${total}`, { timeoutMs: 3000 });
      if (total < 4) await failed(total);
    }
    expect(r.received.map((x) => x.at - t0)).toEqual([0, 1000, 3000, 7000]);
    expect(new Set(r.received.map((x) => x.body.toString())).size).toBe(1);
    await waitFor(() => sim!.stats().webhookDelivered === 1, 'delivery');
    expect(sim.stats()).toMatchObject({
      webhookAttempts: 4,
      webhookFailedAttempts: 3,
      webhookDelivered: 1,
      webhookPending: 0,
    });
    await clock.advance(3_600_000);
    expect(r.received).toHaveLength(4);
  });

  it('treats no answer within 10 s (sim clock) as a failure and retries', async () => {
    const clock = new FakeClock();
    sim = await startSimulator({ clock });
    receiver = await startReceiver(clock);
    receiver.answerWith('hang');
    sim.addWebhook({ url: receiver.url, secret: 's3cret' });
    sim.emit(30015, { mailbox: '101' });
    const r = receiver;
    await waitFor(() => r.received.length === 1, 'the first attempt');
    await clock.advance(9_999);
    await new Promise((res) => setTimeout(res, 50));
    await clock.advance(1_000);
    await new Promise((res) => setTimeout(res, 50));
    expect(r.received).toHaveLength(1);
    r.answerWith(200);
    await clock.advance(1);
    await waitFor(() => r.received.length === 2, 'retry after time-out', { timeoutMs: 3000 });
    expect(r.received[1]!.at - r.received[0]!.at).toBe(11_000);
    await waitFor(() => sim!.stats().webhookDelivered === 1, 'delivery');
  });

  it('gives up 24 hours after the event', async () => {
    const clock = new FakeClock();
    sim = await startSimulator({ clock });
    receiver = await startReceiver(clock);
    receiver.answerWith(503);
    sim.addWebhook({ url: receiver.url, secret: 's3cret' });
    sim.emit(30007, { trunk: 'main', status: 'down' });
    const r = receiver;
    const t0 = clock.now();
    await waitFor(() => r.received.length === 1, 'the first attempt');
    for (let i = 0; i < 100 && sim.stats().webhookPending > 0; i++) {
      const count = r.received.length;
      // Let the 503 reach the simulator, so its retry timer is set before time moves.
      await waitFor(() => sim!.stats().webhookFailedAttempts === count, `${count} failures`, {
        timeoutMs: 3000,
      });
      if (sim.stats().webhookPending === 0) break;
      await clock.advance(retryDelayMs(count));
      if (sim.stats().webhookPending > 0)
        await waitFor(() => r.received.length === count + 1, `attempt ${count + 1}`, {
          timeoutMs: 3000,
        });
    }
    const offsets = r.received.map((x) => x.at - t0);
    expect(sim.stats()).toMatchObject({ webhookGaveUp: 1, webhookPending: 0, webhookDelivered: 0 });
    expect(offsets.at(-1)).toBeLessThanOrEqual(86_400_000);
    expect(86_400_000 - offsets.at(-1)!).toBeLessThan(3_600_000);
    const gaps = offsets.slice(1).map((o, i) => o - offsets[i]!);
    expect(gaps.slice(0, 4)).toEqual([1000, 2000, 4000, 8000]);
    expect(Math.max(...gaps)).toBe(3_600_000);
  });

  it('rejects a webhook URL that is not http(s) and an empty secret', async () => {
    sim = await startSimulator();
    expect(() => sim!.addWebhook({ url: 'ftp://example.com/x', secret: 's' })).toThrow(TypeError);
    expect(() => sim!.addWebhook({ url: 'http://127.0.0.1:1/x', secret: '' })).toThrow(TypeError);
  });
});
