/**
 * Black box, issues 38/40: three relay processes in gateway mode on one redis-server, the users in
 * one file, the simulator as a Yeastar P-Series PBX (a process). A call request at an instance
 * standing by is served through the lease holder (src-relay/gateway/call-handoff.ts): the dial
 * is placed, from the user's extension. With the holder frozen (SIGSTOP), a dial at a standby is
 * still answered within the deadline: another instance takes the lease over and serves it. With
 * the holder killed (SIGKILL) just after a request went in, the answer is the dial's (served by
 * either holder) or 504 "may or may not have been carried out", never a second call.
 *
 * Before (main at 9380b3a) the first dial at a standby answered 502 `unreachable`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ProcessGroup, sleep } from '../../rigs/processes.ts';
import { enrol } from '../../rigs/relay/users-support.ts';
import { REDIS_BIN, RedisProcess, RelayProcess, SimProcess } from './services.ts';

const LEASE_MS = 3_000;
let group: ProcessGroup | undefined;
afterEach(async () => {
  await group?.cleanup();
  group = undefined;
});

async function upstreamState(relay: RelayProcess, tenant: string): Promise<string> {
  try {
    const res = await fetch(`${relay.url}/healthz`, { signal: AbortSignal.timeout(1_000) });
    const body = (await res.json()) as { upstream?: Record<string, { state: string }> };
    return body.upstream?.[tenant]?.state ?? 'none';
  } catch {
    return 'down';
  }
}

describe.skipIf(!existsSync(REDIS_BIN))('gateway mode, three instances: calls at a standby', () => {
  it(
    'a dial at a standby is placed through the holder; the holder frozen or killed mid-request',
    { timeout: 90_000 },
    async () => {
      group = new ProcessGroup();
      const redis = await new RedisProcess(group).start();
      const sim = await new SimProcess(group, { phoneSystem: 'yeastar-p-series' }).start();
      const { data } = await sim.control<{ data: Array<{ number: string }> }>('GET', 'extensions');
      const mine = data[0]!.number;
      const env = { ...process.env, ACME_API_KEY: sim.key, ACME_API_SECRET: sim.secret };
      const usersFile = join(group.tempDir('blackbox-users-'), 'users.json');
      const relays = await Promise.all(
        [0, 1, 2].map(() =>
          new RelayProcess(group!, {
            tenant: sim.tenant,
            serviceUrl: sim.baseUrl,
            phoneSystem: 'yeastar-p-series',
            redisUrl: redis.url,
            upstreamLeaseMs: LEASE_MS,
            users: { file: usersFile },
            gateway: { apiKeyEnv: 'ACME_API_KEY', secretEnv: 'ACME_API_SECRET' },
            env,
          }).start(),
        ),
      );
      const holderAmong = async (among: number[]) => {
        for (let waited = 0; waited < 20_000; waited += 100) {
          const states = await Promise.all(relays.map((r) => upstreamState(r, sim.tenant)));
          const connected = among.filter((i) => states[i] === 'connected');
          if (connected.length === 1) return connected[0]!;
          await sleep(100);
        }
        throw new Error('no single holder');
      };
      const holder = await holderAmong([0, 1, 2]);
      const standbys = [0, 1, 2].filter((i) => i !== holder);

      const added = await relays[0]!.users('add', 'alice', '--extension', mine);
      const code = /enrolment code: (\S+)/.exec(added)![1]!;
      let credential = '';
      for (let waited = 0; waited < 10_000 && !credential; waited += 200) {
        const enrolled = await enrol(relays[standbys[0]!]!.url, code, sim.tenant);
        if (enrolled.status === 200) credential = enrolled.body.credential;
        else await sleep(200);
      }
      expect(credential).not.toBe('');
      const dial = async (at: number, to: string) => {
        const started = Date.now();
        const res = await fetch(`${relays[at]!.url}/v1/calls/${sim.tenant}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${credential}` },
          body: JSON.stringify({ action: 'dial', to }),
        });
        const body = (await res.json()) as Record<string, unknown>;
        return { status: res.status, body, ms: Date.now() - started };
      };

      // Each standby serves a dial through the holder (before: 502 unreachable).
      const ids: unknown[] = [];
      for (const s of standbys) {
        const res = await dial(s, '+14155550101');
        console.log(`dial at standby ${s}: ${res.status} ${JSON.stringify(res.body)} ${res.ms} ms`);
        expect(res.status).toBe(200);
        expect(res.body.callId).toBeTruthy();
        ids.push(res.body.callId);
      }

      // The holder frozen: a dial at a standby answered within the deadline (8 s) plus the grace.
      relays[holder]!.proc.signal('SIGSTOP');
      const frozen = await dial(standbys[0]!, '+14155550102');
      console.log(`holder frozen: ${frozen.status} ${JSON.stringify(frozen.body)} ${frozen.ms} ms`);
      expect(frozen.ms).toBeLessThan(13_000);
      expect([200, 503]).toContain(frozen.status);
      if (frozen.status === 503) expect(frozen.body.message).toMatch(/nothing was done/);
      const second = await holderAmong(standbys);
      relays[holder]!.proc.signal('SIGCONT');

      // The new holder killed just after a dial went in at the last standby.
      const last = standbys.find((i) => i !== second)!;
      const pending = dial(last, '+14155550103');
      await sleep(20);
      relays[second]!.proc.signal('SIGKILL');
      const killed = await pending;
      console.log(`holder killed: ${killed.status} ${JSON.stringify(killed.body)} ${killed.ms} ms`);
      expect(killed.ms).toBeLessThan(13_000);
      expect([200, 503, 504]).toContain(killed.status);
      if (killed.status === 504)
        expect(killed.body.message).toMatch(/may or may not have been carried out/);
      if (killed.status === 503) expect(killed.body.message).toMatch(/nothing was done/);
      // Never twice: one more dial at the PBX's next call number shows how many calls it placed.
      const answered = [frozen, killed].filter((r) => r.status === 200).length;
      const after = await dial(last, '+14155550104');
      expect(after.status).toBe(200);
      // The simulator numbers its calls (`<seconds>.<counter>`): the calls it placed in all.
      const seq = (id: unknown) => Number(String(id).split('.')[1]);
      const placed = seq(after.body.callId) - seq(ids[0]) + 1;
      // A 504 may or may not have been placed (the holder waits on a blocking read, so it often
      // claims and dials within the 20 ms before its kill, then dies before answering): each
      // counts for at most one call; a 503 for none.
      const uncertain = [frozen, killed].filter((r) => r.status === 504).length;
      console.log(
        `calls the PBX placed: ${placed}, dials answered 200: ${3 + answered}, 504: ${uncertain}`,
      );
      expect(placed).toBeGreaterThanOrEqual(3 + answered);
      expect(placed).toBeLessThanOrEqual(3 + answered + uncertain);
    },
  );
});
