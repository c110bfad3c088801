/**
 * The popup in real Chromium, built by Vite and served under the production CSP, with the preload
 * API replaced by a typed double. One browser launch for the file.
 */
import { expect, it } from 'vitest';
import { buildCrmUrl } from '../../src-main/core/links/crm-url.ts';
import type { CallCard } from '../../src-main/ipc/contract.ts';
import { call, fixture } from '../../rigs/browser/fixtures.ts';
import {
  childElementCount,
  computedStyle,
  fitsWhole,
  lineCount,
  openPage,
  screenshot,
  visibleText,
} from '../../rigs/browser/page.ts';
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
  it('shows a ring with the line it rang on, the caller, a labelled ringing time and the actions, without taking focus', async () => {
    const opened = await openPage(getBrowser(), origin(), 'popup', fixture());
    const { page } = opened;
    expect((await opened.recorded('popupReady')).length).toBe(1);
    expect((await opened.recorded('onCalls')).length).toBe(1);

    await opened.emit('popup:calls', [
      call({
        callId: 'c1',
        to: '+14155550100',
        toName: 'Sales line',
        startedAt: Date.now() - 65_000,
      }),
    ]);
    const card = page.locator('li[data-call-id="c1"]');
    await expect.poll(() => card.count()).toBe(1);
    expect(await card.getAttribute('data-outcome')).toBe('ringing');
    expect(await card.getByTestId('caller-headline').textContent()).toBe('Ada Lovelace');
    expect(await card.getByTestId('caller-number').textContent()).toBe('(415) 555-0123');
    expect(await card.getByTestId('called-name').textContent()).toBe('Sales line');
    expect(await card.getByTestId('called').textContent()).toBe('(415) 555-0100');
    // The elapsed time says what it is, and is never a clock-like 1:05.
    expect(await card.getByTestId('elapsed').textContent()).toMatch(
      /^for 1 min, (\d+) secfor 1 minute, \1 seconds$/,
    );
    expect(await visibleText(card.locator('.card__kicker'))).toMatch(
      /^Ringing for 1 min, \d+ sec$/,
    );
    // The called line sits above the caller and is no fainter than the caller's number.
    const line = await card.getByTestId('called-line').boundingBox();
    const name = await card.getByTestId('caller-headline').boundingBox();
    expect(line && name && line.y < name.y).toBe(true);
    expect(await computedStyle(card.getByTestId('called-line'), 'font-weight')).toBe('600');
    expect(await card.getByRole('button', { name: 'Open in CRM' }).count()).toBe(1);
    expect(await card.getByRole('button', { name: 'Copy number' }).count()).toBe(1);
    expect(await card.getByRole('button', { name: 'Dismiss call from Ada Lovelace' }).count()).toBe(
      1,
    );
    expect(await page.getByRole('alert').textContent()).toBe(
      'Incoming call from Ada Lovelace, to Sales line',
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

  it('makes ringing unmistakable with motion, and keeps it unmistakable without motion', async () => {
    const calls = [
      call({ callId: 'ring' }),
      call({ callId: 'done', callerName: 'Grace Hopper', state: 'answered' }),
    ];
    const moving = await openPage(getBrowser(), origin(), 'popup', fixture({ calls }), {
      reducedMotion: 'no-preference',
    });
    const running = (page: typeof moving.page, id: string) =>
      page.evaluate(
        (callId) =>
          (
            globalThis as unknown as {
              document: {
                getAnimations(): { effect: { target: { closest(s: string): unknown } } | null }[];
              };
            }
          ).document
            .getAnimations()
            .filter((a) => a.effect?.target.closest(`li[data-call-id="${callId}"]`)).length,
        id,
      );
    await expect.poll(() => moving.page.locator('li[data-call-id]').count()).toBe(2);
    expect(await running(moving.page, 'ring')).toBeGreaterThanOrEqual(2);
    expect(await running(moving.page, 'done')).toBe(0);
    await expectClean(moving);
    await moving.close();

    const still = await openPage(getBrowser(), origin(), 'popup', fixture({ calls }), {
      reducedMotion: 'reduce',
    });
    const { page } = still;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(2);
    expect(await running(page, 'ring')).toBe(0);
    // Still unmistakable: a 2 px accent border, a stripe, a shadow and the word.
    const ring = page.locator('li[data-call-id="ring"] article');
    const done = page.locator('li[data-call-id="done"] article');
    expect(await computedStyle(ring, 'border-top-width')).toBe('2px');
    expect(await computedStyle(ring, 'box-shadow')).not.toBe('none');
    expect(await computedStyle(done, 'box-shadow')).toBe('none');
    expect(await computedStyle(ring, 'border-top-color')).not.toBe(
      await computedStyle(done, 'border-top-color'),
    );
    expect(await computedStyle(ring, 'background-color')).not.toBe(
      await computedStyle(done, 'background-color'),
    );
    expect(await page.locator('li[data-call-id="ring"] .card__status').textContent()).toBe(
      'Ringing',
    );
    await expectClean(still);
    await still.close();
  });

  it('shows calls that stopped ringing as done: grey, shorter, their outcome in words, and only the action that still helps', async () => {
    const opened = await openPage(getBrowser(), origin(), 'popup', fixture(), {
      viewport: { width: 360, height: 800 },
    });
    const { page } = opened;
    const first = call({ callId: 'c1', startedAt: Date.now() - 20_000 });
    const second = call({
      callId: 'c2',
      callerName: null,
      from: '+442079460958',
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
    // No CRM link set: no CRM button.
    expect(await cards.nth(0).getByRole('button', { name: /CRM/ }).count()).toBe(0);
    expect(await page.getByRole('alert').textContent()).toBe(
      'Incoming call from +44 20 7946 0958, to Ext. 101',
    );
    const ringingHeight = (await page.locator('li[data-call-id="c1"]').boundingBox())?.height ?? 0;

    const ended = Date.now();
    await opened.emit('popup:calls', [
      { ...first, state: 'answered', outcome: 'answered', endedAt: ended },
      second,
    ]);
    const done = page.locator('li[data-call-id="c1"]');
    await expect.poll(() => done.getAttribute('data-state')).toBe('lingering');
    // The ringing call moved on top.
    expect(await cards.nth(0).getAttribute('data-call-id')).toBe('c2');
    expect(await visibleText(done.locator('.card__kicker'))).toMatch(
      /^✓ ?Answered after [2-5]\d sec$/,
    );
    expect(await done.getByRole('button').allTextContents()).toEqual(['×', 'Open in CRM']);
    const doneHeight = (await done.boundingBox())?.height ?? 0;
    expect(doneHeight).toBeLessThan(ringingHeight * 0.75);

    await opened.emit('popup:calls', [
      { ...first, state: 'answered', outcome: 'answered-elsewhere', endedAt: ended },
      { ...second, state: 'ended', outcome: 'missed', endedAt: ended, canOpenCrm: true },
    ]);
    await expect.poll(() => page.locator('li[data-state="lingering"]').count()).toBe(2);
    expect(await done.locator('.card__status').textContent()).toBe('Answered by a colleague');
    expect(await done.getByRole('button').allTextContents()).toEqual(['×']);
    const missed = page.locator('li[data-call-id="c2"]');
    expect(await missed.locator('.card__status').textContent()).toBe('Missed');
    expect(await missed.getByRole('button').allTextContents()).toEqual([
      '×',
      'Copy number',
      'Search CRM',
    ]);
    // Enter on a card a colleague answered opens nothing: it shows no CRM button.
    await done.locator('article').focus();
    await page.keyboard.press('Enter');
    await missed.locator('article').focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(async () => (await opened.recorded('openCrm')).map((r) => r.args))
      .toEqual([['c2']]);
    // Nobody is told about a call that stopped ringing.
    expect(await page.getByRole('alert').textContent()).toBe(
      'Incoming call from +44 20 7946 0958, to Ext. 101',
    );
    await expectClean(opened);
    await opened.close();
  });

  it('keeps three calls compact', async () => {
    const three = [
      call({ callId: 'a', to: '+14155550100', toName: 'Sales line' }),
      call({ callId: 'b', callerName: null, from: '+442079460958' }),
      call({ callId: 'c', callerName: 'Grace Hopper', from: '205', state: 'answered' }),
    ];
    const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls: three }), {
      viewport: { width: 360, height: 800 },
    });
    await expect.poll(() => opened.page.locator('li[data-call-id]').count()).toBe(3);
    const height = (await opened.page.locator('.popup').boundingBox())?.height ?? 0;
    // Two ringing cards and a done one fit a 560-pixel popup (the README's screenshot).
    expect(height).toBeLessThanOrEqual(560);
    expect((await opened.recorded('reportPopupSize')).at(-1)?.args[0]).toBe(Math.ceil(height));
    await expectClean(opened);
    await opened.close();
  });

  it('an unknown caller gets a CRM search, built by main’s real builder', async () => {
    const template = 'https://crm.example.com/search?phone={from}';
    const unknown = call({ callId: 'u1', callerName: null, from: '+442079460958' });
    const urls: string[] = [];
    const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls: [unknown] }), {
      crmOpen: (callId) => {
        expect(callId).toBe('u1');
        const built = buildCrmUrl(
          template,
          { from: unknown.from, to: unknown.to, call_id: unknown.callId, caller_name: '' },
          ['https'],
        );
        urls.push(built.ok ? built.url : `refused: ${built.message}`);
      },
    });
    const button = opened.page.getByRole('button', { name: 'Search CRM' });
    await button.click();
    await expect.poll(() => urls).toEqual(['https://crm.example.com/search?phone=%2B442079460958']);
    expect(await button.getAttribute('class')).toContain('button--primary');
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
    // An unknown caller: the CRM action is a search.
    const crm = await rtl.getByRole('button', { name: 'Search CRM' }).boundingBox();
    const copy = await rtl.getByRole('button', { name: 'Copy number' }).boundingBox();
    expect(head && close && head.x < close.x).toBe(true);
    expect(crm && copy && crm.x < copy.x).toBe(true);
    expect(await rtl.locator('.card__label').textContent()).toBe('Called');
    // Numbers stay on one line whatever they hold (cut with an ellipsis, full value in the tooltip).
    expect(await lineCount(rtl.getByTestId('called'))).toBe(1);
    expect(await lineCount(headline('markup'))).toBe(1);

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

  /** The README's stack: a ring on the sales line, an unknown caller, a call just answered. */
  const threeCalls = () => [
    call({
      callId: 's1',
      to: '+14155550100',
      toName: 'Sales line',
      startedAt: SHOT_TIME - 7_000,
    }),
    call({
      callId: 's2',
      callerName: null,
      from: '+442079460958',
      startedAt: SHOT_TIME - 21_000,
    }),
    call({
      callId: 's3',
      callerName: 'Grace Hopper',
      from: '205',
      startedAt: SHOT_TIME - 48_000,
      state: 'answered',
    }),
  ];

  it('never breaks a number across lines, at 200 % zoom too', async () => {
    const calls = [
      ...threeCalls(),
      call({
        callId: 'z4',
        callerName: 'Maria Concepción Fernández-Villalobos',
        from: '+16175550199',
        to: '+442079460958',
        toName: 'London reception',
      }),
    ];
    // The popup is 360 pixels wide: 180 CSS pixels at 200 %.
    const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls }), {
      viewport: { width: 180, height: 1200 },
      zoom: 2,
    });
    const { page } = opened;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(4);
    const numbers = page.locator('.number');
    expect(await numbers.count()).toBeGreaterThanOrEqual(8);
    for (const n of await numbers.all()) {
      if (!(await n.isVisible())) continue; // a done card shows no caller number
      const text = await n.textContent();
      expect(await lineCount(n), `${text} wraps`).toBe(1);
      expect(await fitsWhole(n), `${text} is cut`).toBe(true);
    }
    expect(
      await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      ),
    ).toBe(0);
    await expectClean(opened);
    await opened.close();
  });

  it('shows what the CRM and the contacts file said: name, company, the number’s kind, a lookup still running (light, dark, Arabic)', async () => {
    const calls: CallCard[] = [
      call({
        callId: 'e1',
        callerName: 'Ada Lovelace',
        nameSource: 'crm',
        callerCompany: 'Analytical Engines Ltd',
        crmLookup: 'found',
        startedAt: SHOT_TIME - 9_000,
      }),
      call({
        callId: 'e2',
        callerName: 'Jürgen Müller',
        nameSource: 'contacts',
        callerCompany: 'Müller & Söhne KG',
        numberKind: 'mobile',
        from: '+4915123456789',
        startedAt: SHOT_TIME - 5_000,
        crmLookup: 'found',
      }),
      call({
        callId: 'e3',
        callerName: null,
        nameSource: 'none',
        from: '+13125550175',
        startedAt: SHOT_TIME - 2_000,
        crmLookup: 'pending',
      }),
    ];
    for (const [scheme, locale] of [
      ['light', 'en'],
      ['dark', 'en'],
      ['light', 'ar'],
    ] as const) {
      const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls, locale }), {
        colorScheme: scheme,
        viewport: { width: 360, height: 620 },
        fixedTime: SHOT_TIME,
      });
      const { page } = opened;
      await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(3);
      const contact = page.locator('li[data-call-id="e2"]');
      expect(await contact.getByTestId('caller-company').textContent()).toBe('Müller & Söhne KG');
      expect(await contact.getByTestId('number-kind').textContent()).toBe(
        locale === 'ar' ? 'جوّال' : 'mobile',
      );
      expect(
        await page.locator('li[data-call-id="e1"]').getByTestId('caller-company').textContent(),
      ).toBe('Analytical Engines Ltd');
      expect(
        await page.locator('li[data-call-id="e3"]').getByTestId('crm-looking-up').count(),
      ).toBe(1);
      expect(
        await page.locator('li[data-call-id="e1"]').getByTestId('crm-looking-up').count(),
      ).toBe(0);
      await screenshot(page.locator('.popup'), `popup-enriched-${locale}-${scheme}`);
      await expectClean(opened);
      await opened.close();
    }
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`screenshots: one call, three calls, calls that are done, and 200 % (${scheme})`, async () => {
      const one = [call({ callId: 's1', startedAt: SHOT_TIME - 7_000 })];
      const done = [
        call({
          callId: 'd1',
          callerName: 'Grace Hopper',
          from: '205',
          startedAt: SHOT_TIME - 30_000,
          state: 'answered',
        }),
        call({
          callId: 'd2',
          callerName: 'Alan Turing',
          from: '+13125550175',
          to: '+14155550100',
          toName: 'Sales line',
          startedAt: SHOT_TIME - 40_000,
          state: 'answered',
          outcome: 'answered-elsewhere',
        }),
        call({
          callId: 'd3',
          callerName: null,
          from: '+442079460958',
          startedAt: SHOT_TIME - 50_000,
          state: 'ended',
        }),
      ];
      const shots: [string, CallCard[], { width: number; height: number }, number?][] = [
        ['popup-one', one, { width: 360, height: 560 }],
        ['popup-three', threeCalls(), { width: 360, height: 560 }],
        ['popup-done', done, { width: 360, height: 560 }],
        ['popup-zoom200', threeCalls(), { width: 180, height: 900 }, 2],
      ];
      for (const [name, calls, viewport, zoom] of shots) {
        const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls }), {
          colorScheme: scheme,
          viewport,
          fixedTime: SHOT_TIME,
          ...(zoom ? { zoom } : {}),
        });
        await expect.poll(() => opened.page.locator('li[data-call-id]').count()).toBe(calls.length);
        await screenshot(opened.page.locator('.popup'), `${name}-${scheme}`);
        await expectClean(opened);
        await opened.close();
      }
    });
  }
});
