/**
 * README's pictures, made from demo data instead of copied by hand from test runs (which showed
 * attack fixtures and old words): builds the renderer, opens each screen in Debian's Chromium
 * (playwright-core) with the browser tests' API double, and writes docs/screenshots/*.png.
 * The data is what a receptionist sees on an ordinary morning; the clock is fixed, so the words
 * ("for 7 sec") are today's words and the files change only when the screens do.
 * Run: npm run screenshots (needs /usr/bin/chromium).
 */
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { WINDOW_SIZES } from '../src-main/electron/window-sizes.ts';
import type { HistoryItem } from '../src-main/ipc/contract.ts';
import { hasChromium, launchChromium, SKIP_REASON } from '../rigs/browser/chromium.ts';
import { call, entry, fixture, history } from '../rigs/browser/fixtures.ts';
import { contentWidth, openPage, screenshot } from '../rigs/browser/page.ts';
import { buildAndServeRenderer } from '../rigs/browser/serve-renderer.ts';

const OUT = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const NOW = Date.UTC(2026, 10, 24, 9, 30, 0);
const MIN = 60_000;

const ringingStack = [
  call({ callId: 's1', to: '+14155550100', toName: 'Sales line', startedAt: NOW - 7_000 }),
  // Through a Yeastar PBX's queue, passed on by a colleague (the card's group and transfer lines).
  call({
    callId: 's2',
    callerName: null,
    from: '+442079460958',
    startedAt: NOW - 21_000,
    group: { kind: 'queue', name: 'Support' },
    transferredBy: 'Grace Hopper',
  }),
  call({
    callId: 's3',
    callerName: 'Grace Hopper',
    from: '205',
    startedAt: NOW - 48_000,
    state: 'answered',
    endedAt: NOW - 43_000,
  }),
];

const doneCalls = [
  call({
    callId: 'd1',
    callerName: 'Grace Hopper',
    from: '205',
    state: 'answered',
    startedAt: NOW - 40_000,
    endedAt: NOW - 36_000,
  }),
  call({
    callId: 'd2',
    callerName: 'Alan Turing',
    from: '+13125550175',
    to: '+14155550100',
    toName: 'Sales line',
    state: 'answered',
    outcome: 'answered-elsewhere',
    startedAt: NOW - 30_000,
    endedAt: NOW - 21_000,
  }),
  call({
    callId: 'd3',
    callerName: 'Katherine Johnson',
    from: '+16175550199',
    state: 'ended',
    startedAt: NOW - 45_000,
    endedAt: NOW - 20_000,
  }),
];

function historyWithMessages(): HistoryItem[] {
  return [
    {
      kind: 'voicemail' as const,
      callId: 'voicemail:v1',
      from: '+16505550144',
      fromDisplay: '(650) 555-0144',
      callerName: 'Mary Jackson',
      to: '101',
      toDisplay: '101',
      toName: null,
      startedAt: NOW - 12 * MIN,
      durationSec: 42,
      seen: false,
    },
    {
      kind: 'sms' as const,
      callId: 'sms:m1',
      from: '+13125550175',
      fromDisplay: '(312) 555-0175',
      callerName: 'Alan Turing',
      to: '+14155550100',
      toDisplay: '(415) 555-0100',
      toName: 'Sales line',
      startedAt: NOW - 18 * MIN,
      text: 'Running 10 minutes late for our 10:00, sorry!',
      textTruncated: false,
      seen: false,
    },
    // The test fixture's newest call has rung for 3 minutes; a morning's call rings for seconds.
    ...history(NOW).map((h) => (h.outcome === 'ringing' ? { ...h, startedAt: NOW - 9_000 } : h)),
    entry({
      callId: 'h7',
      callerName: 'Dorothy Vaughan',
      from: '+12025550111',
      startedAt: NOW - 30 * MIN,
      endedAt: NOW - 28 * MIN,
    }),
  ].sort((a, b) => b.startedAt - a.startedAt);
}

async function shoot(browser: Browser, origin: string): Promise<string[]> {
  const written: string[] = [];
  const popup = async (name: string, calls: typeof ringingStack, height: number) => {
    const opened = await openPage(browser, origin, 'popup', fixture({ calls }), {
      viewport: { width: 360, height },
      fixedTime: NOW,
    });
    await opened.page
      .locator('li[data-call-id]')
      .nth(calls.length - 1)
      .waitFor();
    written.push(await screenshot(opened.page.locator('.popup'), name, false, OUT));
    await opened.close();
  };
  await popup('popup', ringingStack, 700);
  await popup('popup-done', doneCalls, 600);

  const items = historyWithMessages();
  // The whole history, and its top (the newest: a voicemail and a message) as the window opens.
  const opened = await openPage(browser, origin, 'history', fixture({ history: items }), {
    viewport: { width: contentWidth(WINDOW_SIZES.history.width), height: 420 },
    fixedTime: NOW,
  });
  await opened.page.locator('li[data-call-id]').first().waitFor();
  const top = `${OUT}history-voicemail-sms.png`;
  await opened.page.screenshot({ path: top, animations: 'disabled' });
  written.push(top, await screenshot(opened.page, 'history', false, OUT));
  await opened.close();

  const settings = await openPage(browser, origin, 'settings', fixture(), {
    viewport: { width: contentWidth(WINDOW_SIZES.settings.width), height: 900 },
    fixedTime: NOW,
  });
  await settings.page.locator('.section-nav__link').first().waitFor();
  const path = `${OUT}settings.png`;
  await settings.page.screenshot({ path, animations: 'disabled' });
  written.push(path);
  await settings.close();
  return written;
}

if (!hasChromium) {
  console.error(`screenshots: ${SKIP_REASON}`);
  process.exit(1);
}
const served = await buildAndServeRenderer();
const browser = await launchChromium();
try {
  for (const file of await shoot(browser, served.origin)) console.log(file);
} finally {
  await browser.close();
  await served.close();
}
