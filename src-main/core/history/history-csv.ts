/**
 * The call history as a CSV file for a spreadsheet (History > Export CSV…). Caller names and
 * numbers are chosen by callers, so every cell is made inert for the programs that open it:
 *
 * - Spreadsheets run a cell that starts with = + - @ (or a tab or carriage return, or their
 *   full-width forms) as a formula: "=HYPERLINK(…)" in a caller name would become a link or a
 *   command. Such a cell gets a leading apostrophe, which Excel, LibreOffice and Google Sheets read
 *   as "this is text" (OWASP's advice for CSV injection). Phone numbers in international form start
 *   with "+", so they carry it too: "'+14155550123" stays a number a person can read and dial,
 *   instead of becoming 14155550123 or 1.42E+10.
 * - Controls, line breaks and bidirectional overrides are removed (displayText), so a value cannot
 *   start a new row or read backwards; every cell is quoted, with inner quotes doubled (RFC 4180).
 * - UTF-8 with a byte-order mark (so Excel reads accents and scripts right) and CRLF line ends.
 */
import { outcomeLabel, type HistoryItem } from '../ports/views.ts';
import { displayText } from '../../../src-shared/ui/text.ts';

const COLUMNS = [
  'Started',
  'Caller name',
  'Caller number',
  'Called line',
  'Called number',
  'Outcome',
  'Rang for (seconds)',
  'Call ID',
  'Voicemail length (seconds)',
  'Message',
  // Added later, at the end, so a sheet that reads the columns by position keeps working.
  'Caller company',
  'Caller number type',
] as const;

/** The first characters a spreadsheet may read as the start of a formula. */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
const LONGEST_CELL = 4096;

/** One cell: inert text, quoted. */
export function csvCell(value: string): string {
  // displayText also trims: " =1+1" is judged by its "=" (some programs skip leading spaces).
  let text = displayText(value, LONGEST_CELL);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return `"${text.replace(/"/g, '""')}"`;
}

/** `at` as local "YYYY-MM-DD HH:MM:SS", which spreadsheets read as a date and time. */
export function localDateTime(at: number): string {
  const d = new Date(at);
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ` +
    `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`
  );
}

export interface CsvOptions {
  /** How a time is written; local time by default (tests pass a fixed zone). */
  dateTime?: (at: number) => string;
}

/** The entries as CSV text, in the order given. */
export function historyToCsv(entries: readonly HistoryItem[], options: CsvOptions = {}): string {
  const dateTime = options.dateTime ?? localDateTime;
  const rows = [COLUMNS.map(csvCell).join(',')];
  for (const e of entries) {
    const rang =
      e.kind === 'call' && e.endedAt !== null && e.endedAt >= e.startedAt
        ? String(Math.round((e.endedAt - e.startedAt) / 1000))
        : '';
    const outcome =
      e.kind === 'voicemail' ? 'Voicemail' : e.kind === 'sms' ? 'SMS' : outcomeLabel(e.outcome);
    const length = e.kind === 'voicemail' && e.durationSec !== null ? String(e.durationSec) : '';
    // A message's line breaks become spaces: one row per item, whatever the text holds.
    const message = e.kind === 'sms' ? e.text.replace(/\s+/g, ' ') : '';
    rows.push(
      [
        dateTime(e.startedAt),
        e.callerName ?? '',
        e.from,
        e.toName ?? '',
        e.to,
        outcome,
        rang,
        e.callId,
        length,
        message,
        e.kind === 'call' ? (e.callerCompany ?? '') : '',
        e.kind === 'call' ? (e.numberKind ?? '') : '',
      ]
        .map(csvCell)
        .join(','),
    );
  }
  return `\uFEFF${rows.join('\r\n')}\r\n`;
}

/** The name the save dialog proposes: screenpop-calls-2026-11-22.csv (local date). */
export function exportFileName(now: number): string {
  return `screenpop-calls-${localDateTime(now).slice(0, 10)}.csv`;
}
