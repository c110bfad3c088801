/**
 * Accessibility rules (axe-core) on every window in light and dark: contrast, names of controls,
 * labels, landmarks, ARIA use. One browser launch for the file.
 */
import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { axeViolations } from './support/axe.ts';
import { call, firstRunView, fixture, ipNotAllowedTest } from '../../rigs/browser/fixtures.ts';
import { openPage, type PageName } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';

type Case = [string, PageName, ReturnType<typeof fixture>, ((page: Page) => Promise<void>)?];

const cases: Case[] = [
  [
    'popup with three calls',
    'popup',
    fixture({
      calls: [
        call({ callId: 'a', to: '+14155550100', toName: 'Sales line' }),
        call({ callId: 'b', callerName: null, canOpenCrm: false }),
        call({ callId: 'c', callerName: 'Grace Hopper', state: 'answered' }),
      ],
    }),
  ],
  [
    'popup with calls that are done',
    'popup',
    fixture({
      calls: [
        call({ callId: 'a', state: 'answered', outcome: 'answered-elsewhere' }),
        call({ callId: 'b', callerName: null, state: 'ended' }),
        call({ callId: 'c', callerName: 'Grace Hopper', state: 'answered' }),
      ],
    }),
  ],
  [
    'settings after a failed connection test and a bad CRM link',
    'settings',
    fixture({
      testConnection: ipNotAllowedTest,
      saveResult: {
        ok: false,
        field: 'extensions',
        words: [phrase('status.settings.extension', { max: '7' })],
        message: 'extensions is not an extension number',
      },
    }),
    async (page) => {
      await page.getByRole('button', { name: 'Test connection' }).click();
      await page.getByTestId('connection-result').waitFor();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByTestId('error-extensions').waitFor();
    },
  ],
  ['onboarding', 'settings', fixture({ settings: firstRunView })],
  ['history', 'history', fixture()],
  [
    'dial box after a refusal',
    'dial',
    fixture({
      callActionResult: { ok: false, refusal: 'not-a-number', message: 'That is not a number.' },
    }),
    async (page) => {
      await page.getByLabel('Number to call').fill('abc');
      await page.getByRole('button', { name: 'Call' }).click();
      await page.getByTestId('dial-news').locator('p').waitFor();
    },
  ],
  [
    'history filtered and searched, after an export',
    'history',
    fixture(),
    async (page) => {
      await page.getByRole('radio', { name: /^Missed/ }).check();
      await page.getByRole('searchbox', { name: 'Search' }).fill('sales');
      await page.getByRole('button', { name: 'Export CSV…' }).click();
      await page.getByTestId('export-status').waitFor();
    },
  ],
  [
    'settings with a contacts file picked',
    'settings',
    fixture({ contactsPick: { status: 'picked', path: '/home/ada/contacts.csv', contacts: 3 } }),
    async (page) => {
      await page.getByRole('button', { name: 'Choose file…' }).click();
      await page.getByTestId('contacts-found').waitFor();
    },
  ],
];

// One test a window and scheme: each gets its own time budget (one test for every window ran
// past 30 s on a loaded machine once the windows grew), and a failure names the window.
browserSuite('accessibility in Chromium', ({ browser, origin }) => {
  for (const scheme of ['light', 'dark'] as const) {
    for (const [name, page, fix, prepare] of cases) {
      it(`has no axe violations: ${name} (${scheme})`, async () => {
        const opened = await openPage(browser(), origin(), page, fix, { colorScheme: scheme });
        await opened.page.locator('#root > :not([aria-busy])').first().waitFor();
        if (page === 'popup') await opened.page.locator('li[data-call-id]').nth(2).waitFor();
        if (page === 'history') await opened.page.locator('li[data-call-id]').first().waitFor();
        await prepare?.(opened.page);
        const found = (await axeViolations(opened.page)).map((v) => `${name}: ${v}`);
        await expectClean(opened);
        await opened.close();
        expect(found).toEqual([]);
      });
    }
  }
});
