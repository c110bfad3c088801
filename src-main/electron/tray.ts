/**
 * The tray icon: one icon per connection state (connected, connecting, degraded, offline, needs
 * attention), a tooltip with the reason and the missed-call count, and the menu (status line, Do Not
 * Disturb, recent calls, Call a number… (only where dialling is offered), Settings, History, Pause/Resume, Quit). A trunk that is not registered
 * shows the degraded icon and a warning line until it recovers; the phone system's presence for the
 * user has its own line (do not disturb said so). All text shown comes through
 * StatusView and HistoryEntry, which hold only plain, sanitized text.
 */
import type {
  Menu as MenuType,
  MenuItemConstructorOptions,
  NativeImage,
  Tray as TrayType,
} from 'electron';
import type { HistoryEntry, StatusView } from '../ipc/contract.ts';
import { outcomeMessageId } from '../../src-shared/ui/call-outcome.ts';
import { knownState } from '../../src-shared/ui/connection-state.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { PLAIN_ENGLISH, type TranslatorSource } from '../../src-shared/i18n/locale-state.ts';
import type { TrayView } from '../core/ports/ports.ts';

export type TrayIconName = 'connected' | 'connecting' | 'degraded' | 'offline' | 'needs-attention';

/**
 * The icon file for a state, in the OS's own form (assets/tray-formats.ts makes them): an .ico on
 * Windows (16 and 32 px in one file), a template image on macOS (the menu bar colours it, light or
 * dark; nativeImage finds the @2x beside it), the coloured PNG elsewhere.
 */
export function trayIconFile(name: TrayIconName, platform: NodeJS.Platform): string {
  if (platform === 'win32') return `${name}.ico`;
  if (platform === 'darwin') return `${name}Template.png`;
  return `${name}.png`;
}

export interface TrayActions {
  retryNow(): void;
  toggleDoNotDisturb(): void;
  togglePause(): void;
  openSettings(): void;
  openHistory(): void;
  /** The dial box: a number typed and called (issue 38). */
  openDialBox(): void;
  /** "Save diagnostics…": an archive for support (src-main/core/diagnostics/). */
  saveDiagnostics(): void;
  quit(): void;
}

export interface TrayControllerDeps {
  createTray: (image: NativeImage) => TrayType;
  buildMenu: (template: MenuItemConstructorOptions[]) => MenuType;
  icon: (name: TrayIconName) => NativeImage;
  actions: TrayActions;
  /** Local time of day for the recent-calls list (default: the language's own format). */
  timeOfDay?: (ms: number) => string;
  recentCount?: number;
  /** The language of the menu and tooltip, asked at each update (English when not given). */
  words?: TranslatorSource;
  platform?: NodeJS.Platform;
  /** True when the phone system offers dialling now: the menu has "Call a number…" only then. */
  dialOffered?: () => boolean;
}

function stateWords(status: StatusView, t: Translator): string {
  if (status.paused) return t.t('desktop.paused');
  return t.t(`desktop.state.${knownState(status.state)}`);
}

/** Which icon a status shows; pausing looks offline. */
export function trayIconFor(status: StatusView): TrayIconName {
  if (status.paused) return 'offline';
  // Calls from outside may not reach the user: the same warning colour as a degraded connection.
  if (status.state === 'connected' && status.trunkWarning) return 'degraded';
  return status.state;
}

/** Menu labels treat "&" as a mnemonic marker on Windows and Linux. */
function label(text: string): string {
  return text.replace(/&/g, '&&');
}

