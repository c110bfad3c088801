/**
 * Argument checks for every invoke channel, at the boundary: the renderer is our code, but a
 * compromised renderer is exactly the case IPC checks exist for. The map is typed over the contract,
 * so a channel added to contract.ts without a validator here does not compile.
 */
import type {
  IpcInvokeMap,
  InvokeChannel,
  OrgRelayPatch,
  RendererErrorReport,
  SettingsPatch,
  CallNoteInput,
} from '../ipc/contract.ts';
import {
  MAX_CALL_LOG_CHOICE_CHARS,
  MAX_CALL_NOTE_CHARS,
} from '../../src-shared/rules/call-log-rule.ts';
import { MAX_HISTORY_LIMIT } from '../core/history/history-store.ts';

export class IpcArgumentError extends Error {
  override name = 'IpcArgumentError';
}

type Validator<C extends InvokeChannel> = (args: unknown[]) => Parameters<IpcInvokeMap[C]>;

const MAX_ID = 256;
const MAX_TEMPLATE = 4096;
const MAX_PATCH_JSON = 64 * 1024;
const MAX_SECRET = 1024;
/** A number typed into Test lookup: a telephone number is far shorter. */
const MAX_NUMBER = 64;
/** Where a call is transferred: an extension or a number as typed (the dial rule judges it). */
const MAX_TRANSFER_TARGET = 64;
/** What was typed into Transfer's colleague picker (a name or an extension). */
const MAX_COLLEAGUE_QUERY = 64;
/** An address (the settings allow no longer one to be useful) and a relay's tenant name. */
const MAX_ADDRESS = 2048;
const MAX_TENANT = 64;
/** An enrolment code: 12 Crockford characters with separators, and room for stray spaces. */
const MAX_CODE = 64;

function none(args: unknown[]): [] {
  if (args.length !== 0) throw new IpcArgumentError('expected no arguments');
  return [];
}

function shortString(value: unknown, max: number, what: string): string {
  if (typeof value !== 'string' || value.length > max)
    throw new IpcArgumentError(`${what} must be a string of at most ${max} characters`);
  return value;
}

function one(args: unknown[]): unknown {
  if (args.length !== 1) throw new IpcArgumentError('expected one argument');
  return args[0];
}

/**
 * The note card's values: exactly text, disposition and submit; the note at most
 * MAX_CALL_NOTE_CHARS, the outcome null or a choice's length (the presenter checks it is one of
 * the configured choices, and makes the text plain).
 */
function callNoteArg(value: unknown): CallNoteInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new IpcArgumentError('note must be an object');
  const { text, disposition, submit, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new IpcArgumentError('unknown fields in note');
  if (typeof submit !== 'boolean') throw new IpcArgumentError('note.submit must be a boolean');
  return {
    text: shortString(text, MAX_CALL_NOTE_CHARS, 'note.text'),
    disposition:
      disposition === null
        ? null
        : shortString(disposition, MAX_CALL_LOG_CHOICE_CHARS, 'note.disposition'),
    submit,
  };
}

/** A list of call ids, at most as many as the history can hold. */
function callIdList(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_HISTORY_LIMIT)
    throw new IpcArgumentError(`callIds must be an array of at most ${MAX_HISTORY_LIMIT} ids`);
  return value.map((id) => shortString(id, MAX_ID, 'callId'));
}

