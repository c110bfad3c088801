/**
 * Call actions on the popup (issue 38) in real Chromium under the production CSP: Call back on a
 * missed call, Transfer and Hang up on a call the user answered, Answer and Decline on a ringing
 * call, each only where the phone system offers it; the transfer field by keyboard (Escape closes
 * it, not the card); the colleague picker (type, arrows, Enter; read as "Name, extension 204") and
 * an attended transfer's Complete and Cancel; axe on both; screenshots in light, dark and Arabic.
 * One browser launch for the file.
 */
import { expect, it } from 'vitest';
import type { CallAction, CallCard } from '../../src-main/ipc/contract.ts';
import { CallActions } from '../../src-main/core/calls/call-actions.ts';
import { Consultations } from '../../src-main/core/calls/consultations.ts';
import type { CallControl, CallControlResult } from '../../src-main/core/ports/call-control.ts';
import { ipcHandlers, type IpcContext } from '../../src-main/electron/ipc-handlers.ts';
import { callRefusalOf } from '../../src-shared/api/call-api.ts';
import { ServiceError } from '../../src-shared/api/service-errors.ts';
import { LocaleState } from '../../src-shared/i18n/locale-state.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { call, fixture } from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { browserSuite, expectClean } from './support/suite.ts';
import { axeViolations } from './support/axe.ts';

const SHOT_TIME = Date.UTC(2026, 10, 22, 9, 30, 0);
const ALL: CallAction[] = ['dial', 'transfer', 'hangup'];
/** The tenant's colleagues as main's directory would offer them (names from the phone system). */
const COLLEAGUES = [
  { extension: '204', name: 'Bob Stone' },
  { extension: '215', name: 'Zoë Bowman' },
  { extension: '230', name: 'Anna-Lena Boberg' },
  { extension: '320', name: 'سارة أحمد' },
];

const cards = (): CallCard[] => [
  call({ callId: 'a1', state: 'answered', startedAt: SHOT_TIME - 40_000 }),
  call({
    callId: 'm1',
    state: 'ended',
    outcome: 'missed',
    callerName: null,
    nameSource: 'none',
    from: '+13125550175',
    startedAt: SHOT_TIME - 20_000,
  }),
];

/**
 * A main side for the page, outliving its reloads: main's real IPC handlers over the real
 * CallActions and Consultations, with a CallControl built as a plain object (the PBX's far side)
 * whose Complete answers `pbx.complete`.
 */
function mainSide() {
  const pbx: { complete: CallControlResult; done: string[] } = { complete: { ok: true }, done: [] };
  const control: CallControl = {
    offered: () => new Set(ALL),
    dial: async () => ({ ok: true }),
    transfer: async (id, to, mode) => (pbx.done.push(`transfer ${id} ${to} ${mode}`), { ok: true }),
    hangup: async () => ({ ok: true }),
    completeTransfer: async (id) => (pbx.done.push(`complete ${id}`), pbx.complete),
    cancelTransfer: async (id) => (pbx.done.push(`cancel ${id}`), { ok: true }),
    answer: async () => ({ ok: true }),
    decline: async () => ({ ok: true }),
  };
  const consultations = new Consultations({ clock: new FakeClock(), logger: silentLogger });
  const calls = new CallActions({
    control: () => control,
    region: () => 'US',
    popupNumber: () => undefined,
    historyNumber: () => undefined,
    confirmDialLinks: () => true,
    consultations,
    nameOf: (ext) => COLLEAGUES.find((c) => c.extension === ext)?.name ?? null,
    logger: silentLogger,
  });
  const language = new LocaleState('en', silentLogger);
  const h = ipcHandlers({
    runtime: { calls },
    language,
    logger: silentLogger,
  } as unknown as IpcContext);
  const event = {} as never;
  const act = (method: string, args: unknown[]) => {
    const [id, to, mode] = args as [string, string, 'blind' | 'attended'];
    switch (method) {
      case 'transferCall':
        return h['popup:transfer'](event, id, to, mode);
      case 'completeTransfer':
        return h['popup:complete-transfer'](event, id);
      case 'cancelTransfer':
        return h['popup:cancel-transfer'](event, id);
      case 'hangUp':
        return h['popup:hangup'](event, id);
      default:
        throw new Error(`not in this test: ${method}`);
    }
  };
  return {
    pbx,
    consultations,
    hooks: {
      callAction: async (method: string, args: unknown[]) => {
        const view = await act(method, args);
        return { view, consultations: await h['calls:consultations'](event) };
      },
      consultations: async () => h['calls:consultations'](event),
    },
  };
}

