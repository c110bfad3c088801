/**
 * The transport's answers (LeanResponse, LeanHeaders) against Node's own Fetch API, the far side
 * they stand in for: the same headers, text, JSON and errors for the same input. Why they exist
 * (the runner never loads Node's fetch implementation) is tested on the built runner:
 * test/blackbox/runner-build.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { LeanHeaders, LeanResponse } from '../../src-shared/net/lean-response.ts';

const HEADER_INPUTS: Array<NonNullable<RequestInit['headers']>> = [
  { 'Content-Type': 'application/json', accept: 'text/plain' },
  [
    ['X-Many', 'one'],
    ['x-many', 'two'],
    ['Set-Cookie', 'a=1'],
    ['set-cookie', 'b=2'],
    ['Zeta', ' padded\t'],
    ['alpha', ''],
  ],
  new Headers({ Authorization: 'Bearer t', 'X-Trace': 'abc' }),
];

function leanResponse(body: string | null, status = 200, headers: [string, string][] = []) {
  return new LeanResponse(body === null ? null : Buffer.from(body, 'utf8'), {
    status,
    statusText: 'OK',
    headers: new LeanHeaders(headers),
    url: 'http://127.0.0.1/x',
  });
}

describe('LeanHeaders', () => {
  it.each(HEADER_INPUTS.map((h, i) => [i, h] as const))(
    'holds what Node’s Headers holds for input %i: entries, get, has, set-cookie',
    (_i, init) => {
      const lean = new LeanHeaders(init);
      const real = new Headers(init);
      expect([...lean]).toEqual([...real]);
      expect([...lean.keys()]).toEqual([...real.keys()]);
      expect([...lean.values()]).toEqual([...real.values()]);
      for (const name of ['content-type', 'X-MANY', 'zeta', 'alpha', 'missing', 'set-cookie']) {
        expect(lean.get(name)).toBe(real.get(name));
        expect(lean.has(name)).toBe(real.has(name));
      }
      expect(lean.getSetCookie()).toEqual(real.getSetCookie());
    },
  );

  it('set, append and delete as Node’s Headers do', () => {
    const lean = new LeanHeaders({ a: '1' });
    const real = new Headers({ a: '1' });
    for (const h of [lean, real]) {
      h.append('A', '2');
      h.set('b', '3');
      h.append('c', '4');
      h.delete('C');
    }
    expect([...lean]).toEqual([...real]);
    const seen: string[] = [];
    lean.forEach((value, name) => seen.push(`${name}=${value}`));
    expect(seen).toEqual(['a=1, 2', 'b=3']);
  });

  it('refuses what Node’s Headers refuses: a bad name, a value with a line break', () => {
    for (const [name, value] of [
      ['bad name', 'v'],
      ['ok', 'line\r\nX-Injected: 1'],
      ['', 'v'],
    ] as const) {
      expect(() => new Headers([[name, value]])).toThrow(TypeError);
      expect(() => new LeanHeaders([[name, value]])).toThrow(TypeError);
    }
  });
});

describe('LeanResponse', () => {
  it('reads as Node’s Response reads: text without a BOM, json, bytes, status, ok', async () => {
    const bodies = ['\ufeff{"a":1}', '{"é":"ü"}', '', '[1,2]'];
    for (const body of bodies) {
      for (const status of [200, 204, 404, 503]) {
        const realBody = status === 204 ? null : body;
        const real = new Response(realBody, { status });
        const lean = leanResponse(realBody, status);
        expect({ ok: lean.ok, status: lean.status }).toEqual({ ok: real.ok, status: real.status });
        expect(await lean.clone().text()).toBe(await real.clone().text());
        expect([...(await lean.clone().bytes())]).toEqual([...(await real.clone().bytes())]);
        expect(new Uint8Array(await lean.clone().arrayBuffer())).toEqual(
          new Uint8Array(await real.clone().arrayBuffer()),
        );
        if (body !== '' && realBody !== null) expect(await lean.json()).toEqual(await real.json());
      }
    }
  });

  it('reads its body once, as fetch does', async () => {
    const lean = leanResponse('{"a":1}');
    expect(lean.bodyUsed).toBe(false);
    await lean.json();
    expect(lean.bodyUsed).toBe(true);
    await expect(lean.text()).rejects.toThrow(TypeError);
    expect(() => lean.clone()).toThrow(TypeError);
  });

  it('refuses a status fetch refuses', () => {
    expect(() => new Response(null, { status: 600 })).toThrow(RangeError);
    expect(() => leanResponse(null, 600)).toThrow(RangeError);
    expect(() => leanResponse(null, 101)).toThrow(RangeError);
  });

  it('has no body stream without a body; with one, a stream of the same bytes', async () => {
    expect(leanResponse(null).body).toBeNull();
    expect(leanResponse('').body).toBeNull();
    const streamed = leanResponse('hello');
    const reader = streamed.body!.getReader();
    const chunks: number[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(...r.value);
    expect(Buffer.from(chunks).toString()).toBe('hello');
    expect(streamed.bodyUsed).toBe(true);
  });

  it('is a Response to a library that checks loosely (oauth4webapi), with its blob type', async () => {
    const lean = leanResponse('x', 200, [['content-type', 'text/plain']]);
    expect(Object.prototype.toString.call(lean)).toBe(
      Object.prototype.toString.call(new Response()),
    );
    expect((await lean.blob()).type).toBe('text/plain');
  });
});
