import { describe, expect, it } from 'vitest';
import { errorFromResponse, parseRetryAfter } from '../../src-shared/api/errors.ts';
import { yeastarErrcodes } from '../../src-shared/phone-systems/yeastar-p-series.ts';
import {
  describeErrcode,
  describeError,
  ServiceError,
  faultWords,
} from '../../src-shared/api/service-errors.ts';

describe('errorFromResponse', () => {
  it('decides on errcode before the HTTP status', () => {
    expect(errorFromResponse(401, { errcode: 10001, errmsg: 'x' }).kind).toBe('credentials');
    expect(errorFromResponse(401, { errcode: 10002, errmsg: 'x' }).kind).toBe('expired');
    expect(errorFromResponse(403, { errcode: 10003, errmsg: 'x' }).kind).toBe('scope');
    expect(errorFromResponse(403, { errcode: 10004, errmsg: 'x' }).kind).toBe('ip');
    expect(errorFromResponse(400, { errcode: 40000 }).kind).toBe('bad-request');
    expect(errorFromResponse(429, { errcode: 42900 }).kind).toBe('rate-limit');
    // errcode wins even when the status says something else
    expect(errorFromResponse(200, { errcode: 10002, errmsg: 'TOKEN EXPIRED' }).kind).toBe(
      'expired',
    );
    expect(errorFromResponse(500, '{"errcode":10004,"errmsg":"IP"}').kind).toBe('ip');
  });

  it("tells a Yeastar PBX's answers from the standard service's by their errmsg", () => {
    // docs/phone-systems/yeastar-p-series.md section 6: the same codes, Yeastar's own words.
    for (const [errcode, errmsg] of [
      [10004, 'TOKEN EXPIRED'],
      [10001, 'INTERFACE NOT EXISTED'],
      [-1, 'FAILURE'],
      [70087, 'IP FORBIDDEN'],
    ] as const) {
      const error = errorFromResponse(200, { errcode, errmsg }, undefined, { operation: 'x' });
      expect(error, errmsg).toMatchObject({ fault: 'looks-like-yeastar', retryable: false });
      expect(describeError(error)).toMatchObject({
        reason: `This looks like a Yeastar P-Series PBX, not the standard service Screenpop is set up for: it answered with Yeastar's own errcode ${errcode}.`,
        needsUser: true,
      });
    }
    // The standard service's own words for its codes keep their meaning.
    expect(errorFromResponse(403, { errcode: 10004, errmsg: 'IP NOT ALLOWED' }).fault).toBe(
      'ip-not-allowed',
    );
    expect(errorFromResponse(401, { errcode: 10002, errmsg: 'TOKEN EXPIRED' }).kind).toBe(
      'expired',
    );
    // And with the Yeastar profile, Yeastar's table reads them as it always did.
    const yeastar = { errcodes: yeastarErrcodes };
    expect(
      errorFromResponse(200, { errcode: 10004, errmsg: 'TOKEN EXPIRED' }, undefined, yeastar).kind,
    ).toBe('expired');
    expect(describeErrcode(10004, undefined, 'TOKEN EXPIRED').fault).toBe('looks-like-yeastar');
  });

  it('falls back on the HTTP status only when the body is not JSON', () => {
    expect(errorFromResponse(503, '<html>down</html>').kind).toBe('server');
    expect(errorFromResponse(502, '').kind).toBe('server');
    expect(errorFromResponse(429, 'slow down').kind).toBe('rate-limit');
    expect(errorFromResponse(401, 'no').kind).toBe('credentials');
    expect(errorFromResponse(403, 'no').kind).toBe('ip');
    expect(errorFromResponse(404, 'no').kind).toBe('bad-request');
    expect(errorFromResponse(200, '<html>captive portal</html>').kind).toBe('protocol');
  });

  it('carries errcode, HTTP status and the spec remedy', () => {
    const e = errorFromResponse(401, { errcode: 10001, errmsg: 'INVALID' }, undefined, {
      operation: 'get_token',
    });
    expect(e).toBeInstanceOf(ServiceError);
    expect(e.errcode).toBe(10001);
    expect(e.httpStatus).toBe(401);
    expect(e.remedy).toBe(describeErrcode(10001).remedy);
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/^get_token: .*10001.*INVALID/);
  });

  it('reads Retry-After as seconds or as an HTTP date, from Headers or a plain record', () => {
    const now = Date.UTC(2026, 10, 22, 9, 0, 0);
    const e1 = errorFromResponse(429, { errcode: 42900 }, new Headers({ 'Retry-After': '120' }), {
      now,
    });
    expect(e1.retryAfterMs).toBe(120_000);
    expect(e1.retryable).toBe(true);
    const date = new Date(now + 30_000).toUTCString();
    const e2 = errorFromResponse(503, 'busy', { 'retry-after': date }, { now });
    expect(e2.retryAfterMs).toBe(30_000);
    expect(errorFromResponse(503, 'busy').retryAfterMs).toBeUndefined();
    expect(parseRetryAfter('garbage', now)).toBeUndefined();
    expect(parseRetryAfter(String(7 * 24 * 3600), now)).toBe(3600_000); // capped at one hour
  });

  it('keeps untrusted server text short and on one line', () => {
    const e = errorFromResponse(500, {
      errcode: 50000,
      errmsg: 'line1\nline2\u0007' + 'x'.repeat(500),
    });
    expect(e.message).not.toContain('\n');
    expect(e.message).not.toContain('\u0007');
    expect(e.message.length).toBeLessThan(220);
    expect(e.kind).toBe('server');
  });

  it('marks passing troubles retryable and the ones a person must fix not', () => {
    const kinds = (status: number, code: number) =>
      errorFromResponse(status, { errcode: code }).retryable;
    expect(kinds(401, 10001)).toBe(false);
    expect(kinds(403, 10003)).toBe(false);
    expect(kinds(403, 10004)).toBe(false);
    expect(kinds(400, 40000)).toBe(false);
    expect(kinds(429, 42900)).toBe(true);
    expect(errorFromResponse(503, 'x').retryable).toBe(true);
  });
});

