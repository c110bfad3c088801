/**
 * The relay as a process (`node dist-relay/screenpop-relay.cjs`) with a Yeastar P-Series tenant: the PBX's
 * webhook deliveries (the guide's report examples, test/fixtures/yeastar-p-series) signed the way
 * "Monitor Events via Webhook" says (X-Signature: Base64 of HMAC-SHA256 of the raw body, keyed with
 * the webhook's 32-character Secret), decoded by the one decoder the app uses, and handed to a
 * desktop as the core's envelopes; a desktop's token checked the vendor's way (in the query, with
 * a User-Agent); the tenant's settings checked with words an administrator can act on.
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { YeastarEventDecoder } from '../../src-shared/phone-systems/yeastar-p-series.ts';
import { YEASTAR_P_SERIES_WIRE } from '../../src-shared/wire/yeastar-p-series.ts';
import { STANDARD_WIRE } from '../../src-shared/wire/standard.ts';
import { relayOptIns } from '../../src-main/core/relay-client/filter.ts';
import { signBody } from '../../src-sim/webhook-signature.ts';
import { TestClient } from '../../rigs/relay/helpers.ts';
import {
  runRelayCli,
  runRelayWith,
  spawnRelay,
  type RelayProcess,
} from '../../rigs/relay/relay-process.ts';
import { sleepReal } from '../../rigs/wait.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'yeastar-p-series');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

/** A webhook Secret as the PBX generates it: 32 characters. */
const SECRET = 'qnIdTBxyGgn2LckZrFw7IVeTRMJf3XfM';
const GOOD_TOKEN = 'ah1i5B5uGYBY4W4ITiOV9lBwrDp2KPyQ';
const BLOCKED_TOKEN = 'blocked-by-ip-restriction-000000';

const xSignature = (body: string, secret = SECRET) =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('base64');

/** The same signature as another implementation computes it (OpenSSL), as the guide describes it. */
const opensslSignature = (body: string) =>
  execFileSync('openssl', ['dgst', '-sha256', '-hmac', SECRET, '-binary'], {
    input: body,
  }).toString('base64');

/**
 * The far side of the token check, as the guide describes a P-Series: extension/list takes the
 * token in the query ("Request Structure") and answers errcodes ("Error Code and Error Message"):
 * 10004 TOKEN EXPIRED for an unknown token, 70087 IP FORBIDDEN for a blocked one, 200 either way
 * (our assumption, as in the simulator). It records how each request carried its credentials.
 */
