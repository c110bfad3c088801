/** Fakes for the presenter's ports, shared by the app tests. */
import type { CallCard } from '../src-main/ipc/contract.ts';
import type {
  ClipboardPort,
  Notifier,
  NotifyOptions,
  PopupView,
  UrlOpener,
  NoticeAlert,
} from '../src-main/core/ports/ports.ts';

export class FakeNotifier implements Notifier {
  shown: { card: CallCard; options: NotifyOptions }[] = [];
  notices: { alert: NoticeAlert; options: NotifyOptions }[] = [];
  missed: { card: CallCard; options: NotifyOptions }[] = [];
  open = new Set<string>();
  showMissed(card: CallCard, options: NotifyOptions): void {
    this.missed.push({ card, options });
    this.open.add(card.callId);
  }
  showNotice(alert: NoticeAlert, options: NotifyOptions): void {
    this.notices.push({ alert, options });
    this.open.add(alert.id);
  }
  show(card: CallCard, options: NotifyOptions): void {
    this.shown.push({ card, options });
    this.open.add(card.callId);
  }
  close(callId: string): void {
    this.open.delete(callId);
  }
}

export class FakePopup implements PopupView {
  visible = false;
  cards: CallCard[] = [];
  shows = 0;
  show(cards: CallCard[]): void {
    this.visible = true;
    this.cards = cards;
    this.shows++;
  }
  hide(): void {
    this.visible = false;
    this.cards = [];
  }
}

export class FakeOpener implements UrlOpener {
  opened: string[] = [];
  open(url: string): void {
    this.opened.push(url);
  }
}

export class FakeClipboard implements ClipboardPort {
  text = '';
  writeText(text: string): void {
    this.text = text;
  }
}

import type { HistoryEntry, StatusView } from '../src-main/ipc/contract.ts';
import type { TrayView } from '../src-main/core/ports/ports.ts';
import type {
  SettingsPort,
  SettingsUpdate,
} from '../src-main/core/settings-service/settings-port.ts';
import { DEFAULT_SETTINGS, type Settings } from '../src-main/core/settings/types.ts';

export class FakeTray implements TrayView {
  states: { status: StatusView; missedCount: number; recent: HistoryEntry[] }[] = [];
  setState(status: StatusView, missedCount: number, recent: HistoryEntry[]): void {
    this.states.push({ status, missedCount, recent });
  }
  get last() {
    return this.states.at(-1);
  }
}

