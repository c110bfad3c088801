import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { Notification as NotificationType, NotificationConstructorOptions } from 'electron';
import { DesktopHealth } from '../../src-main/core/app/desktop-health.ts';
import { ElectronNotifier, MAX_HELD_NOTIFICATIONS } from '../../src-main/electron/notifier.ts';
import { fixedTranslator, PLAIN_ENGLISH } from '../../src-shared/i18n/locale-state.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { Notification, resetElectronMock } from '../support/electron-mock.ts';
import { card } from './support.ts';

function notifier(platform: NodeJS.Platform = 'win32', health?: DesktopHealth) {
  const clicks: string[] = [];
  const noticeClicks: string[] = [];
  const n = new ElectronNotifier({
    ...(health ? { health } : {}),
    create: (options: NotificationConstructorOptions) =>
      new Notification(options as Record<string, unknown>) as unknown as NotificationType,
    isSupported: () => Notification.isSupported(),
    onClick: (id) => clicks.push(id),
    onNoticeClick: (id) => noticeClicks.push(id),
    logger: silentLogger,
    platform,
  });
  return { n, clicks, noticeClicks };
}

beforeEach(() => resetElectronMock());

describe('ElectronNotifier', () => {
  it('a voicemail or SMS notification is held until clicked, escapes markup on Linux, and a click reports its id', () => {
    const { n, noticeClicks } = notifier('linux');
    const body = '<a href="https://evil.example">win</a> & <b>more</b>';
    n.showNotice({ id: 'sms:m1', title: 'SMS from Ada', body }, { silent: true });
    expect(Notification.instances[0]?.options).toMatchObject({
      title: 'SMS from Ada',
      body: '&lt;a href="https://evil.example"&gt;win&lt;/a&gt; &amp; &lt;b&gt;more&lt;/b&gt;',
      silent: true,
    });
    expect(n.size).toBe(1);
    Notification.instances[0]?.click();
    expect(noticeClicks).toEqual(['sms:m1']);
    expect(n.size).toBe(0);
    const other = notifier('darwin');
    other.n.showNotice({ id: 'voicemail:v1', title: 'Voicemail', body }, { silent: false });
    expect(Notification.instances[1]?.options).toMatchObject({ body });
  });

  it('keeps a reference to each notification until it is clicked; a click reports the call', () => {
    const { n, clicks } = notifier();
    n.show(card('c1'), { silent: false });
    n.show(card('c2'), { silent: false });
    expect(n.size).toBe(2);
    expect(Notification.instances.every((x) => x.shown)).toBe(true);
    Notification.instances[0]?.click();
    expect(clicks).toEqual(['c1']);
    expect(n.size).toBe(1);
  });

  it('forgets a notification the user closed, and closes the one for a call that is over', () => {
    const { n } = notifier();
    n.show(card('c1'), { silent: false });
    n.show(card('c2'), { silent: false });
    Notification.instances[0]?.emit('close', {});
    expect(n.size).toBe(1);
    n.close('c2');
    expect(Notification.instances[1]?.closed).toBe(true);
    expect(n.size).toBe(0);
  });

  it('replaces the notification of the same call instead of stacking two', () => {
    const { n } = notifier();
    n.show(card('c1'), { silent: false });
    n.show(card('c1'), { silent: false });
    expect(n.size).toBe(1);
    expect(Notification.instances[0]?.closed).toBe(true);
  });

  it('is silent when asked and shows the name as title', () => {
    const { n } = notifier();
    n.show(card('c1'), { silent: true });
    expect(Notification.instances[0]?.options).toMatchObject({
      title: 'Ada Lovelace',
      silent: true,
    });
  });

  it('escapes markup on Linux, where notification daemons interpret it', () => {
    const { n } = notifier('linux');
    n.show(
      card('c1', {
        callerName: null,
        fromDisplay: '<img src=x onerror=alert(1)>',
        toDisplay: '<b>101</b>',
      }),
      { silent: false },
    );
    const body = String(Notification.instances[0]?.options.body);
    expect(body).not.toMatch(/[<>]/);
    expect(body).toContain('&lt;b&gt;101&lt;/b&gt;');
  });

  it('titles a call with no caller ID (anonymous) "Incoming call", never an empty title', () => {
    const { n } = notifier();
    n.show(card('c1', { callerName: null, from: '', fromDisplay: '' }), { silent: false });
    expect(Notification.instances[0]?.options.title).toBe('Incoming call');
  });

  it('does nothing where notifications are not supported', () => {
    Notification.supported = false;
    const { n } = notifier();
    n.show(card('c1'), { silent: false });
    expect(Notification.instances).toEqual([]);
  });

  it('a notification the OS refuses (macOS: permission denied) is said in the status with the remedy, until one shows', async () => {
    const health = new DesktopHealth(silentLogger);
    const { n } = notifier('darwin', health);
    Notification.refusal = 'The operation couldn’t be completed. (UNErrorDomain error 1.)';
    n.show(card('c1'), { silent: false });
    await vi.waitFor(() => expect(health.has('notifications')).toBe(true));
    const [problem] = health.list(PLAIN_ENGLISH.current());
    expect(problem).toMatchObject({
      id: 'notifications',
      reason: 'Notifications are turned off for Screenpop: a ringing call shows only in the popup.',
      remedy: expect.stringContaining('System Settings > Notifications > Screenpop'),
    });
    expect(n.size).toBe(0);
    // In German, and for Windows its own settings.
    const win = notifier('win32', health);
    win.n.show(card('c2'), { silent: false });
    await vi.waitFor(() =>
      expect(health.list(fixedTranslator('de').current())[0]?.remedy).toContain(
        'Einstellungen > System > Benachrichtigungen',
      ),
    );
    Notification.refusal = null;
    n.show(card('c3'), { silent: false });
    await vi.waitFor(() => expect(health.has('notifications')).toBe(false));
  });

  it('on macOS asks for permission at onboarding with a quiet welcome notification', () => {
    const { n } = notifier('darwin');
    n.welcome();
    expect(Notification.instances[0]?.options).toEqual({
      title: 'Screenpop is ready',
      body: 'Calls to your extension will show here. Allow notifications so that you see them.',
      silent: true,
    });
    expect(Notification.instances[0]?.shown).toBe(true);
  });
});

