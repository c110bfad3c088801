/**
 * The note card (issue 39) in real Chromium, built by Vite and served under the production CSP,
 * with the preload API replaced by a typed double: the card of a call the user answered keeps a
 * note and the outcome choices; nothing takes focus by itself (the popup is shown inactive); N or
 * a click puts the cursor in the note; Enter logs (popup:save-note with submit), Shift+Enter is a
 * new line; hostile text stays text. Light, dark and Arabic screenshots. One browser launch.
 */
import { expect, it } from 'vitest';
import type { CallCard, CallNoteInput } from '../../src-main/ipc/contract.ts';
import { call, connectedView, entry, fixture } from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { axeViolations } from './support/axe.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const SHOT_TIME = Date.UTC(2026, 10, 28, 9, 30, 0);

/** A call the user answered: talking (closesAt null), or ended and logging in 1 min 45 s. */
function answered(callId: string, closesAt: number | null, logged = false): CallCard {
  return call({
    callId,
    startedAt: SHOT_TIME - 4 * 60_000,
    endedAt: SHOT_TIME - 3 * 60_000,
    state: closesAt === null ? 'answered' : 'ended',
    outcome: 'answered',
    note: {
      text: '',
      disposition: null,
      choices: ['Resolved', 'Follow-up', 'Left a message', 'Wrong number'],
      closesAt,
      logged,
    },
  });
}

const saved = (calls: Array<{ args: unknown[] }>): Array<[unknown, CallNoteInput]> =>
  calls.map((c) => [c.args[0], c.args[1] as CallNoteInput]);

