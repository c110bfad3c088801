/**
 * The dial box (issue 38, tray menu "Call a number…") in real Chromium under the production CSP:
 * the number field has focus when the window opens, Enter or Call dials what was typed, the answer
 * is said in a status line (calling, or the refusal in words), Escape closes the window; labelled
 * for screen readers; screenshots in light, dark and Arabic. One browser launch for the file.
 */
import { expect, it } from 'vitest';
import { fixture } from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';

browserSuite('the dial box in Chromium', ({ browser: getBrowser, origin }) => {
  it('focuses the number, dials on Enter and on Call, says the answer, closes on Escape', async () => {
    const opened = await openPage(getBrowser(), origin(), 'dial', fixture());
    const { page } = opened;
    const field = page.getByLabel('Number to call');
    await expect.poll(() => field.count()).toBe(1);
    await expect.poll(() => page.evaluate('document.activeElement?.type')).toBe('tel');
    expect(await page.getByRole('heading', { name: 'Call a number' }).count()).toBe(1);
    expect(await page.title()).toBe('Call a number');
    // Nothing typed: Call does nothing.
    expect(await page.getByRole('button', { name: 'Call' }).isDisabled()).toBe(true);
    await page.keyboard.type('020 7946 0000');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByTestId('dial-news').textContent())
      .toContain('Calling 020 7946 0000');
    await page.getByRole('button', { name: 'Call' }).click();
    expect((await opened.recorded('dialNumber')).map((c) => c.args)).toEqual([
      ['020 7946 0000'],
      ['020 7946 0000'],
    ]);
    expect(await field.getAttribute('maxlength')).toBe('64');
    await page.keyboard.press('Escape');
    await expect.poll(async () => (await opened.recorded('closeWindow')).length).toBe(1);
    await expectClean(opened);
    await opened.close();
  });

  it('says the phone system’s refusal in words', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'dial',
      fixture({
        callActionResult: {
          ok: false,
          refusal: 'not-offered',
          message: 'Calls are not offered by this phone system.',
        },
      }),
    );
    const { page } = opened;
    await page.getByLabel('Number to call').fill('+14155550123');
    await page.getByRole('button', { name: 'Call' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe('Calls are not offered by this phone system.');
    await opened.close();
  });

  for (const [scheme, locale] of [
    ['light', 'en'],
    ['dark', 'en'],
    ['light', 'ar'],
  ] as const) {
    it(`screenshot: the dial box (${locale}, ${scheme})`, async () => {
      const opened = await openPage(getBrowser(), origin(), 'dial', fixture({ locale }), {
        colorScheme: scheme,
        viewport: { width: 380, height: 260 },
      });
      const { page } = opened;
      await expect.poll(() => page.locator('input[type="tel"]').count()).toBe(1);
      await page.locator('input[type="tel"]').fill('+44 20 7946 0000');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.getByTestId('dial-news').textContent()).not.toBe('');
      await screenshot(page.locator('body'), `dial-box-${locale}-${scheme}`);
      await expectClean(opened);
      await opened.close();
    });
  }
});
