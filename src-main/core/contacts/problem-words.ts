/**
 * Why a contacts file gave nothing, in words (Settings' file picker and the runner's --contacts say
 * the same): what was found in the file (its columns, its cards) and what to do about it.
 */
import { phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import { displayText } from '../../../src-shared/ui/text.ts';
import { MAX_CONTACTS_BYTES } from './contacts-file.ts';
import type { ContactsProblem } from './types.ts';

/** Columns named in a message: the first few, each short, then "…" (a header may be anything). */
const SHOWN_COLUMNS = 15;
const SHOWN_COLUMN_CHARS = 40;

function columnList(columns: readonly string[]): string {
  const shown = columns
    .slice(0, SHOWN_COLUMNS)
    .map((c) => {
      const text = displayText(c, SHOWN_COLUMN_CHARS + 1);
      return Array.from(text).length > SHOWN_COLUMN_CHARS
        ? `${Array.from(text)
            .slice(0, SHOWN_COLUMN_CHARS - 1)
            .join('')}…`
        : text;
    })
    .filter(Boolean);
  return columns.length > SHOWN_COLUMNS ? `${shown.join(', ')}, …` : shown.join(', ');
}

export function contactsProblemWords(problem: ContactsProblem | { kind: 'unreadable' }): Words {
  switch (problem.kind) {
    case 'unreadable':
      return [
        phrase('status.contacts.unreadable', { megabytes: MAX_CONTACTS_BYTES / 1024 / 1024 }),
      ];
    case 'empty':
      return [phrase('status.contacts.empty')];
    case 'no-phone-column':
      return [
        phrase('status.contacts.no-phone-column', { columns: columnList(problem.columns) }),
        phrase('status.contacts.export-hint'),
      ];
    case 'no-name-column':
      return [
        phrase('status.contacts.no-name-column', { columns: columnList(problem.columns) }),
        phrase('status.contacts.export-hint'),
      ];
    case 'no-rows':
      return [
        phrase('status.contacts.no-rows', {
          nameColumns: columnList(problem.nameColumns),
          phoneColumns: columnList(problem.phoneColumns),
          rows: problem.rows,
        }),
      ];
    case 'no-cards':
      return [
        phrase('status.contacts.no-cards', {
          cards: problem.cards,
          withNumber: problem.withNumber,
        }),
      ];
    case 'long-value':
      return [
        phrase('status.contacts.long-value', { line: problem.line, limitKb: problem.limitKb }),
      ];
  }
}