/** Shape and size only; the settings validator judges the values. */
export function settingsPatchArg(value: unknown): SettingsPatch {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new IpcArgumentError('patch must be an object');
  const { settings, secret, crmSecret, crmLogSecret, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new IpcArgumentError('unknown fields in patch');
  if (!settings || typeof settings !== 'object' || Array.isArray(settings))
    throw new IpcArgumentError('patch.settings must be an object');
  if (JSON.stringify(settings).length > MAX_PATCH_JSON)
    throw new IpcArgumentError('patch.settings is too large');
  if (secret !== undefined) shortString(secret, MAX_SECRET, 'patch.secret');
  if (crmSecret !== undefined) shortString(crmSecret, MAX_SECRET, 'patch.crmSecret');
  if (crmLogSecret !== undefined) shortString(crmLogSecret, MAX_SECRET, 'patch.crmLogSecret');
  return {
    settings: settings as SettingsPatch['settings'],
    ...(secret !== undefined ? { secret: secret as string } : {}),
    ...(crmSecret !== undefined ? { crmSecret: crmSecret as string } : {}),
    ...(crmLogSecret !== undefined ? { crmLogSecret: crmLogSecret as string } : {}),
  };
}

/** The form's relay address and tenant: exactly these two strings; the settings rules judge them. */
export function orgRelayArg(value: unknown): OrgRelayPatch {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new IpcArgumentError('relay must be an object');
  const { relayUrl, relayTenant, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new IpcArgumentError('unknown fields in relay');
  return {
    relayUrl: shortString(relayUrl, MAX_ADDRESS, 'relay.relayUrl'),
    relayTenant: shortString(relayTenant, MAX_TENANT, 'relay.relayTenant'),
  };
}

/** A renderer error's fields: enough for support, never a way to fill the log. */
const MAX_ERROR_NAME = 100;
const MAX_ERROR_MESSAGE = 2000;
const MAX_ERROR_STACK = 8000;
const ERROR_KINDS: readonly RendererErrorReport['kind'][] = [
  'error',
  'unhandledrejection',
  'render',
];

/** Exactly the report's fields, each a string within its size (longer text is cut, not refused). */
export function rendererErrorArg(value: unknown): RendererErrorReport {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new IpcArgumentError('report must be an object');
  const { kind, name, message, stack, componentStack, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new IpcArgumentError('unknown fields in report');
  if (!ERROR_KINDS.includes(kind as RendererErrorReport['kind']))
    throw new IpcArgumentError(`report.kind must be one of ${ERROR_KINDS.join(', ')}`);
  const text = (v: unknown, max: number, what: string): string => {
    if (typeof v !== 'string') throw new IpcArgumentError(`${what} must be a string`);
    return v.length > max ? `${v.slice(0, max)}…` : v;
  };
  const report: RendererErrorReport = {
    kind: kind as RendererErrorReport['kind'],
    name: text(name, MAX_ERROR_NAME, 'report.name'),
    message: text(message, MAX_ERROR_MESSAGE, 'report.message'),
  };
  if (stack !== undefined) report.stack = text(stack, MAX_ERROR_STACK, 'report.stack');
  if (componentStack !== undefined)
    report.componentStack = text(componentStack, MAX_ERROR_STACK, 'report.componentStack');
  return report;
}

export const INVOKE_VALIDATORS: { [C in InvokeChannel]: Validator<C> } = {
  'popup:ready': none,
  'popup:dismiss': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'popup:open-crm': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'popup:copy-number': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'popup:save-note': (a) => {
    if (a.length !== 2) throw new IpcArgumentError('expected two arguments');
    return [shortString(a[0], MAX_ID, 'callId'), callNoteArg(a[1])];
  },
  'popup:content-size': (a) => {
    const h = one(a);
    if (typeof h !== 'number' || !Number.isFinite(h) || h < 0 || h > 100_000)
      throw new IpcArgumentError('height must be a finite number');
    return [h];
  },
  'calls:offered': none,
  'popup:call-back': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'popup:transfer': (a) => {
    if (a.length !== 3)
      throw new IpcArgumentError('expected a call id, where to transfer and blind or attended');
    if (a[2] !== 'blind' && a[2] !== 'attended')
      throw new IpcArgumentError('mode must be blind or attended');
    return [
      shortString(a[0], MAX_ID, 'callId'),
      shortString(a[1], MAX_TRANSFER_TARGET, 'to'),
      a[2],
    ];
  },
  'popup:complete-transfer': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'popup:cancel-transfer': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'calls:consultations': none,
  'popup:colleagues': (a) => [shortString(one(a), MAX_COLLEAGUE_QUERY, 'query')],
  'popup:hangup': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'popup:answer': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'popup:decline': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'calls:remote-answer': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'status:get': none,
  'i18n:get': none,
  'settings:get': none,
  'settings:save': (a) => [settingsPatchArg(one(a))],
  'settings:test-connection': (a) => [settingsPatchArg(one(a))],
  'settings:preview-crm': (a) => [shortString(one(a), MAX_TEMPLATE, 'template')],
  'settings:test-crm-lookup': (a) => {
    if (a.length !== 2) throw new IpcArgumentError('expected a patch and a number');
    return [settingsPatchArg(a[0]), shortString(a[1], MAX_NUMBER, 'number')];
  },
  'demo:start': none,
  'org:sign-in': (a) => [orgRelayArg(one(a))],
  'org:enrol': (a) => {
    if (a.length !== 2) throw new IpcArgumentError('expected the relay and a code');
    return [orgRelayArg(a[0]), shortString(a[1], MAX_CODE, 'code')];
  },
  'org:cancel-sign-in': none,
  'org:sign-out': none,
  'history:list': none,
  'history:mark-seen': none,
  'history:copy-number': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'history:open-crm': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'history:call-back': (a) => [shortString(one(a), MAX_ID, 'callId')],
  'history:selection': none,
  'dial:call': (a) => [shortString(one(a), MAX_NUMBER, 'number')],
  'history:export-csv': (a) => [callIdList(one(a))],
  'settings:choose-contacts-file': none,
  'window:close': none,
  'renderer:error': (a) => [rendererErrorArg(one(a))],
};
