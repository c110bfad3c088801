/**
 * The one IPC contract between the main process, the preload and the renderer (the pattern of
 * GitHub Desktop's ipc-shared.ts): a map from channel to signature that all three compile against.
 * It imports types only, and nothing that needs Node, so the renderer's DOM-only build includes it.
 */
import type { ConnectionState } from '../core/events/contracts.ts';
import type { Settings } from '../core/settings/types.ts';

/**
 * How a call turned out, in the same words for the popup's cards and the history: still ringing,
 * answered on one of the user's own numbers, answered by someone else (a colleague, a hunt group),
 * missed (the caller hung up while it rang), or ended some other way (voicemail, the ring timed out).
 */
export type CallOutcome = 'ringing' | 'answered' | 'answered-elsewhere' | 'missed' | 'ended';

export const CALL_OUTCOMES: readonly CallOutcome[] = [
  'ringing',
  'answered',
  'answered-elsewhere',
  'missed',
  'ended',
];

/** One ringing (or just-ended, while it lingers) call as the popup shows it. All text is plain. */
export interface CallCard {
  /**
   * What the card is about. The popup renders each kind with its own view (src-renderer/popup/
   * card-views.tsx); later kinds (voicemail, SMS, a trunk warning) join PopupCard as a union.
   */
  kind: 'call';
  callId: string;
  /** The caller's number or extension as received (untrusted). */
  from: string;
  /** `from` formatted for reading. */
  fromDisplay: string;
  /** Name from the directory or contacts; null when unknown. */
  callerName: string | null;
  /** What they called: the user's extension or DID. */
  to: string;
  toDisplay: string;
  /** The called line's name in the directory or contacts ("Sales line"); null when it has none. */
  toName: string | null;
  /** Wall-clock ms when the ring started. */
  startedAt: number;
  /** Wall-clock ms when it stopped ringing; null while it rings. */
  endedAt: number | null;
  /** The service's state word: 'ringing' while it rings; anything else while it lingers. */
  state: string;
  /** What that state means for the user. */
  outcome: CallOutcome;
  /** True when a CRM link can be opened for this call. */
  canOpenCrm: boolean;
}

/** Everything the popup can show; each kind has its own view. */
export type PopupCard = CallCard;

/** One call in the history (plain text, as recorded when it rang). */
export interface HistoryEntry {
  /** As on CallCard; later kinds (voicemail, SMS) join HistoryItem as a union. */
  kind: 'call';
  callId: string;
  from: string;
  fromDisplay: string;
  callerName: string | null;
  to: string;
  /** `to` formatted for reading, as on the popup's card. */
  toDisplay: string;
  toName: string | null;
  startedAt: number;
  /** When it stopped ringing (answered, missed, ended); null while it rings. */
  endedAt: number | null;
  outcome: CallOutcome;
  /** A missed call stays unseen until the user opens the history. */
  seen: boolean;
}

/** Everything the history lists; each kind has its own row view. */
export type HistoryItem = HistoryEntry;

/** What came of "Export CSV…": the renderer learns the file's name, never its folder. */
export type ExportResult =
  | { status: 'saved'; fileName: string; count: number }
  | { status: 'cancelled' }
  | { status: 'failed'; message: string };

/** What came of "Choose file…" for the contacts file: the path the user picked, and what is in it. */
export type ContactsFilePick =
  | { status: 'picked'; path: string; contacts: number }
  | { status: 'cancelled' }
  | { status: 'failed'; path: string; message: string };

export interface StatusView {
  state: ConnectionState;
  reason?: string;
  remedy?: string;
  paused: boolean;
  doNotDisturb: boolean;
  missedCount: number;
  demo: boolean;
  /**
   * Present once an unexpected error was caught by the last resort (the app carried on and rebuilt
   * its connection): how many so far, and when the last one was (wall-clock ms). Details are in the log.
   */
  fault?: { count: number; at: number };
}

/** Settings as the renderer sees them: never the secret, only whether the keychain holds one. */
export interface SettingsView {
  settings: Settings;
  hasSecret: boolean;
  /** True until the user has completed onboarding (no base URL / key / extension yet). */
  needsOnboarding: boolean;
}

export interface SettingsPatch {
  settings: Partial<Settings>;
  /** A new API secret to store in the keychain; omitted or undefined keeps the stored one. */
  secret?: string;
}

export type SaveResult =
  { ok: true; view: SettingsView } | { ok: false; field: string; message: string };

export interface TestConnectionResult {
  ok: boolean;
  /** Plain words: what happened. */
  message: string;
  /** The errcode's remedy, when it failed. */
  remedy?: string;
  errcode?: number;
  /** For 10004: this computer's address as the service sees it, to add to the allowlist. */
  ipToAllow?: string;
  /** The caller_id_name of the user's extension, when found. */
  extensionName?: string;
  extensionCount?: number;
}

export type CrmPreview = { ok: true; url: string } | { ok: false; message: string };

