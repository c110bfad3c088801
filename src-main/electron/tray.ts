/**
 * The tray icon: one icon per connection state (connected, connecting, degraded, offline, needs
 * attention), a tooltip with the reason and the missed-call count, and the menu (status line, Do Not
 * Disturb, recent calls, Settings, History, Pause/Resume, Quit). A trunk that is not registered
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
import { outcomeLabel } from '../ipc/contract.ts';
import type { TrayView } from '../core/app/ports.ts';

export type TrayIconName = 'connected' | 'connecting' | 'degraded' | 'offline' | 'needs-attention';

export interface TrayActions {
  retryNow(): void;
  toggleDoNotDisturb(): void;
  togglePause(): void;
  openSettings(): void;
  openHistory(): void;
  /** "Save diagnostics…": an archive for support (src-main/core/diagnostics/). */
  saveDiagnostics(): void;
  quit(): void;
}

export interface TrayControllerDeps {
  createTray: (image: NativeImage) => TrayType;
  buildMenu: (template: MenuItemConstructorOptions[]) => MenuType;
  icon: (name: TrayIconName) => NativeImage;
  actions: TrayActions;
  /** Local time of day for the recent-calls list. */
  timeOfDay?: (ms: number) => string;
  recentCount?: number;
}

const STATE_WORDS: Record<StatusView['state'], string> = {
  connected: 'Connected',
  connecting: 'Connecting…',
  degraded: 'Connected, with problems',
  offline: 'Offline',
  'needs-attention': 'Needs attention',
};

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

function missedWords(n: number): string {
  return `${n} missed call${n === 1 ? '' : 's'}`;
}

export function trayTooltip(status: StatusView, missedCount: number): string {
  const parts = [`Screenpop: ${status.paused ? 'Paused' : STATE_WORDS[status.state]}`];
  if (status.demo) parts[0] += ' (demo)';
  if (status.trunkWarning) parts.push('Calls from outside may not reach you');
  if (!status.paused && status.reason && status.state !== 'connected') parts.push(status.reason);
  if (status.presence?.doNotDisturb) parts.push('Phone: Do not disturb');
  if (status.doNotDisturb) parts.push('Do Not Disturb is on');
  if (missedCount > 0) parts.push(missedWords(missedCount));
  if (status.fault)
    parts.push(
      `Recovered from ${status.fault.count === 1 ? 'an internal error' : `${status.fault.count} internal errors`} (see the log)`,
    );
  const text = parts.join('\n');
  // Windows cuts tray tooltips at 127 characters.
  return text.length > 127 ? `${text.slice(0, 126)}…` : text;
}

export function trayMenuTemplate(
  status: StatusView,
  missedCount: number,
  recent: HistoryEntry[],
  actions: TrayActions,
  timeOfDay: (ms: number) => string,
  recentCount = 8,
): MenuItemConstructorOptions[] {
  const statusLine = status.paused
    ? 'Paused'
    : `${STATE_WORDS[status.state]}${status.reason && status.state !== 'connected' ? `: ${status.reason}` : ''}`;
  const items: MenuItemConstructorOptions[] = [
    {
      id: 'status',
      label: label(`${status.demo ? 'Demo · ' : ''}${statusLine}`.slice(0, 120)),
      enabled: false,
    },
  ];
  if (status.remedy && !status.paused && status.state !== 'connected')
    items.push({ id: 'remedy', label: label(status.remedy.slice(0, 120)), enabled: false });
  if (status.trunkWarning)
    items.push({
      id: 'trunk',
      label: label(`⚠ ${status.trunkWarning.message}`.slice(0, 120)),
      enabled: false,
    });
  if (status.presence)
    items.push({
      id: 'presence',
      label: label(`Phone presence: ${status.presence.label}`.slice(0, 120)),
      enabled: false,
    });
  for (const problem of status.featureProblems ?? [])
    items.push({
      id: `feature-${problem.feature}`,
      label: label(problem.reason.slice(0, 120)),
      click: () => actions.openSettings(),
    });
  if (missedCount > 0)
    items.push({
      id: 'missed',
      label: label(missedWords(missedCount)),
      click: () => actions.openHistory(),
    });
  if (!status.paused && status.state !== 'connected' && status.state !== 'connecting')
    items.push({ id: 'retry', label: 'Try again now', click: () => actions.retryNow() });
  const calls = recent.slice(0, recentCount);
  items.push(
    { type: 'separator' },
    {
      id: 'recent',
      label: 'Recent calls',
      submenu: calls.length
        ? calls.map((e) => ({
            label: label(
              `${timeOfDay(e.startedAt)}  ${e.callerName ?? e.fromDisplay ?? e.from}  (${outcomeLabel(e.outcome).toLowerCase()}${e.outcome === 'missed' && !e.seen ? ', new' : ''})`.slice(
                0,
                100,
              ),
            ),
            click: () => actions.openHistory(),
          }))
        : [{ label: 'No calls yet', enabled: false }],
    },
    { type: 'separator' },
    {
      id: 'dnd',
      label: 'Do Not Disturb',
      type: 'checkbox',
      checked: status.doNotDisturb,
      click: () => actions.toggleDoNotDisturb(),
    },
    { id: 'pause', label: status.paused ? 'Resume' : 'Pause', click: () => actions.togglePause() },
    { type: 'separator' },
    { id: 'settings', label: 'Settings…', click: () => actions.openSettings() },
    { id: 'history', label: 'History…', click: () => actions.openHistory() },
    { id: 'diagnostics', label: 'Save diagnostics…', click: () => actions.saveDiagnostics() },
    { type: 'separator' },
    { id: 'quit', label: 'Quit Screenpop', role: undefined, click: () => actions.quit() },
  );
  return items;
}

export class TrayController implements TrayView {
  private readonly deps: TrayControllerDeps;
  private tray: TrayType | null = null;
  private lastIcon: TrayIconName | null = null;

  constructor(deps: TrayControllerDeps) {
    this.deps = deps;
  }

  setState(status: StatusView, missedCount: number, recent: HistoryEntry[]): void {
    const iconName = trayIconFor(status);
    if (!this.tray) {
      this.tray = this.deps.createTray(this.deps.icon(iconName));
      this.lastIcon = iconName;
    } else if (iconName !== this.lastIcon) {
      this.tray.setImage(this.deps.icon(iconName));
      this.lastIcon = iconName;
    }
    this.tray.setToolTip(trayTooltip(status, missedCount));
    // macOS shows a title beside the icon: the missed-call count.
    this.tray.setTitle(missedCount > 0 ? String(missedCount) : '');
    const timeOfDay =
      this.deps.timeOfDay ??
      ((ms: number) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }));
    this.tray.setContextMenu(
      this.deps.buildMenu(
        trayMenuTemplate(
          status,
          missedCount,
          recent,
          this.deps.actions,
          timeOfDay,
          this.deps.recentCount,
        ),
      ),
    );
  }

  /** The icon currently shown (tests, diagnostics). */
  get iconName(): TrayIconName | null {
    return this.lastIcon;
  }

  destroy(): void {
    this.tray?.destroy();
    this.tray = null;
  }
}
