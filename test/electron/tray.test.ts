import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { Menu as MenuType, NativeImage, Tray as TrayType } from 'electron';
import type { HistoryEntry, StatusView } from '../../src-main/ipc/contract.ts';
import {
  TrayController,
  trayIconFile,
  type TrayActions,
  type TrayIconName,
} from '../../src-main/electron/tray.ts';
import { decodePng, TRAY_STATES, trayFormats } from '../../assets/tray-formats.ts';
import { applicationMenuTemplate } from '../../src-main/electron/app-menu.ts';
import {
  Menu,
  nativeImage,
  resetElectronMock,
  Tray,
  type MenuItem,
} from '../support/electron-mock.ts';
import { LocaleState } from '../../src-shared/i18n/locale-state.ts';
import { silentLogger } from '../../src-shared/process/log.ts';

function setup(platform: NodeJS.Platform = 'linux', dialOffered?: () => boolean) {
  const actions: TrayActions = {
    retryNow: vi.fn(),
    toggleDoNotDisturb: vi.fn(),
    togglePause: vi.fn(),
    openSettings: vi.fn(),
    openHistory: vi.fn(),
    openDialBox: vi.fn(),
    saveDiagnostics: vi.fn(),
    quit: vi.fn(),
  };
  const tray = new TrayController({
    createTray: (image) => new Tray(image) as unknown as TrayType,
    buildMenu: (template) => Menu.buildFromTemplate(template as MenuItem[]) as unknown as MenuType,
    icon: (name: TrayIconName) =>
      nativeImage.createFromPath(`/app/assets/tray/${name}.png`) as unknown as NativeImage,
    actions,
    timeOfDay: () => '09:15',
    platform,
    ...(dialOffered ? { dialOffered } : {}),
  });
  return { tray, actions, fake: () => Tray.instances[0]! };
}

const status = (over: Partial<StatusView> = {}): StatusView => ({
  state: 'connected',
  paused: false,
  doNotDisturb: false,
  missedCount: 0,
  demo: false,
  ...over,
});
const entry = (over: Partial<HistoryEntry> = {}): HistoryEntry => ({
  kind: 'call',
  callId: 'c1',
  from: '+1',
  fromDisplay: '+1',
  callerName: 'Tom & Jerry',
  callerCompany: null,
  numberKind: null,
  to: '101',
  toDisplay: '101',
  toName: null,
  startedAt: 0,
  endedAt: 1,
  outcome: 'missed',
  seen: false,
  ...over,
});

beforeEach(() => resetElectronMock());

