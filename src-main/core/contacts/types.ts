/**
 * What a contacts file holds, as the directory uses it: people (or companies) with a name, maybe a
 * company, and their numbers, each with its kind. Text here is still the file's (untrusted): the
 * directory makes it fit to show (displayText) when it indexes it.
 */

/** What a number is, as the card shows it ("mobile", "work"). */
export type NumberKind = 'mobile' | 'work' | 'home' | 'main' | 'other';

export const NUMBER_KINDS: readonly NumberKind[] = ['mobile', 'work', 'home', 'main', 'other'];

export interface ContactNumber {
  number: string;
  kind: NumberKind;
}

export interface Contact {
  name: string;
  /** The organisation, when the file has one ('' when not). */
  company: string;
  numbers: ContactNumber[];
}

/** How the file was read. */
export type ContactsLayout = 'google-csv' | 'outlook-csv' | 'csv' | 'vcard';

/**
 * Why a file gave no contacts, with what was found in it, so Settings and the runner can say what
 * to fix: a CSV's columns, or how many vCards there were and what they lacked.
 */
export type ContactsProblem =
  /** Nothing but blank lines (or a header alone). */
  | { kind: 'empty' }
  /** A CSV whose header has no column read as a phone number. */
  | { kind: 'no-phone-column'; columns: string[] }
  /** A CSV whose header has phone columns but none for a name (or company). */
  | { kind: 'no-name-column'; columns: string[] }
  /** A CSV with name and phone columns, but no row has both filled in. */
  | { kind: 'no-rows'; nameColumns: string[]; phoneColumns: string[]; rows: number }
  /** vCards, none with both a name (FN, N or ORG) and a telephone number (TEL). */
  | { kind: 'no-cards'; cards: number; withNumber: number }
  /**
   * A vCard quoted-printable value whose soft line breaks (lines ending in "=") run on past
   * `limitKb` KiB, from line `line` of the file (1-based): a damaged file; nothing of it is used.
   */
  | { kind: 'long-value'; line: number; limitKb: number };

export interface ContactsReading {
  layout: ContactsLayout;
  contacts: Contact[];
  /** Rows or cards that were skipped (no name, no number, or past the limit). */
  skipped: number;
  /** Present when `contacts` is empty. */
  problem?: ContactsProblem;
}
