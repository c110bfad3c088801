/**
 * The generic connector's call log in the Settings window (issue 39), in real Chromium: the "Call
 * log address" and "Signing secret" fields under your own CRM, the secret never filled in (only
 * "Stored in the keychain" when one is), both sent on Save (the secret only when typed), main's
 * refusal of an http address shown under its field, the address locked with the rest of the CRM
 * lookup by a policy, and screenshots of the CRM section in light, dark and Arabic
 * (test-results/screenshots/settings-call-log-receiver-*.png) for people to look at.
 */
import { expect, it } from 'vitest';
import type { SettingsView } from '../../src-main/ipc/contract.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';
import { axeViolations } from './support/axe.ts';
import { connectedView, fixture } from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);
const BY = 'Acme IT (helpdesk 4000)';
const LOG_URL = 'https://calls.acme.example/screenpop/calls';

const genericView: SettingsView = {
  ...connectedView,
  settings: {
    ...connectedView.settings,
    crmLookup: {
      ...connectedView.settings.crmLookup,
      provider: 'generic',
      urlTemplate: 'https://crm.acme.example/api/callers?phone={number}',
      auth: 'none',
      logUrl: LOG_URL,
    },
  },
  hasCrmLogSecret: true,
};
const lockedView: SettingsView = {
  ...genericView,
  managed: { by: BY, locked: ['crmLookup'] },
};

browserSuite('settings: the call log receiver', ({ browser: getBrowser, origin }) => {
  it('shows the address, never the secret, and sends both on Save (the secret only when typed)', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({ settings: genericView }),
      { viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    const address = page.getByLabel('Call log address', { exact: true });
    await address.waitFor();
    expect(await address.inputValue()).toBe(LOG_URL);
    const secret = page.getByLabel('Signing secret', { exact: true });
    expect(await secret.inputValue()).toBe('');
    expect(await secret.getAttribute('type')).toBe('password');
    expect(await secret.getAttribute('placeholder')).toBe('Stored in the keychain');
    expect(await page.locator('#field-crmLogSecret-hint').textContent()).toContain(
      'Kept in the system keychain',
    );

    // Another change leaves the secret out of the patch.
    await page.getByLabel('Your extensions').fill('101, 205');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await opened.recorded('saveSettings')).length).toBe(1);
    expect((await opened.recorded('saveSettings'))[0]?.args[0]).not.toHaveProperty('crmLogSecret');

    await address.fill('http://127.0.0.1:8080/calls');
    await secret.fill('whsec-typed-1');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await opened.recorded('saveSettings')).length).toBe(2);
    const patch = (await opened.recorded('saveSettings'))[1]?.args[0] as {
      settings: { crmLookup?: { logUrl?: string } };
      crmLogSecret?: string;
    };
    expect(patch.settings.crmLookup?.logUrl).toBe('http://127.0.0.1:8080/calls');
    expect(patch.crmLogSecret).toBe('whsec-typed-1');
    await expectClean(opened);
    await opened.close();
  });

  it('shows main’s refusal of an http address under the address field', async () => {
    const words = [phrase('settings.error.crm-log-url.insecure')];
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({
        settings: genericView,
        saveResult: { ok: false, field: 'crmLookup.logUrl', words, message: 'refused' },
      }),
      { viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    const address = page.getByLabel('Call log address', { exact: true });
    await address.fill('http://calls.acme.example/in');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const error = page.locator('#field-crmLogUrl-error');
    await expect.poll(() => error.count()).toBe(1);
    expect(await error.textContent()).toBe(
      'The call log address must start with https:// (http:// only to this computer: localhost or 127.0.0.1): calls and their notes never travel unencrypted.',
    );
    expect(await address.getAttribute('aria-describedby')).toContain('field-crmLogUrl-error');
    await expectClean(opened);
    await opened.close();
  });

  it('is locked with the CRM lookup by a policy; the secret can still be typed', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({ settings: lockedView }),
      { viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    const address = page.getByLabel('Call log address', { exact: true });
    await address.waitFor();
    // A locked text field is read-only (Field.tsx), as the CRM lookup's other fields.
    expect(await address.isEditable()).toBe(false);
    expect(await page.locator('#field-crmLogUrl-lock').textContent()).toContain(`Locked by ${BY}`);
    expect(await page.getByLabel('Signing secret', { exact: true }).isEditable()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await expectClean(opened);
    await opened.close();
  });

  it('gives light, dark and Arabic screenshots of the CRM section', async () => {
    for (const [name, view, locale, scheme] of [
      ['light', genericView, 'en', 'light'],
      ['dark', genericView, 'en', 'dark'],
      ['ar-light', genericView, 'ar', 'light'],
      ['locked-ar-dark', lockedView, 'ar', 'dark'],
    ] as const) {
      const opened = await openPage(
        getBrowser(),
        origin(),
        'settings',
        fixture({ settings: view, locale }),
        { colorScheme: scheme, viewport: { width: 620, height: 3200 }, fixedTime: SHOT_TIME },
      );
      const field = opened.page.locator('[data-field="crmLogUrl"]');
      await field.waitFor();
      expect(await opened.page.locator('html').getAttribute('dir')).toBe(
        locale === 'ar' ? 'rtl' : 'ltr',
      );
      await screenshot(opened.page.locator('#section-crm'), `settings-call-log-receiver-${name}`);
      await expectClean(opened);
      await opened.close();
    }
  });
});
