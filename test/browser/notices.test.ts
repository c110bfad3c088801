/**
 * Voicemail and SMS rows in the history, the trunk warning and the phone's do-not-disturb above the
 * popup's calls, and the feature toggles and scope problems in Settings, in real Chromium under the
 * production CSP: hostile senders, names and message text (bidi overrides, markup and script,
 * 1,600 characters, zero-width characters, URLs) stay inert text; light, dark and 200 %.
 * The items are made the way main makes them (NoticePresenter's text rules), so what is tested is
 * what the page would get.
 */
import { expect, it } from 'vitest';
import { displayText, messageText } from '../../src-shared/ui/text.ts';
import type {
  HistoryItem,
  SmsEntry,
  StatusView,
  VoicemailEntry,
} from '../../src-main/ipc/contract.ts';
import {
  call,
  connectedStatus,
  connectedView,
  entry,
  fixture,
} from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);
const MIN = 60_000;

const HOSTILE = {
  rtl: '\u202Egnp.exe\u202C Mallory',
  markup: '<img src=x onerror=alert(1)><script>alert(2)</script>',
  zeroWidth: 'Pay\u200Bpal\u200D Support\uFEFF',
  url: 'Your parcel: https://evil.example/track?id=1 javascript:alert(3)',
};
const LONG_TEXT = `${'A long message. '.repeat(99)}END!`.slice(0, 1600);

function voicemail(over: Partial<VoicemailEntry> & { callId: string }): VoicemailEntry {
  return {
    kind: 'voicemail',
    from: '+4930123456',
    fromDisplay: '+49 30 123456',
    callerName: null,
    to: '101',
    toDisplay: '101',
    toName: null,
    startedAt: SHOT_TIME - MIN,
    durationSec: 42,
    seen: false,
    ...over,
  };
}

function sms(over: Partial<SmsEntry> & { callId: string }): SmsEntry {
  return {
    kind: 'sms',
    from: '+4930123456',
    fromDisplay: '+49 30 123456',
    callerName: null,
    to: '+14155550100',
    toDisplay: '(415) 555-0100',
    toName: 'Sales line',
    startedAt: SHOT_TIME - 2 * MIN,
    text: 'Can you call me back about the order?',
    textTruncated: false,
    seen: false,
    ...over,
  };
}

/** A history with calls, voicemails and messages whose outside text is hostile, cleaned as main cleans it. */
function mixedHistory(): HistoryItem[] {
  return [
    voicemail({ callId: 'voicemail:v1', callerName: 'Ada Lovelace', startedAt: SHOT_TIME - MIN }),
    voicemail({
      callId: 'voicemail:v2',
      callerName: displayText(HOSTILE.rtl),
      from: HOSTILE.markup,
      fromDisplay: displayText(HOSTILE.markup),
      durationSec: 125,
      startedAt: SHOT_TIME - 3 * MIN,
    }),
    sms({
      callId: 'sms:m1',
      from: HOSTILE.zeroWidth,
      fromDisplay: displayText(HOSTILE.zeroWidth),
      text: messageText(`${HOSTILE.url}\n${HOSTILE.markup}\n${HOSTILE.rtl}`),
      startedAt: SHOT_TIME - 2 * MIN,
    }),
    sms({
      callId: 'sms:m2',
      text: messageText(LONG_TEXT),
      textTruncated: true,
      startedAt: SHOT_TIME - 4 * MIN,
    }),
    entry({
      callId: 'c1',
      callerName: 'Grace Hopper',
      startedAt: SHOT_TIME - 5 * MIN,
      endedAt: SHOT_TIME - 5 * MIN + 20_000,
      outcome: 'missed',
    }),
  ];
}

