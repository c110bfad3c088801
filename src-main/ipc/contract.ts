/**
 * The one IPC contract between the main process, the preload and the renderer (the pattern of
 * GitHub Desktop's ipc-shared.ts): a map from channel to signature that all three compile against.
 * It takes the shapes of the data from core/ports/views.ts, types only (the pure helpers both sides
 * use are in src-shared/), so the renderer's DOM-only build includes it.
 */

import type { CallAction, TransferMode } from '../core/ports/call-control.ts';
import type { Colleague } from '../core/contacts/colleagues.ts';
import type {
  ConsultationView,
  LocaleView,
  ContactsFilePick,
  CrmPreview,
  CrmTestResult,
  ExportResult,
  HistoryItem,
  OrgRelayPatch,
  OrgSignInResult,
  PopupCard,
  SaveResult,
  SettingsPatch,
  SettingsView,
  StatusView,
  TestConnectionResult,
} from '../core/ports/views.ts';

/** The shapes of the UI's data belong to the core (core/ports/views.ts); the contract carries them. */
export type {
  CallOutcome,
  CallText,
  CallFacts,
  CallCard,
  CallNoteView,
  ConsultationView,
  PopupCard,
  HistoryEntry,
  HistoryItem,
  HistoryKind,
  VoicemailEntry,
  SmsEntry,
  ExportResult,
  ContactsFilePick,
  StatusView,
  SettingsView,
  SettingsPatch,
  SaveResult,
  TestConnectionResult,
  CrmPreview,
  CrmTestResult,
  CrmLookupState,
  LocaleView,
  NameSource,
  NumberKind,
  OrgRelayPatch,
  OrgSignInResult,
} from '../core/ports/views.ts';

/**
 * An error in a window, for main's log (support reads it there; a renderer has no log of its own):
 * an uncaught `error`, an `unhandledrejection`, or a React render error caught by the page's
 * error boundary (with its component stack). Main caps every field's size (ipc-validate.ts).
 */
export interface RendererErrorReport {
  kind: 'error' | 'unhandledrejection' | 'render';
  name: string;
  message: string;
  stack?: string;
  /** Where in the React tree a render error happened. */
  componentStack?: string;
}

/** What the note card sends (popup:save-note). */
export interface CallNoteInput {
  text: string;
  disposition: string | null;
  submit: boolean;
}
/** A call action the phone system offers (issue 38; core/ports/call-control.ts). */
export type { CallAction, TransferMode } from '../core/ports/call-control.ts';
/** A colleague Transfer's picker offers: their extension and the phone system's name for it. */
export type { Colleague } from '../core/contacts/colleagues.ts';

/**
 * The answer to a call action (Call back, Transfer, Hang up, Answer, Decline): done, or why not,
 * in the user's language (`refusal` is a stable id for tests and styling, never shown).
 */
export type CallActionView = { ok: true } | { ok: false; refusal: string; message: string };

/**
 * Answer and Decline on one ringing call (remote answer, uaCSTA): shown or not, and why not in the
 * user's language (the card's status line and the buttons' place), where there is a reason.
 */
export interface RemoteAnswerView {
  offered: boolean;
  why?: string;
}

