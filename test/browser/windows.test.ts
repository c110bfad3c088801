/**
 * Settings (with onboarding) and history in real Chromium under the production CSP, with the
 * preload API replaced by a typed double: CRM preview through the real main-side builder, the
 * onboarding demo path, history marked seen, no horizontal overflow at 200% zoom, and the
 * light/dark screenshots. One browser launch for the file.
 */
import { expect, it } from 'vitest';
import {
  call,
  connectedView,
  firstRunView,
  fixture,
  history,
  ipNotAllowedTest,
} from './support/fixtures.ts';
import { openPage, screenshot, type PageName } from './support/page.ts';
import { browserSuite, expectClean, realCrmPreview } from './support/suite.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);

browserSuite('settings, onboarding and history in Chromium', ({ browser: getBrowser, origin }) => {
  it('previews the CRM link with main’s real builder and refuses a script URL in words', async () => {
    const opened = await openPage(getBrowser(), origin(), 'settings', fixture(), {
      viewport: { width: 720, height: 900 },
      crmPreview: realCrmPreview(connectedView.settings.crmAllowedSchemes),
    });
    const { page } = opened;
    const template = page.getByLabel('Link template');
    await template.fill(
      'https://crm.example.com/search?phone={from}&name={caller_name}&id={call_id}',
    );
    await expect
      .poll(() =>
        page
          .getByTestId('crm-preview-url')
          .textContent({ timeout: 2000 })
          .catch(() => null),
      )
      .toBe(
        'https://crm.example.com/search?phone=%2B14155550123&name=Ada%20Lovelace&id=c0ffee-1234',
      );
    await template.fill('javascript:alert(document.domain)//{from}');
    await expect
      .poll(() =>
        page
          .getByTestId('crm-preview-error')
          .textContent({ timeout: 2000 })
          .catch(() => null),
      )
      .toMatch(/must start with https:\/\//);
    expect((await opened.recorded('previewCrm')).at(-1)?.args).toEqual([
      'javascript:alert(document.domain)//{from}',
    ]);
    await expectClean(opened);
    await opened.close();
  });

  it('saves with Enter in a field (no form navigation under form-action none) and shows field errors', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({
        saveResult: {
          ok: false,
          field: 'extensions',
          message: 'Enter at least one extension, like 101.',
        },
      }),
      { viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    await page.getByLabel('Your extensions').fill('');
    await page.getByLabel('Service address').press('Enter');
    await expect.poll(() => page.getByTestId('error-extensions').count()).toBe(1);
    expect(await page.getByTestId('error-extensions').textContent()).toBe(
      'Enter at least one extension, like 101.',
    );
    expect(await page.getByLabel('Your extensions').getAttribute('aria-invalid')).toBe('true');
    const saves = await opened.recorded('saveSettings');
    expect(saves.length).toBe(1);
    expect(saves[0]?.args[0]).toMatchObject({ settings: { extensions: [] } });
    expect(saves[0]?.args[0]).not.toHaveProperty('secret');
    expect(page.url()).toBe(`${origin()}/settings.html`);
    await expectClean(opened);
    await opened.close();
  });

  it('onboarding: “Try the demo” starts the demo and says a call is coming', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({ settings: firstRunView }),
    );
    const { page } = opened;
    await page.getByRole('heading', { name: 'Welcome to Screenpop' }).waitFor();
    await page.getByRole('button', { name: /Try the demo/ }).click();
    await page.getByTestId('demo-started').waitFor();
    expect((await opened.recorded('startDemo')).length).toBe(1);
    // Nothing took focus on load: the click did.
    await expectClean(opened);
    await opened.close();
  });

  it('history: lists the calls and marks missed ones seen on open', async () => {
    const opened = await openPage(getBrowser(), origin(), 'history', fixture());
    const { page } = opened;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(5);
    expect(await page.locator('li[data-outcome="missed"]').count()).toBe(2);
    expect(await page.locator('li[data-call-id="h2"]').textContent()).toContain('New');
    expect((await opened.recorded('markHistorySeen')).length).toBe(1);
    await expectClean(opened);
    await opened.close();
  });

  it('fits at 200% zoom: no page scrolls sideways at half the CSS width', async () => {
    // A 640-pixel-wide window at 200% zoom lays out in 320 CSS pixels.
    const pages: [PageName, ReturnType<typeof fixture>][] = [
      ['settings', fixture()],
      ['settings', fixture({ settings: firstRunView })],
      ['history', fixture()],
      [
        'popup',
        fixture({
          calls: [call({ callId: 'z1', callerName: 'Maria Concepción Fernández-Villalobos' })],
        }),
      ],
    ];
    for (const [name, fix] of pages) {
      // The popup window is 360 pixels wide: 180 CSS pixels at 200%.
      const width = name === 'popup' ? 180 : 320;
      const opened = await openPage(getBrowser(), origin(), name, fix, {
        viewport: { width, height: 640 },
      });
      await opened.page.waitForTimeout(50);
      const overflow = await opened.page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow, `${name} overflows sideways`).toBe(0);
      if (name === 'settings' && !fix.settings.needsOnboarding)
        await screenshot(opened.page, 'settings-zoom200');
      if (name === 'popup') await screenshot(opened.page.locator('.popup'), 'popup-zoom200');
      await expectClean(opened);
      await opened.close();
    }
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`screenshots: settings, onboarding and history (${scheme})`, async () => {
      const settings = await openPage(
        getBrowser(),
        origin(),
        'settings',
        fixture({
          testConnection: ipNotAllowedTest,
        }),
        {
          colorScheme: scheme,
          viewport: { width: 720, height: 900 },
          fixedTime: SHOT_TIME,
          crmPreview: realCrmPreview(['https']),
        },
      );
      await settings.page.getByRole('button', { name: 'Test connection' }).click();
      await settings.page.getByTestId('connection-result').waitFor();
      await settings.page.getByTestId('crm-preview-url').waitFor();
      await screenshot(settings.page, `settings-${scheme}`);
      await expectClean(settings);
      await settings.close();

      const onboarding = await openPage(
        getBrowser(),
        origin(),
        'settings',
        fixture({ settings: firstRunView }),
        {
          colorScheme: scheme,
          viewport: { width: 720, height: 520 },
          fixedTime: SHOT_TIME,
        },
      );
      await onboarding.page.getByRole('heading', { name: 'Welcome to Screenpop' }).waitFor();
      await screenshot(onboarding.page, `onboarding-${scheme}`);
      await expectClean(onboarding);
      await onboarding.close();

      const historyPage = await openPage(
        getBrowser(),
        origin(),
        'history',
        fixture({ history: history(SHOT_TIME) }),
        {
          colorScheme: scheme,
          viewport: { width: 640, height: 560 },
          fixedTime: SHOT_TIME,
        },
      );
      await expect.poll(() => historyPage.page.locator('li[data-call-id]').count()).toBe(5);
      await screenshot(historyPage.page, `history-${scheme}`);
      await expectClean(historyPage);
      await historyPage.close();
    });
  }
});
