/**
 * Voicemail, SMS, trunk and presence as the user sees them: notifications, History items (kept on
 * disk like calls), the trunk warning and presence in the status.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HistoryStore } from '../../src-main/core/history/history-store.ts';
import {
  NoticePresenter,
  presenceLabel,
  trunkWords,
} from '../../src-main/core/presenters/notice-presenter.ts';
import type { Notice } from '../../src-main/core/events/notices.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { FakeNotifier } from '../../rigs/app-harness.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';

const tmp = useTempDir('sp-notices-');

const HOSTILE_NAME = '\u202Egnp.exe\u202C <script>alert(1)</script>\u200B';
const HOSTILE_TEXT =
  'Hi\u202E <img src=x onerror=alert(1)> https://evil.example/login\r\n\r\n\r\nline\u200Btwo\u0007';

const stores: HistoryStore[] = [];
afterEach(async () => {
  for (const h of stores.splice(0)) await h.flush();
});

function setup(settings = { doNotDisturb: false, sound: true }) {
  const clock = new FakeClock();
  const path = join(tmp.path, `history-${Math.random().toString(36).slice(2)}.json`);
  const history = new HistoryStore({ path, clock, logger: silentLogger, limit: 100 });
  stores.push(history);
  const notifier = new FakeNotifier();
  let statusChanges = 0;
  const names = new Map([['102', 'Grace Hopper']]);
  const presenter = new NoticePresenter({
    clock,
    logger: silentLogger,
    directory: { lookup: (n) => names.get(n) ?? null, format: (n) => `fmt(${n})` },
    history,
    notifier,
    settings: () => settings,
    onStatusChange: () => statusChanges++,
  });
  const base = { eventId: 'e', timestamp: clock.now(), receivedAt: clock.now(), source: 'direct' };
  const vm = (over: Partial<Extract<Notice, { type: 'voicemail' }>> = {}): Notice => ({
    ...base,
    type: 'voicemail',
    voicemailId: 'v1',
    extension: '101',
    from: '+4930123456',
    callerName: null,
    durationSec: 42,
    notify: true,
    ...over,
  });
  const sms = (over: Partial<Extract<Notice, { type: 'sms' }>> = {}): Notice => ({
    ...base,
    type: 'sms',
    messageId: 'm1',
    from: '+4930123456',
    to: '+14155550100',
    text: 'Call me back',
    notify: true,
    ...over,
  });
  return { clock, path, history, notifier, presenter, vm, sms, statusChanges: () => statusChanges };
}

describe('NoticePresenter', () => {
  it('a voicemail: "Voicemail from <name>, 42 sec" and a History item; the directory names a colleague', () => {
    const t = setup();
    t.presenter.handle(t.vm({ callerName: 'Ada Lovelace' }));
    t.presenter.handle(t.vm({ voicemailId: 'v2', from: '102' }));
    t.presenter.handle(t.vm({ voicemailId: 'v3', durationSec: null }));
    expect(t.notifier.notices.map((n) => n.alert.title)).toEqual([
      'Voicemail from Ada Lovelace, 42 sec',
      'Voicemail from Grace Hopper, 42 sec',
      'Voicemail from fmt(+4930123456)',
    ]);
    // Newest first, as calls.
    expect(t.history.list().map((e) => [e.kind, e.callId, e.callerName])).toEqual([
      ['voicemail', 'voicemail:v3', null],
      ['voicemail', 'voicemail:v2', 'Grace Hopper'],
      ['voicemail', 'voicemail:v1', 'Ada Lovelace'],
    ]);
    expect(t.history.missedCount()).toBe(0);
    expect(t.history.unseenNoticeCount()).toBe(3);
  });

  it('an SMS: sender and a one-line safe preview; the History keeps the text inert, lines and all', () => {
    const t = setup();
    t.presenter.handle(t.sms({ from: HOSTILE_NAME, text: HOSTILE_TEXT }));
    const [alert] = t.notifier.notices.map((n) => n.alert);
    expect(alert?.title).toBe('SMS from fmt(gnp.exe <script>alert(1)</script>)');
    expect(alert?.body).toBe('Hi <img src=x onerror=alert(1)> https://evil.example/login linetwo');
    const item = t.history.list()[0];
    expect(item?.kind === 'sms' && item.text).toBe(
      'Hi <img src=x onerror=alert(1)> https://evil.example/login\n\nlinetwo',
    );
    // `from` is kept as received (it is copied and searched); what is shown is clean.
    const shown = item && [item.fromDisplay, item.callerName, item.kind === 'sms' && item.text];
    // eslint-disable-next-line no-control-regex -- BEL is one of the characters that must be gone
    expect(JSON.stringify(shown)).not.toMatch(/[\u202A-\u202E\u200B\u0007]/);
  });

  it('a 1,600-character SMS: the notification shows 160, the History all of it', () => {
    const t = setup();
    t.presenter.handle(t.sms({ text: 'x'.repeat(1600) }));
    expect(Array.from(t.notifier.notices[0]!.alert.body)).toHaveLength(160);
    const item = t.history.list()[0];
    expect(item?.kind === 'sms' && item.text.length).toBe(1600);
  });

  it('a replay older than an hour, or Do Not Disturb: History only, no notification; a re-send: nothing', () => {
    const t = setup({ doNotDisturb: false, sound: false });
    t.presenter.handle(t.sms({ messageId: 'old', notify: false, receivedAt: 5 }));
    t.presenter.handle(t.vm({ voicemailId: 'old', notify: false }));
    t.presenter.handle(t.sms({ messageId: 'new' }));
    t.presenter.handle(t.sms({ messageId: 'new' }));
    expect(t.notifier.notices).toHaveLength(1);
    expect(t.notifier.notices[0]?.options).toEqual({ silent: true });
    expect(t.history.list().map((e) => e.callId)).toEqual(['sms:new', 'voicemail:old', 'sms:old']);
    const dnd = setup({ doNotDisturb: true, sound: true });
    dnd.presenter.handle(dnd.vm());
    expect(dnd.notifier.notices).toEqual([]);
    expect(dnd.history.list()).toHaveLength(1);
  });

  it('trunk warning while any trunk is down, until it recovers; presence said in words', () => {
    const t = setup();
    const trunk = (name: string, registered: boolean, down: string[]): Notice => ({
      eventId: 'e',
      timestamp: 1,
      receivedAt: 1,
      source: 'direct',
      type: 'trunk',
      trunk: name,
      status: registered ? 'registered' : 'unreachable',
      registered,
      down,
    });
    t.presenter.handle(trunk('SIP-Main', false, ['SIP-Main']));
    expect(t.presenter.statusFields().trunkWarning).toEqual({
      trunks: ['SIP-Main'],
      message: 'Calls from outside may not reach you: trunk SIP-Main is not registered.',
    });
    t.presenter.handle(trunk('B\u202E<b>', false, ['B\u202E<b>', 'SIP-Main']));
    expect(t.presenter.statusFields().trunkWarning?.message).toBe(
      'Calls from outside may not reach you: trunks B<b> and SIP-Main are not registered.',
    );
    t.presenter.handle(trunk('E', false, ['A', 'B', 'C', 'D', 'E']));
    expect(t.presenter.statusFields().trunkWarning?.message).toBe(
      'Calls from outside may not reach you: trunks A, B, C, and 2 more are not registered.',
    );
    t.presenter.handle(trunk('SIP-Main', true, []));
    expect(t.presenter.statusFields().trunkWarning).toBeUndefined();
    t.presenter.handle({
      eventId: 'e',
      timestamp: 1,
      receivedAt: 1,
      source: 'direct',
      type: 'presence',
      extension: '101',
      status: 'do_not_disturb',
    });
    expect(t.presenter.statusFields().presence).toEqual({
      status: 'do_not_disturb',
      label: 'Do not disturb',
      doNotDisturb: true,
    });
    expect(t.statusChanges()).toBe(5);
    t.presenter.reset();
    expect(t.presenter.statusFields()).toEqual({});
  });

  it('a feature without its scope is in the status with its remedy', () => {
    const t = setup();
    t.presenter.setFeatures([
      { feature: 'voicemail', code: 30015, state: 'on' },
      { feature: 'sms', code: 30031, state: 'no-scope', reason: 'SMS is off.', remedy: 'Grant.' },
    ]);
    expect(t.presenter.statusFields().featureProblems).toEqual([
      { feature: 'sms', reason: 'SMS is off.', remedy: 'Grant.' },
    ]);
  });

  it('voicemail and SMS items survive a restart (atomic file); a corrupt item is dropped, the rest kept', async () => {
    const t = setup();
    t.presenter.handle(t.vm({ callerName: HOSTILE_NAME }));
    t.presenter.handle(t.sms({ text: HOSTILE_TEXT }));
    await t.history.flush();
    const again = new HistoryStore({
      path: t.path,
      clock: t.clock,
      logger: silentLogger,
      limit: 10,
    });
    await again.load();
    expect(again.list()).toEqual(t.history.list());
    // Someone edits the file: a wrong kind, a voicemail without its id, hostile text in a field.
    const file = JSON.parse(await readFile(t.path, 'utf8')) as { entries: unknown[] };
    file.entries.push(
      { kind: 'fax', callId: 'f', from: '1', to: '2', startedAt: 1 },
      { kind: 'voicemail', from: '1', to: '2', startedAt: 1 },
      {
        kind: 'sms',
        callId: 'sms:x',
        from: '1',
        to: '2',
        startedAt: 0,
        text: `a\u202Eb${'c'.repeat(5000)}`,
        callerName: 7,
      },
    );
    await writeFile(t.path, JSON.stringify(file));
    const third = new HistoryStore({
      path: t.path,
      clock: t.clock,
      logger: silentLogger,
      limit: 10,
    });
    await third.load();
    expect(third.list().map((e) => e.callId)).toEqual(['sms:m1', 'voicemail:v1', 'sms:x']);
    const edited = third.list()[2];
    expect(edited?.kind === 'sms' && [edited.text.length, edited.text.slice(0, 3)]).toEqual([
      1600,
      'abc',
    ]);
    expect(edited?.callerName).toBeNull();
  });

  it("words for presence and trunks, in the user's language", () => {
    const en = createTranslator('en', { isolate: false });
    const de = createTranslator('de', { isolate: false });
    expect(presenceLabel('business_trip', en)).toBe('Business trip');
    expect(presenceLabel('business_trip', de)).toBe('Geschäftsreise');
    // A word the phone system sends that the catalogue does not know stays the system's word.
    expect(presenceLabel('on_a_boat', de)).toBe('On a boat');
    expect(presenceLabel('\u202E', en)).toBe('Unknown');
    expect(trunkWords(['sip-1'], en)).toBe(
      'Calls from outside may not reach you: trunk sip-1 is not registered.',
    );
    expect(trunkWords(['a', 'b', 'c', 'd', 'e'], de)).toBe(
      'Externe Anrufe erreichen Sie eventuell nicht: Leitungen a, b, c und 2 weitere sind nicht registriert.',
    );
  });
});