/** renderer -> main, request/response (ipcRenderer.invoke / ipcMain.handle). */
export interface IpcInvokeMap {
  'popup:ready': () => PopupCard[];
  'popup:dismiss': (callId: string) => void;
  'popup:open-crm': (callId: string) => void;
  'popup:copy-number': (callId: string) => void;
  /**
   * The note card of a call the user answered: its note (plain text, at most 2,000 characters) and
   * outcome (one of the configured choices, or null); `submit` is Enter (logs it once the call is
   * over). False when the call has no note card or a value does not fit.
   */
  'popup:save-note': (callId: string, note: CallNoteInput) => boolean;
  /**
   * The popup's content height in CSS pixels (it changes as calls stack or close). Main resizes
   * the inactive window to fit (clamped to the work area) and keeps it anchored to its corner.
   */
  'popup:content-size': (height: number) => void;
  /** The call actions the phone system offers now: buttons show only for these (issue 38). */
  'calls:offered': () => CallAction[];
  /** Calls back the caller of a card (main reads the number from its own popup, never the page). */
  'popup:call-back': (callId: string) => CallActionView;
  /**
   * Transfer of a call the user answered, to an extension or a number: blind, or attended (the
   * caller on hold while the user talks to `to`, then Complete or Cancel).
   */
  'popup:transfer': (callId: string, to: string, mode: TransferMode) => CallActionView;
  /** An attended transfer's second step: the caller goes to the colleague consulted. */
  'popup:complete-transfer': (callId: string) => CallActionView;
  /** An attended transfer's second step: back with the caller, the colleague dropped. */
  'popup:cancel-transfer': (callId: string) => CallActionView;
  /**
   * The attended transfers under way (main keeps them: a reloaded popup still offers Complete
   * transfer and Cancel transfer); asked when the page loads, then pushed on each change.
   */
  'calls:consultations': () => ConsultationView[];
  /** Colleagues whose name or extension starts with (or holds) what was typed; at most 8. */
  'popup:colleagues': (query: string) => Colleague[];
  'popup:hangup': (callId: string) => CallActionView;
  /** Remote answer / decline on the user's desk phone (uaCSTA), only where offered. */
  'popup:answer': (callId: string) => CallActionView;
  'popup:decline': (callId: string) => CallActionView;
  /** Whether Answer and Decline are shown on this ringing call, asked again while it rings. */
  'calls:remote-answer': (callId: string) => RemoteAnswerView;
  'status:get': () => StatusView;
  /** The language the windows speak (main decides: Settings, policy or the OS). */
  'i18n:get': () => LocaleView;
  'settings:get': () => SettingsView;
  'settings:save': (patch: SettingsPatch) => SaveResult;
  'settings:test-connection': (patch: SettingsPatch) => TestConnectionResult;
  'settings:preview-crm': (template: string) => CrmPreview;
  /** Looks `number` up with the form's CRM settings (and the token typed, if any): Test lookup. */
  'settings:test-crm-lookup': (patch: SettingsPatch, number: string) => CrmTestResult;
  'demo:start': () => SettingsView;
  /**
   * Organisation mode: signs in with the organisation's provider in the system browser, for the
   * form's relay and tenant; on success the settings go to organisation mode (no API key or secret).
   */
  'org:sign-in': (relay: OrgRelayPatch) => OrgSignInResult;
  /** Organisation mode: spends a one-time enrolment code from the administrator. */
  'org:enrol': (relay: OrgRelayPatch, code: string) => OrgSignInResult;
  /** Ends a sign-in that waits for the browser. */
  'org:cancel-sign-in': () => void;
  /** Forgets this computer's sign-in with the organisation. */
  'org:sign-out': () => SettingsView;
  'history:list': () => HistoryItem[];
  'history:mark-seen': () => void;
  /** Copies the caller's number of a history entry (main's clipboard). */
  'history:copy-number': (callId: string) => void;
  /** Opens the CRM link for a history entry, built by main's CRM builder and vetted. */
  'history:open-crm': (callId: string) => void;
  /** Calls back the caller of a History entry (the number from main's own history). */
  'history:call-back': (callId: string) => CallActionView;
  /**
   * The History item a notification click asked for while this window was opening (its page
   * missed `history:select`), once; null when none.
   */
  'history:selection': () => string | null;
  /** The dial box (tray menu): dials what the user typed (at most 64 characters; the dial rule judges it). */
  'dial:call': (number: string) => CallActionView;
  /**
   * Asks where to save (native dialog in main) and writes these entries, in this order, as CSV.
   * The ids only select: every value written comes from main's own history.
   */
  'history:export-csv': (callIds: string[]) => ExportResult;
  /** The native open-file dialog for the contacts file; nothing is saved until Save. */
  'settings:choose-contacts-file': () => ContactsFilePick;
  'window:close': () => void;
  /** An error in this window, written to main's log (the one channel for renderer errors). */
  'renderer:error': (report: RendererErrorReport) => void;
}

/** main -> renderer, one-way (webContents.send / ipcRenderer.on). */
export interface IpcEventMap {
  'popup:calls': (calls: PopupCard[]) => void;
  /** The attended transfers under way changed (begun, completed, cancelled, the call ended). */
  'calls:consultations-changed': (list: ConsultationView[]) => void;
  'status:changed': (status: StatusView) => void;
  'history:changed': (entries: HistoryItem[]) => void;
  /**
   * A notification was clicked: History selects that item (a HistoryItem's `callId`); one it does
   * not know (pruned since) selects nothing.
   */
  'history:select': (callId: string) => void;
  'settings:changed': (view: SettingsView) => void;
  'i18n:changed': (view: LocaleView) => void;
}

export type InvokeChannel = keyof IpcInvokeMap;
export type EventChannel = keyof IpcEventMap;