const TRUNK_DOWN: StatusView = {
  ...connectedStatus,
  trunkWarning: {
    trunks: ['SIP-Main', 'B<b>'],
    message: `Calls from outside may not reach you: trunks ${displayText('B\u202E<b>')}, SIP-Main are not registered.`,
  },
  presence: { status: 'do_not_disturb', label: 'Do not disturb', doNotDisturb: true },
  featureProblems: [
    {
      feature: 'sms',
      reason: 'SMS is off: the key may not receive event code 30031.',
      remedy:
        'In the admin console, edit the API key and grant the missing scope. Missing: event:30031.',
    },
  ],
};

browserSuite('voicemail, SMS and trunk status in Chromium', ({ browser: getBrowser, origin }) => {
  it('history: voicemail and SMS rows keep hostile text inert (no element, no link), clamp 1,600 characters, and filter and search', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'history',
      fixture({ history: mixedHistory(), settings: connectedView }),
      { fixedTime: SHOT_TIME, viewport: { width: 720, height: 900 } },
    );
    const { page } = opened;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(5);
    // Nothing the outside wrote became an element, a link or ran.
    expect(await page.locator('.entries a, .entries img, .entries script').count()).toBe(0);
    const m1 = page.locator('li[data-call-id="sms:m1"]');
    const text = (await m1.getByTestId('history-message').textContent()) ?? '';
    expect(text).toContain('https://evil.example/track?id=1');
    expect(text).toContain('<script>alert(2)</script>');
    expect(text).not.toMatch(/[\u202A-\u202E\u200B-\u200F\uFEFF]/);
    // The bdi isolates each value: the row's own words keep their order.
    expect(await m1.locator('bdi[dir="auto"]').count()).toBeGreaterThan(2);
    // 1,600 characters: all in the DOM, three lines on screen.
    const long = page.locator('li[data-call-id="sms:m2"]').getByTestId('history-message');
    expect(((await long.textContent()) ?? '').length).toBeGreaterThan(1600);
    const box = await long.locator('bdi').boundingBox();
    expect(box?.height ?? 999).toBeLessThan(80);
    expect(await long.textContent()).toContain('cut at 1,600 characters');
    // Voicemail words: who, for which line, how long (never like a clock time).
    const v1 = page.locator('li[data-call-id="voicemail:v1"]');
    expect(await v1.textContent()).toContain('Voicemail');
    expect(await v1.getByTestId('history-duration').textContent()).toBe('42 sec');
    expect(
      await page
        .locator('li[data-call-id="voicemail:v2"]')
        .getByTestId('history-duration')
        .textContent(),
    ).toBe('2 min, 5 sec');
    // The filters by kind, and a search in message text.
    expect(await page.locator('.history__summary').textContent()).toBe(
      '1 call, 1 missed, 2 voicemails, 2 messages',
    );
    await page.getByRole('radio', { name: /^Voicemail/ }).check();
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(2);
    await page.getByRole('radio', { name: /^SMS/ }).check();
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(2);
    await page.getByRole('radio', { name: /^All/ }).check();
    await page.getByRole('searchbox', { name: 'Search' }).fill('parcel');
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(1);
    // A row's actions work for these kinds too.
    await page.getByRole('button', { name: /^Copy number of/ }).click();
    expect((await opened.recorded('copyHistoryNumber'))[0]?.args).toEqual(['sms:m1']);
    await expectClean(opened);
    await opened.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`screenshots: history with voicemail and SMS, 720 px and 200 % (${scheme})`, async () => {
      const fix = fixture({ history: mixedHistory(), settings: connectedView });
      const wide = await openPage(getBrowser(), origin(), 'history', fix, {
        colorScheme: scheme,
        viewport: { width: 720, height: 700 },
        fixedTime: SHOT_TIME,
      });
      await expect.poll(() => wide.page.locator('li[data-call-id]').count()).toBe(5);
      await screenshot(wide.page, `history-notices-${scheme}`);
      await expectClean(wide);
      await wide.close();
      const zoomed = await openPage(getBrowser(), origin(), 'history', fix, {
        colorScheme: scheme,
        viewport: { width: 360, height: 800 },
        fixedTime: SHOT_TIME,
        zoom: 2,
      });
      const { page } = zoomed;
      await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(5);
      expect(
        await page.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        ),
      ).toBe(0);
      await screenshot(page, `history-notices-zoom200-${scheme}`);
      await expectClean(zoomed);
      await zoomed.close();
    });

    it(`popup: the trunk warning and the phone's do-not-disturb above the calls (${scheme}, 100 % and 200 %)`, async () => {
      const fix = fixture({
        calls: [call({ callId: 'c1', callerName: HOSTILE.markup, startedAt: SHOT_TIME - 4000 })],
        status: TRUNK_DOWN,
      });
      for (const zoom of [1, 2]) {
        const opened = await openPage(getBrowser(), origin(), 'popup', fix, {
          colorScheme: scheme,
          viewport: { width: zoom === 2 ? 190 : 380, height: 420 },
          fixedTime: SHOT_TIME,
          ...(zoom === 2 ? { zoom: 2 } : {}),
        });
        const { page } = opened;
        const warning = page.getByTestId('trunk-warning');
        await expect.poll(() => warning.count()).toBe(1);
        expect(await warning.textContent()).toBe(
          '⚠ Calls from outside may not reach you: trunks B<b>, SIP-Main are not registered.',
        );
        expect(await page.getByTestId('presence-dnd').textContent()).toContain('Do not disturb');
        expect(await page.locator('main b, main img, main script').count()).toBe(0);
        expect(
          await page.evaluate(
            'document.documentElement.scrollWidth - document.documentElement.clientWidth',
          ),
        ).toBe(0);
        await screenshot(page, `popup-trunk-warning${zoom === 2 ? '-zoom200' : ''}-${scheme}`);
        await expectClean(opened);
        await opened.close();
      }
    });
  }

  it('popup: the warning goes when the trunk is registered again', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({ calls: [call({ callId: 'c1' })], status: TRUNK_DOWN }),
      { fixedTime: SHOT_TIME },
    );
    const { page } = opened;
    await expect.poll(() => page.getByTestId('trunk-warning').count()).toBe(1);
    await opened.emit('status:changed', connectedStatus);
    await expect.poll(() => page.getByTestId('trunk-warning').count()).toBe(0);
    expect(await page.getByTestId('presence-dnd').count()).toBe(0);
    await expectClean(opened);
    await opened.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`settings: a feature without its scope says so with the remedy; one checkbox per feature (${scheme})`, async () => {
      const opened = await openPage(
        getBrowser(),
        origin(),
        'settings',
        fixture({ settings: connectedView, status: TRUNK_DOWN }),
        { colorScheme: scheme, viewport: { width: 560, height: 900 } },
      );
      const { page } = opened;
      const problem = page.getByTestId('status-feature-sms');
      await expect.poll(() => problem.count()).toBe(1);
      expect(await problem.textContent()).toContain('event:30031');
      expect(await page.getByTestId('status-trunk').textContent()).toContain(
        'Calls from outside may not reach you',
      );
      expect(await page.getByTestId('status-presence').textContent()).toContain('Do not disturb');
      const sms = page.getByRole('checkbox', { name: /Text messages/ });
      expect(await sms.isChecked()).toBe(true);
      await page.getByTestId('features').scrollIntoViewIfNeeded();
      await screenshot(page, `settings-features-${scheme}`);
      await sms.uncheck();
      await page.getByRole('button', { name: 'Save' }).first().click();
      await expect.poll(async () => (await opened.recorded('saveSettings')).length).toBe(1);
      const [patch] = ((await opened.recorded('saveSettings'))[0]?.args ?? []) as Array<{
        settings: { features?: Record<string, boolean> };
      }>;
      expect(patch?.settings.features).toEqual({
        voicemail: true,
        sms: false,
        trunk: true,
        presence: true,
      });
      await expectClean(opened);
      await opened.close();
    });
  }
});
