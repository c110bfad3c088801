/**
 * The generic connector's call-log address (`crmLookup.logUrl`, issue 39): one rule, https or http
 * only to this computer (src-shared/net/loopback.ts isSecureOrLoopback), said at the field in
 * every catalogue language (SettingsService, as the Settings window gets it), and the same rule
 * deciding whether the call-log writer is built (call-log/build.ts).
 */
import { describe, expect, it } from 'vitest';
import { validateSettings } from '../../src-main/core/settings/validate-settings.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src-main/core/settings/types.ts';
import { SettingsService } from '../../src-main/core/settings-service/settings-service.ts';
import { MemoryCredentialStore } from '../../src-main/core/credentials/credential-store.ts';
import { buildCallLogWriter } from '../../src-main/core/call-log/build.ts';
import { SettingsStore } from '../../src-main/core/settings/settings-store.ts';
import { settingsPortFor } from '../../src-main/core/settings-service/settings-port.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { join } from 'node:path';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { fixedTranslator } from '../../src-shared/i18n/locale-state.ts';
import { LOCALES } from '../../src-shared/i18n/locales.ts';
import { render } from '../../src-shared/i18n/phrase.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { systemClock } from '../../src-shared/process/clock.ts';

const GENERIC: Settings['crmLookup'] = {
  ...DEFAULT_SETTINGS.crmLookup,
  provider: 'generic',
  urlTemplate: 'https://crm.acme.example/api/callers?phone={number}',
  auth: 'none',
};

const tmp = useTempDir('call-log-url-');
const withLogUrl = (logUrl: string) => validateSettings({ crmLookup: { ...GENERIC, logUrl } });

describe('crmLookup.logUrl', () => {
  it('takes https anywhere and http only to this computer, as written (no trailing slash)', () => {
    for (const [given, kept] of [
      ['https://calls.acme.example/screenpop/calls/', 'https://calls.acme.example/screenpop/calls'],
      [' https://calls.acme.example:8443/in ', 'https://calls.acme.example:8443/in'],
      ['http://127.0.0.1:8080/calls', 'http://127.0.0.1:8080/calls'],
      ['http://localhost:9000/calls', 'http://localhost:9000/calls'],
      ['http://[::1]:9000/calls', 'http://[::1]:9000/calls'],
      ['', ''],
    ]) {
      const { settings, problems } = withLogUrl(given!);
      expect(problems, given).toEqual([]);
      expect(settings.crmLookup.logUrl, given).toBe(kept);
    }
  });

  it('refuses http to another computer, a non-address, a user name or password, a query; in words naming the part', () => {
    const said = (logUrl: unknown) =>
      validateSettings({ crmLookup: { ...GENERIC, logUrl } }).problems.map(
        (p) => `${p.field}: ${p.message}`,
      );
    expect(said('http://calls.acme.example/screenpop')).toEqual([
      'crmLookup: crmLookup logUrl must start with https:// (http:// is allowed only for localhost or 127.0.0.1), so that the connection is encrypted; the default is used',
    ]);
    // Not loopback: a name that merely starts like it, a public address.
    expect(said('http://127.example.com/calls')[0]).toContain('logUrl must start with https://');
    expect(said('http://10.0.0.5/calls')[0]).toContain('logUrl must start with https://');
    expect(said('ftp://calls.acme.example/')[0]).toContain('logUrl must start with https://');
    expect(said('calls.acme.example/screenpop')[0]).toContain('logUrl is not a web address');
    expect(said(42)[0]).toContain('logUrl must be text');
    expect(said('https://user:pw@calls.acme.example/')[0]).toContain(
      'logUrl must not contain a user name or password; the signing secret is kept in the system keychain',
    );
    expect(said('https://calls.acme.example/in?key=1')[0]).toContain(
      'logUrl must not contain a query',
    );
  });

  it('is refused at its own field in the Settings window, in every catalogue language', async () => {
    const messages = new Map<string, string>();
    for (const locale of LOCALES) {
      // The real settings file and its validation, as the app has them.
      const store = new SettingsStore({ path: join(tmp.path, `settings-${locale}.json`) });
      const credentials = new MemoryCredentialStore();
      const service = new SettingsService({
        logger: memoryLogger(new SecretRegistry()),
        secrets: new SecretRegistry(),
        settings: settingsPortFor(store, silentLogger),
        credentials,
        startDemo: () => Promise.reject(new Error('no demo here')),
        createProbe: () => {
          throw new Error('no probe here');
        },
        inspectContactsFile: () => Promise.reject(new Error('no file here')),
        words: fixedTranslator(locale),
      });
      await service.load();
      const saved = await service.save({
        settings: { crmLookup: { ...GENERIC, logUrl: 'http://calls.acme.example/in' } },
        crmLogSecret: 'whsec-not-kept',
      });
      expect(saved.ok).toBe(false);
      // The secret typed with a refused address is not kept.
      expect(await credentials.getSecret('crm-log@calls.acme.example')).toBeNull();
      if (saved.ok) continue;
      expect(saved.field).toBe('crmLookup.logUrl');
      const text = render(saved.words, fixedTranslator(locale).current());
      // The remedy names the scheme to write, and where plain http is still allowed.
      expect(text, locale).toContain('https://');
      expect(text, locale).toContain('127.0.0.1');
      messages.set(locale, text);
    }
    expect(messages.get('en')).toBe(
      'The call log address must start with https:// (http:// only to this computer: localhost or 127.0.0.1): calls and their notes never travel unencrypted.',
    );
    // Each language its own words, not English.
    expect(new Set(messages.values()).size).toBe(LOCALES.length);
  });

  it('decides, by the same rule, whether calls are logged to the receiver at all', () => {
    const writer = (logUrl: string) =>
      buildCallLogWriter(
        { ...GENERIC, logUrl },
        {
          clock: systemClock,
          secrets: new SecretRegistry(),
          fetch: () => Promise.reject(new Error('not sent')),
          secret: () => Promise.resolve('s'),
        },
      );
    expect(writer('https://calls.acme.example/in')?.kind).toBe('generic');
    expect(writer('http://127.0.0.1:8080/in')?.kind).toBe('generic');
    expect(writer('http://calls.acme.example/in')).toBeNull();
    expect(writer('')).toBeNull();
  });
});