/** Settings in memory with the few checks the runtime relies on (the real store validates fully). */
export class MemorySettings implements SettingsPort {
  current: Settings;
  saves = 0;
  constructor(initial: Partial<Settings> = {}) {
    this.current = { ...DEFAULT_SETTINGS, ...initial };
  }
  async load(): Promise<Settings> {
    return { ...this.current };
  }
  check(patch: Partial<Settings>): SettingsUpdate {
    const next = { ...this.current, ...patch };
    if (next.baseUrl && !/^https?:\/\//.test(next.baseUrl))
      return refusal(
        'baseUrl',
        phrase('status.settings.address-insecure', { secure: 'https', insecure: 'http' }),
      );
    return { ok: true, settings: next };
  }
  async update(patch: Partial<Settings>): Promise<SettingsUpdate> {
    const r = this.check(patch);
    if (r.ok) {
      this.current = r.settings;
      this.saves++;
    }
    return r;
  }
}

import {
  CallPresenter,
  type PresenterSettings,
} from '../src-main/core/presenters/call-presenter.ts';
import type { CallerDirectory } from '../src-main/core/contacts/directory.ts';
import type { CallLogRecord, CallLogSink } from '../src-main/core/ports/call-log.ts';
import { HistoryStore } from '../src-main/core/history/history-store.ts';
import { formatNumber } from '../src-main/core/numbers/phone-number.ts';
import type { DismissEvent, PopEvent } from '../src-main/core/ports/ports.ts';
import type { Clock } from '../src-shared/process/clock.ts';
import { silentLogger, type Logger } from '../src-shared/process/log.ts';
import { FakeClock } from './fake-clock.ts';

export interface PresenterHarnessOptions {
  /** The clock it runs on, when another part under test (a directory) shares it. */
  clock?: FakeClock;
  settings?: Partial<PresenterSettings>;
  /** Names the directory knows, by number as received. */
  names?: Record<string, string>;
  directory?: CallerDirectory;
  urlOpener?: UrlOpener;
  isUserNumber?: (to: string) => boolean;
  /** Where finished calls are logged (a recording fake: RecordingCallLog). */
  callLog?: CallLogSink;
}

/** A CallLogSink that records every call handed to it, in order (the far side: the queue). */
export class RecordingCallLog implements CallLogSink {
  readonly records: CallLogRecord[] = [];
  async log(record: CallLogRecord): Promise<void> {
    this.records.push({ ...record });
  }
}

/** A directory that knows these numbers' names (as colleagues, source 'directory'). */
export function namesDirectory(names: Record<string, string>): CallerDirectory {
  const lookup = (n: string) => names[n] ?? null;
  return {
    lookup,
    identify: (n) => {
      const name = lookup(n);
      return name ? { name, source: 'directory', company: null, numberKind: null } : null;
    },
    format: (n) => formatNumber(n, 'US'),
  };
}

/** A CallPresenter on the fake clock with fake views, and helpers to play the engine's events. */
export function presenterHarness(options: PresenterHarnessOptions = {}) {
  const clock = options.clock ?? new FakeClock();
  const settings: PresenterSettings = {
    doNotDisturb: false,
    sound: true,
    autoOpenCrm: false,
    crmUrlTemplate: 'https://crm.example.com/?phone={from}',
    crmAllowedSchemes: ['https'],
    popupLingerSec: 4,
    ...options.settings,
  };
  const history = new HistoryStore({
    path: 'mem',
    clock,
    logger: silentLogger,
    limit: 100,
    write: async () => {},
  });
  const names: Record<string, string> = {
    ...(options.names ?? { '+14155550123': 'Ada Lovelace' }),
  };
  const notifier = new FakeNotifier();
  const popup = new FakePopup();
  const opener = new FakeOpener();
  const clipboard = new FakeClipboard();
  const presenter = new CallPresenter({
    clock,
    logger: silentLogger,
    directory: options.directory ?? namesDirectory(names),
    history,
    notifier,
    popup,
    urlOpener: options.urlOpener ?? opener,
    clipboard,
    settings: () => settings,
    ...(options.isUserNumber ? { isUserNumber: options.isUserNumber } : {}),
    ...(options.callLog ? { callLog: options.callLog } : {}),
  });
  let seq = 0;
  const pop = (
    callId: string,
    from = '+14155550123',
    to = '101',
    timestamp = clock.now(),
  ): PopEvent => ({
    callId,
    from,
    to,
    eventId: `e${++seq}`,
    timestamp,
    receivedAt: clock.now(),
    source: 'direct',
  });
  const dismiss = (callId: string, state: string, to = '101'): DismissEvent => ({
    callId,
    state,
    to,
    eventId: `e${++seq}`,
  });
  return {
    clock,
    settings,
    names,
    history,
    notifier,
    popup,
    opener,
    clipboard,
    presenter,
    pop,
    dismiss,
  };
}

/** The views AppRuntime drives, all faked. */
export function fakeViews() {
  return {
    notifier: new FakeNotifier(),
    popup: new FakePopup(),
    urlOpener: new FakeOpener(),
    clipboard: new FakeClipboard(),
    tray: new FakeTray(),
  };
}

/** A history that starts empty and writes nowhere. */
export function memoryHistory(clock: Clock, logger: Logger = silentLogger, limit = 100) {
  return new HistoryStore({
    path: 'mem',
    clock,
    logger,
    limit,
    write: async () => {},
    read: async () => Promise.reject(Object.assign(new Error('none'), { code: 'ENOENT' })),
  });
}

import type { Connection, ConnectionConfig } from '../src-main/core/connection/connection.ts';
import type { ConnectionStatus, WakeReason } from '../src-main/core/events/contracts.ts';
import type { Notice } from '../src-main/core/events/notices.ts';
import type { FeatureStatus } from '../src-main/core/events/features.ts';
import { refusal } from '../src-main/core/settings-service/settings-port.ts';
import { phrase } from '../src-shared/i18n/phrase.ts';

/** A connection as the app sees it, played by the test: statuses, pops, wakes, retries, stop. */
export class FakeConnection implements Connection {
  started = false;
  stopped = false;
  wakes: WakeReason[] = [];
  readonly config: ConnectionConfig;
  private pops = new Set<(p: PopEvent) => void>();
  private dismisses = new Set<(d: DismissEvent) => void>();
  private statuses = new Set<(s: ConnectionStatus) => void>();
  constructor(config: ConnectionConfig) {
    this.config = config;
  }
  engine = {
    start: () => {
      this.started = true;
    },
    stop: async () => {
      this.stopped = true;
    },
    wake: () => {},
    onPop: (l: (p: PopEvent) => void) => (this.pops.add(l), () => this.pops.delete(l)),
    onDismiss: (l: (d: DismissEvent) => void) => (
      this.dismisses.add(l),
      () => this.dismisses.delete(l)
    ),
    onStatus: (l: (s: ConnectionStatus) => void) => (
      this.statuses.add(l),
      () => this.statuses.delete(l)
    ),
    status: (): ConnectionStatus => ({ state: 'connected' }),
    onNotice: (l: (n: Notice) => void) => (this.notices.add(l), () => this.notices.delete(l)),
    onFeatureStatus: (l: (f: FeatureStatus[]) => void) => (
      this.featureListeners.add(l),
      () => this.featureListeners.delete(l)
    ),
    featureStatuses: (): FeatureStatus[] => this.features,
  };
  notices = new Set<(n: Notice) => void>();
  featureListeners = new Set<(f: FeatureStatus[]) => void>();
  features: FeatureStatus[] = [];
  /** Only the first service lists an extension; any other cannot be reached yet. */
  fetchExtensions = async () => {
    if (this.config.baseUrl !== 'https://acme.example.com') throw new Error('unreachable');
    return [{ number: '102', callerIdName: 'Grace Hopper' }];
  };
  wake(reason: WakeReason) {
    this.wakes.push(reason);
  }
  retries = 0;
  retry() {
    this.retries++;
  }
  async stop() {
    this.stopped = true;
  }
  status(s: ConnectionStatus) {
    for (const l of this.statuses) l(s);
  }
  notice(n: Notice) {
    for (const l of this.notices) l(n);
  }
  /** The call stops ringing on the user's extension 101 (`ended`: nobody answered). */
  dismiss(callId: string, state = 'ended') {
    for (const l of this.dismisses) l({ callId, to: '101', state, eventId: `${callId}:end` });
  }
  /** A call rings on the user's extension 101 (from 102 unless `over` says otherwise). */
  pop(callId: string, over: Partial<PopEvent> = {}) {
    for (const l of this.pops)
      l({
        callId,
        from: '102',
        to: '101',
        eventId: callId,
        timestamp: 1,
        receivedAt: 1,
        source: 'direct',
        ...over,
      });
  }
}