describe('TrayController', () => {
  it.each([
    ['connected', status(), 'connected'],
    ['connecting', status({ state: 'connecting' }), 'connecting'],
    ['degraded', status({ state: 'degraded', reason: 'Relay unreachable' }), 'degraded'],
    ['offline', status({ state: 'offline', reason: 'No network' }), 'offline'],
    [
      'needs attention',
      status({ state: 'needs-attention', reason: 'Key rejected', remedy: 'Fix the key' }),
      'needs-attention',
    ],
    ['paused', status({ paused: true }), 'offline'],
  ])('shows the %s icon', (_n, s, icon) => {
    const { tray, fake } = setup();
    tray.setState(s, 0, []);
    expect((fake().image as { path: string }).path).toBe(`/app/assets/tray/${icon}.png`);
  });

  it('changes the icon as the connection changes, and says why in the tooltip and menu', () => {
    const { tray, fake, actions } = setup();
    tray.setState(status(), 0, []);
    tray.setState(
      status({
        state: 'needs-attention',
        reason: "This computer's IP is not allowed",
        remedy: 'Add it to the allowlist',
      }),
      0,
      [],
    );
    expect((fake().image as { path: string }).path).toContain('needs-attention');
    expect(fake().tooltip).toContain("This computer's IP is not allowed");
    expect(fake().item('status')?.label).toContain('Needs attention');
    expect(fake().item('status')?.enabled).toBe(false);
    expect(fake().item('remedy')?.label).toBe('Add it to the allowlist');
    fake().item('retry')?.click?.();
    expect(actions.retryNow).toHaveBeenCalledTimes(1);
    expect(Tray.instances).toHaveLength(1);
  });

  it('has "Call a number…" only while the phone system offers dialling, and it opens the dial box', () => {
    let offered = false;
    const { tray, fake, actions } = setup('linux', () => offered);
    tray.setState(status(), 0, []);
    expect(fake().item('dial')).toBeUndefined();
    offered = true;
    tray.setState(status(), 0, []);
    expect(fake().item('dial')?.label).toBe('Call a number…');
    fake().item('dial')?.click?.();
    expect(actions.openDialBox).toHaveBeenCalledTimes(1);
    offered = false;
    tray.setState(status(), 0, []);
    expect(fake().item('dial')).toBeUndefined();
    // Without the question (or when it throws) the item is not there.
    const plain = setup('linux', () => {
      throw new Error('no runtime');
    });
    plain.tray.setState(status(), 0, []);
    expect(plain.fake().item('dial')).toBeUndefined();
  });

  it('offers "Save diagnostics…" whatever the state', () => {
    const { tray, fake, actions } = setup();
    tray.setState(status(), 0, []);
    expect(fake().item('diagnostics')?.label).toBe('Save diagnostics…');
    fake().item('diagnostics')?.click?.();
    expect(actions.saveDiagnostics).toHaveBeenCalledTimes(1);
  });

  it('shows the missed-call count in tooltip, title and menu', () => {
    const { tray, fake, actions } = setup();
    tray.setState(status(), 3, [entry()]);
    expect(fake().tooltip).toContain('3 missed calls');
    expect(fake().title).toBe('3');
    fake().item('missed')?.click?.();
    expect(actions.openHistory).toHaveBeenCalled();
    tray.setState(status(), 0, []);
    expect(fake().title).toBe('');
    expect(fake().item('missed')).toBeUndefined();
  });

  it('warns while a trunk is down (degraded icon, tooltip, menu) until it recovers, and says the phone presence', () => {
    const { tray, fake, actions } = setup();
    tray.setState(
      status({
        trunkWarning: {
          trunks: ['SIP-Main'],
          message: 'Calls from outside may not reach you: trunk SIP-Main is not registered.',
        },
        presence: { status: 'do_not_disturb', label: 'Do not disturb', doNotDisturb: true },
        featureProblems: [
          {
            feature: 'sms',
            reason: 'SMS is off: the key may not receive event code 30031.',
            remedy: 'Grant event:30031.',
          },
        ],
      }),
      0,
      [],
    );
    expect((fake().image as { path: string }).path).toContain('degraded');
    expect(fake().tooltip).toContain('Calls from outside may not reach you');
    expect(fake().tooltip).toContain('Phone: Do not disturb');
    expect(fake().item('trunk')?.label).toBe(
      '⚠ Calls from outside may not reach you: trunk SIP-Main is not registered.',
    );
    expect(fake().item('presence')?.label).toBe('Phone presence: Do not disturb');
    fake().item('feature-sms')?.click?.();
    expect(actions.openSettings).toHaveBeenCalled();
    tray.setState(
      status({ presence: { status: 'away', label: 'Away', doNotDisturb: false } }),
      0,
      [],
    );
    expect((fake().image as { path: string }).path).toContain('connected');
    expect(fake().item('trunk')).toBeUndefined();
    expect(fake().tooltip).not.toContain('Calls from outside');
    expect(fake().item('presence')?.label).toBe('Phone presence: Away');
  });

  it('says what keeps Screenpop from working on this computer, and opens Settings (the remedy) on click', () => {
    const { tray, fake, actions } = setup();
    tray.setState(
      status({
        desktopProblems: [
          { id: 'popup', reason: 'The call popup could not be shown.', remedy: 'Restart.' },
        ],
      }),
      0,
      [],
    );
    expect(fake().item('problem-popup')?.label).toBe('The call popup could not be shown.');
    expect(fake().tooltip).toContain('The call popup could not be shown.');
    fake().item('problem-popup')?.click?.();
    expect(actions.openSettings).toHaveBeenCalled();
    tray.setState(status(), 0, []);
    expect(fake().item('problem-popup')).toBeUndefined();
  });

  it('says how the proxy accepted us, in the language, and nothing without a proxy sign-in', () => {
    const { tray, fake } = setup();
    tray.setState(
      status({ proxyAuth: { scheme: 'Negotiate', user: 'agent7@CORP.EXAMPLE' } }),
      0,
      [],
    );
    expect(fake().item('proxy-auth')?.label).toBe(
      'Proxy sign-in: Negotiate as agent7@CORP.EXAMPLE',
    );
    expect(fake().item('proxy-auth')?.enabled).toBe(false);
    tray.setState(status({ proxyAuth: { scheme: 'Negotiate' } }), 0, []);
    expect(fake().item('proxy-auth')?.label).toBe('Proxy sign-in: Negotiate');
    tray.setState(status(), 0, []);
    expect(fake().item('proxy-auth')).toBeUndefined();
  });

  it('organisation mode: says who is signed in; when the sign-in has ended, "Sign in again…" opens Settings', () => {
    const { tray, fake, actions } = setup();
    const who = { user: 'alice@example.org', via: 'oidc' as const, extensions: ['101'] };
    tray.setState(status({ organisation: { ...who, signInNeeded: false } }), 0, []);
    expect(fake().item('signed-in')?.label).toBe('Signed in as alice@example.org');
    expect(fake().item('signed-in')?.enabled).toBe(false);
    expect(fake().tooltip).toContain('Signed in as alice@example.org');
    expect(fake().item('sign-in')).toBeUndefined();
    tray.setState(
      status({
        state: 'needs-attention',
        reason: 'Your sign-in with your organisation has ended.',
        remedy: 'Sign in again with your organisation in Settings.',
        organisation: { ...who, signInNeeded: true },
      }),
      0,
      [],
    );
    expect(fake().item('signed-in')).toBeUndefined();
    expect(fake().tooltip).toContain('Your sign-in with your organisation has ended.');
    expect(fake().item('sign-in')?.label).toBe('Sign in again…');
    fake().item('sign-in')?.click?.();
    expect(actions.openSettings).toHaveBeenCalled();
    // API-key mode says nothing of a sign-in.
    tray.setState(status(), 0, []);
    expect(fake().item('signed-in')).toBeUndefined();
    expect(fake().item('sign-in')).toBeUndefined();
  });

  it('says in the tooltip that the app recovered from internal errors', () => {
    const { tray, fake } = setup();
    tray.setState(status({ fault: { count: 1, at: 1 } }), 0, []);
    expect(fake().tooltip).toContain('Recovered from an internal error (see the log)');
    tray.setState(status({ fault: { count: 3, at: 2 } }), 0, []);
    expect(fake().tooltip).toContain('Recovered from 3 internal errors (see the log)');
  });

  it('lists recent calls (menu text escaped) and runs the menu actions', () => {
    const { tray, fake, actions } = setup();
    tray.setState(status({ doNotDisturb: true }), 1, [entry()]);
    const recent = fake().item('recent')?.submenu ?? [];
    expect(recent[0]?.label).toBe('09:15  Tom && Jerry  (missed, new)');
    expect(fake().item('dnd')).toMatchObject({ type: 'checkbox', checked: true });
    fake().item('dnd')?.click?.();
    fake().item('pause')?.click?.();
    fake().item('settings')?.click?.();
    fake().item('quit')?.click?.();
    expect(actions.toggleDoNotDisturb).toHaveBeenCalledTimes(1);
    expect(actions.togglePause).toHaveBeenCalledTimes(1);
    expect(actions.openSettings).toHaveBeenCalledTimes(1);
    expect(actions.quit).toHaveBeenCalledTimes(1);
    expect(fake().item('retry')).toBeUndefined(); // connected: nothing to retry
    tray.setState(status({ paused: true }), 0, []);
    expect(fake().item('pause')?.label).toBe('Resume');
    expect(fake().item('recent')?.submenu?.[0]).toMatchObject({
      label: 'No calls yet',
      enabled: false,
    });
  });
});

