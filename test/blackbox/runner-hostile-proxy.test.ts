/**
 * Black box: the runner behind a proxy that misbehaves (fixtures/hostile-proxy.ts, its own process
 * on 127.0.0.1). The runner, connected through it, is made to reconnect (the simulator closes its
 * socket with 1012) while the proxy faults the next CONNECTs: a reset, a close without an answer, an
 * answer that is not HTTP, an answer dripped one byte a second that never ends. None of these is
 * the proxy's answer to us, so none needs a person: the runner says it is offline (naming the
 * proxy), keeps trying with its back-off, stays up, and is connected and popping again once the
 * proxy behaves. Only a proxy's explicit refusal (407, 403: runner-network.test.ts) stops it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envWithoutProxy } from './forward-proxy.ts';
import { freePort, NODE, ProcessGroup, sleep, until, type Spawned } from '../../rigs/processes.ts';
import { expectHealthy, HEARTBEAT_ARGS } from './scenario.ts';
import { RingLedger } from './ledger.ts';
import { SimProcess, startRunner, type RunnerProcess } from './services.ts';

interface ProxyStats {
  connects: number;
  faulted: Record<string, number>;
  open: number;
  dripping: number;
}

/** fixtures/hostile-proxy.ts as a process, and its control routes. */
class HostileProxy {
  proc!: Spawned;
  port = 0;
  private readonly group: ProcessGroup;

  constructor(group: ProcessGroup) {
    this.group = group;
  }

  async start(): Promise<this> {
    this.port = await freePort();
    const proc = this.group.spawn('hostile proxy', NODE, [
      'test/blackbox/fixtures/hostile-proxy.ts',
      '--port',
      String(this.port),
    ]);
    this.proc = proc;
    await until(
      () =>
        proc.stdout.some((l) => l.text.startsWith('hostile proxy listening')) || !proc.running(),
      'the hostile proxy to start',
      10_000,
      () => proc.describe(),
    );
    return this;
  }

  url(userinfo = ''): string {
    return `http://${userinfo ? `${userinfo}@` : ''}127.0.0.1:${this.port}`;
  }

  async next(
    mode: 'reset' | 'close' | 'garbage' | 'drip' | 'ntlm-drop' | 'pass',
    count: number,
  ): Promise<void> {
    const res = await fetch(`${this.url()}/_hostile/next`, {
      method: 'POST',
      body: JSON.stringify({ mode, count }),
      signal: AbortSignal.timeout(5_000),
    });
    expect(res.status).toBe(200);
  }

  async stats(): Promise<ProxyStats> {
    const res = await fetch(`${this.url()}/_hostile/stats`, { signal: AbortSignal.timeout(5_000) });
    return (await res.json()) as ProxyStats;
  }

  /** CONNECT lines the proxy printed with this mode. */
  faults(mode: string): number {
    return this.proc.stdout.filter((l) => l.text.startsWith('CONNECT ') && l.text.endsWith(mode))
      .length;
  }
}

let group: ProcessGroup;
beforeEach(() => {
  group = new ProcessGroup();
});
afterEach(async () => {
  await group.cleanup();
});

async function connectedBehind(
  args: string[] = HEARTBEAT_ARGS,
  userinfo = '',
): Promise<{
  proxy: HostileProxy;
  sim: SimProcess;
  runner: RunnerProcess;
  ledger: RingLedger;
}> {
  const proxy = await new HostileProxy(group).start();
  const sim = await new SimProcess(group, { traffic: 3, exclude: ['101'] }).start();
  const env = envWithoutProxy();
  const runner = startRunner(group, {
    baseUrl: sim.baseUrl,
    key: sim.key,
    secret: sim.secret,
    args,
    env: { ...env, HTTP_PROXY: proxy.url(userinfo) },
  });
  await runner.waitForState('connected', 30_000);
  return { proxy, sim, runner, ledger: new RingLedger(runner) };
}

