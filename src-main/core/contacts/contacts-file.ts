/**
 * The optional contacts file: a CSV export (Google, Outlook or any sheet with a name column and a
 * phone column) or a vCard file (2.1, 3.0, 4.0), in whatever encoding it was written. It is the
 * user's own file, but still read defensively: bounded size and number count, anything unreadable
 * skipped, and a file that gives nothing says why (`problem`: which columns were found, or what the
 * cards lacked) so Settings and the runner can tell the user what to fix.
 */
import { readCsvContacts } from './csv-contacts.ts';
import { decodeText } from './decode.ts';
import type { ContactsReading } from './types.ts';
import { readVCardContacts } from './vcard.ts';

export const MAX_CONTACTS_BYTES = 5 * 1024 * 1024;
/** Most numbers read from one file. */
export const MAX_CONTACT_NUMBERS = 50_000;

/** Reads a contacts file's text (or its bytes, in any of the encodings exports use). */
export function readContacts(
  content: string | Uint8Array,
  maxNumbers = MAX_CONTACT_NUMBERS,
): ContactsReading {
  const text = (typeof content === 'string' ? content : decodeText(content).text).replace(
    /^\uFEFF/,
    '',
  );
  // Blanks other than line ends around it: `\s*` would cross lines, and retry from every line
  // start to the end of a run of blank lines (minutes on a file of blank lines).
  return /^[^\S\r\n]*BEGIN:VCARD[^\S\r\n]*$/im.test(text)
    ? readVCardContacts(text, maxNumbers)
    : readCsvContacts(text, maxNumbers);
}
