/**
 * Issue 21, items 8 and 9, in real Chromium:
 * - Mixed-direction text: every value from outside (a caller's name, company, number) starts at
 *   the window's start edge (left in English, right in Arabic) whatever its own script, while
 *   staying isolated (its own direction inside its bdi). Before, an Arabic name in the English
 *   popup sat flush right and a Latin name or number in the Arabic popup flush left: a zig-zag.
 * - Light mode: an editable field is not filled grey (read as disabled), and a field the
 *   organisation's policy locked looks unlike an editable one (fill and border, not only paler text).
 * Screenshots (light, dark, Arabic) go to test-results/screenshots/.
 */
import { expect, it } from 'vitest';
import { call, connectedView, fixture, managedView } from '../../rigs/browser/fixtures.ts';
import {
  computedStyle,
  fitsWhole,
  lineCount,
  openPage,
  SCREENSHOT_DIR,
  screenshot,
} from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';
import type { Locator } from 'playwright-core';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);

/**
 * How far a value's text sits from its block's start edge, in CSS px (0 = flush with the start):
 * the text's own box (a Range over it) against the content box of the element that holds it.
 */
function startGap(target: Locator, rtl: boolean): Promise<number> {
  // Runs in the page (the tests compile without the DOM library: the shapes it uses, typed here).
  interface Box {
    left: number;
    right: number;
  }
  interface Dom {
    document: {
      createRange(): { selectNodeContents(n: unknown): void; getBoundingClientRect(): Box };
    };
    getComputedStyle(e: unknown): Record<string, string>;
  }
  return target.evaluate((el, rtlPage) => {
    const dom = globalThis as unknown as Dom;
    const block = (el as unknown as { parentElement: { getBoundingClientRect(): Box } })
      .parentElement;
    const box = block.getBoundingClientRect();
    const style = dom.getComputedStyle(block);
    const px = (name: string) => parseFloat(style[name] ?? '0');
    const left = box.left + px('borderLeftWidth') + px('paddingLeft');
    const right = box.right - px('borderRightWidth') - px('paddingRight');
    const range = dom.document.createRange();
    range.selectNodeContents(el);
    const text = range.getBoundingClientRect();
    return Math.round(rtlPage ? right - text.right : text.left - left);
  }, rtl);
}

/** The vertical middle of the first line of text inside the located element, in CSS px. */
function firstLineMiddle(target: Locator): Promise<number> {
  interface Rect {
    top: number;
    height: number;
  }
  interface Dom {
    document: {
      createRange(): { selectNodeContents(n: unknown): void; getClientRects(): ArrayLike<Rect> };
    };
  }
  return target.evaluate((el) => {
    const range = (globalThis as unknown as Dom).document.createRange();
    range.selectNodeContents(el);
    const first = Array.from(range.getClientRects()).find((r) => r.height > 0);
    return first ? first.top + first.height / 2 : NaN;
  });
}

const ARABIC_NAME = 'محمد العلي';
const ARABIC_COMPANY = 'شركة النور للتجارة';