export function trayTooltip(status: StatusView, missedCount: number, t: Translator): string {
  const title = t.t('desktop.tooltip-title', { state: stateWords(status, t) });
  const parts = [status.demo ? t.t('desktop.tooltip-demo', { line: title }) : title];
  if (status.trunkWarning) parts.push(t.t('desktop.trunk-short'));
  if (!status.paused && status.reason && status.state !== 'connected') parts.push(status.reason);
  if (status.organisation?.user && !status.organisation.signInNeeded)
    parts.push(t.t('desktop.signed-in-line', { user: status.organisation.user }));
  if (status.presence?.doNotDisturb) parts.push(t.t('desktop.phone-dnd'));
  if (status.doNotDisturb) parts.push(t.t('desktop.dnd-on'));
  if (missedCount > 0) parts.push(t.t('desktop.missed', { count: missedCount }));
  if (status.fault) parts.push(t.t('desktop.recovered', { count: status.fault.count }));
  for (const problem of status.desktopProblems ?? []) parts.push(problem.reason);
  const text = parts.join('\n');
  // Windows cuts tray tooltips at 127 characters.
  return text.length > 127 ? `${text.slice(0, 126)}…` : text;
}

export function trayMenuTemplate(
  status: StatusView,
  missedCount: number,
  recent: HistoryEntry[],
  actions: TrayActions,
  t: Translator,
  timeOfDay: (ms: number) => string = (ms) => t.time(ms),
  recentCount = 8,
  dialOffered = false,
): MenuItemConstructorOptions[] {
  const state = stateWords(status, t);
  const statusLine =
    !status.paused && status.reason && status.state !== 'connected'
      ? t.t('desktop.status-line', { state, reason: status.reason })
      : state;
  const items: MenuItemConstructorOptions[] = [
    {
      id: 'status',
      label: label(
        (status.demo ? t.t('desktop.demo-line', { line: statusLine }) : statusLine).slice(0, 120),
      ),
      enabled: false,
    },
  ];
  if (status.remedy && !status.paused && status.state !== 'connected')
    items.push({ id: 'remedy', label: label(status.remedy.slice(0, 120)), enabled: false });
  // Organisation mode: who is signed in, or the way to sign in again when the sign-in has ended.
  if (status.organisation?.signInNeeded)
    items.push({
      id: 'sign-in',
      label: t.t('desktop.sign-in-again'),
      click: () => actions.openSettings(),
    });
  else if (status.organisation?.user)
    items.push({
      id: 'signed-in',
      label: label(t.t('desktop.signed-in-line', { user: status.organisation.user }).slice(0, 120)),
      enabled: false,
    });
  if (status.proxyAuth)
    items.push({
      id: 'proxy-auth',
      label: label(
        (status.proxyAuth.user
          ? t.t('desktop.proxy-auth-line', {
              scheme: status.proxyAuth.scheme,
              user: status.proxyAuth.user,
            })
          : t.t('desktop.proxy-auth-scheme-line', { scheme: status.proxyAuth.scheme })
        ).slice(0, 120),
      ),
      enabled: false,
    });
  if (status.trunkWarning)
    items.push({
      id: 'trunk',
      label: label(
        t.t('desktop.trunk-line', { message: status.trunkWarning.message }).slice(0, 120),
      ),
      enabled: false,
    });
  if (status.presence)
    items.push({
      id: 'presence',
      label: label(t.t('desktop.presence-line', { presence: status.presence.label }).slice(0, 120)),
      enabled: false,
    });
  for (const problem of status.featureProblems ?? [])
    items.push({
      id: `feature-${problem.feature}`,
      label: label(problem.reason.slice(0, 120)),
      click: () => actions.openSettings(),
    });
  // What keeps Screenpop from working fully here (the popup, notifications, the keychain...):
  // the reason as the line, and Settings, which shows the remedy, on click.
  for (const problem of status.desktopProblems ?? [])
    items.push({
      id: `problem-${problem.id}`,
      label: label(problem.reason.slice(0, 120)),
      click: () => actions.openSettings(),
    });
  if (missedCount > 0)
    items.push({
      id: 'missed',
      label: label(t.t('desktop.missed', { count: missedCount })),
      click: () => actions.openHistory(),
    });
  if (!status.paused && status.state !== 'connected' && status.state !== 'connecting')
    items.push({ id: 'retry', label: t.t('desktop.retry'), click: () => actions.retryNow() });
  const calls = recent.slice(0, recentCount);
  items.push(
    { type: 'separator' },
    {
      id: 'recent',
      label: t.t('desktop.recent'),
      submenu: calls.length
        ? calls.map((e) => ({
            label: label(
              t
                .t(
                  e.outcome === 'missed' && !e.seen
                    ? 'desktop.recent-call-new'
                    : 'desktop.recent-call',
                  {
                    time: timeOfDay(e.startedAt),
                    caller: e.callerName ?? e.fromDisplay ?? e.from,
                    outcome: t.t(outcomeMessageId(e.outcome)).toLocaleLowerCase(t.intlLocale),
                  },
                )
                .slice(0, 100),
            ),
            click: () => actions.openHistory(),
          }))
        : [{ label: t.t('desktop.no-calls'), enabled: false }],
    },
    { type: 'separator' },
    ...(dialOffered
      ? [{ id: 'dial', label: t.t('desktop.dial-box.menu'), click: () => actions.openDialBox() }]
      : []),
    {
      id: 'dnd',
      label: t.t('desktop.dnd'),
      type: 'checkbox',
      checked: status.doNotDisturb,
      click: () => actions.toggleDoNotDisturb(),
    },
    {
      id: 'pause',
      label: status.paused ? t.t('desktop.resume') : t.t('desktop.pause'),
      click: () => actions.togglePause(),
    },
    { type: 'separator' },
    { id: 'settings', label: t.t('desktop.settings'), click: () => actions.openSettings() },
    { id: 'history', label: t.t('desktop.history'), click: () => actions.openHistory() },
    {
      id: 'diagnostics',
      label: t.t('desktop.diagnostics'),
      click: () => actions.saveDiagnostics(),
    },
    { type: 'separator' },
    { id: 'quit', label: t.t('desktop.quit'), role: undefined, click: () => actions.quit() },
  );
  return items;
}

