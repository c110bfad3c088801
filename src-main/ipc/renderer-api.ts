/**
 * Builds the `window.screenpop` object from an ipcRenderer-like transport. It lives apart from the
 * preload so that it can be tested under Node without Electron, and it imports types only, so the
 * sandboxed preload bundle stays free of anything but 'electron'.
 *
 * Every member is a plain named function: the renderer never gets ipcRenderer, a channel name it
 * can choose, or the IpcRendererEvent (which would leak `sender`).
 */
import type {
  EventChannel,
  InvokeChannel,
  IpcEventMap,
  IpcInvokeMap,
  ScreenpopApi,
} from './contract.ts';

/** The slice of Electron's ipcRenderer this needs. */
export interface IpcTransport {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

type InvokeResult<C extends InvokeChannel> = Promise<Awaited<ReturnType<IpcInvokeMap[C]>>>;

export function createScreenpopApi(ipc: IpcTransport): ScreenpopApi {
  function invoke<C extends InvokeChannel>(
    channel: C,
    ...args: Parameters<IpcInvokeMap[C]>
  ): InvokeResult<C> {
    return ipc.invoke(channel, ...args) as InvokeResult<C>;
  }

  function subscribe<C extends EventChannel>(channel: C, listener: IpcEventMap[C]): () => void {
    // Strip the event object: the renderer sees only the payload.
    const wrapped = (_event: unknown, ...args: unknown[]): void => {
      (listener as (...a: unknown[]) => void)(...args);
    };
    ipc.on(channel, wrapped);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      ipc.removeListener(channel, wrapped);
    };
  }

  return {
    popupReady: () => invoke('popup:ready'),
    dismiss: (callId) => invoke('popup:dismiss', callId),
    openCrm: (callId) => invoke('popup:open-crm', callId),
    copyNumber: (callId) => invoke('popup:copy-number', callId),
    saveNote: (callId, note) => invoke('popup:save-note', callId, note),
    reportPopupSize: (height) => invoke('popup:content-size', height),
    callActionsOffered: () => invoke('calls:offered'),
    callBack: (callId) => invoke('popup:call-back', callId),
    transferCall: (callId, to, mode) => invoke('popup:transfer', callId, to, mode),
    completeTransfer: (callId) => invoke('popup:complete-transfer', callId),
    cancelTransfer: (callId) => invoke('popup:cancel-transfer', callId),
    consultations: () => invoke('calls:consultations'),
    findColleagues: (query) => invoke('popup:colleagues', query),
    hangUp: (callId) => invoke('popup:hangup', callId),
    answerCall: (callId) => invoke('popup:answer', callId),
    declineCall: (callId) => invoke('popup:decline', callId),
    remoteAnswer: (callId) => invoke('calls:remote-answer', callId),
    getStatus: () => invoke('status:get'),
    getLocale: () => invoke('i18n:get'),
    getSettings: () => invoke('settings:get'),
    saveSettings: (patch) => invoke('settings:save', patch),
    testConnection: (patch) => invoke('settings:test-connection', patch),
    previewCrm: (template) => invoke('settings:preview-crm', template),
    testCrmLookup: (patch, number) => invoke('settings:test-crm-lookup', patch, number),
    startDemo: () => invoke('demo:start'),
    signInToOrganisation: (relay) => invoke('org:sign-in', relay),
    enrolInOrganisation: (relay, code) => invoke('org:enrol', relay, code),
    cancelOrganisationSignIn: () => invoke('org:cancel-sign-in'),
    signOutOfOrganisation: () => invoke('org:sign-out'),
    listHistory: () => invoke('history:list'),
    markHistorySeen: () => invoke('history:mark-seen'),
    copyHistoryNumber: (callId) => invoke('history:copy-number', callId),
    openHistoryCrm: (callId) => invoke('history:open-crm', callId),
    callBackFromHistory: (callId) => invoke('history:call-back', callId),
    takeHistorySelection: () => invoke('history:selection'),
    dialNumber: (number) => invoke('dial:call', number),
    exportHistoryCsv: (callIds) => invoke('history:export-csv', callIds),
    chooseContactsFile: () => invoke('settings:choose-contacts-file'),
    closeWindow: () => invoke('window:close'),
    reportError: (report) => invoke('renderer:error', report),
    onCalls: (listener) => subscribe('popup:calls', listener),
    onConsultations: (listener) => subscribe('calls:consultations-changed', listener),
    onStatus: (listener) => subscribe('status:changed', listener),
    onHistory: (listener) => subscribe('history:changed', listener),
    onHistorySelect: (listener) => subscribe('history:select', listener),
    onSettings: (listener) => subscribe('settings:changed', listener),
    onLocale: (listener) => subscribe('i18n:changed', listener),
  };
}