describe('ElectronNotifier: a missed call, and Call back (issue 38)', () => {
  function withCallBack(platform: NodeJS.Platform) {
    Notification.platform = platform;
    const callBacks: string[] = [];
    const noticeClicks: string[] = [];
    const n = new ElectronNotifier({
      create: (options: NotificationConstructorOptions) =>
        new Notification(options as Record<string, unknown>) as unknown as NotificationType,
      isSupported: () => Notification.isSupported(),
      onClick: () => {},
      onNoticeClick: (id) => noticeClicks.push(id),
      onCallBack: (id) => callBacks.push(id),
      logger: silentLogger,
      platform,
    });
    return { n, callBacks, noticeClicks };
  }

  it.each(['win32', 'darwin'] as const)(
    'on %s a missed call replaces its ring notification, and its Call back button reports the call',
    (platform) => {
      const t = withCallBack(platform);
      t.n.show(card('c1'), { silent: false });
      t.n.showMissed(card('c1', { state: 'ended', outcome: 'missed' }), {
        silent: true,
        callBack: true,
      });
      const [ring, missed] = Notification.instances;
      expect(ring?.closed).toBe(true);
      expect(missed?.options).toMatchObject({
        title: 'Missed call from Ada Lovelace',
        body: '(415) 555-0123 · called 101',
        silent: true,
        actions: [{ type: 'button', text: 'Call back' }],
      });
      expect(t.n.size).toBe(1);
      missed?.pressAction(0);
      expect(t.callBacks).toEqual(['c1']);
      expect(t.noticeClicks).toEqual([]);
      expect(t.n.size).toBe(0);
    },
  );

  it('a voicemail’s Call back reports its History item; a click still opens the History', () => {
    const t = withCallBack('win32');
    t.n.showNotice(
      { id: 'voicemail:v1', title: 'Voicemail from Ada', body: '101' },
      { silent: false, callBack: true },
    );
    t.n.showNotice(
      { id: 'voicemail:v2', title: 'Voicemail from Grace', body: '101' },
      { silent: false, callBack: true },
    );
    Notification.instances[0]?.pressAction(0);
    Notification.instances[1]?.click();
    expect(t.callBacks).toEqual(['voicemail:v1']);
    expect(t.noticeClicks).toEqual(['voicemail:v2']);
  });

  it('no button where the core does not offer Call back (no dialling), nor on an SMS', () => {
    const t = withCallBack('win32');
    t.n.showMissed(card('c1', { outcome: 'missed' }), { silent: true, callBack: false });
    t.n.showNotice({ id: 'sms:m1', title: 'SMS from Ada', body: 'hi' }, { silent: true });
    for (const n of Notification.instances) {
      expect(n.options['actions']).toBeUndefined();
      expect(() => n.pressAction(0)).toThrow(/no action/);
    }
  });

  it('on Linux no button (libnotify shows none): clicking a missed call opens the History', () => {
    const t = withCallBack('linux');
    t.n.showMissed(card('c1', { callerName: null, fromDisplay: '<b>0301234567</b>' }), {
      silent: true,
      callBack: true,
    });
    const missed = Notification.instances[0];
    expect(missed?.options).toMatchObject({
      title: 'Missed call from <b>0301234567</b>',
      body: 'called 101',
    });
    expect(missed?.options['actions']).toBeUndefined();
    expect(() => missed?.pressAction(0)).toThrow(/Linux/);
    missed?.click();
    expect(t.noticeClicks).toEqual(['c1']);
  });

  it('holds at most MAX_HELD_NOTIFICATIONS: missed calls and messages left all day do not grow it', () => {
    const t = withCallBack('win32');
    for (let i = 0; i <= MAX_HELD_NOTIFICATIONS; i++)
      t.n.showNotice({ id: `voicemail:v${i}`, title: 'Voicemail', body: '101' }, { silent: true });
    expect(t.n.size).toBe(MAX_HELD_NOTIFICATIONS);
    // The newest is held (its click still answers); the oldest was let go.
    Notification.instances.at(-1)?.click();
    expect(t.noticeClicks).toEqual([`voicemail:v${MAX_HELD_NOTIFICATIONS}`]);
  });

  it('an anonymous missed call is "Missed call", never an empty title', () => {
    withCallBack('win32').n.showMissed(card('c1', { callerName: null, fromDisplay: '' }), {
      silent: true,
    });
    expect(Notification.instances[0]?.options).toMatchObject({ title: 'Missed call' });
  });
});