async function startPbx(): Promise<{
  baseUrl: string;
  seen: { token: string | null; authorization?: string; userAgent?: string }[];
  close: () => Promise<void>;
}> {
  const seen: { token: string | null; authorization?: string; userAgent?: string }[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pbx');
    const token = url.searchParams.get('access_token');
    seen.push({
      token,
      ...(req.headers.authorization !== undefined && { authorization: req.headers.authorization }),
      ...(req.headers['user-agent'] !== undefined && { userAgent: req.headers['user-agent'] }),
    });
    const body =
      url.pathname !== '/openapi/v1.0/extension/list'
        ? { errcode: 10001, errmsg: 'INTERFACE NOT EXISTED' }
        : token === GOOD_TOKEN
          ? { errcode: 0, errmsg: 'SUCCESS', total_number: 0, data: [] }
          : token === BLOCKED_TOKEN
            ? { errcode: 70087, errmsg: 'IP FORBIDDEN' }
            : { errcode: 10004, errmsg: 'TOKEN EXPIRED' };
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

async function deliver(
  relay: RelayProcess,
  tenant: string,
  body: string,
  headers: Record<string, string> = { 'X-Signature': xSignature(body) },
  method = 'POST',
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${relay.url}/webhook/${tenant}`, {
    method,
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'Yeastar', ...headers },
    ...(method === 'POST' && { body }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const wsUrl = (relay: RelayProcess, tenant: string) =>
  `${relay.url.replace(/^http/, 'ws')}/v1/stream/${tenant}`;

type Envelope = {
  event: number;
  event_id: string;
  timestamp: number;
  tenant: string;
  data: Record<string, unknown>;
};

let pbx: Awaited<ReturnType<typeof startPbx>>;
let relay: RelayProcess;

beforeAll(async () => {
  pbx = await startPbx();
  relay = await spawnRelay({
    config: {
      tenants: {
        pbx: { baseUrl: pbx.baseUrl, secrets: [SECRET], phoneSystem: 'yeastar-p-series' },
        // Deliveries from its PBX's network only; 127.0.0.1 (this test) is not in it.
        fenced: {
          baseUrl: 'http://127.0.0.1:9',
          secrets: [SECRET],
          phoneSystem: 'yeastar-p-series',
          allowFrom: ['203.0.113.0/24', '2001:db8::/32'],
        },
        open: {
          baseUrl: 'http://127.0.0.1:10',
          secrets: [SECRET],
          phoneSystem: 'yeastar-p-series',
          allowFrom: ['127.0.0.1'],
        },
        // A standard tenant on the same relay keeps its own scheme.
        std: { baseUrl: 'http://127.0.0.1:11', secrets: [SECRET] },
      },
    },
  });
}, 30_000);

afterAll(async () => {
  await relay?.stop();
  await pbx?.close();
});

describe('relay: a Yeastar P-Series tenant', { timeout: 30_000 }, () => {
  it("takes the guide's reports signed with X-Signature and hands a desktop the core's envelopes, with the app's own event ids", async () => {
    const desktop = await TestClient.connect(wsUrl(relay, 'pbx'), GOOD_TOKEN, {
      extensions: ['101'],
      events: [30007, 30009],
    });
    // The desktop's token was checked the vendor's way: in the query, a User-Agent, no header.
    expect(pbx.seen.at(-1)).toEqual({ token: GOOD_TOKEN, userAgent: expect.any(String) });

    const reports = [
      'constructed-30011-inbound-rings-101.json',
      'constructed-30011-ring-group-rings-101-102.json',
      'constructed-30011-ring-group-answered-by-102.json',
      'event-30010-trunk-idle.json',
      'event-30009-presence-business-trip.json',
    ];
    const before = Date.now();
    for (const name of reports) {
      const body = fixture(name);
      const { status, json } = await deliver(relay, 'pbx', body, {
        'X-Signature': opensslSignature(body),
      });
      expect(status, name).toBe(200);
      expect(json, name).toMatchObject({ ok: true, stored: expect.any(Number) });
    }
    // Reports of codes desktops do not read (30008; 30034 with `msg` an object) are acknowledged
    // (2xx, or the PBX would send them again) and stored as nothing.
    for (const name of [
      'event-30008-extension-ringing.json',
      'event-30034-system-info-msg-object.json',
    ])
      expect(await deliver(relay, 'pbx', fixture(name)), name).toEqual({
        status: 200,
        json: { ok: true, stored: 0 },
      });

    // 101's ring, the ring group's ring of 101, 101 gone when 102 answered, the trunk, the presence.
    await desktop.until(() => desktop.events.length >= 5);
    await sleepReal(200);
    const got = desktop.events.map((e) => JSON.parse(e) as Envelope);
    expect(got.map((e) => ({ event: e.event, ...e.data }))).toEqual([
      {
        event: 30011,
        call_id: '1700000001.11',
        from: '+4930123456',
        to: '101',
        state: 'ringing',
        line: '5503301',
        member_status: 'RING',
      },
      {
        event: 30011,
        call_id: '1700000002.20',
        from: '+14155550123',
        to: '101',
        state: 'ringing',
        line: '5503302',
        member_status: 'RING',
        call_path: '6300',
      },
      {
        event: 30011,
        call_id: '1700000002.20',
        from: '+14155550123',
        to: '101',
        state: 'ended',
        line: '5503302',
        member_status: '',
        call_path: '6300',
      },
      { event: 30007, trunk: 'peering', status: 'registered', vendor_status: 1 },
      { event: 30009, extension: '2005', presence_status: 'business_trip' },
    ]);
    for (const e of got) {
      // The relay's tenant, and the relay's clock at receipt: a server time the desktop judges
      // for staleness like any other (not marked as stamped on the desktop's own arrival).
      expect(e.tenant).toBe('pbx');
      expect(e.timestamp).toBeGreaterThanOrEqual(before - 1);
      expect(e.timestamp).toBeLessThanOrEqual(Date.now());
      expect(e).not.toHaveProperty('receiptStamped');
    }
    // The same reports on the direct stream get the same ids from the app's decoder, so a ring
    // carried by both pops once.
    const app = new YeastarEventDecoder();
    const appIds = reports
      .slice(0, 3)
      .flatMap((name, i) => {
        const r = app.decode(fixture(name), Date.now(), i);
        return r.ok ? r.envelopes : [];
      })
      .filter((e) => e.data.to === '101')
      .map((e) => e.event_id);
    expect(got.slice(0, 3).map((e) => e.event_id)).toEqual(appIds);

    // The same delivery again (a PBX retry, a replayed capture) is acknowledged and not sent on.
    expect(
      await deliver(relay, 'pbx', fixture('constructed-30011-inbound-rings-101.json')),
    ).toEqual({ status: 200, json: { ok: true, duplicate: true } });
    await sleepReal(300);
    expect(desktop.events).toHaveLength(5);
    await desktop.close();
  });

  it("hands each desktop the call records (30012) of its own calls, as the app asks for them: History's talk time", async () => {
    const features = { voicemail: true, sms: true, trunk: true, presence: true };
    // What the app asks the relay for on a Yeastar PBX (and not on a standard service).
    const optIns = relayOptIns(features, YEASTAR_P_SERIES_WIRE);
    expect(optIns).toContain(30012);
    expect(relayOptIns(features, STANDARD_WIRE)).not.toContain(30012);
    const mine = await TestClient.connect(wsUrl(relay, 'pbx'), GOOD_TOKEN, {
      extensions: ['101'],
      events: optIns,
    });
    const colleague = await TestClient.connect(wsUrl(relay, 'pbx'), GOOD_TOKEN, {
      extensions: ['102'],
      events: optIns,
    });
    const record = (callId: string, to: string, status: string, talk: number) =>
      JSON.stringify({
        type: 30012,
        sn: '3633D2199067',
        msg: JSON.stringify({
          call_id: callId,
          time_start: '2026-11-28 09:00:00',
          call_from: '+4930123456',
          call_to: to,
          call_duration: talk + 8,
          talk_duration: talk,
          status,
          type: 'Inbound',
        }),
      });
    const ring = fixture('constructed-30011-inbound-rings-101.json').replace(
      '1700000001.11',
      '1700000012.01',
    );
    for (const body of [
      ring,
      record('1700000012.01', '101', 'ANSWERED', 125),
      record('1700000012.02', '102', 'ANSWERED', 30),
      record('1700000012.03', '2001', 'NO ANSWER', 0),
    ])
      expect((await deliver(relay, 'pbx', body)).status).toBe(200);
    await mine.until(() => mine.events.length >= 3);
    await colleague.until(() => colleague.events.length >= 1);
    await sleepReal(300);
    const data = (c: TestClient) =>
      c.events.map((e) => JSON.parse(e) as Envelope).map((e) => ({ event: e.event, ...e.data }));
    // Mine: the ring, its end in the record's words, and the record with the talk time.
    expect(data(mine)).toEqual([
      expect.objectContaining({ event: 30011, to: '101', state: 'ringing' }),
      expect.objectContaining({ event: 30011, to: '101', state: 'answered' }),
      {
        event: 30012,
        call_id: '1700000012.01',
        to: '101',
        status: 'ANSWERED',
        talk_sec: 125,
        duration_sec: 133,
        from: '+4930123456',
        direction: 'inbound',
      },
    ]);
    // The colleague's record goes to the colleague only; a record of no desktop's call to no one.
    expect(data(colleague)).toEqual([
      expect.objectContaining({ event: 30012, call_id: '1700000012.02', to: '102', talk_sec: 30 }),
    ]);
    await mine.close();
    await colleague.close();
  });

  it('refuses a delivery that is not signed with the Secret, or not a report, and sends nothing on', async () => {
    const desktop = await TestClient.connect(wsUrl(relay, 'pbx'), GOOD_TOKEN, {
      extensions: ['101'],
    });
    const ring = fixture('constructed-30011-inbound-rings-101.json').replace(
      '1700000001.11',
      '1700000009.99',
    );
    const refused = async (headers: Record<string, string>, body = ring) =>
      (await deliver(relay, 'pbx', body, headers)).status;
    expect(await refused({})).toBe(401);
    // The standard service's header and scheme are not this tenant's.
    expect(await refused({ 'X-Service-Signature': signBody(SECRET, ring) })).toBe(401);
    expect(
      await refused({ 'X-Signature': xSignature(ring, 'another-secret-of-32-characters!') }),
    ).toBe(401);
    // Hex instead of Base64, and a signature over other bytes.
    expect(
      await refused({
        'X-Signature': createHmac('sha256', SECRET).update(ring).digest('hex'),
      }),
    ).toBe(401);
    expect(await refused({ 'X-Signature': xSignature(ring + ' ') })).toBe(401);
    // Signed, but not a report: a standard envelope, and text that is not JSON.
    const envelope = JSON.stringify({
      event: 30011,
      timestamp: Date.now(),
      tenant: 'pbx',
      data: { call_id: 'x', from: '1', to: '101', state: 'ringing' },
      event_id: 'evt-1',
    });
    expect(await refused({ 'X-Signature': xSignature(envelope) }, envelope)).toBe(400);
    expect(await refused({ 'X-Signature': xSignature('heartbeat') }, 'heartbeat')).toBe(400);
    // A PBX set to deliver with GET is told what to change.
    const get = await deliver(relay, 'pbx', '', {}, 'GET');
    expect(get.status).toBe(405);
    expect(String(get.json.error)).toContain('POST');
    await sleepReal(300);
    expect(desktop.events).toEqual([]);
    await desktop.close();
  });

  it('a standard tenant on the same relay takes only its own scheme', async () => {
    const ring = fixture('constructed-30011-inbound-rings-101.json');
    expect((await deliver(relay, 'std', ring)).status).toBe(401);
    expect(
      (await deliver(relay, 'std', ring, { 'X-Service-Signature': signBody(SECRET, ring) })).status,
    ).toBe(400);
  });

  it('takes deliveries only from the addresses in allowFrom', async () => {
    const ring = fixture('constructed-30011-inbound-rings-101.json');
    const fenced = await deliver(relay, 'fenced', ring);
    expect(fenced.status).toBe(403);
    expect(fenced.json.error).toBe('deliveries are not accepted from this address');
    expect((await deliver(relay, 'open', ring)).status).toBe(200);
  });

  it("checks a desktop's token at the PBX and refuses one it refuses", async () => {
    await expect(
      TestClient.connect(wsUrl(relay, 'pbx'), 'not-a-token-the-pbx-knows', {
        extensions: ['101'],
      }),
    ).rejects.toThrow('handshake refused: 401');
    await expect(
      TestClient.connect(wsUrl(relay, 'pbx'), BLOCKED_TOKEN, { extensions: ['101'] }),
    ).rejects.toThrow('handshake refused: 403');
    expect(pbx.seen.every((s) => s.authorization === undefined && s.userAgent)).toBe(true);
  });
});

describe('relay config: a Yeastar P-Series tenant', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-yeastar-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const tenant = (extra: Record<string, unknown>) => ({
    tenants: {
      acme: { baseUrl: 'https://pbx.example', secrets: [SECRET], ...extra },
    },
  });

  it('refuses an unknown phone system and an allowFrom entry that is not an address, naming the setting', async () => {
    // One start, every problem named at once (each CLI start costs seconds on a loaded machine).
    const bad = ['10.0.0.0/33', 'pbx.example', '10.0.0.1/8/1', ''];
    const tenants: Record<string, unknown> = {
      wrong: { baseUrl: 'https://wrong.example', secrets: [SECRET], phoneSystem: 'yeastar' },
    };
    bad.forEach((entry, i) => {
      tenants[`t${i}`] = {
        baseUrl: `https://t${i}.example`,
        secrets: [SECRET],
        phoneSystem: 'yeastar-p-series',
        allowFrom: ['203.0.113.7', entry],
      };
    });
    const run = await runRelayWith(dir, { tenants });
    expect(run.code).not.toBe(0);
    expect(run.err).toContain(
      'tenants.wrong.phoneSystem: phoneSystem must be "standard" or "yeastar-p-series"',
    );
    bad.forEach((entry, i) =>
      expect(run.err, entry).toContain(
        `tenants.t${i}.allowFrom.1: an allowFrom entry is not an IP address or CIDR range`,
      ),
    );
  });

  it('a tenant made from the environment alone can be a Yeastar one (RELAY_TENANT_<NAME>_PHONE_SYSTEM)', async () => {
    const env = (phoneSystem: string) => ({
      ...process.env,
      RELAY_PORT: '0',
      RELAY_TENANT_ACME_SECRETS: SECRET,
      RELAY_TENANT_ACME_BASE_URL: 'https://pbx.example',
      RELAY_TENANT_ACME_PHONE_SYSTEM: phoneSystem,
    });
    const good = await runRelayCli(['--check-config'], { env: env('yeastar-p-series') });
    expect(good.code).toBe(0);
    expect(good.out).toContain('tenant acme: https://pbx.example (Yeastar P-Series)');
    const typo = await runRelayCli(['--check-config'], { env: env('yeastar') });
    expect(typo.code).not.toBe(0);
    expect(typo.err).toContain('tenants.acme.phoneSystem: phoneSystem must be');
  });

  it('--check-config says the phone system and warns of a Secret that is not the 32 characters the PBX shows', async () => {
    const good = await runRelayWith(
      dir,
      tenant({ phoneSystem: 'yeastar-p-series', allowFrom: ['203.0.113.0/24'] }),
      ['--check-config'],
    );
    expect(good.code).toBe(0);
    expect(good.out).toContain(
      'tenant acme: https://pbx.example (Yeastar P-Series), 1 webhook secret, webhooks from 203.0.113.0/24 only',
    );
    expect(good.out + good.err).not.toContain('32-character');
    const cut = await runRelayWith(
      dir,
      {
        tenants: {
          acme: {
            baseUrl: 'https://pbx.example',
            secrets: [SECRET.slice(0, 31)],
            phoneSystem: 'yeastar-p-series',
          },
        },
      },
      ['--check-config'],
    );
    expect(cut.out + cut.err).toContain(
      "a Yeastar P-Series webhook's Secret is the 32-character key shown beside the webhook in the PBX",
    );
    // Deliveries can be replayed (the signature has no time): a tenant open to anywhere is told
    // to name the PBX's addresses; one that names them is not.
    expect(cut.out + cut.err).toContain(
      'tenants.acme takes Yeastar P-Series webhooks from anywhere',
    );
    expect(good.out + good.err).not.toContain('from anywhere');
  });
});
