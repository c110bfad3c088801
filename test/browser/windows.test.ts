/**
 * Settings (with onboarding) and history in real Chromium under the production CSP, with the
 * preload API replaced by a typed double: CRM preview through the real main-side builder, the
 * onboarding demo path, history marked seen, no horizontal overflow at 200% zoom, and the
 * light/dark screenshots. One browser launch for the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { previewCrmUrl } from '../../src-main/core/app/crm-url.ts';
import { hasChromium, launchChromium, mustRunBrowser, SKIP_REASON } from './support/chromium.ts';
import { connectedView, firstRunView, fixture, history } from './support/fixtures.ts';
import { openPage, screenshot, type OpenedPage, type PageName } from './support/page.ts';
import { buildAndServeRenderer, type ServedRenderer } from './support/serve-renderer.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);

async function expectClean(opened: OpenedPage): Promise<void> {
  expect(opened.problems).toEqual([]);
  expect(await opened.violations()).toEqual([]);
  expect(opened.dialogs).toEqual([]);
}

describe.runIf(!hasChromium && mustRunBrowser)('settings and history browser tests on CI', () => {
  it('needs /usr/bin/chromium', () => {
    expect.fail(`CI=true but ${SKIP_REASON}`);
  });
});

describe.skipIf(!hasChromium)('settings, onboarding and history in Chromium', () => {
  let served: ServedRenderer;
  let browser: Browser;

  beforeAll(async () => {
    served = await buildAndServeRenderer();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('previews the CRM link with main’s real builder and refuses a script URL in words', async () => {
    const opened = await openPage(browser, served.origin, 'settings', fixture(), {
      viewport: { width: 720, height: 900 },
      crmPreview: (template) => {
        const result = previewCrmUrl(template, connectedView.settings.crmAllowedSchemes);
        return result.ok ? { ok: true, url: result.url } : { ok: false, message: result.message };
      },
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
      browser,
      served.origin,
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
    expect(page.url()).toBe(`${served.origin}/settings.html`);
    await expectClean(opened);
    await opened.close();
  });

  it('onboarding: “Try the demo” starts the demo and says a call is coming', async () => {
    const opened = await openPage(
      browser,
      served.origin,
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
    const opened = await openPage(browser, served.origin, 'history', fixture());
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
          calls: [{ ...callAt(SHOT_TIME), callerName: 'Maria Concepción Fernández-Villalobos' }],
        }),
      ],
    ];
    for (const [name, fix] of pages) {
      // The popup window is 360 pixels wide: 180 CSS pixels at 200%.
      const width = name === 'popup' ? 180 : 320;
      const opened = await openPage(browser, served.origin, name, fix, {
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
        browser,
        served.origin,
        'settings',
        fixture({
          testConnection: {
            ok: false,
            message: 'The service refused this computer’s address.',
            remedy: 'Add the caller IP to the key’s allowlist.',
            errcode: 10004,
            ipToAllow: '203.0.113.7',
          },
        }),
        {
          colorScheme: scheme,
          viewport: { width: 720, height: 900 },
          fixedTime: SHOT_TIME,
          crmPreview: (template) => {
            const result = previewCrmUrl(template, ['https']);
            return result.ok
              ? { ok: true, url: result.url }
              : { ok: false, message: result.message };
          },
        },
      );
      await settings.page.getByRole('button', { name: 'Test connection' }).click();
      await settings.page.getByTestId('connection-result').waitFor();
      await settings.page.getByTestId('crm-preview-url').waitFor();
      await screenshot(settings.page, `settings-${scheme}`);
      await expectClean(settings);
      await settings.close();

      const onboarding = await openPage(
        browser,
        served.origin,
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
        browser,
        served.origin,
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

function callAt(now: number) {
  return {
    callId: 'z1',
    from: '+14155550123',
    fromDisplay: '+1 415-555-0123',
    callerName: 'Ada Lovelace',
    to: '101',
    toDisplay: 'Ext. 101',
    startedAt: now - 7000,
    state: 'ringing',
    canOpenCrm: true,
  };
}