export class TrayController implements TrayView {
  private readonly deps: TrayControllerDeps;
  private tray: TrayType | null = null;
  private lastIcon: TrayIconName | null = null;
  private destroyed = false;

  constructor(deps: TrayControllerDeps) {
    this.deps = deps;
  }

  setState(status: StatusView, missedCount: number, recent: HistoryEntry[]): void {
    const iconName = trayIconFor(status);
    if (this.destroyed) return;
    if (!this.tray) {
      const tray = this.deps.createTray(this.deps.icon(iconName));
      this.tray = tray;
      this.lastIcon = iconName;
      // Windows opens a tray icon's menu on a right click only; people click with the left.
      if ((this.deps.platform ?? process.platform) === 'win32')
        tray.on('click', () => tray.popUpContextMenu());
    } else if (iconName !== this.lastIcon) {
      this.tray.setImage(this.deps.icon(iconName));
      this.lastIcon = iconName;
    }
    const t = (this.deps.words ?? PLAIN_ENGLISH).current();
    this.tray.setToolTip(trayTooltip(status, missedCount, t));
    // macOS shows a title beside the icon: the missed-call count.
    this.tray.setTitle(missedCount > 0 ? String(missedCount) : '');
    this.tray.setContextMenu(
      this.deps.buildMenu(
        trayMenuTemplate(
          status,
          missedCount,
          recent,
          this.deps.actions,
          t,
          this.deps.timeOfDay,
          this.deps.recentCount,
          this.dialOffered(),
        ),
      ),
    );
  }

  private dialOffered(): boolean {
    try {
      return this.deps.dialOffered?.() ?? false;
    } catch {
      return false;
    }
  }

  /** The icon currently shown (tests, diagnostics). */
  get iconName(): TrayIconName | null {
    return this.lastIcon;
  }

  /** Quitting: the icon goes, and a status that comes after does not make a new one. */
  destroy(): void {
    this.destroyed = true;
    this.tray?.destroy();
    this.tray = null;
  }
}
