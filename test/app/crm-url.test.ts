import { describe, expect, it } from 'vitest';
import { buildCrmUrl, checkTemplate, previewCrmUrl } from '../../src-main/core/links/crm-url.ts';
import { vetExternalUrl } from '../../src-main/core/links/external-url.ts';

const TEMPLATE =
  'https://crm.example.com/search?phone={from}&name={caller_name}&call={call_id}#to={to}';
const call = (from: string, caller_name = '') => ({ from, to: '101', call_id: 'c-1', caller_name });

describe('buildCrmUrl', () => {
  it('fills placeholders with encoded values', () => {
    const r = buildCrmUrl(TEMPLATE, call('+14155550123', 'Ada Lovelace'));
    expect(r).toEqual({
      ok: true,
      url: 'https://crm.example.com/search?phone=%2B14155550123&name=Ada%20Lovelace&call=c-1#to=101',
    });
  });

  it.each([
    ['<img src=x onerror=alert(1)>'],
    ['"; rm -rf /'],
    ['x&admin=1#frag?q=/../../etc/passwd'],
    ['javascript:alert(1)'],
    ['\u202Egnp.exe'],
    ['a'.repeat(5000)],
  ])('keeps hostile caller ID %# inside its own query value', (hostile) => {
    const r = buildCrmUrl(TEMPLATE, call(hostile, hostile));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const url = new URL(r.url);
    expect(url.origin).toBe('https://crm.example.com');
    expect(url.pathname).toBe('/search');
    expect([...url.searchParams.keys()]).toEqual(['phone', 'name', 'call']);
    expect(url.hash).toBe('#to=101');
    // What the CRM receives decodes back to (a bounded prefix of) exactly what the caller sent.
    expect(hostile.startsWith(url.searchParams.get('phone') ?? '')).toBe(true);
    expect(r.url).not.toMatch(/[<>"\s\u202E]/);
    expect(r.url.length).toBeLessThanOrEqual(4096);
  });

  it('refuses a caller value of "." or ".." that the URL parser would resolve as a step up', () => {
    const template = 'https://crm.example.com/customers/{from}/view?q={caller_name}';
    const call = { from: '..', to: '101', call_id: 'c1', caller_name: 'x' };
    expect(buildCrmUrl(template, call)).toMatchObject({ ok: false });
    expect(buildCrmUrl(template, { ...call, from: '.' })).toMatchObject({ ok: false });
    expect(buildCrmUrl(template, { ...call, from: '...' })).toEqual({
      ok: true,
      url: 'https://crm.example.com/customers/.../view?q=x',
    });
  });

  it('does not throw on lone surrogates', () => {
    const r = buildCrmUrl(TEMPLATE, call('\uD800abc'));
    expect(r.ok).toBe(true);
    if (r.ok) expect(new URL(r.url).searchParams.get('phone')).toBe('\uFFFDabc');
  });

  it('refuses placeholders in the scheme or host', () => {
    expect(buildCrmUrl('{from}', call('javascript:alert(1)')).ok).toBe(false);
    expect(buildCrmUrl('https://{caller_name}.crm.example.com/', call('1', 'evil.com')).ok).toBe(
      false,
    );
    expect(buildCrmUrl('https://user:{from}@crm.example.com/', call('1')).ok).toBe(false);
  });

  it('refuses unknown placeholders, non-https schemes and credentials', () => {
    expect(checkTemplate('https://crm.example.com/?q={secret}', [])).toMatchObject({
      ok: false,
      message: expect.stringContaining('{secret}'),
    });
    expect(buildCrmUrl('http://crm.example.com/?q={from}', call('1')).ok).toBe(false);
    expect(buildCrmUrl('javascript:alert({from})', call('1'), ['javascript']).ok).toBe(false);
    expect(buildCrmUrl('file:///etc/passwd?{from}', call('1'), ['file']).ok).toBe(false);
    expect(buildCrmUrl('https://u:p@crm.example.com/?q={from}', call('1')).ok).toBe(false);
  });

  it('allows a scheme the administrator added', () => {
    expect(
      buildCrmUrl('salesforce://search?phone={from}', call('+1 415'), ['https', 'salesforce']),
    ).toEqual({ ok: true, url: 'salesforce://search?phone=%2B1%20415' });
    expect(buildCrmUrl('salesforce://search?phone={from}', call('1')).ok).toBe(false);
  });

  it('previews on a sample call', () => {
    expect(previewCrmUrl(TEMPLATE)).toMatchObject({
      ok: true,
      url: expect.stringContaining('phone=%2B14155550123'),
    });
    expect(previewCrmUrl('')).toMatchObject({ ok: false });
  });
});

describe('vetExternalUrl', () => {
  it.each([
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    'file:///etc/passwd',
    'http://example.com/',
    'data:text/html,<script>1</script>',
    'vbscript:msgbox',
    'ms-msdt:/id',
    'https://user:pw@example.com/',
    ' ',
    'not a url',
    'https://',
  ])('refuses %s', (raw) => {
    expect(vetExternalUrl(raw, ['https', 'javascript', 'file', 'http']).ok).toBe(false);
  });

  it('returns the parsed serialization', () => {
    expect(vetExternalUrl('https://Example.com/a b')).toEqual({
      ok: true,
      url: 'https://example.com/a%20b',
    });
  });
});
