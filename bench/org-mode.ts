/**
 * `npm run bench:org`: what organisation mode (docs/relay-protocol.md 2.2, 2.3) costs the relay,
 * measured on the relay as deployed (`node dist-relay/screenpop-relay.cjs`, memory store, its own process):
 *
 * 1. Per delivered frame: the same workload against a service-token tenant (the desktop's own
 *    filter) and a users tenant (the relay's per-user filter): CLIENTS clients on EXTENSIONS
 *    extensions, WEBHOOKS signed webhooks (calls to one extension each, and voicemail, SMS,
 *    presence and trunk notices), relay CPU (utime + stime from /proc) per delivered frame.
 * 2. Per sign-in: relay CPU and wall time per enrolment (POST /v1/enrol: a code spent, the users
 *    file rewritten under its lock, fsync), and per stream handshake (upgrade, credential check,
 *    hello, ready, close) for a service token (its check cached), a device credential, an ID
 *    token seen for the first time (RS256 signature, claims, e-mail mapping) and the same ID token
 *    again (remembered until it expires). ID tokens come from a real provider (oidc-provider, in
 *    this process) through the desktop's own sign-in code.
 *
 * Figures, never assertions: the machines are shared. Prints a table and JSON. Everything it starts
 * it stops. BENCH_CLIENTS, BENCH_WEBHOOKS, BENCH_SIGNINS change the sizes.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { writeFileAtomic } from '../src-shared/files/atomic-file.ts';
import { systemClock } from '../src-shared/process/clock.ts';
import {
  relayClientPath,
  relayEnrolPath,
  relayOrgPath,
} from '../src-shared/relay/relay-protocol.ts';
import type { OrgSignInInfo } from '../src-shared/relay/relay-protocol.ts';
import { signBody } from '../src-sim/webhook-signature.ts';
import { newEnrolmentCode, secretHash } from '../src-relay/users/secrets.ts';
import { UserState } from '../src-relay/users/user-state.ts';
import { signInWithBrowser } from '../src-main/core/org/oidc-sign-in.ts';
import { startTokenService } from '../rigs/relay/helpers.ts';
import { spawnRelay, type RelayProcess } from '../rigs/relay/relay-process.ts';
import { DESKTOP_CLIENT_ID, startOidcProvider } from '../rigs/oidc-provider.ts';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 300);
/** Few extensions, many clients on each: every webhook is many frames, so the per-frame cost shows. */
const EXTENSIONS = Number(process.env.BENCH_EXTENSIONS ?? 10);
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 3000);
const SIGNINS = Number(process.env.BENCH_SIGNINS ?? 60);
const SECRET = 'bench-org-webhook-secret-0123456789';
const TICK_MS = 10; // /proc/<pid>/stat counts CPU in clock ticks of 10 ms (USER_HZ 100)

const ext = (i: number) => String(100 + (i % EXTENSIONS));

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

async function delivered(relay: RelayProcess): Promise<number> {
  const text = await (await fetch(relay.url + '/metrics')).text();
  return Number(/^relay_events_delivered_total (\d+)/m.exec(text)?.[1] ?? 0);
}

/** A client that counts event frames; resolves once the relay said ready. */
function client(
  url: string,
  token: string,
  filter: object,
): Promise<{ frames: () => number; close(): void }> {
  return new Promise((resolve, reject) => {
    let frames = 0;
    const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
    ws.once('unexpected-response', (_q, res) => reject(new Error(`refused ${res.statusCode}`)));
    ws.once('error', reject);
    ws.once('open', () => ws.send(JSON.stringify({ type: 'hello', v: 1, filter, cursor: null })));
    ws.on('message', (data) => {
      const text = data.toString();
      if (text.startsWith('relay {"type":"ready"'))
        resolve({ frames: () => frames, close: () => ws.terminate() });
      else if (!text.startsWith('relay ')) frames += 1;
    });
  });
}

function body(i: number, tenant: string, run: string, callsOnly: boolean): string {
  const kind = callsOnly ? 0 : i % 10;
  const e = ext(i * 7);
  const data =
    kind < 6
      ? { call_id: `c${i}`, from: '+441234567890', to: e, state: 'ringing' }
      : kind === 6
        ? { voicemail_id: `v${i}`, extension: e, from: '+441234567890', duration_sec: 5 }
        : kind === 7
          ? { message_id: `m${i}`, from: '+441234567890', to: e, text: 'hello', received_at: 1 }
          : kind === 8
            ? { extension: e, presence_status: 'away' }
            : { trunk: 'SIP-Main', status: i % 20 === 9 ? 'registered' : 'unregistered' };
  const event =
    kind < 6 ? 30011 : kind === 6 ? 30015 : kind === 7 ? 30031 : kind === 8 ? 30009 : 30007;
  return JSON.stringify({
    event,
    timestamp: Date.now(),
    tenant,
    data,
    event_id: `bench-${tenant}${run}-${i}`,
  });
}

