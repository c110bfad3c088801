import { describe, expect, it } from 'vitest';
import { CallPresenter, type PresenterSettings } from '../../src-main/core/app/call-presenter.ts';
import { HistoryStore } from '../../src-main/core/app/history-store.ts';
import type { DismissEvent, PopEvent } from '../../src-main/core/app/ports.ts';
import { formatNumber } from '../../src-main/core/app/phone.ts';
import { silentLogger } from '../../src-main/core/log.ts';
import { FakeClock } from '../support/fake-clock.ts';
import { FakeClipboard, FakeNotifier, FakeOpener, FakePopup } from './support.ts';

function setup(overrides: Partial<PresenterSettings> = {}) {
  const clock = new FakeClock();
  const settings: PresenterSettings = {
    doNotDisturb: false,
    sound: true,
    autoOpenCrm: false,
    crmUrlTemplate: 'https://crm.example.com/?phone={from}',
    crmAllowedSchemes: ['https'],
    popupLingerSec: 4,
    ...overrides,
  };
  const history = new HistoryStore({
    path: 'mem',
    clock,
    logger: silentLogger,
    limit: 100,
    write: async () => {},
  });
  const names: Record<string, string> = { '+14155550123': 'Ada Lovelace' };
  const notifier = new FakeNotifier();
  const popup = new FakePopup();
  const opener = new FakeOpener();
  const clipboard = new FakeClipboard();
  const presenter = new CallPresenter({
    clock,
    logger: silentLogger,
    directory: { lookup: (n) => names[n] ?? null, format: (n) => formatNumber(n, 'US') },
    history,
    notifier,
    popup,
    urlOpener: opener,
    clipboard,
    settings: () => settings,
  });
  let seq = 0;
  const pop = (callId: string, from = '+14155550123', to = '101'): PopEvent => ({
    callId,
    from,
    to,
    eventId: `e${++seq}`,
    timestamp: clock.now(),
    receivedAt: clock.now(),
    source: 'direct',
  });
  const dismiss = (callId: string, state: string, to = '101'): DismissEvent => ({
    callId,
    state,
    to,
    eventId: `e${++seq}`,
  });
  return { clock, settings, history, notifier, popup, opener, clipboard, presenter, pop, dismiss };
}

describe('CallPresenter', () => {
  it('shows a card with the directory name, notifies, and records history', () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1'));
    expect(t.popup.visible).toBe(true);
    expect(t.popup.cards).toMatchObject([
      {
        callId: 'c1',
        callerName: 'Ada Lovelace',
        fromDisplay: '(415) 555-0123',
        state: 'ringing',
        canOpenCrm: true,
      },
    ]);
    expect(t.notifier.shown).toHaveLength(1);
    expect(t.notifier.shown[0]?.options.silent).toBe(false);
    expect(t.history.list()).toMatchObject([
      { callId: 'c1', outcome: 'ringing', callerName: 'Ada Lovelace' },
    ]);
  });

  it('stacks calls newest first, one card per call', async () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1'));
    await t.clock.advance(1000);
    t.presenter.handlePop(t.pop('c2', '+442079460958'));
    t.presenter.handlePop(t.pop('c2', '+442079460958', '+14155550999')); // also rings the user's DID
    expect(t.popup.cards.map((c) => c.callId)).toEqual(['c2', 'c1']);
    expect(t.notifier.shown).toHaveLength(2);
  });

  it('lingers after the call stops ringing, then removes the card and hides the popup', async () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1'));
    t.presenter.handleDismiss(t.dismiss('c1', 'answered', '102')); // answered elsewhere
    expect(t.popup.cards).toMatchObject([{ callId: 'c1', state: 'answered' }]);
    await t.clock.advance(3999);
    expect(t.popup.visible).toBe(true);
    await t.clock.advance(1);
    expect(t.popup.visible).toBe(false);
    expect(t.presenter.cards()).toEqual([]);
    expect(t.notifier.open.size).toBe(0);
    expect(t.history.list()[0]).toMatchObject({
      outcome: 'answered',
      endedAt: t.clock.now() - 4000,
    });
  });

  it('keeps ringing while another of the user’s numbers still rings', () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1', '+14155550123', '101'));
    t.presenter.handlePop(t.pop('c1', '+14155550123', '102'));
    t.presenter.handleDismiss(t.dismiss('c1', 'voicemail', '101'));
    expect(t.presenter.cards()[0]?.state).toBe('ringing');
    t.presenter.handleDismiss(t.dismiss('c1', 'voicemail', '102'));
    expect(t.presenter.cards()[0]?.state).toBe('voicemail');
  });

  it('counts a call that ended without being answered as missed', async () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1'));
    t.presenter.handleDismiss(t.dismiss('c1', 'ended'));
    expect(t.history.missedCount()).toBe(1);
    t.presenter.handlePop(t.pop('c2'));
    t.presenter.handleDismiss(t.dismiss('c2', 'answered'));
    t.presenter.handleDismiss(t.dismiss('c2', 'ended'));
    expect(t.history.missedCount()).toBe(1);
    expect(t.history.get('c2')?.outcome).toBe('answered');
  });

  it('under Do Not Disturb: no notification, popup or CRM, but history records the call', () => {
    const t = setup({ doNotDisturb: true, autoOpenCrm: true });
    t.presenter.handlePop(t.pop('c1'));
    expect(t.notifier.shown).toEqual([]);
    expect(t.popup.visible).toBe(false);
    expect(t.opener.opened).toEqual([]);
    expect(t.history.list()).toHaveLength(1);
    t.presenter.showPopup(); // the user asks for it
    expect(t.popup.visible).toBe(true);
  });

  it('notifies silently when sound is off, and auto-opens the CRM link once', () => {
    const t = setup({ sound: false, autoOpenCrm: true });
    t.presenter.handlePop(t.pop('c1'));
    t.presenter.handlePop(t.pop('c1', '+14155550123', '102'));
    expect(t.notifier.shown[0]?.options.silent).toBe(true);
    expect(t.opener.opened).toEqual(['https://crm.example.com/?phone=%2B14155550123']);
  });

  it('opens the CRM and copies the number on request, refusing unknown calls', async () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1', '<img src=x onerror=alert(1)>'));
    expect(await t.presenter.openCrm('c1')).toEqual({ ok: true });
    expect(t.opener.opened).toEqual([
      'https://crm.example.com/?phone=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E',
    ]);
    expect(t.presenter.copyNumber('c1')).toBe(true);
    expect(t.clipboard.text).toBe('<img src=x onerror=alert(1)>');
    expect((await t.presenter.openCrm('nope')).ok).toBe(false);
  });

  it('user dismissal removes the card at once', () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1'));
    t.presenter.dismiss('c1');
    expect(t.popup.visible).toBe(false);
    expect(t.history.list()[0]?.outcome).toBe('ringing');
  });

  it('drops a ring that never gets a stop event', async () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1'));
    await t.clock.advance(5 * 60_000);
    expect(t.presenter.cards()).toEqual([]);
    expect(t.history.get('c1')?.outcome).toBe('ended');
  });
});