describe("TrayController in the user's language", () => {
  function localized(locale: 'de' | 'ar' | 'en-XA') {
    const language = new LocaleState(locale, silentLogger);
    const tray = new TrayController({
      createTray: (image) => new Tray(image) as unknown as TrayType,
      buildMenu: (template) =>
        Menu.buildFromTemplate(template as MenuItem[]) as unknown as MenuType,
      icon: (name: TrayIconName) =>
        nativeImage.createFromPath(`/app/assets/tray/${name}.png`) as unknown as NativeImage,
      actions: setup().actions,
      words: language,
    });
    return { tray, language, fake: () => Tray.instances.at(-1)! };
  }
  const labels = (items: MenuItem[]): string[] =>
    items.flatMap((i) => [i.label ?? '', ...labels((i.submenu as MenuItem[] | undefined) ?? [])]);
  const busy = status({
    state: 'needs-attention',
    reason: 'x',
    remedy: 'y',
    demo: true,
    doNotDisturb: true,
    fault: { count: 2, at: 0 },
    presence: { status: 'away', label: 'Abwesend', doNotDisturb: true },
  });

  it('speaks German, and follows a change of language at the next update', () => {
    const { tray, language, fake } = localized('de');
    tray.setState(status(), 2, [entry()]);
    expect(fake().item('settings')?.label).toBe('Einstellungen…');
    expect(fake().item('missed')?.label).toBe('2 verpasste Anrufe');
    expect(fake().tooltip).toContain('Screenpop: Verbunden');
    language.set('ar');
    tray.setState(status(), 2, [entry()]);
    expect(fake().item('settings')?.label).toBe('الإعدادات…');
    expect(fake().item('quit')?.label).toBe('إنهاء Screenpop');
  });

  it('in the pseudo-locale every word of the menu and tooltip comes from the catalogue', () => {
    const { tray, fake } = localized('en-XA');
    // The status's reason and remedy are main's words (already said by the runtime): left out.
    tray.setState({ ...busy, reason: '', remedy: '' }, 3, [
      entry(),
      entry({ callId: 'c2', outcome: 'answered' }),
    ]);
    tray.setState({ ...busy, paused: true, reason: '', remedy: '' }, 3, [entry()]);
    const words = [...labels(fake().menu?.template ?? []), ...fake().tooltip.split('\n')].map((l) =>
      // Caller data is isolated by t() in the pseudo-locale; digits and times are not words.
      l.replace(/\u2068[^\u2069]*\u2069/g, ''),
    );
    expect(words.filter((w) => /[A-Za-z]/.test(w.replace('Screenpop', '')))).toEqual([]);
  });
});

