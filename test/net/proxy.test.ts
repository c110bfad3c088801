import { describe, expect, it } from 'vitest';
import {
  bypassesProxy,
  envProxyResolver,
  fixedProxyResolver,
  pacProxyResolver,
  parsePacResult,
  parseProxyUrl,
  ProxyConfigError,
} from '../../src-shared/net/proxy.ts';

const at = (url: string) => new URL(url);

describe('parseProxyUrl', () => {
  it('reads http://user:password@host:port and a bare host:port', () => {
    expect(parseProxyUrl('http://a%40b:p%3Ass@proxy.corp:3128')).toEqual({
      host: 'proxy.corp',
      port: 3128,
      auth: 'a@b:p:ss',
    });
    expect(parseProxyUrl('proxy.corp:8080')).toEqual({ host: 'proxy.corp', port: 8080 });
    expect(parseProxyUrl('http://proxy.corp')).toEqual({ host: 'proxy.corp', port: 80 });
  });

  it('refuses what it cannot use, without quoting the credentials', () => {
    expect(() => parseProxyUrl('socks5://u:hunter22@proxy.corp:1080')).toThrow(ProxyConfigError);
    try {
      parseProxyUrl('socks5://u:hunter22@proxy.corp:1080');
    } catch (error) {
      expect((error as Error).message).toContain('proxy.corp:1080');
      expect((error as Error).message).not.toContain('hunter22');
    }
    expect(() => parseProxyUrl('http://')).toThrow(ProxyConfigError);
  });
});

describe('NO_PROXY', () => {
  it.each([
    ['*', 'https://anything.example', true],
    ['example.com', 'https://api.example.com', true],
    ['example.com', 'https://example.com', true],
    ['.example.com', 'https://example.com', true],
    ['example.com', 'https://notexample.com', false],
    ['localhost,127.0.0.1', 'wss://127.0.0.1:9000', true],
    ['127.0.0.1:9000', 'wss://127.0.0.1:9000', true],
    ['127.0.0.1:9000', 'wss://127.0.0.1:9001', false],
    ['10.0.0.0/8', 'https://10.2.3.4', true],
    ['10.0.0.0/8', 'https://11.2.3.4', false],
    ['', 'https://127.0.0.1', false],
  ])('%s against %s: %s', (noProxy, url, bypass) => {
    expect(bypassesProxy(noProxy, at(url))).toBe(bypass);
  });
});

describe('envProxyResolver', () => {
  it('uses HTTPS_PROXY for https/wss and HTTP_PROXY for http/ws, lowercase first, loopback not bypassed', async () => {
    const r = envProxyResolver({
      HTTPS_PROXY: 'http://upper:3128',
      https_proxy: 'http://lower:3129',
      HTTP_PROXY: 'http://plain:8080',
    });
    expect(await r.resolve(at('wss://127.0.0.1:4000/x'))).toEqual({
      kind: 'proxy',
      host: 'lower',
      port: 3129,
    });
    expect(await r.resolve(at('http://127.0.0.1:4000/'))).toMatchObject({ host: 'plain' });
  });

  it('goes direct for NO_PROXY hosts and without any variable', async () => {
    const r = envProxyResolver({ HTTPS_PROXY: 'http://p:1', no_proxy: 'corp.example' });
    expect(await r.resolve(at('https://pbx.corp.example'))).toEqual({ kind: 'direct' });
    expect(await envProxyResolver({}).resolve(at('https://x.example'))).toEqual({
      kind: 'direct',
    });
  });

  it('names the variable that is wrong and gives its credentials to be registered', () => {
    expect(() => envProxyResolver({ HTTPS_PROXY: 'ftp://p:1' })).toThrow(/^HTTPS_PROXY: /);
    expect(envProxyResolver({ HTTPS_PROXY: 'http://u:pw123456@p:1' }).knownAuth).toEqual([
      'u:pw123456',
    ]);
  });
});

describe("Chromium's PAC answers", () => {
  it.each([
    ['DIRECT', { kind: 'direct' }],
    ['PROXY proxy.corp:8080; DIRECT', { kind: 'proxy', host: 'proxy.corp', port: 8080 }],
    ['SOCKS5 s:1080; PROXY p:3128', { kind: 'proxy', host: 'p', port: 3128 }],
    ['HTTPS secure:443', { kind: 'direct' }],
    ['', { kind: 'direct' }],
  ])('%j', (text, choice) => {
    expect(parsePacResult(text)).toEqual(choice);
  });

  it('asks for the https twin of a wss address, and falls back on direct when asking fails', async () => {
    const asked: string[] = [];
    const r = pacProxyResolver(async (url) => {
      asked.push(url);
      return 'PROXY p:3128';
    });
    expect(await r.resolve(at('wss://relay.example/v1/stream/acme'))).toMatchObject({ host: 'p' });
    expect(asked).toEqual(['https://relay.example/v1/stream/acme']);
    const broken = pacProxyResolver(() => Promise.reject(new Error('no session')));
    expect(await broken.resolve(at('https://x.example'))).toEqual({ kind: 'direct' });
  });

  it('the explicit proxy is always the same answer', async () => {
    const r = fixedProxyResolver({ host: 'p', port: 1 });
    expect(await r.resolve(at('https://a.example'))).toEqual({ kind: 'proxy', host: 'p', port: 1 });
    expect(await fixedProxyResolver(null).resolve(at('https://a.example'))).toEqual({
      kind: 'direct',
    });
  });
});