export const INVOKE_CHANNELS = [
  'popup:ready',
  'popup:dismiss',
  'popup:open-crm',
  'popup:copy-number',
  'popup:save-note',
  'popup:content-size',
  'calls:offered',
  'popup:call-back',
  'popup:transfer',
  'popup:complete-transfer',
  'popup:cancel-transfer',
  'calls:consultations',
  'popup:colleagues',
  'popup:hangup',
  'popup:answer',
  'popup:decline',
  'calls:remote-answer',
  'status:get',
  'i18n:get',
  'settings:get',
  'settings:save',
  'settings:test-connection',
  'settings:preview-crm',
  'settings:test-crm-lookup',
  'demo:start',
  'org:sign-in',
  'org:enrol',
  'org:cancel-sign-in',
  'org:sign-out',
  'history:list',
  'history:mark-seen',
  'history:copy-number',
  'history:open-crm',
  'history:call-back',
  'history:selection',
  'history:export-csv',
  'dial:call',
  'settings:choose-contacts-file',
  'window:close',
  'renderer:error',
] as const satisfies readonly InvokeChannel[];

export const EVENT_CHANNELS = [
  'popup:calls',
  'calls:consultations-changed',
  'status:changed',
  'history:changed',
  'history:select',
  'settings:changed',
  'i18n:changed',
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
  saveNote: Promisify<IpcInvokeMap['popup:save-note']>;
  reportPopupSize: Promisify<IpcInvokeMap['popup:content-size']>;
  callActionsOffered: Promisify<IpcInvokeMap['calls:offered']>;
  callBack: Promisify<IpcInvokeMap['popup:call-back']>;
  transferCall: Promisify<IpcInvokeMap['popup:transfer']>;
  completeTransfer: Promisify<IpcInvokeMap['popup:complete-transfer']>;
  cancelTransfer: Promisify<IpcInvokeMap['popup:cancel-transfer']>;
  consultations: Promisify<IpcInvokeMap['calls:consultations']>;
  findColleagues: Promisify<IpcInvokeMap['popup:colleagues']>;
  hangUp: Promisify<IpcInvokeMap['popup:hangup']>;
  answerCall: Promisify<IpcInvokeMap['popup:answer']>;
  declineCall: Promisify<IpcInvokeMap['popup:decline']>;
  remoteAnswer: Promisify<IpcInvokeMap['calls:remote-answer']>;
  getStatus: Promisify<IpcInvokeMap['status:get']>;
  getLocale: Promisify<IpcInvokeMap['i18n:get']>;
  getSettings: Promisify<IpcInvokeMap['settings:get']>;
  saveSettings: Promisify<IpcInvokeMap['settings:save']>;
  testConnection: Promisify<IpcInvokeMap['settings:test-connection']>;
  previewCrm: Promisify<IpcInvokeMap['settings:preview-crm']>;
  testCrmLookup: Promisify<IpcInvokeMap['settings:test-crm-lookup']>;
  startDemo: Promisify<IpcInvokeMap['demo:start']>;
  signInToOrganisation: Promisify<IpcInvokeMap['org:sign-in']>;
  enrolInOrganisation: Promisify<IpcInvokeMap['org:enrol']>;
  cancelOrganisationSignIn: Promisify<IpcInvokeMap['org:cancel-sign-in']>;
  signOutOfOrganisation: Promisify<IpcInvokeMap['org:sign-out']>;
  listHistory: Promisify<IpcInvokeMap['history:list']>;
  markHistorySeen: Promisify<IpcInvokeMap['history:mark-seen']>;
  copyHistoryNumber: Promisify<IpcInvokeMap['history:copy-number']>;
  openHistoryCrm: Promisify<IpcInvokeMap['history:open-crm']>;
  callBackFromHistory: Promisify<IpcInvokeMap['history:call-back']>;
  takeHistorySelection: Promisify<IpcInvokeMap['history:selection']>;
  dialNumber: Promisify<IpcInvokeMap['dial:call']>;
  exportHistoryCsv: Promisify<IpcInvokeMap['history:export-csv']>;
  chooseContactsFile: Promisify<IpcInvokeMap['settings:choose-contacts-file']>;
  closeWindow: Promisify<IpcInvokeMap['window:close']>;
  reportError: Promisify<IpcInvokeMap['renderer:error']>;
  onCalls: Subscribe<IpcEventMap['popup:calls']>;
  onConsultations: Subscribe<IpcEventMap['calls:consultations-changed']>;
  onStatus: Subscribe<IpcEventMap['status:changed']>;
  onHistory: Subscribe<IpcEventMap['history:changed']>;
  onHistorySelect: Subscribe<IpcEventMap['history:select']>;
  onSettings: Subscribe<IpcEventMap['settings:changed']>;
  onLocale: Subscribe<IpcEventMap['i18n:changed']>;
}
