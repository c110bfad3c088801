/**
 * Opens one renderer page in its own browser context with the API double installed, and collects
 * everything that would mean trouble: console errors and warnings, CSP reports, uncaught errors,
 * and dialogs (an alert() from injected markup would show up here).
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import type {
  CallActionView,
  ConsultationView,
  CrmPreview,
  EventChannel,
} from '../../src-main/ipc/contract.ts';
import {
  installApiDouble,
  type DoubleFixture,
  type DoublePageGlobal,
  type RecordedCall,
} from './api-double.ts';

/**
 * A conservative page width inside a window of `width` (src-main/electron/window-sizes.ts): a
 * window frame (about 16 px on Windows) and a classic scrollbar (about 17 px) come off it.
 */
export function contentWidth(width: number): number {
  return width - 34;
}

export type PageName = 'popup' | 'settings' | 'history' | 'dial';

export interface PageOptions {
  colorScheme?: 'light' | 'dark';
  viewport?: { width: number; height: number };
  /** Node-side CRM hooks (wired to the real builder by the tests that want it). */
  crmOpen?: (callId: string) => void | Promise<void>;
  crmPreview?: (template: string) => CrmPreview | Promise<CrmPreview>;
  /** Node-side history:export-csv (the test writes the CSV with main's real writer). */
  exportCsv?: (callIds: string[]) => void | Promise<void>;
  /**
   * Node-side call actions and attended transfers under way (a real main side, which outlives a
   * reload of the page): the double's call actions and `consultations()` go there.
   */
  mainCalls?: {
    callAction: (
      method: string,
      args: unknown[],
    ) => Promise<{ view: CallActionView; consultations: ConsultationView[] }>;
    consultations: () => ConsultationView[] | Promise<ConsultationView[]>;
  };
  /** Freeze Date.now() (timers keep running) for screenshots that do not change between runs. */
  fixedTime?: number;
  /** prefers-reduced-motion; 'reduce' by default, so screenshots never catch a frame mid-motion. */
  reducedMotion?: 'reduce' | 'no-preference';
  /** Like a browser's zoom: CSS pixels are this many device pixels (the viewport is in CSS px). */
  zoom?: number;
}

export interface OpenedPage {
  page: Page;
  context: BrowserContext;
  /** Console errors/warnings, page errors and CSP messages seen so far. */
  problems: string[];
  dialogs: string[];
  recorded(method?: RecordedCall['method']): Promise<RecordedCall[]>;
  violations(): Promise<string[]>;
  emit(channel: EventChannel, payload: unknown): Promise<void>;
  close(): Promise<void>;
}

export const SCREENSHOT_DIR = fileURLToPath(
  new URL('../../test-results/screenshots/', import.meta.url),
);

/** How long one step of a browser test may wait (see openPage). */
export const STEP_TIMEOUT_MS = 20_000;

