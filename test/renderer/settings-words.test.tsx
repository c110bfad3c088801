// @vitest-environment jsdom
/**
 * A refused save in the user's language: for each field of the Settings window, a value the real
 * settings rules (validate-settings.ts, through applyPatch as main runs it) refuse is typed and
 * saved in the German, Arabic and pseudo-locale windows. The error must sit under the field that
 * carries its label in that language, and say main's words in that language: no English sentence
 * from the core reaches the window.
 */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { previewCrmUrl } from '../../src-main/core/links/crm-url.ts';
import { applyPatch } from '../../src-main/core/settings/validate-settings.ts';
import type { SaveResult, SettingsPatch } from '../../src-main/ipc/contract.ts';
import { SettingsApp } from '../../src-renderer/settings/SettingsApp.tsx';
import { I18nProvider, translatorFor } from '../../src-renderer/shared/i18n.tsx';
import { PSEUDO_LOCALE, type Locale } from '../../src-shared/i18n/locales.ts';
import { english, render as say, type Words } from '../../src-shared/i18n/phrase.ts';
import type { MessageId } from '../../src-shared/i18n/catalogue.ts';
import { fakeApi, savedView } from './fake-api.ts';

afterEach(cleanup);
beforeAll(() => {
  Element.prototype.scrollIntoView = function scrollIntoView() {};
});

/** Each text field of the form, a value main refuses, and the setting main names (a list entry). */
const BAD: ReadonlyArray<{ field: string; typed: string; named: string }> = [
  { field: 'baseUrl', typed: 'http://acme.example.com', named: 'baseUrl' },
  { field: 'apiKey', typed: 'two words', named: 'apiKey' },
  { field: 'extensions', typed: '101, 12345678', named: 'extensions[1]' },
  { field: 'dids', typed: 'call me', named: 'dids[0]' },
  { field: 'defaultRegion', typed: 'USA', named: 'defaultRegion' },
  { field: 'relayUrl', typed: 'ws://relay.example.com', named: 'relayUrl' },
  { field: 'relayTenant', typed: 'acme corp', named: 'relayTenant' },
  { field: 'proxyUrl', typed: 'https://proxy.example.com:3128', named: 'proxyUrl' },
  { field: 'crmUrlTemplate', typed: 'https://crm.example.com/?q={phone}', named: 'crmUrlTemplate' },
  { field: 'popupLingerSec', typed: '999', named: 'popupLingerSec' },
];

/** main's answer to a save: the real rules over the settings in force. */
function realSave(patch: SettingsPatch): SaveResult {
  const checked = applyPatch(savedView.settings, patch.settings);
  return checked.ok
    ? { ok: true, view: { ...savedView, settings: checked.settings } }
    : { ok: false, field: checked.field, words: checked.words, message: checked.message };
}

function windowIn(locale: Locale) {
  const { api } = fakeApi();
  api.getLocale.mockResolvedValue({ locale });
  api.saveSettings.mockImplementation(async (patch) => realSave(patch));
  // The proxy's address is asked for only with a manual proxy.
  api.getSettings.mockResolvedValue({
    ...savedView,
    settings: { ...savedView.settings, proxyMode: 'manual' },
  });
  render(
    <I18nProvider api={api}>
      <SettingsApp api={api} />
    </I18nProvider>,
  );
  return api;
}

describe.each([['de'], ['ar'], [PSEUDO_LOCALE]] as const)('a refused save in %s', (locale) => {
  const t = translatorFor(locale);
  const label = (field: string) => t.t(`settings.field.${field}.label` as MessageId);

  it.each(BAD)(
    'says main’s words under the field labelled in that language: $field',
    async (bad) => {
      const api = windowIn(locale);
      const input = (await screen.findByLabelText(label(bad.field))) as HTMLInputElement;
      fireEvent.change(input, { target: { value: bad.typed } });
      fireEvent.click(screen.getByRole('button', { name: t.t('settings.save') }));

      const error = await screen.findByTestId(`error-${bad.field}`);
      const answer = (await api.saveSettings.mock.results.at(-1)?.value) as SaveResult;
      expect(answer).toMatchObject({ ok: false, field: bad.named });
      const words = (answer as { words: Words }).words;
      // Beside its field, by the field's label in this language.
      expect(input.getAttribute('aria-invalid')).toBe('true');
      expect(input.getAttribute('aria-describedby')?.split(' ')).toContain(error.id);
      const text = error.textContent ?? '';
      const said = say(words, t);
      expect(text).toContain(said.slice(1));
      expect(text).not.toContain(english(words).slice(1));
      if (bad.named.endsWith(']')) {
        const entry = Number(/\[(\d+)\]$/.exec(bad.named)![1]) + 1;
        expect(text).toBe(
          say(
            [{ id: 'settings.error.entry', values: { number: String(entry), problem: words } }],
            t,
          ),
        );
      }
      if (locale === 'ar') expect(text).toMatch(/[\u0600-\u06ff]/);
      // The pseudo-locale brackets every catalogue message: English words would show bare.
      if (locale === PSEUDO_LOCALE) expect(text.startsWith('[')).toBe(true);
    },
  );
});

describe('the CRM link preview', () => {
  it('says why a link cannot be opened in the window’s language (German)', async () => {
    const t = translatorFor('de');
    const { api } = fakeApi();
    api.getLocale.mockResolvedValue({ locale: 'de' });
    api.previewCrm.mockImplementation(async (template: string) => {
      const r = previewCrmUrl(template, []);
      return r.ok ? { ok: true, url: r.url } : { ok: false, words: r.words, message: r.message };
    });
    render(
      <I18nProvider api={api}>
        <SettingsApp api={api} />
      </I18nProvider>,
    );
    const template = await screen.findByLabelText(t.t('settings.field.crmUrlTemplate.label'));
    fireEvent.change(template, { target: { value: 'javascript:alert({from})' } });
    const error = await screen.findByTestId('crm-preview-error', {}, { timeout: 2000 });
    expect(error.textContent).toBe(
      'Der CRM-Link muss mit https:// beginnen (oder mit einem Schema, das Ihr Administrator erlaubt hat), nicht mit „javascript:“.',
    );
  });
});
