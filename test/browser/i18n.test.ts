/**
 * The localization matrix: every screen in every shipped language and the pseudo-locale, light and
 * dark. Each page must say its language and direction on <html>, show no untranslated word (the
 * pseudo-locale finds any; real languages are checked against the English catalogue), cut no text,
 * pass axe, and stay clean (no console error, no CSP report). Screenshots go to
 * test-results/i18n/<screen>-<locale>-<scheme>.png for people to look at.
 *
 * A screen's `prepare` drives the page into the state to check; it finds controls by test id or by
 * their name in the page's language (`t` is the same translator the page uses).
 */
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { CATALOGUES, flatMessages } from '../../src-shared/i18n/catalogue.ts';
import { LOCALES, PSEUDO_LOCALE, directionOf, type Locale } from '../../src-shared/i18n/locales.ts';
import { createTranslator, type Translator } from '../../src-shared/i18n/translator.ts';
import { axeViolations } from './support/axe.ts';
import {
  call,
  connectedView,
  fixture,
  history,
  managedView,
  firstRunView,
  notSignedInStatus,
  organisationManagedView,
  organisationStatus,
  organisationView,
} from '../../rigs/browser/fixtures.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { describeTest } from '../../src-main/core/crm/test-lookup.ts';
import type { HistoryItem, StatusView } from '../../src-main/ipc/contract.ts';
import { featureStatuses } from '../../src-main/core/events/features.ts';
import { presenceLabel, trunkWords } from '../../src-main/core/presenters/notice-presenter.ts';
import { render } from '../../src-shared/i18n/phrase.ts';
import { describeError, hintPhrase, ServiceError } from '../../src-shared/api/service-errors.ts';
import { clippedText, englishLeftovers, unaccented } from './support/i18n-checks.ts';
import { openPage, screenshot, type PageName } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const SHOTS = fileURLToPath(new URL('../../test-results/i18n/', import.meta.url));

interface Screen {
  name: string;
  page: PageName;
  /** The fixture for a locale (main's words, when the screen shows any, come in that language). */
  fixture: (t: Translator) => ReturnType<typeof fixture>;
  prepare?: (page: Page, t: Translator) => Promise<void>;
  /** Pixel size of the window (the popup's is narrow). */
  viewport?: { width: number; height: number };
}

const SCREENS: Screen[] = [
  {
    name: 'popup-ringing',
    page: 'popup',
    viewport: { width: 360, height: 560 },
    fixture: () =>
      fixture({
        calls: [
          call({ callId: 'a', to: '+14155550100', toName: 'Sales line' }),
          call({ callId: 'b', callerName: 'محمد الأحمد', from: '+97144555000' }),
          call({ callId: 'c', callerName: null, canOpenCrm: false }),
        ],
      }),
  },
  {
    // What the contacts file and the CRM said: a company, the number's kind, a lookup running.
    name: 'popup-enriched',
    page: 'popup',
    viewport: { width: 360, height: 560 },
    fixture: () =>
      fixture({
        calls: [
          call({ callId: 'a', nameSource: 'crm', callerCompany: 'Analytical Engines Ltd' }),
          call({
            callId: 'b',
            callerName: 'Jürgen Müller',
            nameSource: 'contacts',
            callerCompany: 'Müller & Söhne KG',
            numberKind: 'mobile',
          }),
          call({ callId: 'c', callerName: null, crmLookup: 'pending' }),
        ],
      }),
  },
  {
    name: 'popup-done',
    page: 'popup',
    viewport: { width: 360, height: 560 },
    fixture: () =>
      fixture({
        calls: [
          call({ callId: 'a', state: 'answered', outcome: 'answered-elsewhere' }),
          call({ callId: 'b', callerName: null, state: 'ended' }),
        ],
      }),
  },
  { name: 'history', page: 'history', fixture: () => fixture() },
  { name: 'settings', page: 'settings', fixture: () => fixture() },
  {
    name: 'settings-managed',
    page: 'settings',
    fixture: () => fixture({ settings: managedView }),
  },
  {
    name: 'onboarding',
    page: 'settings',
    fixture: () => fixture({ settings: firstRunView }),
  },
  {
    // Organisation mode, signed in: who, the relay's extensions, sign out, sign in again.
    name: 'settings-organisation',
    page: 'settings',
    fixture: () => fixture({ settings: organisationView, status: organisationStatus }),
  },
  {
    // A policy's organisation mode before the first sign-in: locked, the two ways in.
    name: 'settings-organisation-locked',
    page: 'settings',
    fixture: (t) =>
      fixture({
        settings: { ...organisationManagedView, needsOnboarding: false },
        status: notSignedInStatus(t),
      }),
  },
  {
    // Main's words (a fault, a trunk warning, presence, a feature off) said in the screen's language
    // by the same functions main uses.
    name: 'settings-trouble',
    page: 'settings',
    fixture: (t) => fixture({ status: troubleStatus(t) }),
  },
  {
    name: 'settings-test-failed',
    page: 'settings',
    fixture: (t) => {
      const fault = describeError(new ServiceError({ kind: 'ip', errcode: 10004, message: 'x' }));
      return fixture({
        testConnection: {
          ok: false,
          message: render([...fault.words.reason, hintPhrase('ip-reported', { ip: IP })], t),
          remedy: render(fault.words.remedy, t),
          errcode: 10004,
          ipToAllow: IP,
        },
      });
    },
    prepare: async (page, t) => {
      await page.getByRole('button', { name: t.t('settings.test.button') }).click();
      await page.getByTestId('connection-result').waitFor();
    },
  },
  {
    // The CRM section set up for an in-house CRM, after a Test lookup that failed (main's words).
    name: 'settings-crm',
    page: 'settings',
    fixture: (t) => {
      const crmLookup = {
        ...DEFAULT_SETTINGS.crmLookup,
        provider: 'generic' as const,
        urlTemplate: 'https://crm.example.com/api/callers?phone={number}',
        auth: 'bearer' as const,
        nameField: 'name',
      };
      return fixture({
        settings: { ...connectedView, settings: { ...connectedView.settings, crmLookup } },
        testCrmLookup: describeTest({ status: 'failed', kind: 'auth' }, crmLookup, t, 240),
      });
    },
    prepare: async (page, t) => {
      await page.locator('#crm-test-number').fill('+1 415 555 0123');
      await page.getByRole('button', { name: t.t('settings.crm-test.button') }).click();
      await page.locator('.crm-test__result').waitFor();
    },
  },
  {
    name: 'popup-trouble',
    page: 'popup',
    viewport: { width: 360, height: 560 },
    fixture: (t) => fixture({ status: troubleStatus(t), calls: [call({ callId: 'a' })] }),
  },
  {
    name: 'history-messages',
    page: 'history',
    fixture: () => fixture({ history: [...history(Date.now()), ...messages(Date.now())] }),
  },
  {
    name: 'history-no-match',
    page: 'history',
    fixture: () => fixture(),
    prepare: async (page) => {
      await page.locator('input[type="radio"][value="missed"]').check();
      await page.getByRole('searchbox').fill('zzz');
      await page.locator('.history__empty').waitFor();
    },
  },
];

