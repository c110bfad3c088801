/**
 * The Yeastar P-Series call API through the one service client (docs/phone-systems/
 * yeastar-p-series.md section 10): the requests it sends and the answers it takes, against a far
 * side built from the guide's published examples (test/fixtures/yeastar-call-api, its README
 * cites each page), the refusals as the CallControl port names them, and no token in any error
 * or log line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { callRefusalOf } from '../../src-shared/api/call-api.ts';
import { isServiceError } from '../../src-shared/api/service-errors.ts';
import { wireFor } from '../../src-shared/wire/index.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'yeastar-call-api');
const fixture = (name: string) => readFileSync(join(DIR, name), 'utf8');
const json = (name: string) => JSON.parse(fixture(name)) as unknown;

const TOKEN = 'Ey7Ty0kL7bpOfPHgpJH2Qq4ozMvU4IEs';

interface Seen {
  method: string;
  url: URL;
  body: unknown;
}

/** A PBX answering each call path with a body (text) or a thrown network failure. */
function farSide(
  answers: Record<string, string | (() => never)>,
  phoneSystem: 'yeastar-p-series' | 'standard' = 'yeastar-p-series',
) {
  const seen: Seen[] = [];
  const fetch = (async (input: URL | string, init?: RequestInit) => {
    const url = new URL(String(input));
    seen.push({
      method: init?.method ?? 'GET',
      url,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    const answer = answers[url.pathname.replace('/openapi/v1.0/', '')];
    if (typeof answer === 'function') return answer();
    if (answer === undefined)
      return new Response('{"errcode":10001,"errmsg":"INTERFACE NOT EXISTED"}');
    return new Response(answer, { headers: { 'content-type': 'application/json' } });
  }) as typeof globalThis.fetch;
  const secrets = new SecretRegistry();
  const logger = memoryLogger(secrets);
  const client = new ServiceClient({
    baseUrl: 'https://192.168.5.150:8088',
    clock: new FakeClock(),
    fetch,
    secrets,
    logger,
    api: wireFor(phoneSystem).api,
  });
  return { client, seen, logger };
}

describe('the Yeastar call API client (published examples)', () => {
  it('Make a Call: POST call/dial with the page example body, the token in the query; answers call_id', async () => {
    const { client, seen } = farSide({ 'call/dial': fixture('constructed-dial-response.json') });
    const answer = await client.dial(TOKEN, {
      caller: '1005',
      callee: '5503301',
      dialPermission: '2002',
      autoAnswer: false,
    });
    expect(answer).toEqual({ callId: '1648627871.66' });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe('POST');
    expect(seen[0]!.url.pathname).toBe('/openapi/v1.0/call/dial');
    expect(seen[0]!.url.searchParams.get('access_token')).toBe(TOKEN);
    expect(seen[0]!.body).toEqual(json('dial-request.json'));
  });

  it('Make a Call without the optional fields sends caller and callee only', async () => {
    const { client, seen } = farSide({ 'call/dial': fixture('constructed-dial-response.json') });
    await client.dial(TOKEN, { caller: '1005', callee: '5503301' });
    expect(seen[0]!.body).toEqual({ caller: '1005', callee: '5503301' });
  });

  it('Transfer a Call (blind): the page example body; attended operations by attended_operate', async () => {
    const { client, seen } = farSide({
      'call/transfer': fixture('constructed-transfer-response.json'),
    });
    expect(
      await client.transfer(TOKEN, {
        type: 'blind',
        channelId: 'PJSIP/2000-000000ae',
        number: '2008',
      }),
    ).toEqual({ callId: '1648627871.67' });
    expect(seen[0]!.body).toEqual(json('transfer-blind-request.json'));
    await client.transfer(TOKEN, {
      type: 'attended',
      channelId: 'PJSIP/2000-000000ae',
      operate: 'complete',
    });
    expect(seen[1]!.body).toEqual({
      type: 'attended',
      channel_id: 'PJSIP/2000-000000ae',
      attended_operate: 'complete',
    });
  });

  it('Hang up a Call: the page example request and answer', async () => {
    const { client, seen } = farSide({ 'call/hangup': fixture('hangup-response.json') });
    expect(await client.hangup(TOKEN, 'PJSIP/1005-00000023')).toEqual({
      callId: '1648627871.65',
    });
    expect(seen[0]!.body).toEqual(json('hangup-request.json'));
  });

  it('Query Calls: GET call/query?call_id=, members with their channels and statuses', async () => {
    const { client, seen } = farSide({ 'call/query': fixture('constructed-query-response.json') });
    const calls = await client.queryCalls(TOKEN, { callId: '1648627871.66' });
    expect(seen[0]!.method).toBe('GET');
    expect(seen[0]!.url.searchParams.get('call_id')).toBe('1648627871.66');
    expect(calls).toEqual([
      {
        callId: '1648627871.66',
        members: [
          {
            kind: 'extension',
            number: '1005',
            channelId: 'PJSIP/1005-00000024',
            status: 'ANSWERED',
          },
          {
            kind: 'outbound',
            number: '5503301',
            channelId: 'PJSIP/SIP-trunk-00000025',
            status: 'ANSWER',
          },
        ],
      },
    ]);
  });
});

describe('answers validated at the boundary', () => {
  it('a dial answer without a usable call_id is a protocol error, not a call', async () => {
    for (const body of [
      '{"errcode":0,"errmsg":"SUCCESS"}',
      '{"errcode":0,"errmsg":"SUCCESS","call_id":{"x":1}}',
      '{"errcode":0,"errmsg":"SUCCESS","call_id":"1648627871.65\\n<script>"}',
      `{"errcode":0,"errmsg":"SUCCESS","call_id":"${'9'.repeat(500)}"}`,
    ]) {
      const { client } = farSide({ 'call/dial': body });
      const err = await client.dial(TOKEN, { caller: '1005', callee: '2008' }).catch((e) => e);
      expect(isServiceError(err) && err.kind, body).toBe('protocol');
    }
  });

  it('a query answer of odd entries keeps what is usable, bounded', async () => {
    const many = Array.from({ length: 500 }, (_, i) => ({ call_id: `1.${i}`, members: [] }));
    const { client } = farSide({
      'call/query': JSON.stringify({
        errcode: 0,
        data: [null, 'x', { members: [] }, { call_id: '2.1', members: [{ odd: {} }, 7] }, ...many],
      }),
    });
    const calls = await client.queryCalls(TOKEN, { extension: '1005' });
    expect(calls[0]).toEqual({ callId: '2.1', members: [] });
    expect(calls.length).toBeLessThanOrEqual(200);
  });

  it('a request field we cannot send (empty, control characters, too long) is refused unsent', async () => {
    const { client, seen } = farSide({ 'call/dial': fixture('constructed-dial-response.json') });
    for (const callee of ['', '  ', '2008\r\nX: y', '1'.repeat(200)]) {
      const err = await client.dial(TOKEN, { caller: '1005', callee }).catch((e) => e);
      expect(isServiceError(err) && err.kind).toBe('bad-request');
    }
    expect(seen).toEqual([]);
  });
});

describe('refusals, as the CallControl port names them', () => {
  it('10005 ACCESS DENIED is "permission", its words naming the missing permission', async () => {
    const { client } = farSide({ 'call/dial': fixture('constructed-access-denied.json') });
    const err = await client.dial(TOKEN, { caller: '1005', callee: '2008' }).catch((e) => e);
    const refusal = callRefusalOf(err);
    expect(refusal.refusal).toBe('permission');
    expect(refusal.words[0]!.id).toBe('status.call.refused.permission');
    expect(refusal.message).toMatch(/lacks the permission to control calls/);
    expect(refusal.message).toMatch(/10005/);
  });

  it('10001 INTERFACE NOT EXISTED is "not-offered"; the standard service has no call API at all', async () => {
    const { client } = farSide({});
    const err = await client.dial(TOKEN, { caller: '1005', callee: '2008' }).catch((e) => e);
    expect(callRefusalOf(err).refusal).toBe('not-offered');
    const standard = farSide({}, 'standard');
    expect(standard.client.controlsCalls).toBe(false);
    const none = await standard.client
      .dial(TOKEN, { caller: '1005', callee: '2008' })
      .catch((e) => e);
    expect(callRefusalOf(none).refusal).toBe('not-offered');
    expect(standard.seen).toEqual([]);
  });

  it('an unreachable PBX is "unreachable"; another errcode is "refused" with the fault said', async () => {
    const refusedConnection = () => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    };
    const down = farSide({ 'call/dial': refusedConnection });
    const err = await down.client.dial(TOKEN, { caller: '1005', callee: '2008' }).catch((e) => e);
    expect(callRefusalOf(err).refusal).toBe('unreachable');

    const bad = farSide({ 'call/hangup': '{"errcode":40002,"errmsg":"PARAMETER ERROR"}' });
    const e2 = await bad.client.hangup(TOKEN, 'PJSIP/1005-00000023').catch((e) => e);
    const refused = callRefusalOf(e2);
    expect(refused.refusal).toBe('refused');
    expect(refused.words.length).toBeGreaterThan(1);
  });

  it('no token in any error message, refusal or log line', async () => {
    const { client, logger } = farSide({
      'call/dial': `{"errcode":10005,"errmsg":"ACCESS DENIED for ${TOKEN}"}`,
      'call/hangup': `not json ${TOKEN}`,
    });
    const errors = [
      await client.dial(TOKEN, { caller: '1005', callee: '2008' }).catch((e) => e),
      await client.hangup(TOKEN, 'PJSIP/1005-00000023').catch((e) => e),
    ];
    for (const err of errors) {
      expect(String(err.message)).not.toContain(TOKEN);
      expect(callRefusalOf(err).message).not.toContain(TOKEN);
    }
    expect(JSON.stringify(logger.records)).not.toContain(TOKEN);
  });
});
