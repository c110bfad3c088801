/**
 * Issue 39: in organisation mode a Yeastar call record (30012) reaches the desktops of every user
 * it concerns: the callee's (`call_to`) and the caller's (`call_from`, an extension: an outbound
 * call's record is what the caller's call log logs it from), and nobody else's.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TestClient, relayConfig } from '../../rigs/relay/helpers.ts';
import { addUser, enrol, startOrgRelay } from '../../rigs/relay/users-support.ts';
import { sleepReal } from '../../rigs/wait.ts';
import { useTempDir } from '../support/temp-dir.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'yeastar-p-series');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
/** A webhook Secret as the PBX generates it: 32 characters. */
const SECRET = 'qnIdTBxyGgn2LckZrFw7IVeTRMJf3XfM';

const tmp = useTempDir('relay-org-records-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function deliver(url: string, body: string): Promise<number> {
  const signature = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(body).digest('base64');
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Signature': signature },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

type Envelope = { event: number; data: Record<string, unknown> };

describe('relay, organisation mode: call records', { timeout: 20_000 }, () => {
  it("hands an outbound record to its caller's desktop and not a colleague's; an inbound one still to its callee", async () => {
    const config = relayConfig(
      {
        acme: {
          baseUrl: 'http://127.0.0.1:9/acme',
          secrets: [SECRET],
          phoneSystem: 'yeastar-p-series',
          access: 'users',
        },
      },
      { users: { file: join(tmp.path, 'users.json') } },
    );
    const org = await startOrgRelay(config);
    cleanups.push(() => org.close());
    const { relay, users } = org;
    // alice dialled out from 703 (captured D2); bob is 700, the callee of the inbound record (B9).
    const alice = await enrol(relay.url, await addUser(users, 'alice', ['703']));
    const bob = await enrol(relay.url, await addUser(users, 'bob', ['700']));
    const connect = async (credential: string) => {
      const client = await TestClient.connect(relay.clientUrl('acme'), credential, {
        events: [30012],
      });
      cleanups.push(() => client.close());
      return client;
    };
    const aliceDesk = await connect(alice.body.credential);
    const bobDesk = await connect(bob.body.credential);

    const webhook = `${relay.url}/webhook/acme`;
    expect(await deliver(webhook, fixture('captured-30012-D2-outbound-busy.json'))).toBe(200);
    expect(await deliver(webhook, fixture('captured-30012-B9-inbound-no-answer.json'))).toBe(200);

    await aliceDesk.until(() => aliceDesk.events.length >= 1);
    await bobDesk.until(() => bobDesk.events.length >= 1);
    await sleepReal(200); // nothing more comes
    const seen = (c: TestClient) =>
      c.events.map((e) => JSON.parse(e) as Envelope).map((e) => ({ event: e.event, ...e.data }));
    expect(seen(aliceDesk)).toEqual([
      expect.objectContaining({
        event: 30012,
        call_id: '1702285525.16',
        from: '703',
        to: '0875550199',
        direction: 'outbound',
        status: 'BUSY',
      }),
    ]);
    expect(seen(bobDesk)).toEqual([
      expect.objectContaining({
        event: 30012,
        call_id: '1702364968.127',
        from: '0815550100',
        to: '700',
        direction: 'inbound',
        status: 'NO ANSWER',
      }),
    ]);
  });
});