describe('CallPresenter and a directory that loads late', () => {
  it('fills in the caller name of a ringing card when the directory learns it', () => {
    const clock = new FakeClock();
    const names: Record<string, string> = {};
    const popup = new FakePopup();
    const history = new HistoryStore({
      path: 'mem',
      clock,
      logger: silentLogger,
      limit: 10,
      write: async () => {},
    });
    const presenter = new CallPresenter({
      clock,
      logger: silentLogger,
      directory: { lookup: (n) => names[n] ?? null, format: (n) => n },
      history,
      notifier: new FakeNotifier(),
      popup,
      urlOpener: new FakeOpener(),
      clipboard: new FakeClipboard(),
      settings: () => ({
        doNotDisturb: false,
        sound: true,
        autoOpenCrm: false,
        crmUrlTemplate: '',
        crmAllowedSchemes: [],
        popupLingerSec: 4,
      }),
    });
    presenter.handlePop({
      callId: 'c1',
      from: '102',
      to: '101',
      eventId: 'e1',
      timestamp: clock.now(),
      receivedAt: clock.now(),
      source: 'direct',
    });
    expect(popup.cards[0]?.callerName).toBeNull();
    names['102'] = 'Grace Hopper';
    presenter.refreshNames();
    expect(popup.cards[0]?.callerName).toBe('Grace Hopper');
    expect(history.get('c1')?.callerName).toBe('Grace Hopper');
  });
});

describe('CallPresenter times', () => {
  it("dates a card by this computer's clock when the ring arrived, not the server's timestamp", () => {
    const clock = new FakeClock();
    const popup = new FakePopup();
    const presenter = new CallPresenter({
      clock,
      logger: silentLogger,
      directory: { lookup: () => null, format: (n) => n },
      history: new HistoryStore({
        path: 'mem',
        clock,
        logger: silentLogger,
        limit: 10,
        write: async () => {},
      }),
      notifier: new FakeNotifier(),
      popup,
      urlOpener: new FakeOpener(),
      clipboard: new FakeClipboard(),
      settings: () => ({
        doNotDisturb: false,
        sound: true,
        autoOpenCrm: false,
        crmUrlTemplate: '',
        crmAllowedSchemes: [],
        popupLingerSec: 4,
      }),
    });
    presenter.handlePop({
      callId: 'c1',
      from: '1',
      to: '101',
      eventId: 'e1',
      timestamp: clock.now() - 90_000,
      receivedAt: clock.now(),
      source: 'direct',
    });
    expect(popup.cards[0]?.startedAt).toBe(clock.now());
  });
});
