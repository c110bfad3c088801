/**
 * docs/walkthrough.md, run as written: its `sh` blocks, read from the document itself, in four
 * "terminals" (each a bash in its own process group, as a terminal runs it; Ctrl+C is SIGINT to
 * that group), with only the ports changed (the simulator's 8080 and the relay's default 8787 to
 * free ones, the relay's through RELAY_PORT). What the document says each step prints is what is
 * checked: the simulator's key is the one the document exports, the webhook is registered, the
 * runner connects through the relay alone and pops the ring the relay delivered (the simulator has
 * no stream open), both paths together pop a ring once, and Ctrl+C stops each program cleanly.
 * Before this test the document was checked by hand once; a changed seed, flag or message would
 * have left it wrong without a failing test. Step 8, the same ring from a Yeastar P-Series PBX
 * (the simulator on member-style reports, a relay tenant with RELAY_TENANT_ACME_PHONE_SYSTEM, the
 * runner with --phone-system), runs as a second test of its own (about 2 s).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv } from '../support/child-env.ts';
import { ownedByThisProcess } from '../../rigs/owned-spawn.ts';
import {
  ensureRelayBuilt,
  ensureRunnerBuilt,
  freePort,
  listening,
  REPO,
  sleep,
  Spawned,
  until,
} from '../../rigs/processes.ts';

const DOC = readFileSync(join(REPO, 'docs/walkthrough.md'), 'utf8');
const YEASTAR_AT = DOC.indexOf('\n## 8. ');
const shBlocks = (text: string) =>
  [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
/** Steps 1-7, the standard service; step 8, the same ring from a Yeastar P-Series PBX. */
const BLOCKS = shBlocks(YEASTAR_AT < 0 ? DOC : DOC.slice(0, YEASTAR_AT));
const YEASTAR_BLOCKS = YEASTAR_AT < 0 ? [] : shBlocks(DOC.slice(YEASTAR_AT));

