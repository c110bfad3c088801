import { describe, expect, it } from 'vitest';
import type { PresenterSettings } from '../../src-main/core/presenters/call-presenter.ts';
import { presenterHarness } from '../../rigs/app-harness.ts';

function setup(overrides: Partial<PresenterSettings> = {}) {
  return presenterHarness({ settings: overrides });
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

  it('a transferred call names the original caller, and the colleague who transferred it', () => {
    const t = presenterHarness({
      names: { '+14155550123': 'Ada Lovelace', '102': 'Grace Hopper' },
    });
    t.presenter.handlePop({ ...t.pop('c1'), transferredBy: '102' });
    t.presenter.handlePop({ ...t.pop('c2'), transferredBy: '109' }); // not on the list: its number
    t.presenter.handlePop(t.pop('c3'));
    const byId = Object.fromEntries(t.popup.cards.map((c) => [c.callId, c]));
    expect(byId.c1).toMatchObject({ callerName: 'Ada Lovelace', transferredBy: 'Grace Hopper' });
    expect(byId.c2?.transferredBy).toBe('109');
    expect(byId.c3?.transferredBy).toBeUndefined();
  });

  it('a ring whose caller the phone system never reported: the card says so (callerUnseen)', () => {
    const t = setup();
    t.presenter.handlePop({ ...t.pop('c1', ''), callerUnseen: true });
    t.presenter.handlePop(t.pop('c2'));
    const byId = Object.fromEntries(t.popup.cards.map((c) => [c.callId, c]));
    expect(byId.c1?.callerUnseen).toBe(true);
    expect(byId.c2?.callerUnseen).toBeUndefined();
  });

  it('a caller ID cut by the engine still pops, and the card says it was cut', () => {
    const t = setup();
    t.presenter.handlePop({ ...t.pop('c1', `+1${'5'.repeat(255)}`), fromTruncated: true });
    expect(t.notifier.shown).toHaveLength(1);
    expect(t.popup.cards[0]?.fromDisplay).toMatch(/^\+15{61}…$/);
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
    expect(t.popup.cards).toMatchObject([
      { callId: 'c1', state: 'answered', outcome: 'answered-elsewhere', endedAt: t.clock.now() },
    ]);
    await t.clock.advance(3999);
    expect(t.popup.visible).toBe(true);
    await t.clock.advance(1);
    expect(t.popup.visible).toBe(false);
    expect(t.presenter.cards()).toEqual([]);
    expect(t.notifier.open.size).toBe(0);
    expect(t.history.list()[0]).toMatchObject({
      outcome: 'answered-elsewhere',
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

  it('a ring that ended in voicemail (a Yeastar call record says so) is voicemail, not missed', () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1'));
    t.presenter.handleDismiss(t.dismiss('c1', 'voicemail'));
    expect(t.history.list()[0]).toMatchObject({ outcome: 'voicemail' });
    expect(t.history.missedCount()).toBe(0);
  });

  it('a call record gives History the talk time of the user’s own leg', () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1'));
    t.presenter.handleDismiss(t.dismiss('c1', 'answered'));
    t.presenter.handleRecord({ callId: 'c1', to: '102', status: 'ANSWERED', talkSec: 9 });
    t.presenter.handleRecord({ callId: 'c1', to: '101', status: 'ANSWERED', talkSec: 61 });
    expect(t.history.list()[0]).toMatchObject({ outcome: 'answered', talkSec: 61 });
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
    expect(t.history.get('c1')?.outcome).toBe('ringing');
  });

  it('records how a call ended even after the user closed its card while it rang', () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1'));
    t.presenter.dismiss('c1');
    t.presenter.handleDismiss(t.dismiss('c1', 'ended'));
    expect(t.history.get('c1')?.outcome).toBe('missed');
    expect(t.history.missedCount()).toBe(1);
    t.presenter.handlePop(t.pop('c2'));
    t.presenter.dismiss('c2');
    t.presenter.handleDismiss(t.dismiss('c2', 'answered', '102'));
    t.presenter.handleDismiss(t.dismiss('c2', 'ended'));
    expect(t.history.get('c2')?.outcome).toBe('answered-elsewhere');
    expect(t.presenter.cards()).toEqual([]);
    expect(t.popup.visible).toBe(false);
  });

  it('drops a ring that never gets a stop event', async () => {
    const t = setup();
    t.presenter.handlePop(t.pop('c1'));
    await t.clock.advance(5 * 60_000);
    expect(t.presenter.cards()).toEqual([]);
    expect(t.history.get('c1')?.outcome).toBe('ended');
  });

  it('closes the card of a call whose id is as long as the engine accepts (256 characters)', async () => {
    const t = setup();
    const id = 'c'.repeat(256);
    t.presenter.handlePop(t.pop(id));
    const shown = t.presenter.cards()[0]?.callId ?? '';
    t.presenter.handleDismiss(t.dismiss(id, 'answered', '102'));
    await t.clock.advance(4000);
    expect(t.presenter.cards()).toEqual([]);
    expect(t.popup.visible).toBe(false);
    expect(t.history.get(shown)?.outcome).toBe('answered-elsewhere');
    t.presenter.handlePop(t.pop('d'.repeat(256)));
    t.presenter.dismiss(t.presenter.cards()[0]?.callId ?? ''); // the id the popup sends back
    expect(t.presenter.cards()).toEqual([]);
  });
});

