/**
 * Contacts from a CSV export. Columns are recognised by their header, in the layouts people
 * actually export (the header lists are the exporters' own: see test/contacts/fixtures/README.md):
 *
 * - Google Contacts, both layouts: the older one ("Name", "Given Name", "Family Name", ...,
 *   "Phone 1 - Type", "Phone 1 - Value") and the current one ("First Name", "Middle Name",
 *   "Last Name", "Organization Name", ..., "Phone 1 - Label", "Phone 1 - Value"). A number's kind is
 *   in the matching Type/Label cell; one cell may hold several numbers joined by " ::: ".
 * - Outlook (English and German headers): a column per kind of number ("Mobile Phone",
 *   "Business Phone", "Home Phone 2", "Mobiltelefon", "Telefon geschäftlich", "Telefon (privat)"...).
 * - Anything else with a recognisable name column and phone column ("Name,Phone", "Nom;Téléphone").
 *
 * A row's name is its full-name column, else given + middle + family names, else its company (a
 * business's own line). Fax, pager and telex columns are not read: nobody calls from them.
 */
import { parseCsvRows } from './csv.ts';
import type { Contact, ContactNumber, ContactsReading, NumberKind } from './types.ts';

/** A header as compared: lower case, single spaces, no surrounding quotes or spaces. */
function key(header: string): string {
  return header
    .replace(/^\uFEFF/, '')
    .trim()
    .replace(/^"|"$/g, '')
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

const FULL_NAME = new Set([
  'name',
  'full name',
  'display name',
  'fn',
  'contact',
  'contact name',
  'anzeigename',
  'vollständiger name',
  'nom complet',
  'nombre completo',
]);
const GIVEN_NAME = new Set([
  'first name',
  'given name',
  'firstname',
  'vorname',
  'prénom',
  'nombre',
]);
const MIDDLE_NAME = new Set([
  'middle name',
  'additional name',
  'weitere vornamen',
  'deuxième prénom',
  'segundo nombre',
]);
const FAMILY_NAME = new Set([
  'last name',
  'family name',
  'surname',
  'lastname',
  'nachname',
  'nom',
  'nom de famille',
  'apellidos',
  'apellido',
]);
const COMPANY = new Set([
  'company',
  'company name',
  'organization',
  'organisation',
  'organization name',
  'organization 1 - name',
  'firma',
  'société',
  'entreprise',
  'empresa',
  'compañía',
  'organización',
]);

/**
 * Outlook's phone columns, English and German, with their kind. Columns not listed here are still
 * read when their header names a phone (phoneKind below); these are the ones whose words alone
 * would not say it ("Callback", "ISDN", "Rückmeldung") or would say the wrong kind.
 */
const OUTLOOK_PHONES: ReadonlyMap<string, NumberKind> = new Map([
  ["assistant's phone", 'work'],
  ['business phone', 'work'],
  ['business phone 2', 'work'],
  ['callback', 'other'],
  ['car phone', 'mobile'],
  ['company main phone', 'main'],
  ['home phone', 'home'],
  ['home phone 2', 'home'],
  ['isdn', 'other'],
  ['mobile phone', 'mobile'],
  ['other phone', 'other'],
  ['primary phone', 'main'],
  ['radio phone', 'other'],
  ['tty/tdd phone', 'other'],
  ['telefon assistent', 'work'],
  ['telefon geschäftlich', 'work'],
  ['telefon geschäftlich 2', 'work'],
  ['telefon (geschäftlich)', 'work'],
  ['rückmeldung', 'other'],
  ['autotelefon', 'mobile'],
  ['telefon firma', 'main'],
  ['telefon privat', 'home'],
  ['telefon privat 2', 'home'],
  ['telefon (privat)', 'home'],
  ['telefon (privat 2)', 'home'],
  ['mobiltelefon', 'mobile'],
  ['mobiltelefon 2', 'mobile'],
  ['weiteres telefon', 'other'],
  ['haupttelefon', 'main'],
  ['telefon für hörbehinderte', 'other'],
]);

/** Words that make a header (or a Google label) a telephone number. */
const PHONE_WORDS = new Set([
  'phone',
  'telephone',
  'tel',
  'tél',
  'mobile',
  'cell',
  'cellphone',
  'telefon',
  'telefonnummer',
  'mobil',
  'mobiltelefon',
  'handy',
  'téléphone',
  'portable',
  'teléfono',
  'telefono',
  'móvil',
  'movil',
  'celular',
]);
/** A header that is exactly one of these is a number column ("Number", "Nummer"). */
const NUMBER_HEADERS = new Set(['number', 'phone number', 'nummer', 'numéro', 'número']);
/** Words that make a column not one someone calls from, or not a number at all. */
const NOT_A_VOICE_LINE = new Set(['fax', 'pager', 'telex', 'type', 'label', 'typ']);

function words(text: string): string[] {
  return text.split(/[^\p{L}\p{N}']+/u).filter(Boolean);
}

/** The kind a label or header says, from its words (English, German, French, Spanish). */
export function kindFromWords(text: string): NumberKind {
  const w = words(key(text));
  const has = (...options: string[]) => options.some((o) => w.includes(o));
  const hasPart = (...parts: string[]) => w.some((x) => parts.some((p) => x.includes(p)));
  if (
    has('mobile', 'cell', 'cellphone', 'iphone', 'car', 'handy', 'portable', 'móvil', 'movil') ||
    has('celular', 'mobil') ||
    hasPart('mobil', 'autotelefon')
  )
    return 'mobile';
  if (has('work', 'business', 'office', 'geschäftlich', 'büro', 'bureau', 'trabajo', 'travail'))
    return 'work';
  if (has('home', 'privat', 'domicile', 'particular', 'casa', 'personal')) return 'home';
  if (has('main', 'primary', 'company', 'principal', 'firma', 'société') || hasPart('haupt'))
    return 'main';
  return 'other';
}

/** Whether a Google Type/Label cell says the number is a fax or a pager (not read). */
function notVoice(label: string): boolean {
  return words(key(label)).some((w) => NOT_A_VOICE_LINE.has(w) && w !== 'type' && w !== 'label');
}

interface PhoneColumn {
  index: number;
  header: string;
  /** The kind the header says; a Google value column reads it from `labelIndex` per row. */
  kind: NumberKind;
  labelIndex?: number;
}

interface Columns {
  full: number[];
  given: number[];
  middle: number[];
  family: number[];
  company: number[];
  phones: PhoneColumn[];
  google: boolean;
  outlook: boolean;
}

const GOOGLE_VALUE = /^phone (\d+) - value$/;
const GOOGLE_LABEL = /^phone (\d+) - (type|label)$/;

function classify(header: string[]): Columns {
  const keys = header.map(key);
  const cols: Columns = {
    full: [],
    given: [],
    middle: [],
    family: [],
    company: [],
    phones: [],
    google: false,
    outlook: false,
  };
  const googleLabels = new Map<string, number>();
  keys.forEach((k, i) => {
    const label = GOOGLE_LABEL.exec(k);
    if (label?.[1]) googleLabels.set(label[1], i);
  });
  keys.forEach((k, i) => {
    const original = header[i] ?? '';
    if (FULL_NAME.has(k)) cols.full.push(i);
    else if (GIVEN_NAME.has(k)) cols.given.push(i);
    else if (MIDDLE_NAME.has(k)) cols.middle.push(i);
    else if (FAMILY_NAME.has(k)) cols.family.push(i);
    else if (COMPANY.has(k)) cols.company.push(i);
    const google = GOOGLE_VALUE.exec(k);
    if (google?.[1]) {
      cols.google = true;
      const labelIndex = googleLabels.get(google[1]);
      cols.phones.push({
        index: i,
        header: original,
        kind: 'other',
        ...(labelIndex !== undefined ? { labelIndex } : {}),
      });
      return;
    }
    if (GOOGLE_LABEL.test(k)) return;
    const outlook = OUTLOOK_PHONES.get(k);
    if (outlook) {
      cols.outlook = true;
      cols.phones.push({ index: i, header: original, kind: outlook });
      return;
    }
    const w = words(k);
    if (w.some((x) => NOT_A_VOICE_LINE.has(x))) return;
    if (NUMBER_HEADERS.has(k) || w.some((x) => PHONE_WORDS.has(x)))
      cols.phones.push({ index: i, header: original, kind: kindFromWords(k) });
  });
  return cols;
}

function cell(row: string[], index: number): string {
  return (row[index] ?? '').trim();
}

function joined(row: string[], indexes: number[]): string {
  return indexes
    .map((i) => cell(row, i))
    .filter(Boolean)
    .join(' ');
}

/** The headers as the user wrote them, for a message (bounded: a header may be anything). */
function shownColumns(header: string[]): string[] {
  return header.map((h) => h.replace(/^\uFEFF/, '').trim()).filter(Boolean);
}

export function readCsvContacts(text: string, maxNumbers: number): ContactsReading {
  // One row more than the limit could need: every row has at least one number.
  const rows = parseCsvRows(text, maxNumbers + 1).filter((r) => r.some((c) => c.trim() !== ''));
  const header = rows[0] ?? [];
  const data = rows.slice(1);
  const cols = classify(header);
  const layout = cols.google ? 'google-csv' : cols.outlook ? 'outlook-csv' : 'csv';
  const nameCols = [...cols.full, ...cols.given, ...cols.middle, ...cols.family, ...cols.company];
  if (header.length === 0 || (data.length === 0 && nameCols.length > 0 && cols.phones.length > 0))
    return { layout, contacts: [], skipped: 0, problem: { kind: 'empty' } };
  if (cols.phones.length === 0)
    return {
      layout,
      contacts: [],
      skipped: data.length,
      problem: { kind: 'no-phone-column', columns: shownColumns(header) },
    };
  if (nameCols.length === 0)
    return {
      layout,
      contacts: [],
      skipped: data.length,
      problem: { kind: 'no-name-column', columns: shownColumns(header) },
    };
  const contacts: Contact[] = [];
  let skipped = 0;
  let count = 0;
  for (const row of data) {
    const company = joined(row, cols.company);
    const name =
      joined(row, cols.full) ||
      joined(row, [...cols.given, ...cols.middle, ...cols.family]) ||
      company;
    const numbers: ContactNumber[] = [];
    for (const col of cols.phones) {
      const label = col.labelIndex !== undefined ? cell(row, col.labelIndex) : '';
      if (label && notVoice(label)) continue;
      const kind = label ? kindFromWords(label) : col.kind;
      for (const part of cell(row, col.index).split(':::')) {
        const number = part.trim();
        if (number) numbers.push({ number, kind });
      }
    }
    if (!name || numbers.length === 0 || count >= maxNumbers) {
      skipped++;
      continue;
    }
    count += numbers.length;
    contacts.push({ name, company: company === name ? '' : company, numbers });
  }
  if (contacts.length === 0)
    return {
      layout,
      contacts,
      skipped,
      problem: {
        kind: 'no-rows',
        nameColumns: nameCols.map((i) => shownColumns([header[i] ?? ''])[0] ?? ''),
        phoneColumns: cols.phones.map((c) => c.header.trim()),
        rows: data.length,
      },
    };
  return { layout, contacts, skipped };
}
