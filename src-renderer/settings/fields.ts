/**
 * Every word the settings form shows about its fields, in one place: each field's label, help,
 * placeholder and the errors the form itself finds (main's errors arrive in words from main), and
 * the sections they belong to. The form looks fields up here by name, so a mark such as "locked by
 * your administrator" (an organisation's policy) or a translation is added once per field, here.
 */
import type { FormValues } from './form-values.ts';

export type SectionId = 'connection' | 'phone' | 'popup' | 'notifications' | 'advanced';

export interface SectionText {
  id: SectionId;
  title: string;
  /** One line under the title: what the section is for. */
  summary: string;
}

/** In page order. Onboarding shows only the first two. */
export const SECTIONS: readonly SectionText[] = [
  {
    id: 'connection',
    title: 'Connection',
    summary: 'Your phone system’s address and the API key Screenpop signs in with.',
  },
  {
    id: 'phone',
    title: 'Your phone',
    summary: 'The numbers that ring you: calls to them pop up.',
  },
  {
    id: 'popup',
    title: 'Screen-pop & CRM',
    summary: 'Where the popup appears, and what it opens.',
  },
  {
    id: 'notifications',
    title: 'Notifications & start-up',
    summary: 'Sounds, Do not disturb, and starting with your computer.',
  },
  {
    id: 'advanced',
    title: 'Advanced',
    summary: 'How calls reach this computer. Change only if your administrator asks you to.',
  },
];

export type FieldName = keyof FormValues;

export interface FieldText {
  label: string;
  hint?: string;
  placeholder?: string;
}

export const FIELDS: Record<FieldName, FieldText> = {
  baseUrl: {
    label: 'Service address',
    hint: 'The address you sign in to, for example https://acme.example.com',
    placeholder: 'https://acme.example.com',
  },
  apiKey: { label: 'API key', hint: 'From the admin console, under API keys.' },
  secret: { label: 'API secret', hint: 'Kept in your system keychain, never in a file.' },
  extensions: {
    label: 'Your extensions',
    hint: 'Separate several with commas or new lines, for example 101, 102',
  },
  dids: {
    label: 'Your direct numbers (optional)',
    hint: 'Numbers that ring you directly, in any common format.',
  },
  defaultRegion: {
    label: 'Country for local numbers',
    hint: 'Two letters, for example US or GB.',
  },
  eventSource: { label: 'Event source' },
  relayUrl: {
    label: 'Relay address',
    hint: 'wss:// address from your administrator. Needed for Relay.',
    placeholder: 'wss://relay.example.com',
  },
  relayTenant: {
    label: 'Relay tenant',
    hint: 'The tenant name your relay administrator gave you; leave empty to use the first part of the service address.',
    placeholder: 'acme',
  },
  proxyMode: { label: 'Proxy' },
  proxyUrl: {
    label: 'Proxy address',
    hint: 'Used when Proxy is "This proxy". A proxy password is kept in the system keychain (see README, For administrators).',
    placeholder: 'http://proxy.example.com:3128',
  },
  crmUrlTemplate: {
    label: 'CRM link',
    hint: 'Each call fills in {from}, {to}, {call_id} and {caller_name}. Leave empty for no CRM button.',
    placeholder: 'https://crm.example.com/search?phone={from}',
  },
  autoOpenCrm: { label: 'Open the CRM link by itself when a call rings' },
  contactsFile: {
    label: 'Contacts file (optional)',
    hint: "A CSV or vCard file with names and numbers. Names from the phone system's directory are used too.",
  },
  doNotDisturb: {
    label: 'Do not disturb',
    hint: 'No popups or sounds; calls still go to the history.',
  },
  sound: { label: 'Play a sound when a call rings' },
  startAtLogin: { label: 'Start Screenpop when I sign in' },
  popupDisplay: { label: 'Show on' },
  popupCorner: { label: 'Corner' },
  popupLingerSec: { label: 'Stay after ringing stops (seconds)' },
  featureVoicemail: {
    label: 'Voicemail',
    hint: 'A notification and a History entry when someone leaves you a voicemail.',
  },
  featureSms: {
    label: 'Text messages (SMS)',
    hint: 'A notification with the sender and the start of the message, and a History entry.',
  },
  featureTrunk: {
    label: 'Warn when calls from outside may not reach me',
    hint: 'Shown in the tray and above calls while a phone line (trunk) is down.',
  },
  featurePresence: {
    label: 'Show my phone presence',
    hint: 'Your presence as the phone system has it (Available, Do not disturb, …) in the tray.',
  },
};

/** The words of the secret field when the keychain already holds one. */
export const SECRET_STORED = {
  placeholder: 'Stored in keychain',
  hint: 'Stored in the keychain. Leave empty to keep it, or type a new one.',
};

/** Beside a setting the organisation's policy locked. */
export function lockedByText(by: string): string {
  return `Locked by ${by}`;
}

/** The banner at the top of a managed computer's settings. */
export function managedBanner(by: string, count: number): string {
  return `${by} manages ${count === 1 ? 'one setting' : `${count} settings`} on this computer. Locked settings show a lock and cannot be changed here; everything else is yours to set.`;
}

/** Errors the form finds before asking main. */
export const FORM_ERRORS = {
  popupLingerSec: 'Enter a number of seconds (0 or more).',
  saveFailed: 'Saving failed. Please try again.',
} as const;

/** The event source choices, with what each means. */
export const SOURCE_CHOICES = [
  { value: 'auto', label: 'Automatic', hint: 'Direct connection, plus the relay when one is set.' },
  { value: 'direct', label: 'Direct', hint: 'This computer connects to the phone system itself.' },
  { value: 'relay', label: 'Relay', hint: "Through your organisation's webhook relay." },
] as const;

export const CORNERS = [
  { value: 'top-left', label: 'Top left' },
  { value: 'top-right', label: 'Top right' },
  { value: 'bottom-left', label: 'Bottom left' },
  { value: 'bottom-right', label: 'Bottom right' },
] as const;

export const PROXY_MODES = [
  { value: 'system', label: 'System proxy settings (PAC, WPAD)' },
  { value: 'none', label: 'No proxy' },
  { value: 'manual', label: 'This proxy' },
] as const;

export const DISPLAYS = [
  { value: 'primary', label: 'Main display' },
  { value: 'pointer', label: 'Display with the mouse pointer' },
] as const;
