/**
 * `node bench/sso-sessions.ts` (Node 24: `npm exec -- node bench/sso-sessions.ts`): what a
 * provider's ID-token lifetime costs a signed-in desktop (issue 34 item 5). The desktop's own code
 * (OrgTokenSource renewing at the provider, RelayEventSource) against the relay (in this process)
 * and a real provider (oidc-provider), on a time scale of 1:SCALE (default 100: Keycloak's 5-minute
 * ID token lasts 3 s, the relay's 60-minute maximum age 36 s, an hour 36 s). A ring is posted to
 * the user's extension every RING_EVERY_MS of real time; the figures: reconnects per (scaled)
 * hour, how long each reconnect leaves the desktop without its stream (close to ready), rings
 * posted and received, and the slowest ring's delay. Figures, never assertions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../src-shared/process/clock.ts';
import { SecretRegistry, silentLogger } from '../src-shared/process/log.ts';
import { memoryLogger } from '../rigs/memory-logger.ts';
import { relayOrgPath, type OrgSignInInfo } from '../src-shared/relay/relay-protocol.ts';
import { MemoryCredentialStore } from '../src-main/core/credentials/credential-store.ts';
import { signInWithBrowser } from '../src-main/core/org/oidc-sign-in.ts';
import { orgKeychainAccount, OrgTokenSource } from '../src-main/core/org/org-token-source.ts';
import { RelayEventSource } from '../src-main/core/relay-client/relay-source.ts';
import { envelope, postWebhook, signed } from '../rigs/relay/helpers.ts';
import { addUser, orgConfig, startOrgRelay } from '../rigs/relay/users-support.ts';
import { directTransport } from '../rigs/direct-transport.ts';
import { DESKTOP_CLIENT_ID, startOidcProvider } from '../rigs/oidc-provider.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? 100);
const TTL_SEC = Number(process.env.BENCH_TTL_SEC ?? 300); // Keycloak's default
const MAX_AGE_SEC = Number(process.env.BENCH_MAX_AGE_SEC ?? 3600); // clients.authMaxAgeMs
const HOURS = Number(process.env.BENCH_HOURS ?? 1);
const RING_EVERY_MS = 100;

const idp = await startOidcProvider({
  accounts: { alice: { email: 'alice@example.org' } },
  idTokenTtlSec: Math.max(1, Math.round(TTL_SEC / SCALE)),
});
const dir = mkdtempSync(join(tmpdir(), 'bench-sso-'));
const config = orgConfig(join(dir, 'users.json'));
config.clients.authMaxAgeMs = (MAX_AGE_SEC * 1000) / SCALE;
config.clients.idleTimeoutMs = 2_000; // the sweeper looks every 500 ms
config.clients.maxFramesPerMinute = 600; // heartbeats every 500 ms
config.tenants.acme!.oidc = {
  issuer: idp.issuer,
  clientId: DESKTOP_CLIENT_ID,
  scopes: ['openid', 'email', 'offline_access'],
  emailClaim: 'email',
  clockToleranceSec: 0,
  users: {},
};
const org = await startOrgRelay(config);
await addUser(org.users, 'alice', ['101'], [], 'alice@example.org');
const info = ((await (await fetch(org.relay.url + relayOrgPath('acme'))).json()) as OrgSignInInfo)
  .oidc!;
const signedIn = await signInWithBrowser(info, {
  clock: systemClock,
  fetch,
  openBrowser: (url) => void idp.signIn(url, 'alice'),
  page: () => 'ok',
});
const secrets = new SecretRegistry();
const sourceLog = memoryLogger();
const transport = directTransport({ secrets });
const tokens = new OrgTokenSource({
  store: new MemoryCredentialStore(),
  account: orgKeychainAccount(org.relay.url, 'acme'),
  fetch: transport.fetch,
  clock: systemClock,
  logger: silentLogger,
  secrets,
  renewAheadMs: 60_000 / SCALE,
});
await tokens.save(
  {
    kind: 'oidc',
    refreshToken: signedIn.refreshToken!,
    provider: info,
    email: 'alice@example.org',
  },
  { value: signedIn.idToken, expiresAt: signedIn.idTokenExpiresAt },
);
const source = new RelayEventSource({
  relayUrl: org.relay.url,
  tenant: 'acme',
  tokens,
  filter: { extensions: ['101'], dids: [], events: [] },
  clock: systemClock,
  createSocket: transport.createSocket,
  heartbeatMs: 500,
  stableMs: 30_000 / SCALE, // a session that stayed up 30 s (scaled) starts the back-off again from its base
  ...(process.env.BENCH_DEBUG ? { logger: sourceLog } : {}),
});
const received = new Map<string, number>();
source.onFrame((text, at) => {
  const id = (JSON.parse(text) as { event_id?: string }).event_id;
  if (id && !received.has(id)) received.set(id, at);
});
let lastState = '';
let downSince: number | null = null;
const gaps: number[] = [];
let reconnects = 0;
const t0 = Date.now();
source.onStatus((s) => {
  if (process.env.BENCH_DEBUG)
    console.log(Date.now() - t0, s.state, JSON.stringify(s).slice(0, 160));
  if (s.state === lastState) return;
  if (lastState === 'connected') downSince = Date.now();
  if (s.state === 'connected' && downSince !== null) {
    reconnects += 1;
    gaps.push(Date.now() - downSince);
    downSince = null;
  }
  lastState = s.state;
});
source.start();
while (source.status().state !== 'connected') await new Promise((r) => setTimeout(r, 20));

const posted = new Map<string, number>();
const windowMs = (HOURS * 3600_000) / SCALE;
const end = Date.now() + windowMs;
let n = 0;
while (Date.now() < end) {
  const id = `ring-${(n += 1)}`;
  const body = envelope({ event_id: id, to: '101' });
  posted.set(id, Date.now());
  void postWebhook(org.relay.webhookUrl('acme'), body, signed(body));
  await new Promise((r) => setTimeout(r, RING_EVERY_MS));
}
await new Promise((r) => setTimeout(r, 2_000));
await source.stop();
await org.close();
await idp.close();
rmSync(dir, { recursive: true, force: true });

const delays = [...posted].map(([id, at]) => (received.get(id) ?? Infinity) - at);
const sorted = [...gaps].sort((a, b) => a - b);
const figures = {
  scale: SCALE,
  idTokenTtlSec: TTL_SEC,
  maxAgeSec: MAX_AGE_SEC,
  reconnectsPerHour: reconnects / HOURS,
  reconnectGapMs: {
    median: sorted[Math.floor(sorted.length / 2)] ?? null,
    max: sorted.at(-1) ?? null,
  },
  ringsPosted: posted.size,
  ringsReceived: [...posted.keys()].filter((id) => received.has(id)).length,
  slowestRingMs: Math.max(...delays),
};
if (process.env.BENCH_DEBUG)
  for (const r of sourceLog.records) console.log(JSON.stringify(r).slice(0, 300));
console.log(JSON.stringify(figures));
