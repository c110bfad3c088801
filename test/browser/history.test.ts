/**
 * The history window in real Chromium under the production CSP, with the preload API replaced by
 * a typed double whose CRM and export hooks run main's real CRM builder and CSV writer: search,
 * filters, per-row Copy and CRM, the CSV a spreadsheet would open (hostile names made inert),
 * numbers formatted as in the popup, light, dark and 200 %. One browser launch for the file.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, expect, it } from 'vitest';
import { parseCsvRows } from '../../src-main/core/contacts/csv.ts';
import { buildCrmUrl } from '../../src-main/core/links/crm-url.ts';
import { historyToCsv } from '../../src-main/core/history/history-csv.ts';
import { writeFileAtomic } from '../../src-shared/files/atomic-file.ts';
import type { HistoryEntry } from '../../src-main/ipc/contract.ts';
import { WINDOW_SIZES } from '../../src-main/electron/window-sizes.ts';
import { connectedView, entry, fixture, history } from '../../rigs/browser/fixtures.ts';
import type { DoublePageGlobal } from '../../rigs/browser/api-double.ts';
import {
  childElementCount,
  contentWidth,
  fitsWhole,
  lineCount,
  openPage,
  screenshot,
} from '../../rigs/browser/page.ts';
import { axeViolations } from './support/axe.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);
const CRM = 'https://crm.example.com/search?phone={from}&name={caller_name}';

const HOSTILE_NAMES = {
  formula: '=HYPERLINK("https://evil.example","Click me")',
  plus: '+cmd|" /C calc"!A0',
  minus: '-2+3+cmd|" /C calc"!A0',
  at: '@SUM(1+1)*cmd|" /C calc"!A0',
  markup: '<img src=x onerror=alert(1)>',
  rtl: '\u202Egnp.exe\u202C',
  long: 'B'.repeat(5000),
};

/** History rows whose caller names come from hostile caller ID. */
function hostileHistory(now: number): HistoryEntry[] {
  return Object.entries(HOSTILE_NAMES).map(([id, name], i) =>
    entry({
      callId: id,
      callerName: name,
      from: id === 'plus' ? '+14155550123' : `+1415555010${i}`,
      startedAt: now - (i + 1) * 60_000,
      endedAt: now - (i + 1) * 60_000 + 9_000,
      outcome: i % 2 ? 'missed' : 'answered',
    }),
  );
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** The row a notification click selected (aria-current), the focused row, and whether it is in view. */
async function selection(page: Page) {
  return page.evaluate(() => {
    const d = (globalThis as unknown as { document: DomQuery; innerHeight: number }).document;
    const current = d.querySelectorAll('li[aria-current="true"]');
    const row = current[0];
    const box = row?.getBoundingClientRect();
    return {
      current: Array.from(current).map((li) => li.getAttribute('data-call-id')),
      focused: d.activeElement?.getAttribute('data-call-id') ?? null,
      inView:
        box !== undefined &&
        box.top >= 0 &&
        box.bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight,
      news: d.querySelector('[data-testid="selected-news"]')?.textContent ?? null,
    };
  });
}
interface DomElement {
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { top: number; bottom: number };
  textContent: string | null;
}
interface DomQuery {
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  querySelector(selector: string): DomElement | null;
  activeElement: DomElement | null;
}

/** True when the located element's children share one line (their boxes overlap vertically). */
async function childrenOnOneLine(target: Locator): Promise<boolean> {
  const boxes = await target
    .locator(':scope > *')
    .evaluateAll((els) =>
      els.map((e) =>
        (
          e as unknown as { getBoundingClientRect(): { top: number; bottom: number } }
        ).getBoundingClientRect(),
      ),
    );
  return Math.max(...boxes.map((b) => b.top)) < Math.min(...boxes.map((b) => b.bottom));
}

browserSuite('history in Chromium', ({ browser: getBrowser, origin }) => {
  it('lists the calls and marks missed ones seen on open, with durations that are not clock times', async () => {
    // A frozen clock: the ringing call has rung for exactly 3 minutes however slow the machine.
    const opened = await openPage(
      getBrowser(),
      origin(),
      'history',
      fixture({ history: history(SHOT_TIME) }),
      { fixedTime: SHOT_TIME },
    );
    const { page } = opened;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(6);
    expect(await page.locator('li[data-outcome="missed"]').count()).toBe(2);
    expect(await page.locator('li[data-call-id="h2"]').textContent()).toContain('New');
    expect((await opened.recorded('markHistorySeen')).length).toBe(1);
    const durations = await page.getByTestId('history-duration').allTextContents();
    expect(durations).toEqual([
      'for 3 min',
      'after 30 sec',
      'after 8 min',
      'after 12 sec',
      'after 40 sec',
      'after 1 min, 35 sec',
    ]);
    for (const d of durations) expect(d).not.toMatch(/\d:\d\d/);
    // Numbers and extensions read as on the popup's cards.
    const h3 = page.locator('li[data-call-id="h3"]');
    expect(await h3.getByTestId('history-number').textContent()).toBe('Ext. 205');
    expect(await h3.getByTestId('history-called').textContent()).toBe('CalledExt. 101');
    const h2 = page.locator('li[data-call-id="h2"]');
    expect(await h2.getByTestId('history-caller').textContent()).toBe('+44 20 7946 0958');
    expect(await h2.getByTestId('history-called').textContent()).toBe(
      'CalledSales line(415) 555-0100',
    );
    await expectClean(opened);
    await opened.close();
  });

  it('a notification click selects its call: asked before the list answered, after it, and pushed to an open window; an unknown id selects nothing', async () => {
    // Opening: the selection (history:selection) is answered while the list is still held.
    const opening = await openPage(
      getBrowser(),
      origin(),
      'history',
      fixture({ history: history(SHOT_TIME), holdHistory: true, historySelection: 'h5' }),
      { fixedTime: SHOT_TIME, viewport: { width: 400, height: 420 } },
    );
    const p1 = opening.page;
    await expect.poll(async () => (await opening.recorded('takeHistorySelection')).length).toBe(1);
    await p1.getByText('Loading…').waitFor();
    expect((await selection(p1)).current).toEqual([]);
    await p1.evaluate(() => (globalThis as unknown as DoublePageGlobal).__double?.releaseHistory());
    // h5, the oldest row, far below the fold of a short window: scrolled to and focused.
    await expect.poll(async () => (await selection(p1)).current).toEqual(['h5']);
    expect(await selection(p1)).toEqual({
      current: ['h5'],
      focused: 'h5',
      inView: true,
      news: 'Selected: (650) 555-0144',
    });
    expect(await axeViolations(p1)).toEqual([]);
    await screenshot(p1, 'history-selected-light', false);
    await expectClean(opening);
    await opening.close();

    // The list first, then the selection (a page that subscribed and answered before the click).
    const open = await openPage(
      getBrowser(),
      origin(),
      'history',
      fixture({ history: history(SHOT_TIME) }),
      { fixedTime: SHOT_TIME, colorScheme: 'dark', viewport: { width: 720, height: 600 } },
    );
    const p2 = open.page;
    await expect.poll(() => p2.locator('li[data-call-id]').count()).toBe(6);
    // A filter that hides the call: the click shows it anyway.
    await p2.getByRole('radio', { name: /^Answered/ }).check();
    await expect.poll(() => p2.locator('li[data-call-id]').count()).toBe(2);
    await open.emit('history:select', 'h2');
    await expect.poll(async () => (await selection(p2)).current).toEqual(['h2']);
    expect(await p2.getByRole('radio', { name: /^All/ }).isChecked()).toBe(true);
    expect((await selection(p2)).focused).toBe('h2');
    await screenshot(p2, 'history-selected-dark');
    // A call pruned since its notification: nothing selected, nothing said, no error.
    await open.emit('history:select', 'pruned-call');
    await expect.poll(async () => (await selection(p2)).current).toEqual([]);
    expect((await selection(p2)).news).toBeNull();
    expect(await p2.locator('li[data-call-id]').count()).toBe(6);
    await expectClean(open);
    await open.close();
  });

  it('searches and filters, copies a row’s number, and opens a row in the CRM through main’s builder', async () => {
    const entries = history(Date.now());
    const urls: string[] = [];
    const opened = await openPage(
      getBrowser(),
      origin(),
      'history',
      fixture({ history: entries }),
      {
        crmOpen: (callId) => {
          const e = entries.find((x) => x.callId === callId);
          if (!e) throw new Error(`unknown call ${callId}`);
          const built = buildCrmUrl(
            CRM,
            { from: e.from, to: e.to, call_id: e.callId, caller_name: e.callerName ?? '' },
            ['https'],
          );
          urls.push(built.ok ? built.url : `refused: ${built.message}`);
        },
      },
    );
    const { page } = opened;
    const rows = page.locator('li[data-call-id]');
    await expect.poll(() => rows.count()).toBe(6);
    const ids = async () =>
      Promise.all((await rows.all()).map((r) => r.getAttribute('data-call-id')));

    await page.getByRole('searchbox', { name: 'Search' }).fill('555 0199');
    await expect.poll(ids).toEqual(['h4']);
    await page.getByRole('searchbox', { name: 'Search' }).fill('sales');
    await expect.poll(ids).toEqual(['h2', 'h6', 'h4']);
    // The chip is a label: clicking its words picks the filter.
    await page.locator('[data-filter="missed"]').click();
    await expect.poll(ids).toEqual(['h2', 'h4']);
    await page.getByRole('searchbox', { name: 'Search' }).fill('');
    await page.getByRole('radio', { name: /^Answered/ }).check();
    await expect.poll(ids).toEqual(['h3', 'h6']);
    await page.getByRole('radio', { name: /^All/ }).check();
    await expect.poll(ids).toEqual(['h1', 'h2', 'h3', 'h6', 'h4', 'h5']);

    await page.getByRole('button', { name: 'Copy number of Grace Hopper' }).click();
    expect((await opened.recorded('copyHistoryNumber')).map((r) => r.args)).toEqual([['h3']]);
    await page.getByRole('button', { name: 'Copied number of Grace Hopper' }).waitFor();

    await page.getByRole('button', { name: 'Open in CRM Katherine Johnson' }).click();
    await page.getByRole('button', { name: 'Search CRM for +44 20 7946 0958' }).click();
    await expect
      .poll(() => urls)
      .toEqual([
        'https://crm.example.com/search?phone=%2B16175550199&name=Katherine%20Johnson',
        'https://crm.example.com/search?phone=%2B442079460958&name=',
      ]);
    // Esc in the search clears it; Esc again closes the window.
    await page.getByRole('searchbox', { name: 'Search' }).fill('ada');
    await page.keyboard.press('Escape');
    expect(await page.getByRole('searchbox', { name: 'Search' }).inputValue()).toBe('');
    expect(await opened.recorded('closeWindow')).toEqual([]);
    await page.keyboard.press('Escape');
    expect((await opened.recorded('closeWindow')).length).toBe(1);
    await expectClean(opened);
    await opened.close();
  });

  it('shows hostile caller names as inert text and exports them as CSV cells a spreadsheet cannot run', async () => {
    const entries = hostileHistory(Date.now());
    const dir = await mkdtemp(join(tmpdir(), 'sp-export-'));
    dirs.push(dir);
    const target = join(dir, 'calls.csv');
    const opened = await openPage(
      getBrowser(),
      origin(),
      'history',
      fixture({ history: entries }),
      {
        viewport: { width: 640, height: 900 },
        // main's side of history:export-csv after the save dialog: its own entries, its own writer.
        exportCsv: async (callIds) => {
          const byId = new Map(entries.map((e) => [e.callId, e]));
          await writeFileAtomic(target, historyToCsv(callIds.flatMap((id) => byId.get(id) ?? [])));
        },
      },
    );
    const { page } = opened;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(entries.length);
    expect(await page.locator('img').count()).toBe(0);
    for (const e of entries) {
      const caller = page.locator(`li[data-call-id="${e.callId}"]`).getByTestId('history-caller');
      expect(await caller.textContent()).toBe(e.callerName);
      expect(await childElementCount(caller)).toBe(0);
    }
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(640);
    await screenshot(page, 'history-hostile-light');

    // Export what is shown: the missed calls.
    await page.getByRole('radio', { name: /^Missed/ }).check();
    await page.getByRole('button', { name: 'Export CSV…' }).click();
    await page.getByTestId('export-status').waitFor();
    expect(await page.getByTestId('export-status').textContent()).toBe(
      'Saved 3 calls to screenpop-calls.csv.',
    );
    const missedIds = entries.filter((e) => e.outcome === 'missed').map((e) => e.callId);
    expect((await opened.recorded('exportHistoryCsv')).map((r) => r.args[0])).toEqual([missedIds]);
    const csv = await readFile(target, 'utf8');
    const rows = parseCsvRows(csv.replace(/^\uFEFF/, '').replace(/\r\n$/, ''));
    expect(rows.map((r) => r[1])).toEqual([
      'Caller name',
      `'${HOSTILE_NAMES.plus}`,
      `'${HOSTILE_NAMES.at}`,
      'gnp.exe',
    ]);
    for (const row of rows.slice(1)) {
      expect(row).toHaveLength(12);
      for (const cell of row) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    }

    // And every kind of hostile name, all rows.
    await page.getByRole('radio', { name: /^All/ }).check();
    await page.getByRole('button', { name: 'Export CSV…' }).click();
    await expect.poll(async () => (await opened.recorded('exportHistoryCsv')).length).toBe(2);
    await expect.poll(async () => (await readFile(target, 'utf8')).split('\r\n').length).toBe(9);
    const all = parseCsvRows((await readFile(target, 'utf8')).slice(1).replace(/\r\n$/, ''));
    expect(all.slice(1).map((r) => r[1]?.slice(0, 12))).toEqual([
      `'=HYPERLINK(`,
      `'+cmd|" /C c`,
      `'-2+3+cmd|" `,
      `'@SUM(1+1)*c`,
      '<img src=x o',
      'gnp.exe',
      'BBBBBBBBBBBB',
    ]);
    await expectClean(opened);
    await opened.close();
  });

  // At 720 px (the old opening width) the row a colleague answered put "after 12 sec" under its
  // badge (README's picture, issue 21). A called line's number may go under the line's name, whole.
  for (const locale of ['en', 'de', 'ar'] as const) {
    it(`at the width the window opens, each row's outcome stays on one line and every number whole (${locale})`, async () => {
      const opened = await openPage(
        getBrowser(),
        origin(),
        'history',
        fixture({ history: history(SHOT_TIME), locale }),
        {
          viewport: { width: contentWidth(WINDOW_SIZES.history.width), height: 900 },
          fixedTime: SHOT_TIME,
        },
      );
      const { page } = opened;
      await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(6);
      for (const row of await page.locator('li[data-call-id]').all()) {
        const id = await row.getAttribute('data-call-id');
        expect(await childrenOnOneLine(row.locator('.entry__outcome')), `${id}: outcome`).toBe(
          true,
        );
        for (const n of await row.locator('.number').all())
          expect(await lineCount(n), `${id}: ${await n.textContent()} wraps`).toBe(1);
      }
      await expectClean(opened);
      await opened.close();
    });
  }

  it('fits at 200 % zoom: no sideways scroll, numbers on one line', async () => {
    // The 720-pixel history window at 200 %: 360 CSS pixels.
    const opened = await openPage(getBrowser(), origin(), 'history', fixture(), {
      viewport: { width: 360, height: 800 },
      zoom: 2,
    });
    const { page } = opened;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(6);
    expect(
      await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      ),
    ).toBe(0);
    for (const n of await page.locator('.number').all()) {
      const text = await n.textContent();
      expect(await lineCount(n), `${text} wraps`).toBe(1);
      expect(await fitsWhole(n), `${text} is cut`).toBe(true);
    }
    await expectClean(opened);
    await opened.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`screenshots: history, filtered, empty search and 200 % (${scheme})`, async () => {
      const fix = fixture({
        history: history(SHOT_TIME),
        settings: connectedView,
      });
      const shots: [string, (p: Awaited<ReturnType<typeof openPage>>['page']) => Promise<void>][] =
        [
          ['history', async () => {}],
          [
            'history-missed',
            async (page) => {
              await page.getByRole('radio', { name: /^Missed/ }).check();
              await page.getByRole('searchbox', { name: 'Search' }).fill('415');
            },
          ],
        ];
      for (const [name, prepare] of shots) {
        const opened = await openPage(getBrowser(), origin(), 'history', fix, {
          colorScheme: scheme,
          viewport: { width: 720, height: 600 },
          fixedTime: SHOT_TIME,
        });
        await expect.poll(() => opened.page.locator('li[data-call-id]').count()).toBe(6);
        await prepare(opened.page);
        await screenshot(opened.page, `${name}-${scheme}`);
        await expectClean(opened);
        await opened.close();
      }
      const zoomed = await openPage(getBrowser(), origin(), 'history', fix, {
        colorScheme: scheme,
        viewport: { width: 360, height: 700 },
        fixedTime: SHOT_TIME,
        zoom: 2,
      });
      await expect.poll(() => zoomed.page.locator('li[data-call-id]').count()).toBe(6);
      await screenshot(zoomed.page, `history-zoom200-${scheme}`);
      await expectClean(zoomed);
      await zoomed.close();
    });
  }
});