const LANGUAGES: Locale[] = [...LOCALES, PSEUDO_LOCALE];
const IP = '203.0.113.7';

/** A status with everything main can say: a fault, a trunk down, presence, a feature off. */
function troubleStatus(t: Translator): StatusView {
  const fault = describeError(new ServiceError({ kind: 'network', message: 'x' }));
  const [problem] = featureStatuses(
    { voicemail: true, sms: true, trunk: true, presence: true },
    [30031],
  ).filter((f) => f.state === 'no-scope');
  return {
    state: 'offline',
    reason: render(fault.words.reason, t),
    remedy: render(fault.words.remedy, t),
    paused: false,
    doNotDisturb: true,
    missedCount: 2,
    demo: false,
    trunkWarning: { trunks: ['SIP-Main'], message: trunkWords(['SIP-Main'], t) },
    presence: { status: 'away', label: presenceLabel('away', t), doNotDisturb: false },
    featureProblems: problem?.words
      ? [
          {
            feature: problem.feature,
            reason: render(problem.words.reason, t),
            remedy: render(problem.words.remedy, t),
          },
        ]
      : [],
  };
}

/** A voicemail and a text message, as main records them. */
function messages(now: number): HistoryItem[] {
  const base = {
    from: '+14155550123',
    fromDisplay: '(415) 555-0123',
    callerName: 'Ada Lovelace',
    to: '101',
    toDisplay: '101',
    toName: null,
    seen: false,
  };
  return [
    {
      ...base,
      kind: 'voicemail',
      callId: 'voicemail:v1',
      startedAt: now - 120_000,
      durationSec: 65,
    },
    {
      ...base,
      kind: 'sms',
      callId: 'sms:s1',
      startedAt: now - 60_000,
      text: 'Please call me back',
      textTruncated: true,
    },
  ];
}
const english = flatMessages(CATALOGUES.en);

browserSuite('every screen in every language', ({ browser, origin }) => {
  for (const screen of SCREENS) {
    for (const locale of LANGUAGES) {
      it(`${screen.name} in ${locale}, light and dark`, async () => {
        const t = createTranslator(locale);
        const problems: string[] = [];
        for (const scheme of ['light', 'dark'] as const) {
          const opened = await openPage(
            browser(),
            origin(),
            screen.page,
            { ...screen.fixture(t), locale },
            { colorScheme: scheme, ...(screen.viewport ? { viewport: screen.viewport } : {}) },
          );
          try {
            const { page } = opened;
            await screen.prepare?.(page, t);
            const html = await page.evaluate(() => {
              const root = (
                globalThis as unknown as {
                  document: { documentElement: { lang: string; dir: string } };
                }
              ).document.documentElement;
              return { lang: root.lang, dir: root.dir };
            });
            expect(html).toEqual({
              lang: locale === PSEUDO_LOCALE ? 'en' : locale,
              dir: directionOf(locale),
            });
            const untranslated =
              locale === PSEUDO_LOCALE
                ? await unaccented(page)
                : locale === 'en'
                  ? []
                  : await englishLeftovers(page, english, flatMessages(CATALOGUES[locale]));
            const tag = `${scheme}:`;
            problems.push(...untranslated.map((u) => `${tag} untranslated ${u}`));
            problems.push(...(await clippedText(page)).map((c) => `${tag} clipped ${c}`));
            problems.push(...(await axeViolations(page)).map((v) => `${tag} axe ${v}`));
            await screenshot(page, `${screen.name}-${locale}-${scheme}`, false, SHOTS);
            await expectClean(opened);
          } finally {
            await opened.close();
          }
        }
        expect(problems).toEqual([]);
      });
    }
  }
});