browserSuite('the note card in Chromium', ({ browser: getBrowser, origin }) => {
  it('never takes focus; N puts the cursor in the note; Enter logs, Shift+Enter is a new line; the outcome is one of the list', async () => {
    const ringing = call({ callId: 'r1', startedAt: SHOT_TIME - 5_000 });
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({ calls: [ringing, answered('a1', SHOT_TIME + 105_000)] }),
      { fixedTime: SHOT_TIME },
    );
    const { page } = opened;
    const card = page.locator('li[data-call-id="a1"]');
    await expect.poll(() => card.getByTestId('note-text').count()).toBe(1);
    // Only the answered call has a note; a ringing card has none; nothing took focus.
    expect(await page.locator('li[data-call-id="r1"]').getByTestId('note-card').count()).toBe(0);
    expect(await page.evaluate('document.activeElement === document.body')).toBe(true);
    expect(await card.getByTestId('note-status').textContent()).toBe(
      'Logged in 1 min, 45 sec · Enter logs the call',
    );
    // A new ring arriving while the note card is up still takes no focus.
    await opened.emit('popup:calls', [
      call({ callId: 'r2', startedAt: SHOT_TIME }),
      ringing,
      answered('a1', SHOT_TIME + 105_000),
    ]);
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(3);
    expect(await page.evaluate('document.activeElement === document.body')).toBe(true);

    // The user clicks into the popup (its background), then presses N: the note has the cursor.
    await page.locator('h1').first().dispatchEvent('click');
    await page.keyboard.press('n');
    expect(await page.evaluate('document.activeElement?.tagName')).toBe('TEXTAREA');
    await page.keyboard.type('Wants a quote');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('<b>call back</b> Friday');
    await card.getByTestId('note-outcome').selectOption('Follow-up');
    await card.getByTestId('note-text').focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(async () => saved(await opened.recorded('saveNote')).filter(([, n]) => n.submit))
      .toEqual([
        [
          'a1',
          {
            text: 'Wants a quote\n<b>call back</b> Friday',
            disposition: 'Follow-up',
            submit: true,
          },
        ],
      ]);
    // Enter in the note did not open the CRM nor dismiss anything.
    expect(await opened.recorded('openCrm')).toEqual([]);
    expect(await opened.recorded('dismiss')).toEqual([]);
    // Markup typed stays text.
    expect(await card.locator('b').count()).toBe(0);
    // The options are exactly the configured list and "None".
    expect(await card.getByTestId('note-outcome').locator('option').allTextContents()).toEqual([
      'None',
      'Resolved',
      'Follow-up',
      'Left a message',
      'Wrong number',
    ]);
    // Main says it is logged: the card says so, and keeps the user's text.
    await opened.emit('popup:calls', [answered('a1', SHOT_TIME + 100_000, true)]);
    await expect
      .poll(() => card.getByTestId('note-status').textContent())
      .toBe('Logged · Enter logs the call');
    expect(await card.getByTestId('note-text').inputValue()).toBe(
      'Wants a quote\n<b>call back</b> Friday',
    );
    // The field holds at most 2,000 characters.
    expect(await card.getByTestId('note-text').getAttribute('maxlength')).toBe('2000');
    await expectClean(opened);
    await opened.close();
  });

  for (const [locale, scheme] of [
    ['en', 'light'],
    ['en', 'dark'],
    ['ar', 'light'],
    ['ar', 'dark'],
  ] as const) {
    it(`screenshots: talking and after the call (${locale}, ${scheme})`, async () => {
      const calls = [answered('t1', null), answered('a2', SHOT_TIME + 105_000)];
      const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls, locale }), {
        colorScheme: scheme,
        viewport: { width: 360, height: 640 },
        fixedTime: SHOT_TIME,
      });
      const { page } = opened;
      await expect.poll(() => page.getByTestId('note-card').count()).toBe(2);
      const talking = page.locator('li[data-call-id="t1"]');
      expect(await talking.getByTestId('note-status').textContent()).toBe(
        locale === 'ar'
          ? 'تُسجَّل عند انتهاء المكالمة · مفتاح Enter يسجّل المكالمة'
          : 'Logged when the call ends · Enter logs the call',
      );
      if (locale === 'ar') expect(await page.evaluate('document.documentElement.dir')).toBe('rtl');
      await page
        .locator('li[data-call-id="a2"]')
        .getByTestId('note-text')
        .fill(locale === 'ar' ? 'يريد عرض سعر، اتصل يوم الجمعة' : 'Wants a quote, call Friday');
      await page
        .locator('li[data-call-id="a2"]')
        .getByTestId('note-outcome')
        .selectOption('Follow-up');
      await page.evaluate('document.activeElement?.blur()');
      await screenshot(page.locator('.popup'), `popup-note-card-${locale}-${scheme}`);
      // Contrast, names of the note and outcome controls (axe-core), in each scheme and language.
      expect(await axeViolations(page)).toEqual([]);
      await expectClean(opened);
      await opened.close();
    });
  }

  for (const [locale, scheme] of [
    ['en', 'light'],
    ['ar', 'dark'],
  ] as const) {
    it(`History: voicemail and declined in words, the talk time, the note and outcome as text (${locale}, ${scheme})`, async () => {
      const entries = [
        entry({
          callId: 'n1',
          outcome: 'answered',
          startedAt: SHOT_TIME - 10 * 60_000,
          endedAt: SHOT_TIME - 10 * 60_000 + 8_000,
          talkSec: 87,
          note: 'Wants a quote\n<b>call back</b> Friday',
          disposition: 'Follow-up',
        }),
        entry({
          callId: 'v1',
          outcome: 'voicemail',
          startedAt: SHOT_TIME - 20 * 60_000,
          endedAt: SHOT_TIME - 20 * 60_000 + 25_000,
        }),
        entry({
          callId: 'd1',
          outcome: 'declined',
          startedAt: SHOT_TIME - 30 * 60_000,
          endedAt: SHOT_TIME - 30 * 60_000 + 3_000,
        }),
      ];
      const opened = await openPage(
        getBrowser(),
        origin(),
        'history',
        fixture({ history: entries, locale }),
        { colorScheme: scheme, fixedTime: SHOT_TIME },
      );
      const { page } = opened;
      await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(3);
      const words = async (id: string) =>
        page.locator(`li[data-call-id="${id}"]`).getAttribute('data-outcome');
      expect([await words('n1'), await words('v1'), await words('d1')]).toEqual([
        'answered',
        'voicemail',
        'declined',
      ]);
      const n1 = page.locator('li[data-call-id="n1"]');
      expect(await n1.getByTestId('history-note').textContent()).toBe(
        'Follow-up · Wants a quote <b>call back</b> Friday',
      );
      expect(await n1.locator('b').count()).toBe(0);
      if (locale === 'en') {
        expect(await page.locator('li[data-call-id="v1"]').textContent()).toContain('Voicemail');
        expect(await page.locator('li[data-call-id="d1"]').textContent()).toContain('Declined');
        expect(await n1.getByTestId('history-duration').textContent()).toBe(
          'after 8 sec, talked 1 min, 27 sec',
        );
      }
      await screenshot(page.locator('main'), `history-outcomes-note-${locale}-${scheme}`);
      await expectClean(opened);
      await opened.close();
    });
  }

  it('Settings: which calls are logged, the note’s seconds and the choices; a policy locks them', async () => {
    const view = {
      ...connectedView,
      managed: { by: 'Acme IT', locked: ['callLogCalls' as const, 'callLogChoices' as const] },
    };
    const opened = await openPage(getBrowser(), origin(), 'settings', fixture({ settings: view }), {
      viewport: { width: 720, height: 900 },
    });
    const { page } = opened;
    const which = page.getByLabel('Log calls into the CRM');
    await expect.poll(() => which.count()).toBe(1);
    expect(await which.inputValue()).toBe('answered');
    expect(await which.isDisabled()).toBe(true);
    expect(await which.locator('option').allTextContents()).toEqual([
      'Calls I answered, and calls I made that were answered',
      'Calls I answered or missed, and every call I made (answered, unanswered or busy)',
      'None',
    ]);
    const choices = page.getByLabel('Outcome choices (one a line)');
    expect(await choices.inputValue()).toBe('Resolved\nFollow-up\nLeft a message\nWrong number');
    expect(await choices.isEditable()).toBe(false);
    await which.scrollIntoViewIfNeeded();
    await screenshot(
      page.locator('section[aria-labelledby="crm-title"]'),
      'settings-call-log-locked-light',
    );
    expect(await page.locator('#field-callLogCalls-lock').textContent()).toContain(
      'Locked by Acme IT',
    );
    const seconds = page.getByLabel('Keep the note open after the call (seconds)');
    expect(await seconds.isEditable()).toBe(true);
    await seconds.fill('90');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await opened.recorded('saveSettings')).length).toBe(1);
    const patch = (await opened.recorded('saveSettings'))[0]?.args[0] as {
      settings: Record<string, unknown>;
    };
    expect(patch.settings).toEqual({ callNoteSec: 90 });

    expect(await axeViolations(page)).toEqual([]);
    await expectClean(opened);
    await opened.close();
  });
});
