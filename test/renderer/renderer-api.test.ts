/**
 * The object the preload exposes as `window.screenpop`, built on a recording stand-in for
 * ipcRenderer: every method reaches its contract channel, events arrive without Electron's event
 * object, and unsubscribing removes exactly the listener that was added.
 */
import { describe, expect, it } from 'vitest';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type ScreenpopApi } from '../../src-main/ipc/contract.ts';
import { createScreenpopApi, type IpcTransport } from '../../src-main/ipc/renderer-api.ts';

type Listener = (event: unknown, ...args: unknown[]) => void;

function recordingTransport() {
  const invoked: { channel: string; args: unknown[] }[] = [];
  const listeners = new Map<string, Set<Listener>>();
  const transport: IpcTransport = {
    invoke(channel, ...args) {
      invoked.push({ channel, args });
      return Promise.resolve(`answer:${channel}`);
    },
    on(channel, listener) {
      if (!listeners.has(channel)) listeners.set(channel, new Set());
      listeners.get(channel)?.add(listener);
    },
    removeListener(channel, listener) {
      listeners.get(channel)?.delete(listener);
    },
  };
  const send = (channel: string, ...args: unknown[]) => {
    for (const l of listeners.get(channel) ?? []) l({ sender: 'the-ipc-event' }, ...args);
  };
  return { transport, invoked, listeners, send };
}

