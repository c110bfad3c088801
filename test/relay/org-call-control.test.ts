/**
 * Organisation mode's CallControl (src-main/core/org/org-call-control.ts) through its public
 * surface: the desktop's organisation connection (an enrolled device's credential in the keychain,
 * the relay's stream) against a relay that is the gateway of the simulator playing a Yeastar
 * P-Series PBX. A dial goes out from the user's own extension and its caller-first ring is the
 * user's own call (never a pop); hang-up of it; and each refusal in the direct mode's words.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { english } from '../../src-shared/i18n/phrase.ts';
import { MemoryCredentialStore } from '../../src-main/core/credentials/credential-store.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { organisationConnection } from '../../src-main/core/org/org-connection.ts';
import { OrgCallControl, callControlByMode } from '../../src-main/core/org/org-call-control.ts';
import { orgKeychainAccount, OrgTokenSource } from '../../src-main/core/org/org-token-source.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src-main/core/settings/types.ts';
import type { PopEvent } from '../../src-main/core/ports/ports.ts';
import type { OwnCall } from '../../src-main/core/events/own-dials.ts';
import type { CallControl } from '../../src-main/core/ports/call-control.ts';
import { CallActions } from '../../src-main/core/calls/call-actions.ts';
import { Consultations } from '../../src-main/core/calls/consultations.ts';
import { startGatewayCallsRig } from '../../rigs/relay/gateway-calls-support.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { waitFor } from '../../rigs/wait.ts';

const tmp = useTempDir('relay-org-calls-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function desktop(opts: { tenant?: string; enrolAs?: string[] | null } = {}) {
  const r = await startGatewayCallsRig(tmp.path);
  cleanups.push(() => r.close());
  const tenant = opts.tenant ?? r.tenant;
  const mine = r.sim.extensions[0]!.number;
  const transport = transportFor(
    { proxyMode: 'none', proxyUrl: '', caFile: '' },
    { logger: silentLogger, secrets: r.secrets, readFile: () => '' },
  );
  const tokens = new OrgTokenSource({
    store: new MemoryCredentialStore(),
    account: orgKeychainAccount(r.relay.url, tenant),
    fetch: transport.fetch,
    clock: systemClock,
    logger: silentLogger,
    secrets: r.secrets,
  });
  if (opts.enrolAs !== null)
    await tokens.save({
      kind: 'device',
      credential: await r.credential('alice', opts.enrolAs ?? [mine], tenant),
    });
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    connectionMode: 'organisation',
    relayUrl: r.relay.url,
    relayTenant: tenant,
    defaultRegion: 'US',
  };
  const connection = organisationConnection(
    { relayUrl: r.relay.url, tenant, settings, tokens },
    { clock: systemClock, logger: silentLogger, transport },
  );
  const pops: PopEvent[] = [];
  const own: OwnCall[] = [];
  connection.engine.onPop((p) => pops.push(p));
  connection.engine.onOwnCall?.((c) => own.push(c));
  connection.engine.start();
  cleanups.push(() => connection.stop());
  const control: CallControl = new OrgCallControl({
    connection: () => connection,
    settings: () => settings,
    logger: silentLogger,
  });
  return { ...r, mine, connection, control, pops, own, settings };
}

describe('OrgCallControl: calls through a gateway relay', () => {
  it("dials from the user's own extension; the caller-first ring is the own call, never a pop; hangs it up", async () => {
    const t = await desktop();
    await waitFor(() => t.connection.engine.status().state === 'connected', 'connected');
    expect([...t.control.offered()].sort()).toEqual(['dial', 'hangup', 'transfer']);
    const result = await t.control.dial('(415) 555-0199');
    expect(result).toEqual({ ok: true, callId: expect.any(String) });
    const callId = (result as { callId: string }).callId;
    await waitFor(() => t.rang.get(callId)?.join() === t.mine, 'the PBX rings alice');
    await waitFor(() => t.own.length === 1, 'the own call');
    expect(t.own).toEqual([
      { callId, number: '4155550199', extension: t.mine, startedAt: expect.any(Number) },
    ]);
    t.sim.setCallState(callId, 'answered', { to: t.mine });
    expect(await t.control.hangup(callId)).toEqual({ ok: true, callId });
    const again = await t.control.hangup(callId);
    expect(again).toMatchObject({ ok: false, refusal: 'no-such-call' });
    expect((again as { message: string }).message).toBe(
      'That call has ended, or it is not one of yours.',
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(t.pops).toEqual([]);
  });

  it("completes and cancels the user's attended transfer through the relay, as the app's CallControl", async () => {
    const t = await desktop();
    await waitFor(() => t.connection.engine.status().state === 'connected', 'connected');
    const noDirect: CallControl = {
      offered: () => new Set(),
      dial: () => Promise.resolve({ ok: true }),
      transfer: () => Promise.resolve({ ok: true }),
      hangup: () => Promise.resolve({ ok: true }),
      answer: () => Promise.resolve({ ok: true }),
      decline: () => Promise.resolve({ ok: true }),
    };
    const app = callControlByMode(() => true, noDirect, t.control);
    const colleague = t.sim.extensions[1]!.number;
    const callId = t.sim.ring({ from: '+14155550123', to: t.mine });
    t.sim.setCallState(callId, 'answered', { to: t.mine });
    expect(await app.transfer(callId, colleague, 'attended')).toEqual({ ok: true, callId });
    expect(await app.cancelTransfer!(callId)).toEqual({ ok: true, callId });
    // Back with the caller: consult again, and this time complete.
    expect(await app.transfer(callId, colleague, 'attended')).toEqual({ ok: true, callId });
    t.sim.setCallState(callId, 'answered', { to: colleague });
    expect(await app.completeTransfer!(callId)).toEqual({ ok: true, callId });
    const late = await app.completeTransfer!(callId);
    expect(late).toMatchObject({ ok: false, refusal: 'no-such-call' });
    expect(await app.cancelTransfer!('not a call id')).toMatchObject({ refusal: 'no-such-call' });
  });

  it('a consultation main keeps that the phone system no longer has (ended elsewhere): Complete is refused in words, Cancel refused ends it', async () => {
    const t = await desktop();
    await waitFor(() => t.connection.engine.status().state === 'connected', 'connected');
    const consultations = new Consultations({ clock: systemClock, logger: silentLogger });
    const calls = new CallActions({
      control: () => t.control,
      region: () => 'US',
      popupNumber: () => undefined,
      historyNumber: () => undefined,
      confirmDialLinks: () => true,
      consultations,
      logger: silentLogger,
    });
    const colleague = t.sim.extensions[1]!.number;
    const callId = t.sim.ring({ from: '+14155550123', to: t.mine });
    t.sim.setCallState(callId, 'answered', { to: t.mine });
    expect(await calls.transfer(callId, colleague, 'attended')).toEqual({ ok: true, callId });
    expect(calls.consultations().map((c) => c.target)).toEqual([colleague]);
    // The consultation ends outside this table (the phone's own key, the user's other computer).
    expect(await t.control.cancelTransfer!(callId)).toEqual({ ok: true, callId });
    const complete = await calls.completeTransfer(callId);
    // The relay's 409 for the PBX's refusal (no transfer under way), in the existing words.
    expect(complete).toMatchObject({ ok: false, refusal: 'refused' });
    expect(english(complete.ok ? [] : complete.words)).toMatch(/^The phone system refused/);
    expect(calls.consultations()).toHaveLength(1);
    expect(await calls.cancelTransfer(callId)).toMatchObject({ ok: false, refusal: 'refused' });
    expect(calls.consultations()).toEqual([]);
    // The user is with the caller: Hang up works.
    expect(await calls.hangup(callId)).toEqual({ ok: true, callId });
  });

  it('says not-offered in the direct mode’s words where the relay is no gateway, and offers nothing after', async () => {
    const t = await desktop({ tenant: 'plain', enrolAs: ['101'] });
    const r = await t.control.dial('4155550199');
    expect(r).toMatchObject({ ok: false, refusal: 'not-offered' });
    expect(english((r as Extract<typeof r, { ok: false }>).words)).toBe(
      'Calling from Screenpop is not offered by this phone system.',
    );
    expect([...t.control.offered()]).toEqual([]);
  });

  it('refuses a bad number before sending, and says "not signed in" without a credential', async () => {
    const t = await desktop({ enrolAs: null });
    const bad = await t.control.dial('javascript:alert(1)');
    expect(bad).toMatchObject({ ok: false, refusal: 'invalid-number' });
    const r = await t.control.dial('4155550199');
    expect(r).toMatchObject({ ok: false, refusal: 'refused' });
    expect((r as { message: string }).message).toContain('Not signed in to your organisation.');
    expect(t.rang.size).toBe(0);
  });

  it('is the one the app uses in organisation mode, the direct mode’s otherwise', async () => {
    const t = await desktop();
    let organisation = true;
    const direct: CallControl = {
      offered: () => new Set(),
      dial: () => Promise.resolve({ ok: true, callId: 'direct' }),
      transfer: () => Promise.resolve({ ok: true }),
      hangup: () => Promise.resolve({ ok: true }),
      answer: () => Promise.resolve({ ok: true }),
      decline: () => Promise.resolve({ ok: true }),
    };
    const app = callControlByMode(() => organisation, direct, t.control);
    expect(await app.dial('4155550199')).toMatchObject({
      ok: true,
      callId: expect.not.stringMatching(/^direct$/),
    });
    organisation = false;
    expect(await app.dial('4155550199')).toEqual({ ok: true, callId: 'direct' });
  });
});
