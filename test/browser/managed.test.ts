/**
 * Settings on a computer an organisation's policy manages (SettingsView.managed), in real
 * Chromium: the locked settings show "Locked by <who>" tied to their control and cannot be
 * edited, the user still edits and saves the rest (and the patch carries none of the locked ones),
 * accessibility rules pass, nothing scrolls sideways at 200 %, and light/dark/200 % screenshots.
 */
import { expect, it } from 'vitest';
import { axeViolations } from './support/axe.ts';
import { fixture, managedView } from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);
const BY = 'Acme IT (helpdesk 4000)';

browserSuite('settings managed by a policy', ({ browser: getBrowser, origin }) => {
  it('shows locked settings as locked, by whom, and saves only what the user may change', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({ settings: managedView }),
      {
        viewport: { width: 720, height: 900 },
      },
    );
    const { page } = opened;
    await expect.poll(() => page.getByTestId('managed-banner').textContent()).toContain(BY);
    const address = page.getByLabel('Service address');
    expect(await address.getAttribute('readonly')).not.toBeNull();
    expect(await address.isEditable()).toBe(false);
    const note = await address.getAttribute('aria-describedby');
    expect(note).toContain('field-baseUrl-lock');
    expect(await page.locator('#field-baseUrl-lock').textContent()).toContain(`Locked by ${BY}`);
    expect(
      await page.getByLabel('Open the CRM link by itself when a call rings').isDisabled(),
    ).toBe(true);
    expect(await page.getByLabel('Start Screenpop when I sign in').isDisabled()).toBe(true);
    expect(await page.getByRole('radio', { name: 'Relay' }).isDisabled()).toBe(true);
    // Not locked: the user's.
    expect(await page.getByLabel('Play a sound when a call rings').isDisabled()).toBe(false);
    expect(await page.getByLabel('Your extensions').isEditable()).toBe(true);
    // Typing into a locked field does nothing.
    await address.press('End');
    await address.pressSequentially('x', { timeout: 2000 }).catch(() => {});
    expect(await address.inputValue()).toBe('https://acme.example.com');

    await page.getByLabel('Your extensions').fill('101, 205');
    await page.getByLabel('Play a sound when a call rings').uncheck();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await opened.recorded('saveSettings')).length).toBe(1);
    const patch = (await opened.recorded('saveSettings'))[0]?.args[0] as {
      settings: Record<string, unknown>;
    };
    expect(patch.settings).toEqual({ extensions: ['101', '205'], sound: false });
    expect(await axeViolations(page)).toEqual([]);
    await expectClean(opened);
    await opened.close();
  });

  it('fits at 200 % zoom and gives light, dark and 200 % screenshots', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      for (const [name, viewport, zoom] of [
        ['settings-managed', { width: 620, height: 760 }, 1],
        ['settings-managed-zoom200', { width: 310, height: 380 }, 2],
      ] as const) {
        const opened = await openPage(
          getBrowser(),
          origin(),
          'settings',
          fixture({ settings: managedView }),
          {
            colorScheme: scheme,
            viewport,
            fixedTime: SHOT_TIME,
            zoom,
          },
        );
        await opened.page.getByTestId('managed-banner').waitFor();
        const overflow = await opened.page.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        expect(overflow, `${name} overflows sideways`).toBe(0);
        if (scheme === 'dark' && zoom === 1) expect(await axeViolations(opened.page)).toEqual([]);
        await screenshot(opened.page, `${name}-${scheme}`);
        await expectClean(opened);
        await opened.close();
      }
    }
  });
});