browserSuite('direction and fields', ({ browser: getBrowser, origin }) => {
  for (const locale of ['en', 'ar'] as const) {
    it(`aligns every caller value by the window's direction, each one isolated (${locale})`, async () => {
      const rtl = locale === 'ar';
      const calls = [
        call({
          callId: 'latin',
          callerName: 'Ada Lovelace',
          callerCompany: 'Analytical Engines Ltd',
          nameSource: 'contacts',
          startedAt: SHOT_TIME - 9_000,
        }),
        call({
          callId: 'arabic',
          callerName: ARABIC_NAME,
          callerCompany: ARABIC_COMPANY,
          nameSource: 'contacts',
          from: '+97145550123',
          startedAt: SHOT_TIME - 5_000,
        }),
        call({
          callId: 'number',
          callerName: null,
          nameSource: 'none',
          from: '+13125550175',
          startedAt: SHOT_TIME - 2_000,
        }),
      ];
      const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls, locale }), {
        viewport: { width: 360, height: 640 },
        fixedTime: SHOT_TIME,
      });
      const { page } = opened;
      await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(3);
      expect(await page.evaluate('document.documentElement.dir')).toBe(rtl ? 'rtl' : 'ltr');
      const gaps: Record<string, number> = {};
      for (const id of ['latin', 'arabic', 'number']) {
        const card = page.locator(`li[data-call-id="${id}"]`);
        gaps[`${id} headline`] = await startGap(card.getByTestId('caller-headline'), rtl);
        if (id !== 'number') {
          gaps[`${id} company`] = await startGap(card.getByTestId('caller-company'), rtl);
          gaps[`${id} number`] = await startGap(card.getByTestId('caller-number'), rtl);
        }
      }
      for (const [what, gap] of Object.entries(gaps)) {
        expect({ what, flushWithStart: Math.abs(gap) <= 1 }).toEqual({
          what,
          flushWithStart: true,
        });
      }
      // Still isolated: each value keeps its own direction inside its bdi.
      const arabic = page.locator('li[data-call-id="arabic"]').getByTestId('caller-headline');
      expect(await computedStyle(arabic, 'direction')).toBe('rtl');
      expect(await computedStyle(arabic, 'unicode-bidi')).toBe('isolate');
      const latin = page.locator('li[data-call-id="latin"]').getByTestId('caller-headline');
      expect(await computedStyle(latin, 'direction')).toBe('ltr');
      await screenshot(page.locator('.popup'), `popup-mixed-direction-${locale}-light`);
      await expectClean(opened);
      await opened.close();
    });
  }

  for (const scheme of ['light', 'dark'] as const) {
    it(`editable fields are not filled like disabled ones; locked ones look locked (${scheme})`, async () => {
      const opened = await openPage(
        getBrowser(),
        origin(),
        'settings',
        fixture({ settings: managedView }),
        { colorScheme: scheme, viewport: { width: 720, height: 900 } },
      );
      const { page } = opened;
      const locked = page.getByLabel('Service address');
      await expect.poll(() => locked.getAttribute('readonly')).not.toBeNull();
      const editable = page.locator('.field:not(.field--locked) input[type="text"]').first();
      expect(await editable.isEditable()).toBe(true);
      const editableFill = await computedStyle(editable, 'background-color');
      const lockedFill = await computedStyle(locked, 'background-color');
      if (scheme === 'light') expect(editableFill).toBe('rgb(255, 255, 255)');
      expect(lockedFill).not.toBe(editableFill);
      expect(await computedStyle(editable, 'border-top-style')).toBe('solid');
      expect(await computedStyle(locked, 'border-top-style')).toBe('dashed');
      // The locked value stays readable: the same text colour as an editable one.
      expect(await computedStyle(locked, 'color')).toBe(await computedStyle(editable, 'color'));
      await screenshot(
        page.locator('section').filter({ has: locked }).first(),
        `settings-fields-locked-${scheme}`,
      );
      await screenshot(
        page.locator('section').filter({ has: editable }).first(),
        `settings-fields-editable-${scheme}`,
      );
      await expectClean(opened);
      await opened.close();
    });
  }

  it('at 400 px: a done card keeps its outcome and time on one line; the "Besides calls" group has no default fieldset border; the proxy choice is shown whole', async () => {
    const calls = [
      call({
        callId: 'elsewhere',
        state: 'answered',
        outcome: 'answered-elsewhere',
        startedAt: SHOT_TIME - 20_000,
      }),
    ];
    const popup = await openPage(getBrowser(), origin(), 'popup', fixture({ calls }), {
      viewport: { width: 360, height: 300 },
      fixedTime: SHOT_TIME,
    });
    const card = popup.page.locator('li[data-call-id="elsewhere"]');
    await expect.poll(() => card.getAttribute('data-outcome')).toBe('answered-elsewhere');
    await screenshot(popup.page.locator('.popup'), 'popup-done-narrow-light');
    const status = await card.locator('.card__status').boundingBox();
    const time = await card.locator('.card__elapsed [aria-hidden="true"]').boundingBox();
    expect(status && time && Math.abs(status.y - time.y) <= 2).toBe(true);
    await expectClean(popup);
    await popup.close();

    const settings = await openPage(getBrowser(), origin(), 'settings', fixture(), {
      viewport: { width: 400, height: 800 },
    });
    const { page } = settings;
    const features = page.getByTestId('features');
    await features.waitFor();
    expect(await computedStyle(features, 'border-top-style')).toBe('none');
    // A select cannot wrap its chosen option: the proxy choice needs the text's width in the box.
    const proxy = page.getByLabel('Proxy', { exact: true });
    await proxy.selectOption('system');
    const room = await proxy.evaluate((el) => {
      const select = el as unknown as {
        clientWidth: number;
        selectedOptions: ArrayLike<{ text: string }>;
        ownerDocument: { createElement(t: string): unknown; body: { append(e: unknown): void } };
      };
      const probe = select.ownerDocument.createElement('span') as {
        textContent: string;
        style: Record<string, string>;
        getBoundingClientRect(): { width: number };
        remove(): void;
      };
      probe.textContent = select.selectedOptions[0]?.text ?? '';
      probe.style.font =
        (
          globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }
        ).getComputedStyle(el).font ?? '';
      probe.style.whiteSpace = 'nowrap';
      select.ownerDocument.body.append(probe);
      const width = probe.getBoundingClientRect().width;
      probe.remove();
      // The option's text plus the select's padding and its arrow (about 2.5 em at 16 px).
      return select.clientWidth - width - 40;
    });
    expect(room).toBeGreaterThanOrEqual(0);
    await screenshot(
      page.locator('section').filter({ has: proxy }).first(),
      'settings-advanced-400-light',
    );
    await screenshot(
      page.locator('section').filter({ has: features }).first(),
      'settings-features-400-light',
    );
    await expectClean(settings);
    await settings.close();
  });

  // Issue 21 item 10, the rest. Before (old CSS, en and ar): the section links took 4 rows; the
  // status's first line sat 7 px above its button's label; a named line's number went under the
  // "Called" label, on the band's second row (en: 63 px from the name's start; ar: name and number
  // both wrapped under the long label). Recorded: navRows 4, statusOffBy 6, numberPastLabel false.
  for (const [locale, scheme] of [
    ['en', 'light'],
    ['ar', 'dark'],
  ] as const) {
    it(`at 400 px the section links take one row; the status lines up with its button; a line's number stays whole under its name (${locale}, ${scheme})`, async () => {
      const settings = await openPage(
        getBrowser(),
        origin(),
        'settings',
        fixture({ settings: connectedView, locale }),
        { viewport: { width: 400, height: 700 }, colorScheme: scheme },
      );
      const { page } = settings;
      const links = page.locator('.section-nav__link');
      await links.first().waitFor();
      const tops = await links.evaluateAll((els) =>
        els.map((e) =>
          Math.round(
            (e as unknown as { getBoundingClientRect(): { top: number } }).getBoundingClientRect()
              .top,
          ),
        ),
      );
      expect(tops.length).toBeGreaterThanOrEqual(6);
      await page.screenshot({
        path: `${SCREENSHOT_DIR}settings-top-400-${locale}-${scheme}.png`,
        clip: { x: 0, y: 0, width: 400, height: 360 },
        animations: 'disabled',
      });
      // The page itself does not scroll sideways (only the row of links may), and the last link
      // can be reached: scrolled to, whole, and it goes to its section.
      const pageWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
      const last = links.last();
      await last.scrollIntoViewIfNeeded();
      const lastBox = await last.boundingBox();
      const lastWhole = !!lastBox && lastBox.x >= 0 && lastBox.x + lastBox.width <= 400;
      await last.click();
      await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('advanced-title');

      // Beside its button (a wide window), the status's first line and the button's label share a
      // middle.
      await page.setViewportSize({ width: 720, height: 700 });
      const panel = page.locator('.status-panel');
      await panel.scrollIntoViewIfNeeded();
      const textMiddle = await firstLineMiddle(panel.locator('.status-panel__text'));
      const buttonMiddle = await firstLineMiddle(panel.locator('.status-panel__actions button'));
      await screenshot(panel, `settings-status-720-${locale}-${scheme}`);
      await expectClean(settings);
      await settings.close();

      const popup = await openPage(
        getBrowser(),
        origin(),
        'popup',
        fixture({
          locale,
          calls: [
            call({
              callId: 'line',
              to: '+442079460958',
              toName: 'Sales and support line',
              startedAt: SHOT_TIME - 7_000,
            }),
          ],
        }),
        { viewport: { width: 360, height: 300 }, colorScheme: scheme, fixedTime: SHOT_TIME },
      );
      const band = popup.page.locator('li[data-call-id="line"]').getByTestId('called-line');
      await band.waitFor();
      const number = band.getByTestId('called');
      const numberBox = await number.boundingBox();
      const nameBox = await band.getByTestId('called-name').boundingBox();
      const labelBox = await band.locator('.card__label').boundingBox();
      if (!numberBox || !nameBox || !labelBox) throw new Error('no box');
      const rtl = locale === 'ar';
      const startOf = (b: { x: number; width: number }) => (rtl ? b.x + b.width : b.x);
      const endOf = (b: { x: number; width: number }) => (rtl ? b.x : b.x + b.width);
      // How far the number starts past the label's end edge (negative: under the label).
      const pastLabel = Math.round(
        rtl ? endOf(labelBox) - startOf(numberBox) : startOf(numberBox) - endOf(labelBox),
      );
      const seen = {
        navRows: new Set(tops).size,
        pageWidth,
        lastWhole,
        statusOffBy: Math.round(Math.abs(textMiddle - buttonMiddle)),
        numberLines: await lineCount(number),
        numberWhole: await fitsWhole(number),
        numberFromNameStart: Math.round(Math.abs(startOf(numberBox) - startOf(nameBox))),
        numberPastLabel: pastLabel > 0,
      };
      await screenshot(popup.page.locator('.popup'), `popup-named-line-360-${locale}-${scheme}`);
      await expectClean(popup);
      await popup.close();
      expect(seen).toEqual({
        navRows: 1,
        pageWidth: 400,
        lastWhole: true,
        statusOffBy: expect.toSatisfy((n: number) => n <= 1) as number,
        numberLines: 1,
        numberWhole: true,
        numberFromNameStart: expect.toSatisfy((n: number) => n <= 1) as number,
        numberPastLabel: true,
      });
    });
  }
});
