/**
 * Remote answer on the popup (uaCSTA, issue 38 item 4) in real Chromium under the production CSP:
 * Answer and Decline on a ringing call only where main says its desk-phone call is certain; where
 * it is not, no buttons and the reason on the card (a status line with the same words as its
 * tooltip); the press sends the card's id. Screenshots in light, dark and Arabic.
 */
import { expect, it } from 'vitest';
import type { CallAction, CallCard, RemoteAnswerView } from '../../src-main/ipc/contract.ts';
import { call, fixture } from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { phrase, render } from '../../src-shared/i18n/phrase.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);
const WITH_ANSWER: CallAction[] = ['dial', 'transfer', 'hangup', 'answer', 'decline'];

const cards = (): CallCard[] => [
  call({ callId: 'r1', to: '101', startedAt: SHOT_TIME - 4_000 }),
  call({
    callId: 'r2',
    to: '102',
    from: '+13125550175',
    callerName: null,
    nameSource: 'none',
    startedAt: SHOT_TIME - 2_000,
  }),
];

/** r1 certain; r2 not: its phone reported no ring (main's words, in `locale`). */
const remote = (locale: 'en' | 'ar'): Record<string, RemoteAnswerView> => ({
  r1: { offered: true },
  r2: {
    offered: false,
    why: render([phrase('status.call.uacsta.no-report')], createTranslator(locale)),
  },
});

browserSuite('popup remote answer in Chromium', ({ browser: getBrowser, origin }) => {
  it('Answer and Decline only on the call whose desk-phone call is certain; the reason on the other', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({ calls: cards(), offered: WITH_ANSWER, remoteAnswer: remote('en') }),
    );
    const { page } = opened;
    const certain = page.locator('li[data-call-id="r1"]');
    const unsure = page.locator('li[data-call-id="r2"]');
    await expect.poll(() => certain.getByRole('button', { name: 'Answer' }).count()).toBe(1);
    expect(await certain.getByRole('button', { name: 'Decline' }).count()).toBe(1);
    expect(await certain.getByTestId('remote-answer-why').count()).toBe(0);
    expect(await unsure.getByRole('button', { name: 'Answer' }).count()).toBe(0);
    expect(await unsure.getByRole('button', { name: 'Decline' }).count()).toBe(0);
    const why = unsure.getByTestId('remote-answer-why');
    await expect.poll(() => why.textContent()).toContain('has not reported it ringing');
    expect(await why.getAttribute('title')).toContain('has not reported it ringing');
    // Asked per ringing call, by id.
    const asked = (await opened.recorded('remoteAnswer')).map((c) => c.args[0]);
    expect(new Set(asked)).toEqual(new Set(['r1', 'r2']));

    await certain.getByRole('button', { name: 'Answer' }).click();
    expect((await opened.recorded('answerCall')).map((c) => c.args)).toEqual([['r1']]);
    await certain.getByRole('button', { name: 'Decline' }).click();
    expect((await opened.recorded('declineCall')).map((c) => c.args)).toEqual([['r1']]);
    await expectClean(opened);
    await opened.close();
  });

  it('remote answer off (not offered): no buttons, no reason, nothing asked', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({ calls: cards(), offered: ['dial'], remoteAnswer: remote('en') }),
    );
    const { page } = opened;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(await page.locator('button[data-action="answer"]').count()).toBe(0);
    expect(await page.getByTestId('remote-answer-why').count()).toBe(0);
    expect(await opened.recorded('remoteAnswer')).toEqual([]);
    await opened.close();
  });

  for (const [scheme, locale] of [
    ['light', 'en'],
    ['dark', 'en'],
    ['light', 'ar'],
  ] as const) {
    it(`screenshot: Answer and Decline, and the reason where not certain (${locale}, ${scheme})`, async () => {
      const opened = await openPage(
        getBrowser(),
        origin(),
        'popup',
        fixture({ calls: cards(), offered: WITH_ANSWER, remoteAnswer: remote(locale), locale }),
        { colorScheme: scheme, viewport: { width: 360, height: 620 }, fixedTime: SHOT_TIME },
      );
      const { page } = opened;
      await expect.poll(() => page.locator('button[data-action="answer"]').count()).toBe(1);
      await expect.poll(() => page.getByTestId('remote-answer-why').count()).toBe(1);
      await screenshot(page.locator('.popup'), `popup-remote-answer-${locale}-${scheme}`);
      await expectClean(opened);
      await opened.close();
    });
  }
});
