/**
 * Organisation mode's calls in gateway mode (docs/relay-protocol.md 2.5): `POST /v1/calls/<tenant>`
 * (src-relay/calls/call-route.ts) over real HTTP on 127.0.0.1, reaching the PBX through the
 * gateway's own client and tokens (src-relay/gateway/gateway-calls.ts), with the simulator as a
 * Yeastar P-Series PBX (its call API built from the guide's pages, docs/phone-systems/
 * yeastar-p-series.md section 10): a user dials from their own extension (the PBX sees that
 * caller), never from a colleague's; hang-up and transfer only of the user's own call; 10005 as
 * permission; no or a wrong credential 401; past the user's rate 429; a tenant the relay is no
 * gateway of says not-offered; every action one audit line, the number masked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startGatewayCallsRig } from '../../rigs/relay/gateway-calls-support.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('relay-calls-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig(opts: { rate?: { burst: number; perMinute: number }; scopes?: string[] } = {}) {
  const r = await startGatewayCallsRig(tmp.path, opts);
  cleanups.push(() => r.close());
  const [mine, colleague] = [r.sim.extensions[0]!.number, r.sim.extensions[1]!.number];
  const call = async (body: unknown, bearer?: string, t = r.tenant) => {
    const res = await fetch(r.relay.url + `/v1/calls/${t}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(bearer !== undefined && { Authorization: `Bearer ${bearer}` }),
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const audit = () => r.logger.records.filter((rec) => rec.msg === 'call action');
  return { ...r, mine, colleague, call, audit };
}

describe('POST /v1/calls/<tenant>: a gateway relay dials for its users through its own tokens', () => {
  it("dials from the user's own extension: the PBX sees that caller; the audit line masks the number", async () => {
    const t = await rig();
    const alice = await t.credential('alice', [t.mine]);
    const res = await t.call({ action: 'dial', to: '+14155550199' }, alice);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, callId: expect.any(String) });
    const callId = res.body.callId as string;
    await expect.poll(() => t.rang.get(callId)).toEqual([t.mine]);
    const line = t.audit().at(-1)!;
    expect(line).toMatchObject({
      tenant: t.tenant,
      user: 'alice',
      action: 'dial',
      outcome: 'ok',
      extension: t.mine,
      to: '********99',
    });
    const text = JSON.stringify(t.logger.records);
    expect(text).not.toContain('4155550199');
    expect(text).not.toContain(alice);
  });

  it("never dials from a colleague's extension, whatever the body names", async () => {
    const t = await rig();
    const alice = await t.credential('alice', [t.mine]);
    const res = await t.call(
      { action: 'dial', to: '4155550199', from: t.colleague, caller: t.colleague },
      alice,
    );
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ ok: false, refusal: 'not-own-extension' });
    expect(t.rang.size).toBe(0);
    // A `caller` field is no setting: the dial goes out from alice's own extension.
    const own = await t.call({ action: 'dial', to: '4155550199', caller: t.colleague }, alice);
    expect(own.status).toBe(200);
    await expect.poll(() => t.rang.get(own.body.callId as string)).toEqual([t.mine]);
    expect([...t.rang.values()].flat()).not.toContain(t.colleague);
    expect(t.audit().map((r) => r.outcome)).toEqual(['not-own-extension', 'ok']);
  });

  it("hangs up only the user's own call: a colleague's is no-such-call", async () => {
    const t = await rig();
    const alice = await t.credential('alice', [t.mine]);
    const bob = await t.credential('bob', [t.colleague]);
    const dialled = await t.call({ action: 'dial', to: '4155550199' }, alice);
    const callId = dialled.body.callId as string;
    t.sim.setCallState(callId, 'answered', { to: t.mine });
    const byBob = await t.call({ action: 'hangup', callId }, bob);
    expect(byBob.status).toBe(404);
    expect(byBob.body).toMatchObject({ ok: false, refusal: 'no-such-call' });
    const byAlice = await t.call({ action: 'hangup', callId }, alice);
    expect(byAlice).toEqual({ status: 200, body: { ok: true, callId } });
  });

  it("transfers the user's answered call blind (the caller moved); a colleague cannot", async () => {
    const t = await rig();
    const alice = await t.credential('alice', [t.mine]);
    const bob = await t.credential('bob', [t.colleague]);
    const callId = t.sim.ring({ from: '+14155550123', to: t.mine });
    t.sim.setCallState(callId, 'answered', { to: t.mine });
    const move = { action: 'transfer', callId, to: t.colleague, mode: 'blind' };
    expect((await t.call(move, bob)).body).toMatchObject({ ok: false, refusal: 'no-such-call' });
    expect(await t.call(move, alice)).toEqual({ status: 200, body: { ok: true, callId } });
    await expect.poll(() => t.rang.get(callId)).toContain(t.colleague);
    // Alice is out of the call now: hanging it up is no longer hers to do.
    expect((await t.call({ action: 'hangup', callId }, alice)).status).toBe(404);
    expect(t.audit().at(-2)).toMatchObject({ user: 'alice', action: 'transfer', outcome: 'ok' });
  });

  it("completes the user's own attended transfer (a colleague cannot) and cancels another", async () => {
    const t = await rig({ rate: { burst: 20, perMinute: 20 } });
    const alice = await t.credential('alice', [t.mine]);
    const bob = await t.credential('bob', [t.colleague]);
    const third = t.sim.extensions[2]!.number;
    const callId = t.sim.ring({ from: '+14155550123', to: t.mine });
    t.sim.setCallState(callId, 'answered', { to: t.mine });
    const consult = { action: 'transfer', callId, to: third, mode: 'attended' };
    expect(await t.call(consult, alice)).toEqual({ status: 200, body: { ok: true, callId } });
    t.sim.setCallState(callId, 'answered', { to: third });
    const complete = { action: 'complete-transfer', callId };
    expect((await t.call(complete, bob)).body).toMatchObject({
      ok: false,
      refusal: 'no-such-call',
    });
    expect(await t.call(complete, alice)).toEqual({ status: 200, body: { ok: true, callId } });
    // Alice left the call: it is no longer hers to hang up.
    expect((await t.call({ action: 'hangup', callId }, alice)).status).toBe(404);

    const second = t.sim.ring({ from: '+14155550124', to: t.mine });
    t.sim.setCallState(second, 'answered', { to: t.mine });
    await t.call({ ...consult, callId: second }, alice);
    const cancel = { action: 'cancel-transfer', callId: second };
    expect(await t.call(cancel, alice)).toEqual({
      status: 200,
      body: { ok: true, callId: second },
    });
    // No transfer under way any more: the PBX refuses a second cancel (409 refused).
    expect(await t.call(cancel, alice)).toMatchObject({
      status: 409,
      body: { refusal: 'refused' },
    });
    // Alice is back with the caller: hanging up is hers.
    expect((await t.call({ action: 'hangup', callId: second }, alice)).status).toBe(200);
    expect(t.audit().map((r) => r.action)).toContain('complete-transfer');
    expect(t.audit().find((r) => r.action === 'cancel-transfer')).toMatchObject({
      user: 'alice',
      extension: t.mine,
      outcome: 'ok',
    });
  });

  it("says permission (403) when the gateway's API application lacks the call permission (10005)", async () => {
    const t = await rig({ scopes: ['extension:read', 'event:*'] });
    const alice = await t.credential('alice', [t.mine]);
    const res = await t.call({ action: 'dial', to: '4155550199' }, alice);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ ok: false, refusal: 'permission' });
    expect(t.audit().at(-1)).toMatchObject({ outcome: 'permission', errcode: 10005 });
  });

  it('refuses no credential and a wrong one with 401, and a bad number with 400', async () => {
    const t = await rig();
    const none = await t.call({ action: 'dial', to: '4155550199' });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ ok: false, refusal: 'sign-in-required' });
    const wrong = await t.call({ action: 'dial', to: '4155550199' }, 'sprd_made-up');
    expect(wrong.status).toBe(401);
    const alice = await t.credential('alice', [t.mine]);
    const bad = await t.call({ action: 'dial', to: 'javascript:alert(1)' }, alice);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ ok: false, refusal: 'invalid-request' });
    expect(t.rang.size).toBe(0);
  });

  it('limits each user to their rate (429 rate-limited, Retry-After), another user unaffected', async () => {
    const t = await rig({ rate: { burst: 2, perMinute: 2 } });
    const alice = await t.credential('alice', [t.mine]);
    const bob = await t.credential('bob', [t.colleague]);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await t.call({ action: 'dial', to: '4155550199' }, alice)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const limited = await fetch(t.relay.url + `/v1/calls/${t.tenant}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${alice}` },
      body: JSON.stringify({ action: 'dial', to: '4155550199' }),
    });
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ ok: false, refusal: 'rate-limited' });
    expect((await t.call({ action: 'dial', to: '4155550199' }, bob)).status).toBe(200);
  });

  it('says not-offered for a users tenant the relay is no gateway of', async () => {
    const t = await rig();
    const carol = await t.credential('carol', ['101'], 'plain');
    const res = await t.call({ action: 'dial', to: '4155550199' }, carol, 'plain');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ ok: false, refusal: 'not-offered' });
  });
});
