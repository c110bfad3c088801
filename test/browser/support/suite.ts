/**
 * The frame every browser test file shares: one Vite build served on 127.0.0.1 and one Chromium
 * launch per file, a skip with the reason when Chromium is missing (a failure when CI=true), and
 * the check that a page stayed clean. A skipped test means a browser test that did not run: the
 * CI-only failure below is declared only when it applies, never as a placeholder that would count
 * as "skipped" while Chromium ran.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { previewCrmUrl } from '../../../src-main/core/links/crm-url.ts';
import type { CrmPreview } from '../../../src-main/ipc/contract.ts';
import {
  hasChromium,
  launchChromium,
  mustRunBrowser,
  SKIP_REASON,
} from '../../../rigs/browser/chromium.ts';
import type { OpenedPage } from '../../../rigs/browser/page.ts';
import {
  buildAndServeRenderer,
  type ServedRenderer,
} from '../../../rigs/browser/serve-renderer.ts';

export interface BrowserSuite {
  browser(): Browser;
  origin(): string;
}

export function browserSuite(name: string, body: (suite: BrowserSuite) => void): void {
  if (!hasChromium && mustRunBrowser)
    describe(`${name} (CI)`, () => {
      it('needs /usr/bin/chromium', () => {
        expect.fail(`CI=true but ${SKIP_REASON}`);
      });
    });

  // 60 s a test: a loaded CI machine (two test files at once, the renderer built meanwhile) can
  // make a page slow; a step that hangs fails at STEP_TIMEOUT_MS (page.ts) with its own name.
  describe.skipIf(!hasChromium)(name, { timeout: 60_000 }, () => {
    let served: ServedRenderer | undefined;
    let browser: Browser | undefined;

    beforeAll(async () => {
      served = await buildAndServeRenderer();
      browser = await launchChromium();
    });

    afterAll(async () => {
      await browser?.close();
      await served?.close();
    });

    body({
      browser: () => {
        if (!browser) throw new Error('browser not launched');
        return browser;
      },
      origin: () => {
        if (!served) throw new Error('renderer not served');
        return served.origin;
      },
    });
  });
}

/** No console errors or warnings, no CSP report, no failed request, no dialog. */
export async function expectClean(opened: OpenedPage): Promise<void> {
  expect(opened.problems).toEqual([]);
  expect(await opened.violations()).toEqual([]);
  expect(opened.dialogs).toEqual([]);
}

/** main's side of settings:preview-crm, reduced to the real CRM link builder. */
export function realCrmPreview(allowedSchemes: readonly string[]) {
  return (template: string): CrmPreview => {
    const result = previewCrmUrl(template, allowedSchemes);
    return result.ok
      ? { ok: true, url: result.url }
      : { ok: false, words: result.words, message: result.message };
  };
}
