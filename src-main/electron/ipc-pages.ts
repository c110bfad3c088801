/**
 * Which of our pages may use which invoke channel (defence in depth: a compromised popup cannot
 * save settings or start the demo). Typed over the contract: a new channel needs an entry here.
 */
import type { InvokeChannel } from '../ipc/contract.ts';
import type { PageName } from './app-origin.ts';

const ALL: readonly PageName[] = ['popup', 'settings', 'history', 'dial'];

export const CHANNEL_PAGES: { [C in InvokeChannel]: readonly PageName[] } = {
  'popup:ready': ['popup'],
  'popup:dismiss': ['popup'],
  'popup:open-crm': ['popup'],
  'popup:copy-number': ['popup'],
  'popup:save-note': ['popup'],
  'popup:content-size': ['popup'],
  'calls:offered': ['popup', 'history'],
  'popup:call-back': ['popup'],
  'popup:transfer': ['popup'],
  'popup:complete-transfer': ['popup'],
  'popup:cancel-transfer': ['popup'],
  'calls:consultations': ['popup'],
  'popup:colleagues': ['popup'],
  'popup:hangup': ['popup'],
  'popup:answer': ['popup'],
  'popup:decline': ['popup'],
  'calls:remote-answer': ['popup'],
  'status:get': ALL,
  'i18n:get': ALL,
  'settings:get': ['popup', 'settings', 'history'],
  'settings:save': ['settings'],
  'settings:test-connection': ['settings'],
  'settings:preview-crm': ['settings'],
  'settings:test-crm-lookup': ['settings'],
  'demo:start': ['settings'],
  'org:sign-in': ['settings'],
  'org:enrol': ['settings'],
  'org:cancel-sign-in': ['settings'],
  'org:sign-out': ['settings'],
  'history:list': ['history', 'settings'],
  'history:mark-seen': ['history'],
  'history:copy-number': ['history'],
  'history:open-crm': ['history'],
  'history:call-back': ['history'],
  'history:selection': ['history'],
  'history:export-csv': ['history'],
  'dial:call': ['dial'],
  'settings:choose-contacts-file': ['settings'],
  'window:close': ALL,
  'renderer:error': ALL,
};
