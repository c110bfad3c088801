/**
 * Call actions on the popup (issue 38) in real Chromium under the production CSP: Call back on a
 * missed call, Transfer and Hang up on a call the user answered, Answer and Decline on a ringing
 * call, each only where the phone system offers it; the transfer field by keyboard (Escape closes
 * it, not the card); screenshots in light, dark and Arabic. One browser launch for the file.
 */
import { expect, it } from 'vitest';
import type { CallAction, CallCard } from '../../src-main/ipc/contract.ts';
import { call, fixture } from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);
const ALL: CallAction[] = ['dial', 'transfer', 'hangup'];

const cards = (): CallCard[] => [
  call({ callId: 'a1', state: 'answered', startedAt: SHOT_TIME - 40_000 }),
  call({
    callId: 'm1',
    state: 'ended',
    outcome: 'missed',
    callerName: null,
    nameSource: 'none',
    from: '+13125550175',
    startedAt: SHOT_TIME - 20_000,
  }),
];

browserSuite('popup call actions in Chromium', ({ browser: getBrowser, origin }) => {
  it('shows no call button where the phone system offers none', async () => {
    const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls: cards() }));
    const { page } = opened;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(2);
    expect(await page.locator('button[data-action]').count()).toBe(0);
    expect((await opened.recorded('callActionsOffered')).length).toBeGreaterThan(0);
    await expectClean(opened);
    await opened.close();
  });

  it('Call back, Transfer (by keyboard; Escape closes the field, not the card) and Hang up, without taking focus', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({ calls: cards(), offered: ALL }),
    );
    const { page } = opened;
    const answered = page.locator('li[data-call-id="a1"]');
    const missed = page.locator('li[data-call-id="m1"]');
    await expect
      .poll(() => answered.getByRole('button', { name: 'Transfer', exact: true }).count())
      .toBe(1);
    expect(await page.evaluate('document.activeElement === document.body')).toBe(true);
    expect(await answered.getByRole('button', { name: 'Hang up' }).count()).toBe(1);
    expect(await answered.getByRole('button', { name: 'Call back' }).count()).toBe(0);
    expect(await missed.getByRole('button', { name: 'Call back' }).count()).toBe(1);
    expect(await missed.getByRole('button', { name: 'Transfer', exact: true }).count()).toBe(0);

    await missed.getByRole('button', { name: 'Call back' }).click();
    expect((await opened.recorded('callBack')).map((c) => c.args)).toEqual([['m1']]);
    await expect
      .poll(() => page.getByTestId('call-news').textContent())
      .toContain('Your phone rings first');

    const transfer = answered.getByRole('button', { name: 'Transfer', exact: true });
    await transfer.focus();
    await page.keyboard.press('Enter');
    expect(await transfer.getAttribute('aria-expanded')).toBe('true');
    const field = answered.getByLabel('Transfer to (extension or number)');
    await expect.poll(() => page.evaluate('document.activeElement?.type')).toBe('tel');
    // Escape closes the field; the card stays.
    await page.keyboard.press('Escape');
    expect(await field.count()).toBe(0);
    expect(await answered.count()).toBe(1);
    expect((await opened.recorded('dismiss')).length).toBe(0);

    await transfer.click();
    await field.fill('204');
    await page.keyboard.press('Enter');
    expect((await opened.recorded('transferCall')).map((c) => c.args)).toEqual([['a1', '204']]);
    await answered.getByRole('button', { name: 'Hang up' }).click();
    expect((await opened.recorded('hangUp')).map((c) => c.args)).toEqual([['a1']]);
    await expectClean(opened);
    await opened.close();
  });

  it('says the phone system’s refusal in a status line', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({
        calls: cards(),
        offered: ALL,
        callActionResult: {
          ok: false,
          refusal: 'permission',
          message:
            'The phone system refused: the API application lacks the Call Control permission.',
        },
      }),
    );
    const { page } = opened;
    await page.locator('li[data-call-id="m1"]').getByRole('button', { name: 'Call back' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'permission' }).count())
      .toBe(1);
    await opened.close();
  });

  it('History: Call back on each row only where dialling is offered, named for screen readers', async () => {
    const none = await openPage(getBrowser(), origin(), 'history', fixture());
    await expect.poll(() => none.page.locator('li[data-call-id]').count()).toBeGreaterThan(0);
    expect(await none.page.locator('button[data-action="call-back"]').count()).toBe(0);
    await none.close();

    const opened = await openPage(getBrowser(), origin(), 'history', fixture({ offered: ALL }));
    const { page } = opened;
    const row = page.locator('li[data-call-id="h2"]');
    await expect.poll(() => row.locator('button[data-action="call-back"]').count()).toBe(1);
    const button = row.getByRole('button', { name: /^Call back / });
    expect(await button.count()).toBe(1);
    await button.click();
    expect((await opened.recorded('callBackFromHistory')).map((c) => c.args)).toEqual([['h2']]);
    await expect
      .poll(() => page.getByTestId('call-news').textContent())
      .toContain('Your phone rings first');
    await expectClean(opened);
    await opened.close();
  });

  for (const [scheme, locale] of [
    ['light', 'en'],
    ['dark', 'en'],
    ['light', 'ar'],
  ] as const) {
    it(`screenshot: Call back, Transfer and Hang up (${locale}, ${scheme})`, async () => {
      const opened = await openPage(
        getBrowser(),
        origin(),
        'popup',
        fixture({ calls: cards(), offered: ALL, locale }),
        { colorScheme: scheme, viewport: { width: 360, height: 560 }, fixedTime: SHOT_TIME },
      );
      const { page } = opened;
      const answered = page.locator('li[data-call-id="a1"]');
      await expect.poll(() => page.locator('button[data-action]').count()).toBe(3);
      await answered.locator('button[data-action="transfer"]').click();
      await answered.locator('input[type="tel"]').fill('204');
      await screenshot(page.locator('.popup'), `popup-call-actions-${locale}-${scheme}`);
      await expectClean(opened);
      await opened.close();
    });
  }
});
