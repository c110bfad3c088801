/**
 * Black box, issue 32 item 3 ("gateway: all pop"): a team beyond one desktop on one Yeastar API
 * application goes through the relay's gateway mode, which signs in for the whole organisation.
 * The simulator as a process plays a P-Series with the guide's limit of 8 valid tokens per
 * application (`--token-limit 8`, *Get Access Token*) or one where each get_token ends the earlier
 * tokens (`--token-one-sign-in`, a public integration's report), with 75-second access tokens so
 * that the relay refreshes (and its stream rotates) a few times within the test. The relay runs in
 * gateway mode for that tenant (its own stream to the simulator, no webhooks: every ring reaches the
 * desktops through that stream), organisation mode with single sign-on; twelve desktops (the
 * desktop's core, in this process) sign in with their own accounts, mapped to their extensions by
 * the PBX's extension list (asked with the relay's token), and each pops its own ring.
 *
 * The simulator's counters say what the relay did with the application's tokens: at most 2 valid
 * at once (`tokensValidPeak`: 1, and 2 for the moment a rotation takes), a token replaced by a
 * refresh revoked (`del_token`), and at the relay's stop (SIGTERM) the token it held revoked: none
 * valid after (`tokensValid` 0).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pop } from '../../src-main/core/events/pipeline.ts';
import { DESKTOP_CLIENT_ID, startOidcProvider } from '../../rigs/oidc-provider.ts';
import { signInDesktop } from './org-desktop.ts';
import { ProcessGroup, sleep, until } from '../../rigs/processes.ts';
import { RelayProcess, SimProcess, type SimOptions } from './services.ts';

const DESKTOPS = 12;
const TOKEN_LIFETIME_SEC = 75;

interface TokenStats {
  getToken: number;
  refreshToken: number;
  delToken: number;
  tokensValid: number;
  tokensValidPeak: number;
  tokenExpiredRejections: number;
}

let group: ProcessGroup;
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s().catch(() => {});
  await group?.cleanup();
});

describe.each([
  ['the limit of 8 tokens per application', { tokenLimit: 8 }],
  ['each sign-in ending the earlier tokens', { tokenOneSignIn: true }],
] as Array<[string, SimOptions]>)(
  'gateway mode on a Yeastar P-Series with %s',
  { timeout: 180_000 },
  (rule, tokenRule) => {
    it(`${DESKTOPS} desktops all pop; the relay holds at most 2 tokens and revokes them`, async () => {
      group = new ProcessGroup();
      const sim = await new SimProcess(group, {
        phoneSystem: 'yeastar-p-series',
        tokenLifetimeSec: TOKEN_LIFETIME_SEC,
        ...tokenRule,
      }).start();
      const stats = async () => (await sim.control<{ stats: TokenStats }>('GET', 'stats')).stats;
      // The desktops' users: extensions 101.. with the e-mail address the PBX's list gives them.
      const { data } = await sim.control<{ data: Array<{ number: string; email_addr: string }> }>(
        'GET',
        'extensions',
      );
      const users = data.slice(0, DESKTOPS).map((e, i) => ({
        account: `user${i + 1}`,
        extension: e.number,
        email: e.email_addr,
      }));
      const idp = await startOidcProvider({
        accounts: Object.fromEntries(users.map((u) => [u.account, { email: u.email }])),
      });
      stops.push(() => idp.close());
      const relay = await new RelayProcess(group, {
        tenant: sim.tenant,
        serviceUrl: sim.baseUrl,
        phoneSystem: 'yeastar-p-series',
        users: {
          file: join(group.tempDir('blackbox-users-'), 'users.json'),
          oidc: { issuer: idp.issuer, clientId: DESKTOP_CLIENT_ID },
        },
        gateway: { apiKeyEnv: 'ACME_API_KEY', secretEnv: 'ACME_API_SECRET' },
        env: { ...process.env, ACME_API_KEY: sim.key, ACME_API_SECRET: sim.secret },
      }).start();

      const desktops: Array<{ extension: string; pops: Pop[] }> = [];
      for (const u of users) {
        const d = await signInDesktop(relay, sim.tenant, idp, u.account, stops);
        expect(d.identity()).toMatchObject({ extensions: [u.extension] });
        desktops.push({ ...u, pops: d.desktopPops });
      }

      // A ring to each desktop's extension: every one pops its own.
      const rung = new Map<string, string>();
      for (const [i, d] of desktops.entries())
        rung.set(d.extension, await sim.ring(`+1415555${String(1000 + i)}`, d.extension));
      await until(
        () => desktops.every((d) => d.pops.some((p) => p.callId === rung.get(d.extension))),
        `all ${DESKTOPS} desktops to pop`,
        30_000,
        () =>
          desktops
            .map((d) => `${d.extension}: ${d.pops.map((p) => p.callId).join(',')}`)
            .join('\n') + relay.proc.describe(),
      );

      // The relay refreshed its token (75 s tokens, renewed in their last minute) and revoked the
      // one its stream left.
      let running = await stats();
      for (let waited = 0; waited < 60_000; waited += 250) {
        if (running.refreshToken >= 1 && running.delToken >= 1) break;
        await sleep(250);
        running = await stats();
      }

      // Stop the relay (SIGTERM: its drain). Its token is revoked on the way out.
      for (const s of stops.splice(0).reverse()) await s().catch(() => {});
      const exit = await relay.proc.stop(30_000);
      const after = await stats();
      console.log(
        `gateway, ${rule}: ${DESKTOPS} desktops popped; relay token calls while running ${JSON.stringify(
          pick(running),
        )}; after the relay's stop ${JSON.stringify(pick(after))}`,
      );
      expect(exit.code).toBe(0);
      expect(running.refreshToken).toBeGreaterThanOrEqual(1);
      expect(running.delToken).toBeGreaterThanOrEqual(1); // the token the refresh replaced
      expect(after.tokensValidPeak).toBeLessThanOrEqual(2);
      expect(after.getToken).toBe(1);
      expect(after.delToken).toBeGreaterThan(running.delToken);
      expect(after.tokensValid).toBe(0);
    });
  },
);

function pick(s: TokenStats) {
  const { getToken, refreshToken, delToken, tokensValid, tokensValidPeak } = s;
  return { getToken, refreshToken, delToken, tokensValid, tokensValidPeak };
}

describe('gateway mode: the relay stops on time when the PBX does not answer', () => {
  it('a stopped PBX (SIGSTOP) does not hold the relay’s stop: del_token is given up after 1.5 s', async () => {
    group = new ProcessGroup();
    const sim = await new SimProcess(group, {
      phoneSystem: 'yeastar-p-series',
      tokenLimit: 8,
    }).start();
    const relay = await new RelayProcess(group, {
      tenant: sim.tenant,
      serviceUrl: sim.baseUrl,
      phoneSystem: 'yeastar-p-series',
      gateway: { apiKeyEnv: 'ACME_API_KEY', secretEnv: 'ACME_API_SECRET' },
      env: { ...process.env, ACME_API_KEY: sim.key, ACME_API_SECRET: sim.secret },
    }).start();
    let state = '';
    for (let i = 0; i < 100 && state !== 'connected'; i++) {
      if (i > 0) await sleep(200);
      const health = (await (await fetch(relay.url + '/healthz')).json()) as {
        upstream?: Record<string, { state: string }>;
      };
      state = health.upstream?.[sim.tenant]?.state ?? '';
    }
    expect(state).toBe('connected');
    // The PBX's process stops: its port still accepts connections, nothing answers.
    sim.proc.signal('SIGSTOP');
    const started = Date.now();
    const exit = await relay.proc.stop(30_000);
    const tookMs = Date.now() - started;
    console.log(`gateway: relay stop with a PBX that does not answer took ${tookMs} ms`);
    expect(exit.code).toBe(0);
    expect(relay.proc.stderr()).toContain('tokens not revoked in time');
    expect(tookMs).toBeLessThan(10_000);
  });
});
