/**
 * The Settings window's "Proxy sign-in" field (Settings.proxyAuth, issue 36), in real Chromium:
 * automatic by default, each choice saved as the setting, locked with "Locked by <who>" when the
 * organisation's policy locks it, and screenshots of the field in light, dark and Arabic
 * (test-results/screenshots/settings-proxy-auth-*.png) for people to look at.
 */
import { expect, it } from 'vitest';
import type { SettingsView } from '../../src-main/ipc/contract.ts';
import { axeViolations } from './support/axe.ts';
import { connectedView, fixture, managedView } from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);
const BY = 'Acme IT (helpdesk 4000)';

const lockedView: SettingsView = {
  ...managedView,
  settings: { ...managedView.settings, proxyAuth: 'basic' },
  managed: { by: BY, locked: [...(managedView.managed?.locked ?? []), 'proxyAuth'] },
};

browserSuite('settings: proxy sign-in', ({ browser: getBrowser, origin }) => {
  it('is automatic by default, names each way, and saves the one chosen', async () => {
    const opened = await openPage(getBrowser(), origin(), 'settings', fixture(), {
      viewport: { width: 720, height: 900 },
    });
    const { page } = opened;
    const field = page.getByLabel('Proxy sign-in', { exact: true });
    await field.waitFor();
    expect(await field.inputValue()).toBe('automatic');
    expect(await field.locator('option').allTextContents()).toEqual([
      'Automatic (your own sign-in, as the proxy asks)',
      "Only the keychain's user name and password (Basic)",
      'Never sign in to the proxy',
    ]);
    const hint = await field.getAttribute('aria-describedby');
    expect(hint).toContain('field-proxyAuth-hint');
    expect(await page.locator('#field-proxyAuth-hint').textContent()).toContain('Negotiate');

    await field.selectOption('basic');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await opened.recorded('saveSettings')).length).toBe(1);
    const patch = (await opened.recorded('saveSettings'))[0]?.args[0] as {
      settings: Record<string, unknown>;
    };
    expect(patch.settings['proxyAuth']).toBe('basic');
    expect(connectedView.settings.proxyAuth).toBe('automatic');
    await expectClean(opened);
    await opened.close();
  });

  it('shows the policy lock and leaves the setting out of the patch', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({ settings: lockedView }),
      { viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    const field = page.getByLabel('Proxy sign-in', { exact: true });
    await field.waitFor();
    expect(await field.inputValue()).toBe('basic');
    expect(await field.isDisabled()).toBe(true);
    expect(await field.getAttribute('aria-describedby')).toContain('field-proxyAuth-lock');
    expect(await page.locator('#field-proxyAuth-lock').textContent()).toContain(`Locked by ${BY}`);
    await page.getByLabel('Your extensions').fill('101, 205');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await opened.recorded('saveSettings')).length).toBe(1);
    const patch = (await opened.recorded('saveSettings'))[0]?.args[0] as {
      settings: Record<string, unknown>;
    };
    expect(patch.settings).toEqual({ extensions: ['101', '205'] });
    expect(await axeViolations(page)).toEqual([]);
    await expectClean(opened);
    await opened.close();
  });

  it('gives light, dark and Arabic screenshots of the field, open and locked', async () => {
    for (const [name, view, locale, scheme] of [
      ['light', connectedView, 'en', 'light'],
      ['dark', connectedView, 'en', 'dark'],
      ['ar-light', connectedView, 'ar', 'light'],
      ['locked-dark', lockedView, 'en', 'dark'],
      ['locked-ar-dark', lockedView, 'ar', 'dark'],
    ] as const) {
      const opened = await openPage(
        getBrowser(),
        origin(),
        'settings',
        fixture({ settings: view, locale }),
        // Tall enough for the whole form, so the sticky Save bar sits below the section.
        { colorScheme: scheme, viewport: { width: 620, height: 3200 }, fixedTime: SHOT_TIME },
      );
      const field = opened.page.locator('[data-field="proxyAuth"]');
      await field.waitFor();
      expect(await opened.page.locator('html').getAttribute('dir')).toBe(
        locale === 'ar' ? 'rtl' : 'ltr',
      );
      // The Advanced section: the proxy's mode, address and sign-in as the user sees them together.
      await screenshot(opened.page.locator('#section-advanced'), `settings-proxy-auth-${name}`);
      await expectClean(opened);
      await opened.close();
    }
  });
});