async function postAll(
  relay: RelayProcess,
  tenant: string,
  run: string,
  callsOnly: boolean,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < WEBHOOKS) {
      const b = body(next++, tenant, run, callsOnly);
      const res = await fetch(`${relay.url}/webhook/${tenant}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Service-Signature': signBody(SECRET, b) },
        body: b,
      });
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

interface DeliveryResult {
  mode: string;
  workload: string;
  frames: number;
  cpuMs: number;
  usPerFrame: number;
}

async function deliveryRun(
  mode: 'service-token' | 'users',
  workload: 'calls' | 'mixed',
  relay: RelayProcess,
  tenant: string,
  tokens: string[],
): Promise<DeliveryResult> {
  const url = relay.url.replace(/^http/, 'ws') + relayClientPath(tenant);
  const clients = [];
  for (let i = 0; i < CLIENTS; i++)
    clients.push(
      await client(url, tokens[i]!, {
        extensions: mode === 'service-token' ? [ext(i)] : [],
        dids: [],
        // A service-token desktop asks for the notices tenant-wide (the relay cannot filter them
        // for it); a user asks for them and gets their own.
        events: [30015, 30031, 30009, 30007],
      }),
    );
  const before = { cpu: cpuMs(relay.pid), frames: await delivered(relay) };
  await postAll(relay, tenant, `-${workload}`, workload === 'calls');
  // Wait until the counts stop moving.
  let last = -1;
  for (let i = 0; i < 100; i++) {
    const now = await delivered(relay);
    if (now === last) break;
    last = now;
    await new Promise((r) => setTimeout(r, 200));
  }
  const frames = (await delivered(relay)) - before.frames;
  const cpu = cpuMs(relay.pid) - before.cpu;
  for (const c of clients) c.close();
  return { mode, workload, frames, cpuMs: cpu, usPerFrame: (cpu * 1000) / Math.max(1, frames) };
}

/** Relay CPU and wall time per handshake (upgrade, check, hello, ready, close) with these tokens. */
async function handshakes(relay: RelayProcess, tenant: string, tokens: string[]) {
  const url = relay.url.replace(/^http/, 'ws') + relayClientPath(tenant);
  const cpu0 = cpuMs(relay.pid);
  const t0 = performance.now();
  for (const t of tokens) (await client(url, t, { events: [] })).close();
  const wall = performance.now() - t0;
  const cpu = cpuMs(relay.pid) - cpu0;
  return {
    count: tokens.length,
    relayCpuMsEach: cpu / tokens.length,
    wallMsEach: wall / tokens.length,
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-org-'));
  const service = await startTokenService({ has: (t: string) => t.startsWith('svc-') });
  const idp = await startOidcProvider({
    accounts: Object.fromEntries(
      Array.from({ length: SIGNINS }, (_, i) => [`user${i}`, { email: `user${i}@example.org` }]),
    ),
  });
  // The users and their codes, written once as the `relay users` command would leave them.
  const state = new UserState();
  const codes: string[] = [];
  const now = Date.now();
  for (let i = 0; i < CLIENTS + SIGNINS; i++) {
    state.addUser(
      {
        tenant: 'org',
        name: `user${i}`,
        extensions: [ext(i)],
        dids: [],
        email: `user${i}@example.org`,
      },
      now,
    );
    const code = newEnrolmentCode();
    state.issueCode('org', `user${i}`, secretHash(code), 3_600_000, now);
    codes.push(code);
  }
  const usersFile = join(dir, 'users.json');
  await writeFileAtomic(usersFile, JSON.stringify(state.toJSON()));
  const relay = await spawnRelay({
    config: {
      logLevel: 'warn',
      tenants: {
        svc: { baseUrl: service.baseUrl, secrets: [SECRET] },
        org: {
          baseUrl: 'http://127.0.0.1:9/org',
          secrets: [SECRET],
          access: 'users',
          oidc: { issuer: idp.issuer, clientId: DESKTOP_CLIENT_ID },
        },
      },
      users: { file: usersFile },
      clients: { maxSessionsPerAddress: 100_000 },
      auth: { maxFailuresPerAddressPerMinute: 100_000 },
    },
  });
  try {
    // Enrolment: every code spent through the relay (its cost per sign-in by code).
    const cpu0 = cpuMs(relay.pid);
    const t0 = performance.now();
    const credentials: string[] = [];
    for (const code of codes) {
      const res = await fetch(relay.url + relayEnrolPath('org'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ code, device: 'bench' }),
      });
      credentials.push(((await res.json()) as { credential: string }).credential);
    }
    const enrolment = {
      count: codes.length,
      relayCpuMsEach: (cpuMs(relay.pid) - cpu0) / codes.length,
      wallMsEach: (performance.now() - t0) / codes.length,
    };

    // Calls only: both modes deliver the same frames (each client its extension's calls), so the
    // difference is the per-user filter. Mixed: notices too, which a service-token desktop can
    // only take tenant-wide and a user gets only their own.
    const svcTokens = Array.from({ length: CLIENTS }, (_, i) => `svc-${i}`);
    const userTokens = credentials.slice(0, CLIENTS);
    const delivery: DeliveryResult[] = [];
    for (const workload of ['calls', 'mixed'] as const) {
      delivery.push(await deliveryRun('service-token', workload, relay, 'svc', svcTokens));
      delivery.push(await deliveryRun('users', workload, relay, 'org', userTokens));
    }

    // ID tokens from the provider, through the desktop's own sign-in (PKCE, loopback).
    const info = ((await (await fetch(relay.url + relayOrgPath('org'))).json()) as OrgSignInInfo)
      .oidc!;
    const idTokens: string[] = [];
    for (let i = 0; i < SIGNINS; i++) {
      const tokens = await signInWithBrowser(info, {
        clock: systemClock,
        fetch,
        openBrowser: (url) => void idp.signIn(url, `user${i}`),
      });
      idTokens.push(tokens.idToken);
    }
    const sign = {
      serviceToken: await handshakes(
        relay,
        'svc',
        Array.from({ length: SIGNINS }, (_, i) => `svc-${i}`),
      ),
      device: await handshakes(relay, 'org', credentials.slice(CLIENTS, CLIENTS + SIGNINS)),
      oidcFirst: await handshakes(relay, 'org', idTokens),
      oidcAgain: await handshakes(relay, 'org', idTokens),
    };
    const [svc, users] = delivery as [DeliveryResult, DeliveryResult]; // the calls-only pair
    const result = {
      clients: CLIENTS,
      extensions: EXTENSIONS,
      webhooks: WEBHOOKS,
      delivery,
      addedUsPerDeliveredFrame: users.usPerFrame - svc.usPerFrame,
      enrolment,
      handshakes: sign,
      addedCpuMsPerOidcSignIn: sign.oidcFirst.relayCpuMsEach - sign.device.relayCpuMsEach,
      loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    };
    const f = (n: number, d = 1) => n.toFixed(d);
    console.log(
      `organisation mode on the relay (${CLIENTS} clients on ${EXTENSIONS} extensions, ${WEBHOOKS} webhooks; load ${result.loadAverage})`,
    );
    console.log('| workload | tenant mode | delivered frames | relay CPU (ms) | per frame (µs) |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const d of delivery)
      console.log(
        `| ${d.workload} | ${d.mode} | ${d.frames} | ${d.cpuMs} | ${f(d.usPerFrame, 2)} |`,
      );
    console.log(
      `added per delivered frame, calls only (users - service-token): ${f(result.addedUsPerDeliveredFrame, 2)} µs (CPU counted in 10 ms ticks: compare runs)\n`,
    );
    console.log('| sign-in step | count | relay CPU each (ms) | wall each (ms) |');
    console.log('| --- | --- | --- | --- |');
    console.log(
      `| enrolment (POST /v1/enrol) | ${enrolment.count} | ${f(enrolment.relayCpuMsEach, 2)} | ${f(enrolment.wallMsEach, 2)} |`,
    );
    for (const [name, h] of Object.entries(sign))
      console.log(
        `| handshake, ${name} | ${h.count} | ${f(h.relayCpuMsEach, 2)} | ${f(h.wallMsEach, 2)} |`,
      );
    console.log(
      `added per OpenID sign-in (first handshake with an ID token - device handshake): ${f(result.addedCpuMsPerOidcSignIn, 2)} ms relay CPU\n`,
    );
    console.log(JSON.stringify(result));
  } finally {
    await relay.stop();
    await service.close();
    await idp.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
