/**
 * Debian's Chromium driven by playwright-core. Absent locally: the browser tests skip with a
 * reason. Absent on CI (CI=true): they fail, because CI must run them.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM_PATH);
export const mustRunBrowser = process.env.CI === 'true';
export const SKIP_REASON = `${CHROMIUM_PATH} not found: browser tests skipped (apt-get install chromium)`;

export async function launchChromium(): Promise<Browser> {
  // Playwright gives each launch a new, empty temporary profile (user-data dir).
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // Chromium does not start with libfaketime preloaded (CI's run at a future date): it runs on the
    // real clock, and each page is set to this process's time instead (page.ts).
    env: Object.fromEntries(
      Object.entries(process.env).filter(([k]) => k !== 'LD_PRELOAD' && k !== 'FAKETIME'),
    ) as Record<string, string>,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ],
    timeout: 30_000,
  });
}