/** The document's commands with free ports for 8080 (the simulator) and 8787 (the relay). */
function localTo(sim: number, relay: number): (cmd: string) => string {
  return (cmd) =>
    cmd
      .replaceAll('--port 8080', `--port ${sim}`)
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${sim}`)
      .replaceAll('127.0.0.1:8787', `127.0.0.1:${relay}`);
}

const home = mkdtempSync(join(tmpdir(), 'walkthrough-home-'));
const terminals: Spawned[] = [];
afterAll(async () => {
  for (const t of terminals) if (t.running()) killGroup(t, 'SIGKILL');
  await Promise.all(terminals.map((t) => t.exit));
  rmSync(home, { recursive: true, force: true });
});

function killGroup(t: Spawned, signal: NodeJS.Signals): void {
  try {
    process.kill(-t.pid, signal);
  } catch {
    // the group is gone already
  }
}

/** True while any process of the terminal's process group (shell, npm, program) is alive. */
function groupAlive(t: Spawned): boolean {
  try {
    process.kill(-t.pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A terminal running `command` in bash, in its own process group (Ctrl+C reaches all of it). */
function terminal(name: string, command: string, env: NodeJS.ProcessEnv = {}): Spawned {
  const child = spawn(...ownedByThisProcess('bash', ['-c', command]), {
    cwd: REPO,
    env: childEnv({ HOME: home, LANG: 'C.UTF-8', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const t = new Spawned(name, child);
  terminals.push(t);
  return t;
}

/** What a terminal shows: its stdout lines and its stderr. */
function screen(t: Spawned): string {
  return `${t.stdout.map((l) => l.text).join('\n')}\n${t.stderr()}`;
}

function shows(t: Spawned, pattern: RegExp, what: string, timeoutMs = 20_000): Promise<void> {
  return until(
    () => pattern.test(screen(t)),
    `${t.name}: ${what}`,
    timeoutMs,
    () => terminals.map((x) => `${x.describe()}\nstdout:\n${screen(x).slice(-3000)}`).join('\n'),
  );
}

/** A one-shot command of terminal 3 (curl), its stdout parsed as the JSON it prints. */
function run(command: string): Promise<Record<string, unknown>> {
  return new Promise((done, fail) =>
    execFile('bash', ['-c', command], { cwd: REPO, env: childEnv(), timeout: 10_000 }, (e, out) =>
      e ? fail(e) : done(JSON.parse(out) as Record<string, unknown>),
    ),
  );
}

function pops(t: Spawned, callId: unknown): number {
  return t.stdout.filter((l) => {
    try {
      const o = JSON.parse(l.text) as { type?: string; call_id?: string };
      return o.type === 'pop' && o.call_id === callId;
    } catch {
      return false;
    }
  }).length;
}

const connected = /^\{"type":"status","state":"connected"/m;

describe.runIf(process.platform === 'linux')('docs/walkthrough.md, as written', () => {
  it(
    'simulator -> relay -> runner: connects, pops, pops once on both paths, stops on Ctrl+C',
    {
      timeout: 120_000,
    },
    async () => {
      expect(BLOCKS).toHaveLength(7);
      const [simCmd, relayCmd, webhookCmd, runnerCmd, ringCmd, statsCmd, autoCmd] = BLOCKS as [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      ensureRunnerBuilt();
      ensureRelayBuilt(); // npm run relay's prerelay then only checks the build
      const sim = await freePort();
      const relay = await freePort();
      const local = localTo(sim, relay);
      for (const [cmd, port] of [
        [simCmd, '8080'],
        [relayCmd, '8080'],
        [webhookCmd, '8787'],
        [runnerCmd, '8787'],
      ] as const)
        expect(local(cmd), 'the document names its ports as this test expects').not.toContain(port);

      // 1. The simulator, with the key the document's terminal 4 exports.
      const t1 = terminal('terminal 1 (simulator)', local(simCmd));
      await shows(t1, /Press Ctrl\+C to stop\./, 'the simulator banner');
      const key = /SCREENPOP_API_KEY=(\S+)/.exec(runnerCmd)?.[1];
      const secret = /SCREENPOP_API_SECRET=(\S+)/.exec(runnerCmd)?.[1];
      expect(screen(t1)).toContain(`API key:      ${key}`);
      expect(screen(t1)).toContain(`API secret:   ${secret}`);

      // 2. The relay, configured by environment.
      const t2 = terminal('terminal 2 (relay)', local(relayCmd), { RELAY_PORT: String(relay) });
      await shows(
        t2,
        new RegExp(`relay listening on http://127\\.0\\.0\\.1:${relay}`),
        'listening',
      );

      // 3. The webhook pointed at the relay.
      expect(await run(local(webhookCmd))).toMatchObject({ errcode: 0, errmsg: 'SUCCESS' });

      // 4. The runner, through the relay alone.
      const t4 = terminal('terminal 4 (runner, relay)', local(runnerCmd));
      await shows(t4, connected, 'connected');
      await shows(t2, /"msg":"client connected".*"tenant":"acme"/, 'the runner connected');

      // 5. A ring pops, and came by the relay (no stream of its own).
      const ring = await run(local(ringCmd));
      expect(ring).toMatchObject({ errcode: 0 });
      await until(
        () => pops(t4, ring.call_id) === 1,
        'the pop',
        10_000,
        () => screen(t4),
      );
      const stats = (await run(local(statsCmd))).stats as Record<string, number>;
      expect(stats).toMatchObject({ wsOpen: 0, webhookDelivered: 1 });

      // 6. Ctrl+C, then both paths: the next ring pops once.
      killGroup(t4, 'SIGINT');
      await t4.exit; // (the shell itself ends by SIGINT, passed on by npm: the program says how it stopped)
      expect(t4.stderr()).toMatch(/"msg":"stopped".*"exitCode":0/);
      const t4b = terminal('terminal 4 (runner, auto)', local(autoCmd), {
        SCREENPOP_API_KEY: key,
        SCREENPOP_API_SECRET: secret,
      });
      await shows(t4b, connected, 'connected on both paths');
      const again = await run(local(ringCmd));
      await until(
        () => pops(t4b, again.call_id) === 1,
        'the pop',
        10_000,
        () => screen(t4b),
      );
      const deadline = Date.now() + 1_500; // the second copy (stream or relay) arrives meanwhile
      await until(() => Date.now() > deadline, 'a second pop (none expected)', 3_000);
      expect(pops(t4b, again.call_id)).toBe(1);

      // 7. Ctrl+C in terminals 4, 2 and 1: each stops cleanly and frees its port.
      killGroup(t4b, 'SIGINT');
      await t4b.exit;
      expect(t4b.stderr()).toMatch(/"msg":"stopped".*"exitCode":0/);
      killGroup(t2, 'SIGINT');
      await t2.exit;
      expect(screen(t2)).toMatch(/"msg":"shutdown requested".*"reason":"SIGINT"/);
      expect(screen(t2)).toMatch(/"msg":"relay stopped".*"exitCode":0/);
      killGroup(t1, 'SIGINT');
      await t1.exit;
      expect(screen(t1)).toContain('sim: stopping (SIGINT)');
      expect(screen(t1)).toContain('sim: stopped');
      expect(await listening(sim)).toBe(false);
      expect(await listening(relay)).toBe(false);
      expect(terminals.filter(groupAlive).map((t) => t.name)).toEqual([]);
    },
  );
  it(
    'step 8, Yeastar P-Series: member-style reports through the relay pop on the runner, Ctrl+C stops all',
    { timeout: 90_000 },
    async () => {
      // Before: README's Yeastar line started a simulator that never rang, and this document had
      // no Yeastar variant (YEASTAR_BLOCKS was empty).
      expect(YEASTAR_BLOCKS).toHaveLength(5);
      const [simCmd, relayCmd, webhookCmd, runnerCmd, ringCmd] = YEASTAR_BLOCKS as [
        string,
        string,
        string,
        string,
        string,
      ];
      expect(simCmd).toContain('--phone-system yeastar-p-series --report-style member --control');
      expect(relayCmd).toContain("RELAY_TENANT_ACME_PHONE_SYSTEM='yeastar-p-series'");
      expect(runnerCmd).toContain('--phone-system yeastar-p-series');
      ensureRunnerBuilt();
      ensureRelayBuilt();
      const local = localTo(await freePort(), await freePort());
      const simPort = Number(/--port (\d+)/.exec(local(simCmd))?.[1]);
      const relayPort = Number(/127\.0\.0\.1:(\d+)\/webhook/.exec(local(webhookCmd))?.[1]);
      // The key and secret step 4 exports (the same seed).
      const key = /SCREENPOP_API_KEY=(\S+)/.exec(BLOCKS[3] ?? '')?.[1];
      const secret = /SCREENPOP_API_SECRET=(\S+)/.exec(BLOCKS[3] ?? '')?.[1];

      const t1 = terminal('terminal 1 (Yeastar simulator)', local(simCmd));
      await shows(t1, /Press Ctrl\+C to stop\./, 'the simulator banner');
      expect(screen(t1)).toContain('Phone system: yeastar-p-series');
      expect(screen(t1)).toContain('Reports:      member');
      expect(screen(t1)).toContain(`API key:      ${key}`);

      const t2 = terminal('terminal 2 (relay, Yeastar tenant)', local(relayCmd), {
        RELAY_PORT: String(relayPort),
      });
      await shows(t2, /relay listening on http:\/\/127\.0\.0\.1:\d+/, 'listening');
      expect(screen(t2)).toMatch(/"msg":"config warning".*tenants\.acme\.allowFrom/);

      expect(await run(local(webhookCmd))).toMatchObject({ errcode: 0, errmsg: 'SUCCESS' });

      const t4 = terminal('terminal 4 (runner, Yeastar)', local(runnerCmd), {
        SCREENPOP_API_KEY: key,
        SCREENPOP_API_SECRET: secret,
      });
      await shows(t4, connected, 'connected');
      await shows(t2, /"msg":"client connected".*"tenant":"acme"/, 'the runner connected');

      const ring = await run(local(ringCmd));
      expect(ring).toMatchObject({ errcode: 0, call_id: expect.stringMatching(/^\d+\.\d+$/) });
      await until(
        () => pops(t4, ring.call_id) === 1,
        'the pop',
        10_000,
        () => screen(t4),
      );
      const pop = t4.stdout.map((l) => l.text).find((l) => l.includes('"type":"pop"'));
      expect(JSON.parse(pop ?? '{}')).toMatchObject({
        to: '101',
        event_id: expect.stringMatching(/^ys1-[0-9a-f]{40}$/),
      });

      for (const t of [t4, t2, t1]) {
        killGroup(t, 'SIGINT');
        await t.exit;
      }
      expect(t4.stderr()).toMatch(/"msg":"stopped".*"exitCode":0/);
      expect(screen(t2)).toMatch(/"msg":"relay stopped".*"exitCode":0/);
      expect(screen(t1)).toContain('sim: stopped');
      expect(await listening(simPort)).toBe(false);
      expect(await listening(relayPort)).toBe(false);
    },
  );
  it(
    "README's Yeastar simulator line rings: a fixed port, the control surface and traffic",
    {
      timeout: 60_000,
    },
    async () => {
      // Before: `npm run sim -- --phone-system yeastar-p-series` (a free port, no control, no
      // traffic): nothing ever rang, and the runner line under it pointed at 8080.
      const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
      const line = readme
        .split('\n')
        .find((l) => l.startsWith('npm run sim -- ') && l.includes('yeastar-p-series'));
      expect(line).toBeDefined();
      const command = line!.replace(/\s+#.*$/, '');
      expect(command).toContain('--port 8080');
      expect(command).toContain('--report-style member');
      expect(readme).toContain('npm run -s headless -- --base-url http://127.0.0.1:8080');
      const port = await freePort();
      const t = terminal(
        'README Yeastar simulator',
        command.replace('--port 8080', `--port ${port}`),
      );
      await shows(t, /Press Ctrl\+C to stop\./, 'the simulator banner');
      expect(screen(t)).toContain('Phone system: yeastar-p-series');
      expect(screen(t)).toContain(`Control:      http://127.0.0.1:${port}/_sim/`);
      expect(screen(t)).toMatch(/Traffic: {6}\d+ events\/s/);
      // It rings: the traffic sends reports (to the sockets of whoever subscribes, and webhooks).
      const sent = async () =>
        ((await run(`curl -s http://127.0.0.1:${port}/_sim/stats`)).stats as { eventsSent: number })
          .eventsSent;
      const deadline = Date.now() + 10_000;
      while ((await sent()) === 0 && Date.now() < deadline) await sleep(200);
      expect(await sent()).toBeGreaterThan(0);
      killGroup(t, 'SIGINT');
      await t.exit;
      expect(screen(t)).toContain('sim: stopped');
    },
  );
});
