/**
 * The client side of Yeastar P-Series at its seams, against a scripted far side built from the
 * guide's published answers (test/fixtures/yeastar-p-series): the token in the query and never in
 * a header, the vendor's errcodes read through its own table (10004 is a token, not an address),
 * the phoneSystem setting, its flag and its policy.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src-shared/api/service-client.ts';
import { wireFor } from '../../src-shared/wire/index.ts';
import { yeastarSubscribeUrl } from '../../src-shared/wire/yeastar-p-series.ts';
import {
  describeError,
  isServiceError,
  type ServiceError,
} from '../../src-shared/api/service-errors.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { errorFromResponse } from '../../src-shared/api/errors.ts';
import { yeastarErrcodes } from '../../src-shared/phone-systems/yeastar-p-series.ts';
import { validateSettings } from '../../src-main/core/settings/validate-settings.ts';
import { parseHeadlessArgs, UsageError } from '../../src-main/headless/args.ts';
import { effectiveSettings } from '../../src-main/headless/admin.ts';
import {
  validatePolicy as parsePolicy,
  presetDefaults,
} from '../../src-main/core/settings/policy.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'yeastar-p-series');
const fixture = (name: string) => readFileSync(join(DIR, name), 'utf8');

interface Seen {
  url: URL;
  headers: Headers;
}

/** A far side answering each path with a fixture's text (HTTP 200, as the guide shows). */
function farSide(answers: Record<string, string>) {
  const seen: Seen[] = [];
  const fetch = (async (input: URL | string, init?: RequestInit) => {
    const url = new URL(String(input));
    seen.push({ url, headers: new Headers(init?.headers) });
    const path = url.pathname.replace('/openapi/v1.0/', '');
    const body = answers[path];
    if (body === undefined)
      return new Response('{"errcode":10001,"errmsg":"INTERFACE NOT EXISTED"}');
    return new Response(body, { headers: { 'content-type': 'application/json' } });
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

function client(answers: Record<string, string>, system: 'standard' | 'yeastar-p-series') {
  const side = farSide(answers);
  const secrets = new SecretRegistry();
  const c = new ServiceClient({
    baseUrl: 'https://acme.yeastarcloud.com',
    clock: new FakeClock(),
    fetch: side.fetch,
    secrets,
    logger: memoryLogger(secrets),
    api: wireFor(system).api,
  });
  return { c, side, secrets };
}

async function failure(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (e) {
    if (isServiceError(e)) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

describe('Yeastar P-Series API calls', () => {
  it('get_token, then extension/list with the token in the query and no Authorization header', async () => {
    const { c, side } = client(
      {
        get_token: fixture('get-token-response.json'),
        'extension/list': fixture('constructed-extension-list-response.json'),
      },
      'yeastar-p-series',
    );
    const { username, password } = JSON.parse(fixture('get-token-request.json')) as Record<
      string,
      string
    >;
    const pair = await c.getToken(username!, password!);
    expect(pair.accessToken).toBe('EXZMpZAO86mbrKm6rFtgeb3rfcpC9uqS');
    const list = await c.listExtensions(pair.accessToken);
    expect(list.map((e) => e.number)).toEqual(['101', '102']);
    const call = side.seen[1]!;
    expect(call.url.searchParams.get('access_token')).toBe(pair.accessToken);
    expect(call.headers.get('authorization')).toBeNull();
    expect(call.headers.get('user-agent')).toMatch(/^Screenpop\//);
  });

  it('the standard service keeps the token in the header, never in the URL (unchanged)', async () => {
    const { c, side } = client(
      {
        get_token: fixture('get-token-response.json'),
        'extension/list': fixture('constructed-extension-list-response.json'),
      },
      'standard',
    );
    const pair = await c.getToken('k', 'secret-1');
    await c.listExtensions(pair.accessToken);
    expect(side.seen[1]!.url.search).not.toContain('access_token');
    expect(side.seen[1]!.headers.get('authorization')).toBe(`Bearer ${pair.accessToken}`);
  });

  it("the guide's refused get_token (-1 FAILURE) is the Client ID or Secret, in Yeastar's words", async () => {
    const { c } = client(
      { get_token: fixture('response-error-get-token.json') },
      'yeastar-p-series',
    );
    const err = await failure(c.getToken('id', 'wrong-secret'));
    expect(err).toMatchObject({ kind: 'credentials', errcode: -1, fault: 'ys-credentials' });
    const words = describeError(err);
    expect(words.needsUser).toBe(true);
    expect(words.reason).toBe('The phone system rejected the Client ID or Client Secret.');
    expect(words.remedy).toContain('Integrations > API');
  });

  it("reads 10004 as an expired token on Yeastar, and on the standard profile as a Yeastar PBX's answer", async () => {
    const expired = '{"errcode":10004,"errmsg":"TOKEN EXPIRED"}';
    const ys = await failure(
      client({ 'extension/list': expired }, 'yeastar-p-series').c.listExtensions('tok-123456'),
    );
    expect(ys.kind).toBe('expired');
    const std = await failure(
      client({ 'extension/list': expired }, 'standard').c.listExtensions('tok-123456'),
    );
    // Not "IP not allowed" (the standard service's 10004): Yeastar's own errmsg says which PBX
    // answered, and the words say to choose it (issue 33 item 11).
    expect(std).toMatchObject({ kind: 'unsupported', fault: 'looks-like-yeastar' });
    expect(
      await failure(
        client(
          { 'extension/list': '{"errcode":10004,"errmsg":"IP NOT ALLOWED"}' },
          'standard',
        ).c.listExtensions('tok-123456'),
      ),
    ).toMatchObject({ kind: 'ip', fault: 'ip-not-allowed' });
  });

  it("says the API is off (10001), an address is forbidden (70087) or blocked (70004) in the PBX's terms", async () => {
    const cases: Array<[string, string, string]> = [
      ['{"errcode":10001,"errmsg":"INTERFACE NOT EXISTED"}', 'ys-api-off', 'unsupported'],
      ['{"errcode":70087,"errmsg":"IP FORBIDDEN"}', 'ys-ip-forbidden', 'ip'],
      ['{"errcode":70004,"errmsg":"ACCOUNT IP BLOCKED"}', 'ys-ip-blocked', 'ip'],
      ['{"errcode":10005,"errmsg":"ACCESS DENIED"}', 'ys-access-denied', 'scope'],
      [fixture('response-error-parameter.json'), 'bad-request', 'bad-request'],
    ];
    for (const [body, fault, kind] of cases) {
      const err = await failure(
        client({ get_token: body }, 'yeastar-p-series').c.getToken('i', 's-123456'),
      );
      expect(err, body).toMatchObject({ fault, kind });
    }
  });

  it('the socket URL carries the token as the guide shows, and it is scrubbed from any text', () => {
    const url = yeastarSubscribeUrl('https://acme.yeastarcloud.com/', 'QJZDwxIAXBoVrUme');
    expect(url).toBe(
      'wss://acme.yeastarcloud.com/openapi/v1.0/subscribe?access_token=QJZDwxIAXBoVrUme',
    );
    expect(new SecretRegistry().scrub(`socket error on ${url}`)).not.toContain('QJZDwxIAXBoVrUme');
  });
});

describe('the phoneSystem setting, flag and policy', () => {
  it('is standard by default; only the two known systems are accepted', () => {
    expect(validateSettings({}).settings.phoneSystem).toBe('standard');
    expect(validateSettings({ phoneSystem: 'yeastar-p-series' }).settings.phoneSystem).toBe(
      'yeastar-p-series',
    );
    const bad = validateSettings({ phoneSystem: 'avaya' });
    expect(bad.settings.phoneSystem).toBe('standard');
    expect(bad.problems.map((p) => p.field)).toContain('phoneSystem');
  });

  it('--phone-system sets it; an unknown one is a usage error naming the choices', () => {
    const base = ['--base-url', 'https://pbx.example.com', '--extension', '101'];
    expect(parseHeadlessArgs(base).phoneSystem).toBe('standard');
    expect(parseHeadlessArgs([...base, '--phone-system', 'yeastar-p-series']).phoneSystem).toBe(
      'yeastar-p-series',
    );
    expect(() => parseHeadlessArgs([...base, '--phone-system', 'avaya'])).toThrow(UsageError);
    expect(() => parseHeadlessArgs([...base, '--phone-system', 'avaya'])).toThrow(
      /--phone-system: .*must be one of "standard", "yeastar-p-series"/,
    );
  });

  it("a policy presets it (the flag's default) and can lock it", () => {
    const preset = parsePolicy({ settings: { phoneSystem: 'yeastar-p-series' } }).policy;
    const args = parseHeadlessArgs(
      ['--base-url', 'https://pbx.example.com', '--extension', '101'],
      presetDefaults(preset),
    );
    expect(args.phoneSystem).toBe('yeastar-p-series');
    const locked = parsePolicy({
      managedBy: 'IT',
      settings: { phoneSystem: 'yeastar-p-series' },
      locked: ['phoneSystem'],
    }).policy;
    const logger = memoryLogger();
    const flagged = parseHeadlessArgs([
      '--base-url',
      'https://pbx.example.com',
      '--extension',
      '101',
      '--phone-system',
      'standard',
    ]);
    expect(effectiveSettings(flagged, { apiKey: '' }, locked, logger).phoneSystem).toBe(
      'yeastar-p-series',
    );
    expect(JSON.stringify(logger.records)).toContain('"setting":"phoneSystem"');
  });
});

describe('Yeastar P-Series: one API application, many desktops (docs section 2)', () => {
  it("60002 on get_token is the 8-token limit, in words, held (not a person's fix); elsewhere a refused request", async () => {
    const limit = '{"errcode":60002,"errmsg":"MAX LIMITATION EXCEEDED"}';
    const err = await failure(
      client({ get_token: limit }, 'yeastar-p-series').c.getToken('id', 'secret-1'),
    );
    expect(err).toMatchObject({ kind: 'rate-limit', errcode: 60002, fault: 'ys-token-limit' });
    const words = describeError(err);
    expect(words.needsUser).toBe(false);
    expect(words.reason).toContain('(8; errcode 60002)');
    expect(words.remedy).toContain('gateway mode');
    const list = await failure(
      client({ 'extension/list': limit }, 'yeastar-p-series').c.listExtensions('tok-123456'),
    );
    expect(list.kind).toBe('bad-request');
  });

  it('an errcode the guide does not list, refused to get_token, is named as the likely token limit', async () => {
    const err = await failure(
      client(
        { get_token: '{"errcode":60009,"errmsg":"SOMETHING"}' },
        'yeastar-p-series',
      ).c.getToken('id', 'secret-1'),
    );
    expect(err.fault).toBe('ys-token-limit-likely');
    expect(describeError(err).reason).toContain(
      'most likely this API application already holds the 8 tokens',
    );
    // An HTTP failure carrying a code is the server's trouble, not the limit.
    const failed = errorFromResponse(503, { errcode: 50300 }, undefined, {
      operation: 'get_token',
      errcodes: yeastarErrcodes,
    });
    expect(failed.kind).toBe('server');
  });

  it("revokes a token as Revoke Access Token shows: GET del_token, the token in the query, the guide's answer", async () => {
    const { c, side } = client(
      { del_token: fixture('del-token-response.json') },
      'yeastar-p-series',
    );
    expect(c.canRevoke).toBe(true);
    await c.revokeToken('tok-abcdef-123456');
    expect(side.seen).toHaveLength(1);
    expect(side.seen[0]!.url.pathname).toBe('/openapi/v1.0/del_token');
    expect(side.seen[0]!.url.searchParams.get('access_token')).toBe('tok-abcdef-123456');
    const standard = client({}, 'standard');
    expect(standard.c.canRevoke).toBe(false);
    await standard.c.revokeToken('tok-abcdef-123456');
    expect(standard.side.seen).toHaveLength(0);
  });
});
