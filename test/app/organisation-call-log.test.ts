import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { ClaimedCallLog, relayCallClaimer } from '../../src-main/core/org/claimed-call-log.ts';
import type { CallLogRecord, CallLogSink } from '../../src-main/core/ports/call-log.ts';
import { directTransport } from '../../rigs/direct-transport.ts';
import { freePort } from '../../rigs/relay/helpers.ts';
import { addUser, enrol, orgConfig, startOrgRelay } from '../../rigs/relay/users-support.ts';
import { sleepReal, waitFor } from '../../rigs/wait.ts';
import { FileUserStore } from '../../src-relay/users/file-user-store.ts';
import { useTempDir } from '../support/temp-dir.ts';

// Issue 39 item 5: in organisation mode, a call two agents' apps both saw is logged once
// (src-main/core/org/claimed-call-log.ts against the relay's POST /v1/claim/<tenant>).
const tmp = useTempDir('org-call-log-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function missedCall(callId: string, extension: string): CallLogRecord {
  return {
    callId,
    direction: 'inbound',
    from: '+442071234567',
    to: '+4930555000',
    extension,
    startedAt: 1763802000000,
    endedAt: 1763802020000,
    durationMs: 0,
    outcome: 'missed',
  };
}

function recordingSink(): CallLogSink & { logged: CallLogRecord[] } {
  const logged: CallLogRecord[] = [];
  return { logged, log: async (record) => void logged.push(record) };
}

/** One agent's desktop: the decorator around its sink, claiming with its own credential. */
function desktop(relayUrl: string, credential: string) {
  const sink = recordingSink();
  const log = new ClaimedCallLog({
    sink,
    active: () => true,
    claim: relayCallClaimer({
      relayUrl: relayUrl.replace(/^http/, 'ws'),
      tenant: 'acme',
      tokens: {
        getToken: async () => ({ value: credential, expiresAt: Date.now() + 3_600_000 }),
        invalidate: () => {},
      },
      fetch: directTransport().fetch,
    }),
    clock: systemClock,
    logger: silentLogger,
    backoff: { baseMs: 40, capMs: 200, floorMs: 20 },
  });
  cleanups.push(() => log.stop());
  return { sink, log };
}

async function twoAgents(port = 0) {
  const file = join(tmp.path, 'users.json');
  const org = await startOrgRelay(orgConfig(file, { port }));
  const alice = (await enrol(org.relay.url, await addUser(org.users, 'alice', ['101']))).body;
  const bob = (await enrol(org.relay.url, await addUser(org.users, 'bob', ['102']))).body;
  return { org, file, alice: alice.credential, bob: bob.credential };
}

describe('organisation mode: a call seen by two desktops is logged by one', () => {
  it('a missed call of a ring group, handed to both desktops at once, reaches exactly one sink', async () => {
    const { org, alice, bob } = await twoAgents();
    cleanups.push(() => org.close());
    const a = desktop(org.relay.url, alice);
    const b = desktop(org.relay.url, bob);
    const ids = Array.from({ length: 10 }, (_, i) => `1763802000.${i}`);
    await Promise.all(
      ids.flatMap((id) => [a.log.log(missedCall(id, '101')), b.log.log(missedCall(id, '102'))]),
    );
    const all = [...a.sink.logged, ...b.sink.logged].map((r) => r.callId).sort();
    expect(all).toEqual(ids);
    // A later record of a call (a note) goes to the holder's sink again, never to the other's.
    const held = a.sink.logged.length > 0 ? a : b;
    const other = held === a ? b : a;
    const id = held.sink.logged[0]!.callId;
    await held.log.log({ ...missedCall(id, '101'), note: 'called back' });
    await other.log.log({ ...missedCall(id, '102'), note: 'me too' });
    expect(held.sink.logged.filter((r) => r.callId === id)).toHaveLength(2);
    expect(other.sink.logged.filter((r) => r.callId === id)).toHaveLength(0);
  });

  it('the relay unreachable, then back: the call is kept, claimed once it answers, logged once', async () => {
    const port = await freePort();
    const first = await twoAgents(port);
    // The relay goes away (its users file stays: the credentials hold when it comes back).
    await first.org.close();
    const a = desktop(`http://127.0.0.1:${port}`, first.alice);
    const b = desktop(`http://127.0.0.1:${port}`, first.bob);
    await a.log.log(missedCall('1763802111.7', '101'));
    await b.log.log(missedCall('1763802111.7', '102'));
    await sleepReal(300);
    expect(a.sink.logged.length + b.sink.logged.length).toBe(0);
    expect(a.log.waiting + b.log.waiting).toBe(2);
    const users = new FileUserStore({ file: first.file, clock: systemClock, pollMs: 200 });
    const back = await startOrgRelay(orgConfig(first.file, { port }), users);
    cleanups.push(() => back.close());
    await waitFor(() => a.log.waiting + b.log.waiting === 0, 'both claims answered');
    await sleepReal(200);
    const logged = [...a.sink.logged, ...b.sink.logged];
    expect(logged.map((r) => r.callId)).toEqual(['1763802111.7']);
  });
});
