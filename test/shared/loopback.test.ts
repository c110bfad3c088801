/**
 * "Is this host this computer?" is one rule (src-shared/net/loopback.ts), and every place that allows
 * plain http/ws only on loopback gives the same verdict for the same host. Before, six copies
 * disagreed: the relay's config check took 127.0.0.2 as local and everything else refused it,
 * and only the relay's took an upper-case LOCALHOST.
 */
import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src-shared/net/loopback.ts';
import { applyPatch, defaultSettings } from '../../src-main/core/settings/validate-settings.ts';
import { parseHeadlessArgs, UsageError } from '../../src-main/headless/args.ts';
import { relayStreamUrl } from '../../src-main/core/relay-client/relay-source.ts';
import { checkBaseUrl } from '../../src-main/core/connection/test-connection.ts';
import { devServerOrigin } from '../../src-main/electron/app-origin.ts';
import { checkConfig } from '../../src-relay/check-config.ts';
import { parseConfig } from '../../src-relay/config.ts';

const LOCAL = ['localhost', 'LOCALHOST', '127.0.0.1', '127.0.0.2', '127.255.255.254', '[::1]'];
const NOT_LOCAL = [
  '10.0.0.1',
  '192.168.1.10',
  'example.com',
  'localhost.example.com',
  '127.0.0.1.example.com',
  '128.0.0.1',
  '[::2]',
  '[::ffff:7f00:1]',
];

/** Each place's verdict on plain http(s) to `host`: true when it lets it through. */
const places: Record<string, (host: string) => boolean> = {
  'settings baseUrl': (host) => applyPatch(defaultSettings(), { baseUrl: `http://${host}` }).ok,
  'settings relayUrl': (host) => applyPatch(defaultSettings(), { relayUrl: `ws://${host}` }).ok,
  // The relay's address as its administrator gives it (http, as its /healthz is reached).
  'settings relayUrl http': (host) =>
    applyPatch(defaultSettings(), { relayUrl: `http://${host}:8787` }).ok,
  'runner --relay-url': (host) => {
    try {
      parseHeadlessArgs(['--relay-url', `http://${host}:8787`, '--relay-tenant', 'acme']);
      return true;
    } catch (error) {
      if (error instanceof UsageError) return false;
      throw error;
    }
  },
  'runner --base-url': (host) => {
    try {
      parseHeadlessArgs(['--base-url', `http://${host}:8080`, '--extension', '101']);
      return true;
    } catch (error) {
      if (error instanceof UsageError) return false;
      throw error;
    }
  },
  'relay client': (host) => {
    try {
      relayStreamUrl(`http://${host}:8080`, 'acme');
      return true;
    } catch {
      return false;
    }
  },
  'Test connection': (host) => checkBaseUrl(`http://${host}:8080`).ok,
  'dev server': (host) => devServerOrigin(`http://${host}:5173`, false) !== null,
  "relay's config check": (host) => {
    const config = parseConfig({
      tenants: { acme: { baseUrl: `http://${host}`, secrets: ['x'.repeat(32)] } },
    });
    return !checkConfig(config, Date.now()).warnings.some((w) => w.includes('plain http'));
  },
};

describe('isLoopbackHost', () => {
  it('is localhost, 127.0.0.0/8 and ::1, with or without brackets, in any case', () => {
    for (const host of [...LOCAL, '::1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of [...NOT_LOCAL, '', '127.0.0', '127.0.0.256'])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it('every place that allows plain http on this computer gives the same verdict', () => {
    for (const [place, allows] of Object.entries(places)) {
      for (const host of LOCAL) expect(allows(host), `${place}: ${host}`).toBe(true);
      for (const host of NOT_LOCAL) expect(allows(host), `${place}: ${host}`).toBe(false);
    }
  });
});