describe('the words for a fault (service-errors.ts)', () => {
  it('says in plain words what the user does, per docs/wire-protocol.md section 4', () => {
    expect(describeErrcode(10001).remedy).toMatch(/check.*key and secret|key or secret/i);
    expect(describeErrcode(10001).remedy).toMatch(/regenerate the key/i);
    expect(describeErrcode(10002).remedy).toMatch(/refresh/i);
    expect(describeErrcode(10003).remedy).toMatch(/edit the API key and grant the missing scope/i);
    expect(describeErrcode(10004).remedy).toMatch(
      /add this computer's IP address to its allowlist/i,
    );
    expect(describeErrcode(12345)).toMatchObject({
      fault: 'unknown-errcode',
      reason: expect.stringContaining('12345'),
      needsUser: false,
    });
  });

  it('gives the same words for a fault whether an HTTP answer or a frame carried it', () => {
    for (const [status, errcode] of [
      [401, 10001],
      [401, 10002],
      [403, 10003],
      [403, 10004],
      [400, 40000],
      [429, 42900],
    ] as const) {
      const fromAnswer = describeError(errorFromResponse(status, { errcode, errmsg: 'X' }));
      expect(fromAnswer).toEqual(describeErrcode(errcode));
    }
  });

  it('asks the user to act only for what a person must fix', () => {
    expect(
      [10001, 10002, 10003, 10004, 40000, 42900].map((c) => describeErrcode(c).needsUser),
    ).toEqual([true, false, true, true, false, false]);
    const noSecret = new ServiceError({
      kind: 'credentials',
      fault: 'no-credentials',
      message: 'x',
    });
    expect(describeError(noSecret)).toEqual({
      fault: 'no-credentials',
      reason: 'No API key and secret are set up.',
      remedy: 'Open Settings and enter the API key and secret from the admin console.',
      words: faultWords('no-credentials'),
      needsUser: true,
    });
    expect(describeError(errorFromResponse(503, 'down'))).toMatchObject({
      fault: 'server',
      needsUser: false,
    });
  });

  it('describes anything else thrown as unexpected, without its text', () => {
    const d = describeError(new TypeError('secret-ish detail'));
    expect(d).toMatchObject({ fault: 'unexpected', needsUser: false });
    expect(JSON.stringify(d)).not.toContain('secret-ish');
    expect(describeError('a string')).toEqual(d);
  });
});
