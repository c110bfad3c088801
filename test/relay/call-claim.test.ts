import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SECRET } from '../../rigs/relay/helpers.ts';
import { claim, credentials, raceBoth } from '../../rigs/relay/claim-support.ts';
import { orgConfig, startOrgRelay } from '../../rigs/relay/users-support.ts';
import { useTempDir } from '../support/temp-dir.ts';

// Organisation mode: the first user to claim a call's CRM log holds it (docs/relay-protocol.md 2.2).
const tmp = useTempDir('relay-claim-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('POST /v1/claim/<tenant> with the memory store', () => {
  it('two users claiming one call id at the same instant: exactly one holds it, every time', async () => {
    const org = await startOrgRelay(orgConfig(join(tmp.path, 'users.json')));
    cleanups.push(() => org.close());
    const [alice, bob] = await credentials(org.users, org.relay.url);
    await raceBoth([org.relay.url, org.relay.url], alice, bob, 20);
  });

  it('refuses a request without a user’s credential, a call id that is not one, a large body', async () => {
    const org = await startOrgRelay(orgConfig(join(tmp.path, 'users.json')));
    cleanups.push(() => org.close());
    const [alice] = await credentials(org.users, org.relay.url);
    expect((await claim(org.relay.url, 'sprd_not-a-credential', { callId: 'c1' })).status).toBe(
      401,
    );
    expect((await claim(org.relay.url, SECRET, { callId: 'c1' })).status).toBe(401);
    // The relay's errcode, as the call route's and the handshake's 401 say it: sign in again.
    expect((await claim(org.relay.url, SECRET, { callId: 'c1' })).body).toMatchObject({
      errcode: 46001,
    });
    expect((await claim(org.relay.url, alice, { callId: 'a b' })).status).toBe(400);
    expect((await claim(org.relay.url, alice, { callId: 'x'.repeat(129) })).status).toBe(400);
    expect((await claim(org.relay.url, alice, 'not json')).status).toBe(400);
    expect((await claim(org.relay.url, alice, { callId: 'c'.repeat(2000) })).status).toBe(413);
    const ok = await claim(org.relay.url, alice, { callId: 'c1' });
    expect(ok.body).toEqual({ callId: 'c1', holder: 'alice', mine: true });
  });

  it('one user’s two computers (a device each): the first holds the call, the other is told it is not theirs; a bad device is refused', async () => {
    const org = await startOrgRelay(orgConfig(join(tmp.path, 'users.json')));
    cleanups.push(() => org.close());
    const [alice] = await credentials(org.users, org.relay.url);
    const first = await claim(org.relay.url, alice, { callId: 'out-1', device: 'desk-aaaaaaaa' });
    const second = await claim(org.relay.url, alice, { callId: 'out-1', device: 'lap-bbbbbbbbb' });
    const again = await claim(org.relay.url, alice, { callId: 'out-1', device: 'desk-aaaaaaaa' });
    expect([first.body, second.body, again.body]).toEqual([
      { callId: 'out-1', holder: 'alice', mine: true },
      { callId: 'out-1', holder: 'alice', mine: false },
      { callId: 'out-1', holder: 'alice', mine: true },
    ]);
    expect((await claim(org.relay.url, alice, { callId: 'out-2', device: 'a b' })).status).toBe(
      400,
    );
    expect((await claim(org.relay.url, alice, { callId: 'out-2', device: 7 })).status).toBe(400);
  });

  it('a user claiming faster than the rate is told to wait (429), another user is not', async () => {
    const org = await startOrgRelay(orgConfig(join(tmp.path, 'users.json')));
    cleanups.push(() => org.close());
    const [alice, bob] = await credentials(org.users, org.relay.url);
    const statuses = [];
    for (let i = 0; i < 70; i += 1)
      statuses.push((await claim(org.relay.url, alice, { callId: `r${i}` })).status);
    expect(statuses.slice(0, 60).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(60)).toContain(429);
    expect((await claim(org.relay.url, bob, { callId: 'r0' })).body).toMatchObject({
      holder: 'alice',
      mine: false,
    });
  });
});