/** renderer -> main, request/response (ipcRenderer.invoke / ipcMain.handle). */
export interface IpcInvokeMap {
  'popup:ready': () => PopupCard[];
  'popup:dismiss': (callId: string) => void;
  'popup:open-crm': (callId: string) => void;
  'popup:copy-number': (callId: string) => void;
  /**
   * The popup's content height in CSS pixels (it changes as calls stack or close). Main resizes
   * the inactive window to fit (clamped to the work area) and keeps it anchored to its corner.
   */
  'popup:content-size': (height: number) => void;
  'status:get': () => StatusView;
  'settings:get': () => SettingsView;
  'settings:save': (patch: SettingsPatch) => SaveResult;
  'settings:test-connection': (patch: SettingsPatch) => TestConnectionResult;
  'settings:preview-crm': (template: string) => CrmPreview;
  'demo:start': () => SettingsView;
  'history:list': () => HistoryItem[];
  'history:mark-seen': () => void;
  /** Copies the caller's number of a history entry (main's clipboard). */
  'history:copy-number': (callId: string) => void;
  /** Opens the CRM link for a history entry, built by main's CRM builder and vetted. */
  'history:open-crm': (callId: string) => void;
  /**
   * Asks where to save (native dialog in main) and writes these entries, in this order, as CSV.
   * The ids only select: every value written comes from main's own history.
   */
  'history:export-csv': (callIds: string[]) => ExportResult;
  /** The native open-file dialog for the contacts file; nothing is saved until Save. */
  'settings:choose-contacts-file': () => ContactsFilePick;
  'window:close': () => void;
}

/** main -> renderer, one-way (webContents.send / ipcRenderer.on). */
export interface IpcEventMap {
  'popup:calls': (calls: PopupCard[]) => void;
  'status:changed': (status: StatusView) => void;
  'history:changed': (entries: HistoryItem[]) => void;
  'settings:changed': (view: SettingsView) => void;
}

export type InvokeChannel = keyof IpcInvokeMap;
export type EventChannel = keyof IpcEventMap;

export const INVOKE_CHANNELS = [
  'popup:ready',
  'popup:dismiss',
  'popup:open-crm',
  'popup:copy-number',
  'popup:content-size',
  'status:get',
  'settings:get',
  'settings:save',
  'settings:test-connection',
  'settings:preview-crm',
  'demo:start',
  'history:list',
  'history:mark-seen',
  'history:copy-number',
  'history:open-crm',
  'history:export-csv',
  'settings:choose-contacts-file',
  'window:close',
] as const satisfies readonly InvokeChannel[];

export const EVENT_CHANNELS = [
  'popup:calls',
  'status:changed',
  'history:changed',
  'settings:changed',
] as const satisfies readonly EventChannel[];

/** Fails to compile when a channel of the maps is missing from its list above. */
type Unlisted<All, Listed> = [Exclude<All, Listed>] extends [never] ? true : Exclude<All, Listed>;
export const CHANNEL_LISTS_COMPLETE: [
  Unlisted<InvokeChannel, (typeof INVOKE_CHANNELS)[number]>,
  Unlisted<EventChannel, (typeof EVENT_CHANNELS)[number]>,
] = [true, true];

type Promisify<F> = F extends (...args: infer A) => infer R
  ? (...args: A) => Promise<Awaited<R>>
  : never;
type Subscribe<F> = F extends (...args: infer A) => void
  ? (listener: (...args: A) => void) => () => void
  : never;

/**
 * What the preload exposes on `window.screenpop`: named functions only, never ipcRenderer itself.
 */
export interface ScreenpopApi {
  popupReady: Promisify<IpcInvokeMap['popup:ready']>;
  dismiss: Promisify<IpcInvokeMap['popup:dismiss']>;
  openCrm: Promisify<IpcInvokeMap['popup:open-crm']>;
  copyNumber: Promisify<IpcInvokeMap['popup:copy-number']>;
  reportPopupSize: Promisify<IpcInvokeMap['popup:content-size']>;
  getStatus: Promisify<IpcInvokeMap['status:get']>;
  getSettings: Promisify<IpcInvokeMap['settings:get']>;
  saveSettings: Promisify<IpcInvokeMap['settings:save']>;
  testConnection: Promisify<IpcInvokeMap['settings:test-connection']>;
  previewCrm: Promisify<IpcInvokeMap['settings:preview-crm']>;
  startDemo: Promisify<IpcInvokeMap['demo:start']>;
  listHistory: Promisify<IpcInvokeMap['history:list']>;
  markHistorySeen: Promisify<IpcInvokeMap['history:mark-seen']>;
  copyHistoryNumber: Promisify<IpcInvokeMap['history:copy-number']>;
  openHistoryCrm: Promisify<IpcInvokeMap['history:open-crm']>;
  exportHistoryCsv: Promisify<IpcInvokeMap['history:export-csv']>;
  chooseContactsFile: Promisify<IpcInvokeMap['settings:choose-contacts-file']>;
  closeWindow: Promisify<IpcInvokeMap['window:close']>;
  onCalls: Subscribe<IpcEventMap['popup:calls']>;
  onStatus: Subscribe<IpcEventMap['status:changed']>;
  onHistory: Subscribe<IpcEventMap['history:changed']>;
  onSettings: Subscribe<IpcEventMap['settings:changed']>;
}