export async function openPage(
  browser: Browser,
  origin: string,
  name: PageName,
  fixture: DoubleFixture,
  options: PageOptions = {},
): Promise<OpenedPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 400, height: 640 },
    colorScheme: options.colorScheme ?? 'light',
    locale: 'en-US',
    timezoneId: 'UTC',
    reducedMotion: options.reducedMotion ?? 'reduce',
    ...(options.zoom ? { deviceScaleFactor: options.zoom } : {}),
  });
  const page = await context.newPage();
  // A step that waits (a click, a waitFor, a screenshot) gives up after 20 s and names itself,
  // inside the browser tests' 60 s: Playwright's own 30 s equalled Vitest's 30 s test time-out,
  // so a stuck step in CI's first pass said only "Test timed out in 30000ms".
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  const problems: string[] = [];
  const dialogs: string[] = [];
  page.on('console', (msg) => {
    const text = msg.text();
    if (
      msg.type() === 'error' ||
      msg.type() === 'warning' ||
      /Content Security Policy/i.test(text)
    ) {
      problems.push(`console.${msg.type()}: ${text}`);
    }
  });
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('dialog', (dialog) => {
    dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  const { crmOpen, crmPreview, exportCsv } = options;
  if (crmOpen) await page.exposeFunction('__crmOpen', crmOpen);
  if (crmPreview) await page.exposeFunction('__crmPreview', crmPreview);
  if (exportCsv) await page.exposeFunction('__exportCsv', exportCsv);
  if (options.mainCalls) {
    await page.exposeFunction('__callAction', options.mainCalls.callAction);
    await page.exposeFunction('__consultations', options.mainCalls.consultations);
  }
  // The page's clock is this process's clock: the tests stamp calls with Date.now() here, and the
  // page judges their age with its own Date. (They differ under CI's run at a future date, where
  // libfaketime fakes this process's clock but cannot run Chromium: see chromium.ts.)
  if (options.fixedTime !== undefined) await page.clock.setFixedTime(options.fixedTime);
  else await page.clock.install({ time: Date.now() });
  await page.addInitScript(installApiDouble, fixture);
  await page.goto(`${origin}/${name}.html`);
  await page.locator('#root > *').first().waitFor();

  return {
    page,
    context,
    problems,
    dialogs,
    async recorded(method) {
      const all = await page.evaluate(
        () => (globalThis as unknown as DoublePageGlobal).__double?.recorded ?? [],
      );
      return method ? all.filter((c) => c.method === method) : all;
    },
    violations: () =>
      page.evaluate(() => (globalThis as unknown as DoublePageGlobal).__double?.violations ?? []),
    async emit(channel, payload) {
      // What main sends is stamped with this process's clock: the page must read the same now.
      if (options.fixedTime === undefined) await page.clock.setSystemTime(Date.now());
      await page.evaluate(
        ([c, p]) => (globalThis as unknown as DoublePageGlobal).__double?.emit(c, p),
        [channel, payload] as const,
      );
    },
    close: () => context.close(),
  };
}

/** Writes <dir>/<name>.png, test-results/screenshots/ by default (an element, or the whole page). */
export async function screenshot(
  target: Page | Locator,
  name: string,
  omitBackground = false,
  dir = SCREENSHOT_DIR,
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = `${dir}${name}.png`;
  if ('goto' in target) {
    // Grow the viewport to the whole page instead of fullPage capture, so that sticky parts (the
    // settings' Save bar) sit where a user scrolled to the end would see them.
    const size = target.viewportSize();
    const height = Number(await target.evaluate('document.documentElement.scrollHeight'));
    if (size && height > size.height) await target.setViewportSize({ width: size.width, height });
    await target.screenshot({ path, omitBackground, animations: 'disabled' });
    if (size) await target.setViewportSize(size);
  } else await target.screenshot({ path, omitBackground, animations: 'disabled' });
  return path;
}

/** A computed style property of the element a locator points to. */
export function computedStyle(target: Locator, property: string): Promise<string> {
  return target.evaluate(
    (el, prop) =>
      (
        globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }
      ).getComputedStyle(el)[prop] ?? '',
    property,
  );
}

/** How many child elements the located element has (0 for pure text). */
export function childElementCount(target: Locator): Promise<number> {
  return target.evaluate(
    (el) => (el as unknown as { childElementCount: number }).childElementCount,
  );
}

interface RectLike {
  top: number;
  height: number;
}
interface DomLike {
  createRange(): { selectNodeContents(n: unknown): void; getClientRects(): ArrayLike<RectLike> };
}

/** How many lines of text the located element's content takes (1: it did not wrap). */
export function lineCount(target: Locator): Promise<number> {
  return target.evaluate((el) => {
    const range = (globalThis as unknown as { document: DomLike }).document.createRange();
    range.selectNodeContents(el);
    const tops = new Set<number>();
    for (const r of Array.from(range.getClientRects()))
      if (r.height > 0) tops.add(Math.round(r.top));
    return tops.size;
  });
}

/** True when the located element shows all of its text (not cut by an ellipsis or overflow). */
export function fitsWhole(target: Locator): Promise<boolean> {
  return target.evaluate(
    (el) =>
      (el as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth <=
      (el as unknown as { clientWidth: number }).clientWidth,
  );
}

/** The located element's text without what only screen readers get (.visually-hidden). */
export function visibleText(target: Locator): Promise<string> {
  return target.evaluate((el) => {
    const copy = (el as unknown as { cloneNode(deep: boolean): unknown }).cloneNode(true) as {
      querySelectorAll(s: string): ArrayLike<{ remove(): void }>;
      textContent: string | null;
    };
    for (const hidden of Array.from(copy.querySelectorAll('.visually-hidden'))) hidden.remove();
    return (copy.textContent ?? '').replace(/\s+/g, ' ').trim();
  });
}
