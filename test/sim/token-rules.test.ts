/**
 * The simulator's token rules as a Yeastar P-Series (src-sim/credentials.ts), seen from plain
 * fetch: the guide's limit of valid tokens per application (*Get Access Token*; the refusal is
 * 60002, our reading), a PBX where each get_token ends the application's earlier tokens (a public
 * integration's report), and *Revoke Access Token* (`GET del_token?access_token=`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator, type TokenRule } from '../../src-sim/index.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { call, postJson } from './helpers.ts';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function pbx(tokenRule: TokenRule): Promise<Simulator> {
  sim = await startSimulator({
    clock: new FakeClock(),
    phoneSystem: 'yeastar-p-series',
    tokenRule,
  });
  return sim;
}

async function signIn(s: Simulator) {
  return (
    await postJson(s, '/openapi/v1.0/get_token', {
      username: s.apiKey.key,
      password: s.apiKey.secret,
    })
  ).body;
}

const list = (s: Simulator, token: unknown) =>
  call(s, `/openapi/v1.0/extension/list?access_token=${String(token)}`);
const revoke = (s: Simulator, token: unknown) =>
  call(s, `/openapi/v1.0/del_token?access_token=${String(token)}`);

describe('simulator token rules (Yeastar P-Series)', () => {
  it('--token-limit 8: the ninth token is refused with 60002 until one is revoked', async () => {
    const s = await pbx({ kind: 'limit', max: 8 });
    const tokens = [];
    for (let i = 0; i < 8; i++) tokens.push((await signIn(s)).access_token);
    const ninth = await postJson(s, '/openapi/v1.0/get_token', {
      username: s.apiKey.key,
      password: s.apiKey.secret,
    });
    expect(ninth.status).toBe(200);
    expect(ninth.body).toEqual({ errcode: 60002, errmsg: 'MAX LIMITATION EXCEEDED' });

    const revoked = await revoke(s, tokens[0]);
    expect(revoked.body).toEqual({ errcode: 0, errmsg: 'SUCCESS' });
    expect((await list(s, tokens[0])).body.errcode).toBe(10004);
    expect((await signIn(s)).errcode).toBe(0);
    expect(s.stats()).toMatchObject({ getToken: 10, delToken: 1 });
  });

  it('--token-one-sign-in: each get_token ends the earlier access and refresh tokens', async () => {
    const s = await pbx({ kind: 'one-sign-in' });
    const first = await signIn(s);
    expect((await list(s, first.access_token)).body.errcode).toBe(0);
    const second = await signIn(s);
    expect((await list(s, first.access_token)).body.errcode).toBe(10004);
    const refreshed = await postJson(s, '/openapi/v1.0/refresh_token', {
      refresh_token: first.refresh_token,
    });
    expect(refreshed.body.errcode).toBe(-1);
    expect((await list(s, second.access_token)).body.errcode).toBe(0);
  });

  it('del_token of an unknown token is 10004, as any call with one', async () => {
    const s = await pbx({ kind: 'none' });
    expect((await revoke(s, 'not-a-token')).body.errcode).toBe(10004);
  });
});
