/**
 * The Yeastar P-Series PBX's own lists, read through the one service client
 * (docs/phone-systems/yeastar-p-series.md section 9): its queues and ring groups (to name the group
 * a call came through, from the `call_path` of a 30011 report) and its company contacts (a
 * caller-name source). Pages are parsed here, tolerantly, as untrusted answers: an entry without a
 * usable number is skipped, text is cut and made fit to show, and nothing here throws except a
 * protocol error for an answer that is not a list at all.
 */
import { asObject, protocolError } from './wire.ts';
import { previewText } from '../ui/text.ts';

type Json = Record<string, unknown>;

/** A queue or ring group: its number (what `call_path` names) and its name. */
export interface PbxGroup {
  kind: 'queue' | 'ring-group';
  number: string;
  name: string;
}

/** What a company contact's number is; fax numbers are not read (nobody calls from them). */
export type PbxNumberKind = 'work' | 'mobile' | 'home' | 'other';

/** A company contact: shaped as a contacts file's contact, so the directory indexes both alike. */
export interface PbxContact {
  name: string;
  company: string;
  numbers: Array<{ number: string; kind: PbxNumberKind }>;
}

/** One page of a list: what it held that we keep, how many entries it had, and the total said. */
export interface ListPage<T> {
  items: T[];
  received: number;
  total?: number;
}

/** Longest number we keep (queue, ring group, a contact's number): a phone number is far shorter. */
export const MAX_LIST_NUMBER_CHARS = 64;
/** Longest name we keep (queue, ring group, contact, company), cut at code points. */
export const MAX_LIST_NAME_CHARS = 128;

/**
 * The fields of a company contact (*Query Company Contacts List*, Contact_Info) that hold a number
 * someone may call from, and what each is. business_fax and home_fax are left out.
 */
const CONTACT_NUMBER_FIELDS: ReadonlyArray<readonly [string, PbxNumberKind]> = [
  ['business', 'work'],
  ['business2', 'work'],
  ['mobile', 'mobile'],
  ['mobile2', 'mobile'],
  ['home', 'home'],
  ['home2', 'home'],
  ['other', 'other'],
];

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A number as the PBX lists it: trimmed, non-empty, no longer than MAX_LIST_NUMBER_CHARS. */
function numberOf(value: unknown): string | undefined {
  const n = text(value)?.trim();
  return n && n.length <= MAX_LIST_NUMBER_CHARS ? n : undefined;
}

/**
 * The entries of a page: under `key` (the queue list says `queue_list`), else under `data` (the
 * ring group and company contact lists); a missing list is an empty page, anything else is not
 * the PBX's answer.
 */
function pageOf<T>(
  body: unknown,
  operation: string,
  key: string,
  read: (entry: Json) => T | undefined,
): ListPage<T> {
  const obj = asObject(body, operation);
  const list = obj[key] ?? obj.data ?? [];
  if (!Array.isArray(list)) throw protocolError(operation, `the answer's "${key}" is not a list`);
  const items: T[] = [];
  for (const entry of list) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) continue;
    const item = read(entry as Json);
    if (item !== undefined) items.push(item);
  }
  const total = text(obj.total_number);
  const totalNumber = total !== undefined && /^\d{1,9}$/.test(total) ? Number(total) : undefined;
  return {
    items,
    received: list.length,
    ...(totalNumber !== undefined && { total: totalNumber }),
  };
}

/**
 * One page of queue/list (*Query Queue List*: `total_number`, `queue_list` of `id`, `number`,
 * `name`, ...) or ringgroup/list (*Query Ring Group List*: `total_number`, `data` of the same).
 * A group without a name is kept under its number's name: the card then says the number.
 */
export function parseGroupPage(
  body: unknown,
  operation: string,
  kind: PbxGroup['kind'],
): ListPage<PbxGroup> {
  const key = kind === 'queue' ? 'queue_list' : 'data';
  return pageOf(body, operation, key, (e) => {
    const number = numberOf(e.number);
    if (!number) return undefined;
    const name = previewText(e.name, MAX_LIST_NAME_CHARS) || number;
    return { kind, number, name };
  });
}

/**
 * One page of company_contact/list (*Query Company Contacts List*: `total_number`, `data` of
 * `contact_name`, `company`, `business`, `mobile`, ...). A contact without a name or without a
 * number is skipped.
 */
export function parseCompanyContactPage(body: unknown, operation: string): ListPage<PbxContact> {
  return pageOf(body, operation, 'data', (e) => {
    const name = previewText(e.contact_name, MAX_LIST_NAME_CHARS);
    if (!name) return undefined;
    const numbers: PbxContact['numbers'] = [];
    for (const [field, kind] of CONTACT_NUMBER_FIELDS) {
      const number = numberOf(e[field]);
      if (number) numbers.push({ number, kind });
    }
    if (numbers.length === 0) return undefined;
    return { name, company: previewText(e.company, MAX_LIST_NAME_CHARS), numbers };
  });
}