browserSuite('popup call actions in Chromium', ({ browser: getBrowser, origin }) => {
  it('a reload mid-consultation still offers Complete and Cancel (main keeps it); a stale Complete is refused in words', async () => {
    const main = mainSide();
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({ calls: cards(), offered: ALL, colleagues: COLLEAGUES }),
      { mainCalls: main.hooks, viewport: { width: 360, height: 560 }, fixedTime: SHOT_TIME },
    );
    const { page } = opened;
    const answered = page.locator('li[data-call-id="a1"]');
    const transfer = answered.getByRole('button', { name: 'Transfer', exact: true });
    const complete = answered.getByRole('button', { name: 'Complete transfer' });
    const cancel = answered.getByRole('button', { name: 'Cancel transfer' });
    const consulting = 'Consulting Bob Stone (204). The caller is on hold.';
    await transfer.click();
    await page.keyboard.type('204');
    await expect.poll(() => answered.getByRole('option').count()).toBe(1);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await answered.getByRole('button', { name: 'Consult first' }).click();
    await expect.poll(() => complete.count()).toBe(1);
    expect(main.pbx.done).toEqual(['transfer a1 204 attended']);

    // The page goes (a reload, a popup window made again): main still knows, the card still offers.
    await page.reload();
    await page.locator('li[data-call-id]').first().waitFor();
    await expect.poll(() => complete.count()).toBe(1);
    expect(await cancel.count()).toBe(1);
    expect(await transfer.count()).toBe(0);
    expect(await answered.getByRole('button', { name: 'Hang up' }).count()).toBe(0);
    expect(await answered.getByTestId('consulting').textContent()).toBe(consulting);
    expect((await opened.recorded('consultations')).length).toBeGreaterThan(0);
    await screenshot(page.locator('.popup'), 'popup-consulting-after-reload');
    expect(await axeViolations(page)).toEqual([]);

    // Stale: the PBX has no transfer under way any more (the simulator's 40002, read as refused).
    main.pbx.complete = callRefusalOf(
      new ServiceError({ kind: 'bad-request', errcode: 40002, message: 'PARAMETER ERROR' }),
    );
    await complete.click();
    await expect
      .poll(() => page.getByTestId('call-news').textContent())
      .toContain('The phone system refused this call action.');
    await screenshot(page.locator('.popup'), 'popup-consulting-stale-complete');
    expect(await complete.count()).toBe(1);
    // Cancel is done: back with the caller, here and after another reload.
    await cancel.click();
    await expect.poll(() => transfer.count()).toBe(1);
    expect(main.consultations.list()).toEqual([]);
    await page.reload();
    await page.locator('li[data-call-id]').first().waitFor();
    await expect.poll(() => transfer.count()).toBe(1);
    expect(await complete.count()).toBe(0);
    expect(main.pbx.done).toEqual(['transfer a1 204 attended', 'complete a1', 'cancel a1']);
    await expectClean(opened);
    await opened.close();
  });

  it('shows no call button where the phone system offers none', async () => {
    const opened = await openPage(getBrowser(), origin(), 'popup', fixture({ calls: cards() }));
    const { page } = opened;
    await expect.poll(() => page.locator('li[data-call-id]').count()).toBe(2);
    expect(await page.locator('button[data-action]').count()).toBe(0);
    expect((await opened.recorded('callActionsOffered')).length).toBeGreaterThan(0);
    await expectClean(opened);
    await opened.close();
  });

  it('Call back, Transfer (by keyboard; Escape closes the field, not the card) and Hang up, without taking focus', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({ calls: cards(), offered: ALL }),
    );
    const { page } = opened;
    const answered = page.locator('li[data-call-id="a1"]');
    const missed = page.locator('li[data-call-id="m1"]');
    await expect
      .poll(() => answered.getByRole('button', { name: 'Transfer', exact: true }).count())
      .toBe(1);
    expect(await page.evaluate('document.activeElement === document.body')).toBe(true);
    expect(await answered.getByRole('button', { name: 'Hang up' }).count()).toBe(1);
    expect(await answered.getByRole('button', { name: 'Call back' }).count()).toBe(0);
    expect(await missed.getByRole('button', { name: 'Call back' }).count()).toBe(1);
    expect(await missed.getByRole('button', { name: 'Transfer', exact: true }).count()).toBe(0);

    await missed.getByRole('button', { name: 'Call back' }).click();
    expect((await opened.recorded('callBack')).map((c) => c.args)).toEqual([['m1']]);
    await expect
      .poll(() => page.getByTestId('call-news').textContent())
      .toContain('Your phone rings first');

    const transfer = answered.getByRole('button', { name: 'Transfer', exact: true });
    await transfer.focus();
    await page.keyboard.press('Enter');
    expect(await transfer.getAttribute('aria-expanded')).toBe('true');
    const field = answered.getByLabel('Transfer to (name, extension or number)');
    await expect
      .poll(() => page.evaluate('document.activeElement?.id'))
      .toBe(await field.getAttribute('id'));
    // Escape closes the field; the card stays.
    await page.keyboard.press('Escape');
    expect(await field.count()).toBe(0);
    expect(await answered.count()).toBe(1);
    expect((await opened.recorded('dismiss')).length).toBe(0);

    await transfer.click();
    await field.fill('204');
    await page.keyboard.press('Enter');
    expect((await opened.recorded('transferCall')).map((c) => c.args)).toEqual([
      ['a1', '204', 'blind'],
    ]);
    await answered.getByRole('button', { name: 'Hang up' }).click();
    expect((await opened.recorded('hangUp')).map((c) => c.args)).toEqual([['a1']]);
    await expectClean(opened);
    await opened.close();
  });

  it('Transfer to a colleague by keyboard: type to filter, arrows, Enter picks, Enter transfers; a number as typed', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({ calls: cards(), offered: ALL, colleagues: COLLEAGUES }),
    );
    const { page } = opened;
    const answered = page.locator('li[data-call-id="a1"]');
    const transfer = answered.getByRole('button', { name: 'Transfer', exact: true });
    await expect.poll(() => transfer.count()).toBe(1);
    await transfer.click();
    const field = answered.getByRole('combobox', {
      name: 'Transfer to (name, extension or number)',
    });
    await page.keyboard.type('bo');
    const list = answered.getByRole('listbox', { name: 'Colleagues' });
    await expect.poll(() => list.getByRole('option').count()).toBe(3);
    expect(await field.getAttribute('aria-expanded')).toBe('true');
    expect(await list.getByRole('option').first().getAttribute('aria-label')).toBe(
      'Bob Stone, extension 204',
    );
    // The arrows mark an option; the focus stays in the field (aria-activedescendant).
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const marked = answered.locator('[role="option"][aria-selected="true"]');
    expect(await marked.getAttribute('aria-label')).toBe('Zoë Bowman, extension 215');
    expect(await field.getAttribute('aria-activedescendant')).toBe(await marked.getAttribute('id'));
    expect(await page.evaluate('document.activeElement?.getAttribute("role")')).toBe('combobox');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    // Enter picked Bob: the field names him, the list is closed, nothing transferred yet.
    expect(await field.inputValue()).toBe('Bob Stone');
    expect(await field.getAttribute('aria-expanded')).toBe('false');
    expect(await opened.recorded('transferCall')).toEqual([]);
    await page.keyboard.press('Enter');
    expect((await opened.recorded('transferCall')).map((c) => c.args)).toEqual([
      ['a1', '204', 'blind'],
    ]);

    // A name that is no colleague says so; a number typed is sent as typed (main's rule judges it).
    await transfer.click();
    await page.keyboard.type('nobody');
    await expect.poll(() => answered.getByTestId('colleague-none').count()).toBe(1);
    expect(await field.getAttribute('aria-describedby')).toBeTruthy();
    await field.fill('07700 900123');
    await page.keyboard.press('Enter');
    expect((await opened.recorded('transferCall')).map((c) => c.args)[1]).toEqual([
      'a1',
      '07700 900123',
      'blind',
    ]);
    // Escape closes the list first, then the field; the card stays.
    await transfer.click();
    await page.keyboard.type('2');
    await expect.poll(() => field.getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.press('Escape');
    expect(await field.getAttribute('aria-expanded')).toBe('false');
    await page.keyboard.press('Escape');
    expect(await field.count()).toBe(0);
    expect(await answered.count()).toBe(1);
    expect(await axeViolations(page)).toEqual([]);
    await expectClean(opened);
    await opened.close();
  });

  it('Consult first, then Cancel transfer (back with the caller) or Complete transfer', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({ calls: cards(), offered: ALL, colleagues: COLLEAGUES }),
    );
    const { page } = opened;
    const answered = page.locator('li[data-call-id="a1"]');
    const transfer = answered.getByRole('button', { name: 'Transfer', exact: true });
    const consult = async () => {
      await transfer.click();
      await page.keyboard.type('204');
      await expect.poll(() => answered.getByRole('option').count()).toBe(1);
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      await answered.getByRole('button', { name: 'Consult first' }).click();
    };
    await expect.poll(() => transfer.count()).toBe(1);
    await consult();
    expect((await opened.recorded('transferCall')).map((c) => c.args)).toEqual([
      ['a1', '204', 'attended'],
    ]);
    const complete = answered.getByRole('button', { name: 'Complete transfer' });
    const cancel = answered.getByRole('button', { name: 'Cancel transfer' });
    await expect.poll(() => complete.count()).toBe(1);
    expect(await cancel.count()).toBe(1);
    expect(await transfer.count()).toBe(0);
    expect(await answered.getByRole('button', { name: 'Hang up' }).count()).toBe(0);
    expect(await answered.getByTestId('consulting').textContent()).toBe(
      'Consulting Bob Stone (204). The caller is on hold.',
    );
    expect(await axeViolations(page)).toEqual([]);

    await cancel.click();
    expect((await opened.recorded('cancelTransfer')).map((c) => c.args)).toEqual([['a1']]);
    await expect
      .poll(() => page.getByTestId('call-news').textContent())
      .toBe('Transfer cancelled. You are back with the caller.');
    await expect.poll(() => transfer.count()).toBe(1);
    expect(await answered.getByTestId('consulting').count()).toBe(0);

    await consult();
    await complete.click();
    expect((await opened.recorded('completeTransfer')).map((c) => c.args)).toEqual([['a1']]);
    await expect
      .poll(() => page.getByTestId('call-news').textContent())
      .toBe('The call was transferred.');
    expect(await complete.count()).toBe(0);
    await expectClean(opened);
    await opened.close();
  });

  it('says the phone system’s refusal in a status line', async () => {
    const opened = await openPage(
      getBrowser(),
      origin(),
      'popup',
      fixture({
        calls: cards(),
        offered: ALL,
        callActionResult: {
          ok: false,
          refusal: 'permission',
          message:
            'The phone system refused: the API application lacks the Call Control permission.',
        },
      }),
    );
    const { page } = opened;
    await page.locator('li[data-call-id="m1"]').getByRole('button', { name: 'Call back' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'permission' }).count())
      .toBe(1);
    await opened.close();
  });

  it('History: Call back on each row only where dialling is offered, named for screen readers', async () => {
    const none = await openPage(getBrowser(), origin(), 'history', fixture());
    await expect.poll(() => none.page.locator('li[data-call-id]').count()).toBeGreaterThan(0);
    expect(await none.page.locator('button[data-action="call-back"]').count()).toBe(0);
    await none.close();

    const opened = await openPage(getBrowser(), origin(), 'history', fixture({ offered: ALL }));
    const { page } = opened;
    const row = page.locator('li[data-call-id="h2"]');
    await expect.poll(() => row.locator('button[data-action="call-back"]').count()).toBe(1);
    const button = row.getByRole('button', { name: /^Call back / });
    expect(await button.count()).toBe(1);
    await button.click();
    expect((await opened.recorded('callBackFromHistory')).map((c) => c.args)).toEqual([['h2']]);
    await expect
      .poll(() => page.getByTestId('call-news').textContent())
      .toContain('Your phone rings first');
    await expectClean(opened);
    await opened.close();
  });

  for (const [scheme, locale] of [
    ['light', 'en'],
    ['dark', 'en'],
    ['light', 'ar'],
  ] as const) {
    it(`screenshot: Call back, Transfer with the colleague picker, Hang up; Complete and Cancel transfer (${locale}, ${scheme})`, async () => {
      const opened = await openPage(
        getBrowser(),
        origin(),
        'popup',
        fixture({ calls: cards(), offered: ALL, locale, colleagues: COLLEAGUES }),
        { colorScheme: scheme, viewport: { width: 360, height: 560 }, fixedTime: SHOT_TIME },
      );
      const { page } = opened;
      const answered = page.locator('li[data-call-id="a1"]');
      await expect.poll(() => page.locator('button[data-action]').count()).toBe(3);
      await answered.locator('button[data-action="transfer"]').click();
      await page.keyboard.type(locale === 'ar' ? 'س' : 'bo');
      await expect.poll(() => answered.getByRole('option').count()).toBeGreaterThan(0);
      await page.keyboard.press('ArrowDown');
      await screenshot(page.locator('.popup'), `popup-call-actions-${locale}-${scheme}`);
      await page.keyboard.press('Enter');
      await answered.locator('button[data-action="transfer-consult"]').click();
      await expect.poll(() => answered.getByTestId('consulting').count()).toBe(1);
      await screenshot(page.locator('.popup'), `popup-consulting-${locale}-${scheme}`);
      await expectClean(opened);
      await opened.close();
    });
  }
});
