/**
 * Settings (with onboarding) in real Chromium under the production CSP, with the preload API
 * replaced by a typed double: CRM preview through the real main-side builder, one truthful
 * connection status, a save bar that stays in reach, the native contacts-file picker, the
 * onboarding choices as buttons, no horizontal overflow at 200 % zoom, and the light/dark
 * screenshots. The history window has its own file (history.test.ts). One browser launch.
 */
import { expect, it } from 'vitest';
import {
  connectedView,
  firstRunView,
  fixture,
  ipNotAllowedTest,
} from '../../rigs/browser/fixtures.ts';
import { computedStyle, openPage, SCREENSHOT_DIR, screenshot } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean, realCrmPreview } from './support/suite.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';
import { contentSecurityPolicy } from '../../src-shared/ui/content-security-policy.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);

browserSuite('settings, onboarding and history in Chromium', ({ browser: getBrowser, origin }) => {
  it('previews the CRM link with main’s real builder and refuses a script URL in words', async () => {
    const opened = await openPage(getBrowser(), origin(), 'settings', fixture(), {
      viewport: { width: 720, height: 900 },
      crmPreview: realCrmPreview(connectedView.settings.crmAllowedSchemes),
    });
    const { page } = opened;
    const template = page.getByLabel('CRM link', { exact: true });
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
          words: [phrase('status.settings.extension', { max: '7' })],
          message: 'extensions is not an extension number',
        },
      }),
      { viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    await page.getByLabel('Your extensions').fill('');
    await page.getByLabel('Service address').press('Enter');
    await expect.poll(() => page.getByTestId('error-extensions').count()).toBe(1);
    expect(await page.getByTestId('error-extensions').textContent()).toBe(
      'Is not an extension number (1 to 7 digits, e.g. "101")',
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

  it('keeps one truthful status: a failed test replaces “Connected” instead of sitting under it', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({ testConnection: ipNotAllowedTest }),
      { viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    const tones = () => page.locator('.notice--ok, .notice--warn, .notice--error').count();
    expect(await page.getByTestId('status').textContent()).toContain('Connected');
    expect(await tones()).toBe(1);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByTestId('connection-result').waitFor();
    expect(await page.getByTestId('status').count()).toBe(0);
    expect(await tones()).toBe(1);
    expect(await page.locator('.notice--error').count()).toBe(1);
    await page.getByLabel('API key', { exact: true }).fill('ak_live_other');
    expect(await page.getByTestId('connection-result').count()).toBe(0);
    expect(await page.getByTestId('status').textContent()).toContain('Connected');
    await expectClean(opened);
    await opened.close();
  });

  it('keeps Save in reach wherever the user is, at 200 % too, and says when there are unsaved changes', async () => {
    // The settings window is 620 x 760; at 200 % that is 310 x 380 CSS pixels.
    for (const [viewport, zoom] of [
      [{ width: 620, height: 760 }, 1],
      [{ width: 310, height: 380 }, 2],
    ] as const) {
      const opened = await openPage(getBrowser(), origin(), 'settings', fixture(), {
        viewport,
        zoom,
      });
      const { page } = opened;
      const save = page.getByRole('button', { name: 'Save', exact: true });
      await save.waitFor();
      const height = Number(await page.evaluate('document.documentElement.scrollHeight'));
      expect(height).toBeGreaterThan(viewport.height * 2);
      for (const y of [0, height / 2, height]) {
        await page.evaluate(`window.scrollTo(0, ${y})`);
        const box = await save.boundingBox();
        expect(box, `Save at scroll ${y}`).not.toBeNull();
        expect(box!.y).toBeGreaterThanOrEqual(0);
        expect(box!.y + box!.height).toBeLessThanOrEqual(viewport.height);
      }
      // A field the user tabs to is not hidden under the bar.
      await page.evaluate('window.scrollTo(0, 0)');
      await page.getByLabel('Relay tenant').focus();
      const field = await page.getByLabel('Relay tenant').boundingBox();
      const bar = await page.getByTestId('save-bar').boundingBox();
      expect(field && bar && field.y + field.height <= bar.y).toBe(true);
      await page.getByLabel('Relay tenant').fill('globex');
      expect(await page.getByTestId('unsaved').textContent()).toBe('Unsaved changes');
      await save.click();
      await expect.poll(() => page.getByTestId('save-status').textContent()).toBe('Saved.');
      expect(await page.getByTestId('unsaved').count()).toBe(0);
      await expectClean(opened);
      await opened.close();
    }
  });

  it('chooses the contacts file with the native dialog (main), shows what it holds, and saves that path', async () => {
    // A file name a user may really have: markup characters, and a right-to-left override that
    // would show "contacts.csv" as "vsc.stcatnoc".
    const picked = '/home/ada/Documents/<b>Kunden \u202Econtacts.csv';
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({ contactsPick: { status: 'picked', path: picked, contacts: 128 } }),
      { viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    // No text box: a path cannot be typed, only picked.
    expect(await page.getByRole('textbox', { name: /Contacts file/ }).count()).toBe(0);
    await page.getByRole('button', { name: 'Choose file…' }).click();
    await page.getByTestId('contacts-found').waitFor();
    expect(await page.getByTestId('contacts-found').textContent()).toBe(
      '128 numbers with names found. Save to use this file.',
    );
    expect(await page.getByTestId('contacts-path').textContent()).toBe(
      '/home/ada/Documents/<b>Kunden contacts.csv',
    );
    expect(await page.getByTestId('contacts-file').locator('.file-field__name').textContent()).toBe(
      '<b>Kunden contacts.csv',
    );
    expect(await page.getByTestId('contacts-file').locator('b').count()).toBe(0);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await opened.recorded('saveSettings')).length).toBe(1);
    expect((await opened.recorded('saveSettings'))[0]?.args[0]).toEqual({
      settings: { contactsFile: picked },
    });
    await screenshot(page.locator('[data-field="contactsFile"]'), 'settings-contacts-light');
    await expectClean(opened);
    await opened.close();
  });

  it('onboarding: the two choices look and act like buttons', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({ settings: firstRunView }),
    );
    const { page } = opened;
    const connect = page.getByRole('button', { name: /Connect to my phone system/ });
    const demo = page.getByRole('button', { name: /Try the demo/ });
    for (const choice of [connect, demo]) {
      expect(await computedStyle(choice, 'cursor')).toBe('pointer');
      expect(await computedStyle(choice, 'border-top-width')).toBe('2px');
      expect(await choice.locator('.choice__arrow').count()).toBe(1);
    }
    // The main way in is filled like a primary button; the other is outlined in the same colour.
    const accent = await computedStyle(demo, 'border-top-color');
    expect(await computedStyle(connect, 'background-color')).toBe(accent);
    expect(await computedStyle(demo, 'background-color')).not.toBe(accent);
    await connect.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Connect to your phone system' }).waitFor();
    await expectClean(opened);
    await opened.close();
  });

  it('fits at 200% zoom: no page scrolls sideways', async () => {
    // A 640-pixel-wide window at 200% zoom lays out in 320 CSS pixels.
    for (const fix of [fixture(), fixture({ settings: firstRunView })]) {
      const opened = await openPage(getBrowser(), origin(), 'settings', fix, {
        viewport: { width: 320, height: 640 },
        zoom: 2,
      });
      await opened.page.waitForTimeout(50);
      const overflow = await opened.page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow, 'settings overflows sideways').toBe(0);
      await expectClean(opened);
      await opened.close();
    }
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`screenshots: settings, onboarding, and both at 200 % (${scheme})`, async () => {
      const settings = await openPage(
        getBrowser(),
        origin(),
        'settings',
        fixture({
          testConnection: ipNotAllowedTest,
        }),
        {
          colorScheme: scheme,
          viewport: { width: 620, height: 760 },
          fixedTime: SHOT_TIME,
          crmPreview: realCrmPreview(['https']),
        },
      );
      await settings.page.getByTestId('crm-preview-url').waitFor();
      // As the window opens: the top, with the save bar at the bottom of the window.
      await settings.page.screenshot({
        path: `${SCREENSHOT_DIR}settings-window-${scheme}.png`,
        animations: 'disabled',
      });
      await settings.page.getByRole('button', { name: 'Test connection' }).click();
      await settings.page.getByTestId('connection-result').waitFor();
      await screenshot(settings.page, `settings-${scheme}`);
      await expectClean(settings);
      await settings.close();

      for (const [name, fix, viewport, zoom] of [
        ['onboarding', fixture({ settings: firstRunView }), { width: 720, height: 520 }, 1],
        ['onboarding-zoom200', fixture({ settings: firstRunView }), { width: 310, height: 380 }, 2],
        ['settings-zoom200', fixture(), { width: 310, height: 380 }, 2],
      ] as const) {
        const opened = await openPage(getBrowser(), origin(), 'settings', fix, {
          colorScheme: scheme,
          viewport,
          fixedTime: SHOT_TIME,
          zoom,
        });
        await opened.page.locator('h1').waitFor();
        if (name === 'settings-zoom200')
          await opened.page.screenshot({
            path: `${SCREENSHOT_DIR}${name}-${scheme}.png`,
            animations: 'disabled',
          });
        else await screenshot(opened.page, `${name}-${scheme}`);
        await expectClean(opened);
        await opened.close();
      }
    });
  }

  it('every page carries the one CSP main sends, as the first tag of its head', async () => {
    const context = await getBrowser().newContext();
    try {
      const page = await context.newPage();
      for (const name of ['popup', 'settings', 'history', 'dial']) {
        await page.goto(`${origin()}/${name}.html`);
        const head = page.locator('head > *').first();
        const first = [await head.getAttribute('http-equiv'), await head.getAttribute('content')];
        expect(first, name).toEqual([
          'Content-Security-Policy',
          contentSecurityPolicy(null, 'meta'),
        ]);
        expect(await page.locator('meta[http-equiv="Content-Security-Policy"]').count(), name).toBe(
          1,
        );
      }
      // The header's only difference: frame-ancestors, which a meta tag cannot carry.
      expect(contentSecurityPolicy(null, 'header')).toBe(
        `${contentSecurityPolicy(null, 'meta')}; frame-ancestors 'none'`,
      );
    } finally {
      await context.close();
    }
  });
});
