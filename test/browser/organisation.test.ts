/**
 * Settings' "Sign in with your organisation" in real Chromium (the page against the preload's
 * contract, main played by the API double): choosing the mode takes the API key and secret fields
 * away, the sign-in and the enrolment send only the relay, tenant and code, the person can cancel
 * a sign-in waiting for the browser, main's refusals are shown with what to do, and a policy that
 * locks the mode and the relay shows them locked. Accessibility rules pass; screenshots in light,
 * dark and Arabic go to test-results/screenshots/.
 */
import { expect, it } from 'vitest';
import { axeViolations } from './support/axe.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import {
  fixture,
  notSignedInStatus,
  organisationManagedView,
  organisationStatus,
  organisationView,
} from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const SHOT_TIME = Date.UTC(2026, 10, 24, 9, 30, 0);

browserSuite('settings: sign in with your organisation', ({ browser: getBrowser, origin }) => {
  it('an API-key computer switches: no key or secret fields, the warning that signing in removes them, sign-in sends the form’s relay only, then says who', async () => {
    const opened = await openPage(getBrowser(), origin(), 'settings', fixture(), {
      viewport: { width: 720, height: 900 },
    });
    const { page } = opened;
    await page.getByLabel('API key', { exact: true }).waitFor();
    await page.getByRole('radio', { name: 'Sign in with your organisation' }).check();
    expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0);
    expect(await page.locator('input[type=password]').count()).toBe(0);
    expect(await page.getByLabel('Service address').count()).toBe(0);
    expect(await page.getByLabel('Your extensions').count()).toBe(0);
    await expect
      .poll(() => page.getByTestId('org-leaves-key').textContent())
      .toContain('removes the API key and secret');
    await page.getByLabel('Relay address').fill('wss://relay.acme.example.com');
    await page.getByLabel('Relay tenant').fill('acme');
    await page.getByRole('button', { name: 'Sign in with your organisation…' }).click();
    await expect
      .poll(() => page.getByTestId('org-signed-in').textContent())
      .toBe('Signed in as alice@example.org through your organisation’s single sign-on.');
    expect(await opened.recorded('signInToOrganisation')).toEqual([
      {
        method: 'signInToOrganisation',
        args: [{ relayUrl: 'wss://relay.acme.example.com', relayTenant: 'acme' }],
      },
    ]);
    expect(await page.getByTestId('save-status').textContent()).toBe('Signed in.');
    // Saved: nothing left unsaved, and the key's warning is gone with the key.
    expect(await page.getByTestId('unsaved').count()).toBe(0);
    expect(await page.getByTestId('org-leaves-key').count()).toBe(0);
    // Nothing typed or shown in this mode is a key or a secret.
    expect(await page.content()).not.toContain('ak_live_3f9c');
    expect(await axeViolations(page)).toEqual([]);
    await expectClean(opened);
    await opened.close();
  });

  it('a policy-locked organisation computer: locked mode and relay; the browser wait can be cancelled; an empty or refused code says what to do; a good code enrols', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({
        settings: { ...organisationManagedView, needsOnboarding: false },
        orgResult: 'pending',
      }),
      { viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    await page.getByTestId('org-panel').waitFor();
    expect(
      await page.getByRole('radio', { name: 'With the phone system’s API key' }).isDisabled(),
    ).toBe(true);
    const address = page.getByLabel('Relay address');
    expect(await address.isEditable()).toBe(false);
    expect(await page.locator('#field-relayUrl-lock').textContent()).toContain(
      'Locked by Acme IT (helpdesk 4000)',
    );
    expect(await page.getByTestId('org-signed-in').textContent()).toBe(
      'This computer is not signed in to your organisation yet.',
    );

    await page.getByRole('button', { name: 'Sign in with your organisation…' }).click();
    await page.getByRole('button', { name: 'Waiting for the browser…' }).waitFor();
    expect(await page.locator('#org-sign-in-hint').textContent()).toContain(
      'Finish signing in in your browser',
    );
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Sign in with your organisation…' }).waitFor();
    expect(await opened.recorded('cancelOrganisationSignIn')).toHaveLength(1);
    // A cancel is no failure: nothing alarming is shown.
    expect(await page.getByTestId('org-problem').count()).toBe(0);

    await page.getByRole('button', { name: 'Enrol', exact: true }).click();
    expect(await page.getByTestId('error-enrolCode').textContent()).toBe(
      'Enter the enrolment code first.',
    );
    expect(await opened.recorded('enrolInOrganisation')).toEqual([]);
    await opened.close();

    // Main refuses the code, in the relay's words.
    const refused = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({
        settings: { ...organisationManagedView, needsOnboarding: false },
        orgResult: {
          ok: false,
          message: 'The relay did not accept the enrolment code: unknown, used or expired code',
          remedy: 'Check the code, or ask your administrator for a new one (a code works once).',
        },
      }),
      { viewport: { width: 720, height: 900 } },
    );
    const code = refused.page.getByLabel('Enrolment code');
    await code.fill('K7QX-2M4P-ZR9T');
    // Enter in the code field enrols; it does not save the form.
    await code.press('Enter');
    await expect
      .poll(() => refused.page.getByTestId('org-problem').textContent())
      .toContain('The relay did not accept the enrolment code');
    expect(await refused.page.getByTestId('org-problem').textContent()).toContain(
      'What to do: Check the code',
    );
    expect(await refused.recorded('saveSettings')).toEqual([]);
    expect((await refused.recorded('enrolInOrganisation'))[0]?.args).toEqual([
      { relayUrl: 'wss://relay.acme.example.com', relayTenant: 'acme' },
      'K7QX-2M4P-ZR9T',
    ]);
    expect(await axeViolations(refused.page)).toEqual([]);
    await expectClean(refused);
    await refused.close();

    const enrolled = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({ settings: { ...organisationManagedView, needsOnboarding: false } }),
      { viewport: { width: 720, height: 900 } },
    );
    await enrolled.page.getByLabel('Enrolment code').fill(' K7QX-2M4P-ZR9T ');
    await enrolled.page.getByRole('button', { name: 'Enrol', exact: true }).click();
    await expect
      .poll(() => enrolled.page.getByTestId('org-signed-in').textContent())
      .toBe('This computer is enrolled with your organisation’s relay.');
    expect((await enrolled.recorded('enrolInOrganisation'))[0]?.args[1]).toBe('K7QX-2M4P-ZR9T');
    expect(await enrolled.page.getByLabel('Enrolment code').inputValue()).toBe('');
    await enrolled.close();
  });

  it('signed in: the status says who and the phone section the relay’s extensions; Sign out says calls stop', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'settings',
      fixture({ settings: organisationView, status: organisationStatus }),
      { viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    await expect
      .poll(() => page.getByTestId('status-signed-in').textContent())
      .toBe('Signed in as alice.');
    expect(await page.getByTestId('org-extensions').textContent()).toBe(
      'Your extension, as your organisation’s relay says: 101.',
    );
    // The relay's address lives in Connection here: not again under Advanced, and no event source.
    expect(await page.getByLabel('Relay address').count()).toBe(1);
    expect(await page.getByRole('radio', { name: 'Relay' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect
      .poll(() => page.getByTestId('org-signed-in').textContent())
      .toBe('This computer is not signed in to your organisation yet.');
    expect(await page.getByTestId('save-status').textContent()).toBe(
      'Signed out. Calls stop until you sign in again.',
    );
    await expectClean(opened);
    await opened.close();
  });

  // One test per screen and look: six pages with axe each do not fit one test's time on a loaded machine.
  const screens = [
    { name: 'settings-organisation', settings: organisationView, status: () => organisationStatus },
    {
      name: 'settings-organisation-locked',
      settings: organisationManagedView,
      status: notSignedInStatus,
    },
  ];
  for (const screen of screens)
    for (const [scheme, locale] of [
      ['light', 'en'],
      ['dark', 'en'],
      ['light', 'ar'],
    ] as const)
      it(`screenshot ${screen.name} in ${locale}, ${scheme}: no sideways overflow, no axe violations`, async () => {
        const settings = { ...screen.settings, needsOnboarding: false };
        const opened = await openPage(
          getBrowser(),
          origin(),
          'settings',
          fixture({ settings, status: screen.status(createTranslator(locale)), locale }),
          { colorScheme: scheme, viewport: { width: 620, height: 760 }, fixedTime: SHOT_TIME },
        );
        await opened.page.getByTestId('org-panel').waitFor();
        const overflow = await opened.page.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        expect(overflow, `${screen.name} ${locale} ${scheme} overflows sideways`).toBe(0);
        expect(await axeViolations(opened.page)).toEqual([]);
        await screenshot(opened.page, `${screen.name}-${locale}-${scheme}`);
        // The part this change is about, at a size people can look at; with the whole page in
        // view, so that the sticky Save bar sits at the end instead of across the section.
        const height = Number(await opened.page.evaluate('document.documentElement.scrollHeight'));
        await opened.page.setViewportSize({ width: 620, height });
        await screenshot(
          opened.page.locator('#section-connection'),
          `${screen.name}-connection-${locale}-${scheme}`,
        );
        await expectClean(opened);
        await opened.close();
      });
});