describe('CallPresenter: how a call ended, for the card and the history', () => {
  it('tells answered here from answered by a colleague, and missed from ended', () => {
    const mine = new Set(['101', '+14155550100']);
    const t = presenterHarness({ isUserNumber: (to) => mine.has(to) });
    // Rang the user's DID; picked up on the user's extension (a DID routed to it): the user's.
    t.presenter.handlePop(t.pop('here', '+14155550123', '+14155550100'));
    t.presenter.handleDismiss(t.dismiss('here', 'answered', '101'));
    // Rang the user and a colleague; the colleague picked up.
    t.presenter.handlePop(t.pop('there', '+14155550123', '101'));
    t.presenter.handleDismiss(t.dismiss('there', 'answered', '205'));
    // Hung up while ringing, or sent to voicemail.
    t.presenter.handlePop(t.pop('gone', '+14155550123', '101'));
    t.presenter.handleDismiss(t.dismiss('gone', 'ended', '101'));
    t.presenter.handlePop(t.pop('vm', '+14155550123', '101'));
    t.presenter.handleDismiss(t.dismiss('vm', 'voicemail', '101'));
    const outcome = (id: string) => t.presenter.cards().find((c) => c.callId === id)?.outcome;
    expect([outcome('here'), outcome('there'), outcome('gone'), outcome('vm')]).toEqual([
      'answered',
      'answered-elsewhere',
      'missed',
      'voicemail',
    ]);
    expect(['here', 'there', 'gone', 'vm'].map((id) => t.history.get(id)?.outcome)).toEqual([
      'answered',
      'answered-elsewhere',
      'missed',
      'voicemail',
    ]);
    // A later "ended" closes an answered call without changing what it was; the user's own
    // answer after a colleague's hold (a transfer back) improves it.
    t.presenter.handleDismiss(t.dismiss('here', 'ended', '101'));
    t.presenter.handleDismiss(t.dismiss('there', 'answered', '101'));
    expect(outcome('here')).toBe('answered');
    expect(t.history.get('there')?.outcome).toBe('answered');
    expect(outcome('there')).toBe('answered');
  });

  it('puts the kind, the called line’s name and number, and the ring’s end on the card and in the history', () => {
    const t = presenterHarness({
      names: { '+14155550123': 'Ada Lovelace', '+14155550100': 'Sales line' },
    });
    t.presenter.handlePop(t.pop('c1', '+14155550123', '+14155550100'));
    expect(t.popup.cards[0]).toMatchObject({
      kind: 'call',
      to: '+14155550100',
      toDisplay: '(415) 555-0100',
      toName: 'Sales line',
      endedAt: null,
      outcome: 'ringing',
    });
    expect(t.history.get('c1')).toMatchObject({
      kind: 'call',
      toDisplay: '(415) 555-0100',
      toName: 'Sales line',
    });
  });
});

describe('CallPresenter and a directory that loads late', () => {
  it('fills in the caller name of a ringing card when the directory learns it', () => {
    const t = presenterHarness({ names: {} });
    t.presenter.handlePop(t.pop('c1', '102'));
    expect(t.popup.cards[0]?.callerName).toBeNull();
    t.names['102'] = 'Grace Hopper';
    t.presenter.refreshNames();
    expect(t.popup.cards[0]?.callerName).toBe('Grace Hopper');
    expect(t.history.get('c1')?.callerName).toBe('Grace Hopper');
  });
});

describe('CallPresenter times', () => {
  it("dates a card by this computer's clock when the ring arrived, not the server's timestamp", () => {
    const t = presenterHarness();
    t.presenter.handlePop(t.pop('c1', '1', '101', t.clock.now() - 90_000));
    expect(t.popup.cards[0]?.startedAt).toBe(t.clock.now());
  });
});