const trayDir = join(import.meta.dirname, '..', '..', 'assets', 'tray');

describe('the tray on each OS', () => {
  it('uses an .ico on Windows, a template image on macOS, the coloured PNG on Linux; every file is there', () => {
    for (const state of TRAY_STATES) {
      expect(trayIconFile(state, 'win32')).toBe(`${state}.ico`);
      expect(trayIconFile(state, 'darwin')).toBe(`${state}Template.png`);
      expect(trayIconFile(state, 'linux')).toBe(`${state}.png`);
      for (const platform of ['win32', 'darwin', 'linux'] as const)
        expect(
          nativeImage.createFromPath(join(trayDir, trayIconFile(state, platform))).isEmpty(),
          `${state} on ${platform}`,
        ).toBe(false);
    }
  });

  it('the .ico and template files are the drawn PNGs (npm exec -- node assets/tray-formats.ts), and the templates keep the states apart', () => {
    const derived = trayFormats(trayDir);
    for (const [name, bytes] of derived)
      expect(readFileSync(join(trayDir, name)).equals(bytes), `${name} is stale`).toBe(true);
    const templates = TRAY_STATES.map((s) => derived.get(`${s}Template@2x.png`)!.toString('hex'));
    expect(new Set(templates).size).toBe(TRAY_STATES.length);
  });

  // Issue 21 item 11. Measured on the old icons (16 px): the green and amber discs had 2.9:1 and
  // 2.8:1 against a light panel; "connecting" was a thin grey ring covering 31 % of the square.
  it('every 16 px state icon reads on a light (#f0f0f0) and a dark (#202020) panel: a tile of at least 3:1 against both, a white sign of at least 3:1 on it, and ink over half the square', () => {
    const linear = (c: number) => {
      const v = c / 255;
      return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    };
    const luminance = (r: number, g: number, b: number) =>
      0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
    const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const seen: Record<string, unknown> = {};
    for (const state of TRAY_STATES) {
      const { width, height, rgba } = decodePng(readFileSync(join(trayDir, `${state}.png`)));
      const counts = new Map<string, number>();
      let ink = 0;
      let whiteish = 0;
      for (let i = 0; i < rgba.length; i += 4) {
        if (rgba[i + 3]! >= 128) ink++;
        if (rgba[i + 3] !== 255) continue;
        if (Math.min(rgba[i]!, rgba[i + 1]!, rgba[i + 2]!) >= 240) whiteish++;
        const key = `${rgba[i]},${rgba[i + 1]},${rgba[i + 2]}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      // The tile: the most common opaque colour.
      const [r, g, b] = [...counts]
        .sort((x, y) => y[1] - x[1])[0]![0]
        .split(',')
        .map(Number) as [number, number, number];
      const l = luminance(r, g, b);
      seen[state] = {
        light: contrast(l, luminance(0xf0, 0xf0, 0xf0)) >= 3,
        dark: contrast(l, luminance(0x20, 0x20, 0x20)) >= 3,
        sign: whiteish > 0 && contrast(l, 1) >= 3,
        ink: ink / (width * height) >= 0.5,
      };
    }
    const good = { light: true, dark: true, sign: true, ink: true };
    expect(seen).toEqual(Object.fromEntries(TRAY_STATES.map((s) => [s, good])));
  });

  it('opens its menu on a left click on Windows (Windows shows it on a right click only)', () => {
    const win = setup('win32');
    win.tray.setState(status(), 0, []);
    win.fake().emit('click');
    expect(win.fake().poppedUp).toHaveLength(1);
    resetElectronMock();
    const linux = setup('linux');
    linux.tray.setState(status(), 0, []);
    expect(linux.fake().listenerCount('click')).toBe(0);
  });

  it('after destroy() (quitting) a late status makes no new icon', () => {
    const { tray } = setup();
    tray.setState(status(), 0, []);
    tray.destroy();
    expect(() => Tray.instances[0]!.setToolTip('x')).toThrow('Tray is destroyed');
    tray.setState(status({ state: 'offline' }), 0, []);
    expect(Tray.instances).toHaveLength(1);
  });

  it('has no application menu on Windows and Linux (no Reload, no Developer Tools); macOS keeps edit and window keys only', () => {
    expect(applicationMenuTemplate('win32')).toBeNull();
    expect(applicationMenuTemplate('linux')).toBeNull();
    expect(applicationMenuTemplate('darwin')?.map((i) => i.role)).toEqual([
      'appMenu',
      'fileMenu',
      'editMenu',
      'windowMenu',
    ]);
  });
});