describe('screenpop-headless behind a hostile proxy', { timeout: 120_000 }, () => {
  for (const mode of ['reset', 'close', 'garbage'] as const) {
    it(`stays up and reconnects when the proxy answers the next CONNECTs with a ${mode}`, async () => {
      const { proxy, sim, runner, ledger } = await connectedBehind();
      await ledger.ringAndSettle(sim);
      const mark = runner.lines.length;
      await proxy.next(mode, 3);
      await sim.control('POST', 'faults/close', { code: 1012 });
      await runner.waitForDrop(mark);
      await runner.waitFor(
        () => proxy.faults(mode) >= 3,
        `three faulted CONNECTs (${mode})`,
        60_000,
      );
      await runner.waitForState('connected', 60_000);
      const during = runner.statuses().slice(0);
      expect(during.map((s) => s.state)).not.toContain('needs-attention');
      // What it said while the proxy faulted names the proxy and is a transient state.
      const said = during.filter((s) => String(s.reason).includes(`127.0.0.1:${proxy.port}`));
      expect(said.length, runner.explain()).toBeGreaterThanOrEqual(1);
      for (const s of said) expect(s.state).toBe('offline');
      await ledger.ringAndSettle(sim);
      expectHealthy(runner, ledger, 2);
    });
  }

  it('gives up on a CONNECT answer dripped one byte a second within its deadline, says so, and reconnects when the proxy behaves', async () => {
    // The default heartbeat, as a user runs it: the socket's own silence check (50 s) must not be
    // what ends a CONNECT that never completes; the tunnel's deadline (10 s, absolute) does.
    const { proxy, sim, runner, ledger } = await connectedBehind([]);
    const mark = runner.lines.length;
    await proxy.next('drip', 1_000);
    await sim.control('POST', 'faults/close', { code: 1012 });
    await runner.waitForDrop(mark);
    const dropped = Date.now();
    const named = () =>
      runner.statuses().find((s) => String(s.reason).includes(`127.0.0.1:${proxy.port}`));
    await runner.waitFor(() => named() !== undefined, 'a status naming the proxy', 40_000);
    expect(named(), runner.explain()).toMatchObject({
      state: 'offline',
      reason: `The proxy 127.0.0.1:${proxy.port} did not answer in time.`,
    });
    // Within the deadline and its slack, not the silence check's 50 s.
    expect(named()!.at - dropped).toBeLessThan(30_000);
    expect(runner.proc.stderr()).toMatch(/did not complete its answer within 10 s/);
    await proxy.next('pass', 0);
    await runner.waitForState('connected', 60_000);
    await ledger.ringAndSettle(sim);
    expectHealthy(runner, ledger, 1);
    // Every dripping CONNECT was given up by the runner: none is left open at the proxy.
    let stats = await proxy.stats();
    for (let i = 0; i < 20 && stats.dripping > 0; i++) {
      await sleep(250);
      stats = await proxy.stats();
    }
    expect(stats.faulted.drip).toBeGreaterThanOrEqual(1);
    expect(stats.dripping).toBe(0);
  });

  it('a proxy that drops the connection between NTLM legs: offline naming the proxy, never needs-attention, and connected again once it behaves', async () => {
    const { proxy, sim, runner, ledger } = await connectedBehind(
      HEARTBEAT_ARGS,
      'CORP%5Cagent7:pw',
    );
    const mark = runner.lines.length;
    await proxy.next('ntlm-drop', 3);
    await sim.control('POST', 'faults/close', { code: 1012 });
    await runner.waitForDrop(mark);
    await runner.waitFor(() => proxy.faults('ntlm-drop') >= 3, 'three NTLM drops', 60_000);
    await runner.waitForState('connected', 60_000);
    const during = runner.statuses();
    expect(during.map((s) => s.state)).not.toContain('needs-attention');
    const said = during.filter((s) => String(s.reason).includes(`127.0.0.1:${proxy.port}`));
    expect(said.length, runner.explain()).toBeGreaterThanOrEqual(1);
    for (const s of said) expect(s.state).toBe('offline');
    expect(runner.proc.stderr()).toContain('closed the connection between the NTLM legs');
    await ledger.ringAndSettle(sim);
    expectHealthy(runner, ledger, 1);
  });
});