describe('createScreenpopApi', () => {
  it('maps each request method to its contract channel with its arguments, and returns main’s answer', async () => {
    const { transport, invoked } = recordingTransport();
    const api = createScreenpopApi(transport);
    const patch = { settings: { doNotDisturb: true }, secret: 's3cret' };
    const answers = await Promise.all([
      api.popupReady(),
      api.dismiss('c1'),
      api.openCrm('c2'),
      api.copyNumber('c3'),
      api.saveNote('c4', { text: 'Wants a quote', disposition: null, submit: true }),
      api.reportPopupSize(240),
      api.callActionsOffered(),
      api.callBack('c1'),
      api.transferCall('c1', '204', 'attended'),
      api.completeTransfer('c1'),
      api.cancelTransfer('c1'),
      api.consultations(),
      api.findColleagues('bo'),
      api.hangUp('c1'),
      api.answerCall('c1'),
      api.declineCall('c1'),
      api.remoteAnswer('c1'),
      api.getStatus(),
      api.getSettings(),
      api.saveSettings(patch),
      api.testConnection(patch),
      api.previewCrm('https://crm.example.com/?p={from}'),
      api.startDemo(),
      api.listHistory(),
      api.markHistorySeen(),
      api.copyHistoryNumber('h1'),
      api.openHistoryCrm('h2'),
      api.callBackFromHistory('h2'),
      api.takeHistorySelection(),
      api.dialNumber('+14155550123'),
      api.exportHistoryCsv(['h1', 'h2']),
      api.getLocale(),
      api.chooseContactsFile(),
      api.closeWindow(),
      api.reportError({ kind: 'error', name: 'Error', message: 'm' }),
      api.testCrmLookup(patch, '+14155550123'),
      api.signInToOrganisation({ relayUrl: 'wss://relay.example.org', relayTenant: 'acme' }),
      api.enrolInOrganisation({ relayUrl: 'wss://relay.example.org', relayTenant: 'acme' }, 'K7'),
      api.cancelOrganisationSignIn(),
      api.signOutOfOrganisation(),
    ]);
    expect(invoked).toEqual([
      { channel: 'popup:ready', args: [] },
      { channel: 'popup:dismiss', args: ['c1'] },
      { channel: 'popup:open-crm', args: ['c2'] },
      { channel: 'popup:copy-number', args: ['c3'] },
      {
        channel: 'popup:save-note',
        args: ['c4', { text: 'Wants a quote', disposition: null, submit: true }],
      },
      { channel: 'popup:content-size', args: [240] },
      { channel: 'calls:offered', args: [] },
      { channel: 'popup:call-back', args: ['c1'] },
      { channel: 'popup:transfer', args: ['c1', '204', 'attended'] },
      { channel: 'popup:complete-transfer', args: ['c1'] },
      { channel: 'popup:cancel-transfer', args: ['c1'] },
      { channel: 'calls:consultations', args: [] },
      { channel: 'popup:colleagues', args: ['bo'] },
      { channel: 'popup:hangup', args: ['c1'] },
      { channel: 'popup:answer', args: ['c1'] },
      { channel: 'popup:decline', args: ['c1'] },
      { channel: 'calls:remote-answer', args: ['c1'] },
      { channel: 'status:get', args: [] },
      { channel: 'settings:get', args: [] },
      { channel: 'settings:save', args: [patch] },
      { channel: 'settings:test-connection', args: [patch] },
      { channel: 'settings:preview-crm', args: ['https://crm.example.com/?p={from}'] },
      { channel: 'demo:start', args: [] },
      { channel: 'history:list', args: [] },
      { channel: 'history:mark-seen', args: [] },
      { channel: 'history:copy-number', args: ['h1'] },
      { channel: 'history:open-crm', args: ['h2'] },
      { channel: 'history:call-back', args: ['h2'] },
      { channel: 'history:selection', args: [] },
      { channel: 'dial:call', args: ['+14155550123'] },
      { channel: 'history:export-csv', args: [['h1', 'h2']] },
      { channel: 'i18n:get', args: [] },
      { channel: 'settings:choose-contacts-file', args: [] },
      { channel: 'window:close', args: [] },
      { channel: 'renderer:error', args: [{ kind: 'error', name: 'Error', message: 'm' }] },
      { channel: 'settings:test-crm-lookup', args: [patch, '+14155550123'] },
      {
        channel: 'org:sign-in',
        args: [{ relayUrl: 'wss://relay.example.org', relayTenant: 'acme' }],
      },
      {
        channel: 'org:enrol',
        args: [{ relayUrl: 'wss://relay.example.org', relayTenant: 'acme' }, 'K7'],
      },
      { channel: 'org:cancel-sign-in', args: [] },
      { channel: 'org:sign-out', args: [] },
    ]);
    // Every invoke channel of the contract is reachable, and nothing else is.
    expect(new Set(invoked.map((i) => i.channel))).toEqual(new Set(INVOKE_CHANNELS));
    expect(answers[0]).toBe('answer:popup:ready');
  });

  it('hands events to listeners without the IPC event object and unsubscribes exactly once', () => {
    const { transport, listeners, send } = recordingTransport();
    const api = createScreenpopApi(transport);
    const got: unknown[][] = [];
    const offs = [
      api.onCalls((...args) => got.push(['calls', ...args])),
      api.onConsultations((...args) => got.push(['consultations', ...args])),
      api.onStatus((...args) => got.push(['status', ...args])),
      api.onHistory((...args) => got.push(['history', ...args])),
      api.onHistorySelect((...args) => got.push(['select', ...args])),
      api.onSettings((...args) => got.push(['settings', ...args])),
      api.onLocale((...args) => got.push(['locale', ...args])),
    ];
    expect(new Set(listeners.keys())).toEqual(new Set(EVENT_CHANNELS));
    send('popup:calls', [{ callId: 'c1' }]);
    send('calls:consultations-changed', []);
    send('status:changed', { state: 'connected' });
    send('history:changed', []);
    send('history:select', 'voicemail:v1');
    send('settings:changed', { hasSecret: true });
    send('i18n:changed', { locale: 'ar' });
    expect(got).toEqual([
      ['calls', [{ callId: 'c1' }]],
      ['consultations', []],
      ['status', { state: 'connected' }],
      ['history', []],
      ['select', 'voicemail:v1'],
      ['settings', { hasSecret: true }],
      ['locale', { locale: 'ar' }],
    ]);
    const second = api.onCalls(() => got.push(['second']));
    offs[0]?.();
    offs[0]?.();
    expect(listeners.get('popup:calls')?.size).toBe(1);
    send('popup:calls', []);
    expect(got.at(-1)).toEqual(['second']);
    second();
    for (const off of offs.slice(1)) off();
    for (const set of listeners.values()) expect(set.size).toBe(0);
  });

  it('exposes plain named functions only: no transport, no way to choose a channel', () => {
    const { transport } = recordingTransport();
    const api = createScreenpopApi(transport) as unknown as Record<string, unknown>;
    const expected: (keyof ScreenpopApi)[] = [
      'popupReady',
      'dismiss',
      'openCrm',
      'copyNumber',
      'saveNote',
      'reportPopupSize',
      'callActionsOffered',
      'callBack',
      'transferCall',
      'completeTransfer',
      'cancelTransfer',
      'consultations',
      'findColleagues',
      'hangUp',
      'answerCall',
      'declineCall',
      'remoteAnswer',
      'getStatus',
      'getLocale',
      'getSettings',
      'saveSettings',
      'testConnection',
      'previewCrm',
      'testCrmLookup',
      'startDemo',
      'signInToOrganisation',
      'enrolInOrganisation',
      'cancelOrganisationSignIn',
      'signOutOfOrganisation',
      'listHistory',
      'markHistorySeen',
      'copyHistoryNumber',
      'openHistoryCrm',
      'callBackFromHistory',
      'takeHistorySelection',
      'dialNumber',
      'exportHistoryCsv',
      'chooseContactsFile',
      'closeWindow',
      'reportError',
      'onCalls',
      'onConsultations',
      'onStatus',
      'onHistory',
      'onHistorySelect',
      'onSettings',
      'onLocale',
    ];
    expect(Object.keys(api).sort()).toEqual([...expected].sort());
    for (const value of Object.values(api)) expect(typeof value).toBe('function');
    expect(Object.values(api)).not.toContain(transport);
  });
});
