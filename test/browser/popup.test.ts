/**
 * The popup in real Chromium, built by Vite and served under the production CSP, with the preload
 * API replaced by a typed double. One browser launch for the file.
 */
import { expect, it } from 'vitest';
import { buildCrmUrl } from '../../src-main/core/app/crm-url.ts';
import type { CallCard } from '../../src-main/ipc/contract.ts';
import { call, fixture } from './support/fixtures.ts';
import { childElementCount, computedStyle, openPage, screenshot } from './support/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';

const HOSTILE = {
  markup: '<img src=x onerror=alert(1)>',
  shell: '"; rm -rf /',
  long: 'A'.repeat(5000),
  rtl: '\u202Egnp.exe\u202C +1 555 0100',
} as const;

/** The screenshots' frozen "now". */
const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);

browserSuite('popup in Chromium', ({ browser: getBrowser, origin }) => {
  it('shows a ring with the caller name, number, what they called and the elapsed time, without taking focus', async () => {
    const opened = await openPage(getBrowser(), origin(), 'popup', fixture());
    const { page } = opened;
    expect((await opened.recorded('popupReady')).length).toBe(1);
    expect((await opened.recorded('onCalls')).length).toBe(1);

    await opened.emit('popup:calls', [call({ callId: 'c1', startedAt: Date.now() - 65_000 })]);
    const card = page.locator('li[data-call-id="c1"]');
    await expect.poll(() => card.count()).toBe(1);
    expect(await card.getByTestId('caller-headline').textContent()).toBe('Ada Lovelace');
    expect(await card.getByTestId('caller-number').textContent()).toBe('+1 415-555-0123');
    expect(await card.getByTestId('called').textContent()).toBe('Ext. 101');
    expect(await card.textContent()).toMatch(/1:0[5-9]/);
    expect(await card.getByRole('button', { name: 'Open in CRM' }).count()).toBe(1);
    expect(await card.getByRole('button', { name: 'Copy number' }).count()).toBe(1);
    expect(await card.getByRole('button', { name: 'Dismiss call from Ada Lovelace' }).count()).toBe(
      1,
    );
    expect(await page.getByRole('alert').textContent()).toBe(
      'Incoming call from Ada Lovelace, to Ext. 101',
    );
    // Shown inactive by main; the page must not grab focus by itself.
    expect(await page.evaluate('document.activeElement === document.body')).toBe(true);
    // It told main how tall it is.
    const sizes = await opened.recorded('reportPopupSize');
    expect(sizes.length).toBeGreaterThan(0);
    expect(sizes.at(-1)?.args[0]).toBeGreaterThan(50);

    await card.getByRole('button', { name: 'Copy number' }).click();
    expect((await opened.recorded('copyNumber')).map((c) => c.args)).toEqual([['c1']]);
    await expect.poll(() => card.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    await expectClean(opened);
    await opened.close();
  });

  it('stacks a second ring on top, fades a call that stopped ringing, and hides the CRM button when there is no link', async () => {
    const opened = await openPage(getBrowser(), origin(), 'popup', fixture());
    const { page } = opened;
    const first = call({ callId: 'c1', startedAt: Date.now() - 20_000 });
    const second = call({
      callId: 'c2',
      callerName: null,
      from: '+442079460958',
      fromDisplay: '+44 20 7946 0958',
      startedAt: Date.now() - 2_000,
      canOpenCrm: false,
    });
    await opened.emit('popup:calls', [first]);
    await opened.emit('popup:calls', [first, second]);
    const cards = page.locator('li[data-call-id]');
    await expect.poll(() => cards.count()).toBe(2);
    expect(await cards.nth(0).getAttribute('data-call-id')).toBe('c2');
    expect(await cards.nth(0).getByTestId('caller-headline').textContent()).toBe(
      '+44 20 7946 0958',
    );
    expect(await cards.nth(0).getByRole('button', { name: 'Open in CRM' }).count()).toBe(0);
    expect(await page.getByRole('alert').textContent()).toBe(
      'Incoming call from +44 20 7946 0958, to Ext. 101',
    );

    await opened.emit('popup:calls', [{ ...first, state: 'answered' }, second]);
    const lingering = page.locator('li[data-call-id="c1"]');
    await expect.poll(() => lingering.getAttribute('data-state')).toBe('lingering');
    expect(await lingering.textContent()).toContain('Answered');
    expect(Number(await computedStyle(lingering, 'opacity'))).toBeLessThan(1);
    await expectClean(opened);
    await opened.close();
  });

  it('dismisses with the × button, with Esc on the focused call, and opens the CRM with Enter', async () => {
    const a = call({ callId: 'call-a', startedAt: Date.now() - 30_000 });
    const b = call({
      callId: 'call-b',
      callerName: 'Grace Hopper',
      startedAt: Date.now() - 20_000,
    });
    const c = call({
      callId: 'call-c',
      callerName: 'Katherine Johnson',
      startedAt: Date.now() - 10_000,
    });
    const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls: [a, b, c] }));
    const { page } = opened;
    const cards = page.locator('li[data-call-id]');
    await expect.poll(() => cards.count()).toBe(3);

    await page.getByRole('button', { name: 'Dismiss call from Katherine Johnson' }).click();
    await expect.poll(() => cards.count()).toBe(2);
    expect((await opened.recorded('dismiss')).map((r) => r.args)).toEqual([['call-c']]);

    // Enter on the focused (second) card opens that call's CRM link, not the top one's.
    await page.locator('li[data-call-id="call-a"] article').click({ position: { x: 40, y: 40 } });
    await page.keyboard.press('Enter');
    await expect
      .poll(async () => (await opened.recorded('openCrm')).map((r) => r.args))
      .toEqual([['call-a']]);
    // Esc dismisses the focused card, and focus moves on to the remaining card.
    await page.keyboard.press('Escape');
    await expect.poll(() => cards.count()).toBe(1);
    expect((await opened.recorded('dismiss')).map((r) => r.args)).toEqual([['call-c'], ['call-a']]);
    expect(await page.evaluate('document.activeElement?.closest("li")?.dataset.callId')).toBe(
      'call-b',
    );
    // Enter on a button is the button's own action only.
    await page.getByRole('button', { name: 'Copy number' }).focus();
    await page.keyboard.press('Enter');
    expect((await opened.recorded('copyNumber')).map((r) => r.args)).toEqual([['call-b']]);
    expect((await opened.recorded('openCrm')).length).toBe(1);
    // With nothing focused, Esc acts on the top card.
    await page.evaluate('document.activeElement.blur()');
    await page.keyboard.press('Escape');
    await expect.poll(() => cards.count()).toBe(0);
    expect((await opened.recorded('dismiss')).map((r) => r.args)).toEqual([
      ['call-c'],
      ['call-a'],
      ['call-b'],
    ]);
    await expectClean(opened);
    await opened.close();
  });

  it('shows hostile caller IDs as inert text and opens a correctly encoded CRM link for them', async () => {
    const template =
      'https://crm.example.com/search?phone={from}&name={caller_name}&call={call_id}';
    const cards: CallCard[] = [
      call({
        callId: 'markup',
        from: HOSTILE.markup,
        fromDisplay: HOSTILE.markup,
        callerName: null,
        startedAt: Date.now() - 4000,
      }),
      call({ callId: 'markup-name', callerName: HOSTILE.markup, startedAt: Date.now() - 3000 }),
      call({
        callId: 'shell',
        from: HOSTILE.shell,
        fromDisplay: HOSTILE.shell,
        callerName: null,
        startedAt: Date.now() - 2000,
      }),
      call({
        callId: 'long',
        from: HOSTILE.long,
        fromDisplay: HOSTILE.long,
        callerName: HOSTILE.long,
        startedAt: Date.now() - 1000,
      }),
      call({
        callId: 'rtl',
        from: HOSTILE.rtl,
        fromDisplay: HOSTILE.rtl,
        callerName: null,
        toDisplay: HOSTILE.rtl,
        startedAt: Date.now(),
      }),
    ];
    const opened: string[] = [];
    const page1 = await openPage(getBrowser(), origin(), 'popup', fixture({ calls: cards }), {
      viewport: { width: 360, height: 900 },
      // main's side of popup:open-crm, reduced to the real CRM link builder.
      crmOpen: (callId) => {
        const card = cards.find((c) => c.callId === callId);
        if (!card) throw new Error(`unknown call ${callId}`);
        const built = buildCrmUrl(
          template,
          {
            from: card.from,
            to: card.to,
            call_id: card.callId,
            caller_name: card.callerName ?? '',
          },
          ['https'],
        );
        opened.push(built.ok ? built.url : `refused: ${built.message}`);
      },
    });
    const { page } = page1;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(5);
    expect(await page.locator('img').count()).toBe(0);
    await screenshot(page.locator('.popup'), 'popup-hostile-light');

    const headline = (id: string) =>
      page.locator(`li[data-call-id="${id}"]`).getByTestId('caller-headline');
    for (const [id, text] of [
      ['markup', HOSTILE.markup],
      ['markup-name', HOSTILE.markup],
      ['shell', HOSTILE.shell],
      ['long', HOSTILE.long],
      ['rtl', HOSTILE.rtl],
    ] as const) {
      expect(await headline(id).textContent()).toBe(text);
      expect(await headline(id).getAttribute('title')).toBe(text);
      expect(await childElementCount(headline(id))).toBe(0);
    }
    expect(await page.locator('li[data-call-id="rtl"]').getByTestId('called').textContent()).toBe(
      HOSTILE.rtl,
    );

    // 5,000 characters: the card keeps its width and the name is cut to two lines.
    const longCard = await page.locator('li[data-call-id="long"]').boundingBox();
    expect(longCard?.width).toBeLessThanOrEqual(360);
    const longHead = await headline('long').boundingBox();
    expect(longHead?.height).toBeLessThan(70);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);

    // U+202E cannot reorder the card: headline still left of ×, buttons still in order.
    const rtl = page.locator('li[data-call-id="rtl"]');
    const head = await headline('rtl').boundingBox();
    const close = await rtl.getByRole('button', { name: /^Dismiss call from/ }).boundingBox();
    const crm = await rtl.getByRole('button', { name: 'Open in CRM' }).boundingBox();
    const copy = await rtl.getByRole('button', { name: 'Copy number' }).boundingBox();
    expect(head && close && head.x < close.x).toBe(true);
    expect(crm && copy && crm.x < copy.x).toBe(true);
    expect(await rtl.locator('.card__label').textContent()).toBe('Called');

    // Enter on each hostile card: main's builder gets the raw values and encodes them.
    for (const c of cards) {
      await page.locator(`li[data-call-id="${c.callId}"] article`).focus();
      await page.keyboard.press('Enter');
    }
    await expect.poll(() => opened.length).toBe(5);
    expect((await page1.recorded('openCrm')).map((r) => r.args[0])).toEqual(
      cards.map((c) => c.callId),
    );
    for (const [i, url] of opened.entries()) {
      const c = cards[i] as CallCard;
      const parsed = new URL(url);
      expect(parsed.origin).toBe('https://crm.example.com');
      expect(parsed.pathname).toBe('/search');
      expect([...parsed.searchParams.keys()]).toEqual(['phone', 'name', 'call']);
      // The builder bounds caller text to 256 characters; within that, values come back exactly.
      expect(parsed.searchParams.get('phone')).toBe(c.from.slice(0, 256));
      expect(parsed.searchParams.get('name')).toBe((c.callerName ?? '').slice(0, 256));
      expect(parsed.searchParams.get('call')).toBe(c.callId);
      expect(url).not.toMatch(/[<>"\s\u202E\u202C]/);
    }
    expect(opened[0]).toBe(
      'https://crm.example.com/search?phone=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&name=&call=markup',
    );
    expect(opened[2]).toBe(
      'https://crm.example.com/search?phone=%22%3B%20rm%20-rf%20%2F&name=&call=shell',
    );
    expect(opened[4]).toBe(
      'https://crm.example.com/search?phone=%E2%80%AEgnp.exe%E2%80%AC%20%2B1%20555%200100&name=&call=rtl',
    );
    expect(await page.locator('img').count()).toBe(0);
    await expectClean(page1);
    await page1.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`screenshots: one call and three calls (${scheme})`, async () => {
      const one = [call({ callId: 's1', startedAt: SHOT_TIME - 7_000 })];
      const three = [
        call({ callId: 's1', startedAt: SHOT_TIME - 7_000 }),
        call({
          callId: 's2',
          callerName: null,
          from: '+442079460958',
          fromDisplay: '+44 20 7946 0958',
          to: '+14155550100',
          toDisplay: 'Sales line +1 415-555-0100',
          startedAt: SHOT_TIME - 21_000,
          canOpenCrm: false,
        }),
        call({
          callId: 's3',
          callerName: 'Grace Hopper',
          from: '205',
          fromDisplay: 'Ext. 205',
          startedAt: SHOT_TIME - 48_000,
          state: 'answered',
        }),
      ];
      for (const [name, calls] of [
        ['popup-one', one],
        ['popup-three', three],
      ] as const) {
        const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls }), {
          colorScheme: scheme,
          viewport: { width: 360, height: 560 },
          fixedTime: SHOT_TIME,
        });
        await expect.poll(() => opened.page.locator('li[data-call-id]').count()).toBe(calls.length);
        await screenshot(opened.page.locator('.popup'), `${name}-${scheme}`);
        await expectClean(opened);
        await opened.close();
      }
    });
  }
});
