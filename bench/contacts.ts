/**
 * `npm run bench:contacts`: how long readContacts takes on the largest contacts files the
 * directory accepts (MAX_CONTACTS_BYTES), shaped the ways that used to cost time: quoted-printable
 * soft line breaks (vCard 2.1), a folded line, one huge CSV field, blank lines, and an ordinary
 * export of many cards. Prints one line per file: its shape, its size, the time, what it gave.
 * BENCH_CONTACTS_ONLY=<shape> runs one shape.
 */
import { performance } from 'node:perf_hooks';
import { MAX_CONTACTS_BYTES, readContacts } from '../src-main/core/contacts/contacts-file.ts';

const MB2 = 2_000_000;

/** vCard 2.1 lines as phones write them: 76 characters, each ending in a soft break. */
function softBreaks(bytes: number): string {
  const head =
    'BEGIN:VCARD\r\nVERSION:2.1\r\nTEL;CELL:+14155550100\r\nFN;ENCODING=QUOTED-PRINTABLE:';
  const line = `${'=41'.repeat(25)}=\r\n`;
  const tail = 'A\r\nEND:VCARD\r\n';
  const n = Math.floor((bytes - head.length - tail.length) / line.length);
  return head + line.repeat(n) + tail;
}

/** Cards whose quoted-printable NOTE runs just under the cap per value (MAX_QP_VALUE_CHARS). */
function softBreaksUnderCap(bytes: number): string {
  const line = `${'=41'.repeat(25)}=\r\n`;
  const note = line.repeat(Math.floor((60 * 1024) / line.length));
  const card = (i: number) =>
    `BEGIN:VCARD\r\nVERSION:2.1\r\nFN:Ada ${i}\r\nTEL;CELL:+1415555${String(1000 + i)}\r\n` +
    `NOTE;ENCODING=QUOTED-PRINTABLE:${note}A\r\nEND:VCARD\r\n`;
  const cards: string[] = [];
  for (let i = 0, size = 0; size + card(i).length <= bytes; i++) {
    cards.push(card(i));
    size += card(i).length;
  }
  return cards.join('');
}

function folded(bytes: number): string {
  const head = 'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada\r\nTEL:+14155550100\r\nPHOTO;ENCODING=b:';
  const line = `${'QUJD'.repeat(18)}\r\n `;
  const tail = 'QUJD\r\nEND:VCARD\r\n';
  const n = Math.floor((bytes - head.length - tail.length) / line.length);
  return head + line.repeat(n) + tail;
}

function csvField(bytes: number): string {
  const head = 'Name,Mobile\r\n"';
  return `${head}${'x'.repeat(bytes - head.length - 20)}",+14155550100\r\n`;
}

function blankLines(bytes: number): string {
  return `${'\n'.repeat(bytes - 30)}Name,Mobile\nAda,+14155550100\n`;
}

function manyCards(bytes: number): string {
  const cards: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes - 200; i++) {
    const card =
      'BEGIN:VCARD\r\nVERSION:2.1\r\n' +
      `N;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:M=C3=BCller;J=C3=BCrgen ${i};;;\r\n` +
      `FN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:J=C3=BCrgen ${i} M=C3=BCller=\r\n` +
      `der J=C3=BCngere\r\n` +
      `TEL;CELL:+49 151 ${String(10_000_000 + i)}\r\nEND:VCARD\r\n`;
    cards.push(card);
    size += card.length;
  }
  return cards.join('');
}

const shapes: Array<[string, (bytes: number) => string]> = [
  ['vcard-qp-soft-breaks', softBreaks],
  ['vcard-qp-under-cap', softBreaksUnderCap],
  ['vcard-folded-line', folded],
  ['csv-one-field', csvField],
  ['csv-blank-lines', blankLines],
  ['vcard-many-cards', manyCards],
];

const only = process.env.BENCH_CONTACTS_ONLY;
for (const [shape, make] of shapes) {
  if (only && only !== shape) continue;
  for (const bytes of [MB2, MAX_CONTACTS_BYTES]) {
    const text = make(bytes);
    const started = performance.now();
    const reading = readContacts(new TextEncoder().encode(text));
    const ms = performance.now() - started;
    const gave = reading.problem
      ? `problem ${reading.problem.kind}`
      : `${reading.contacts.length} contacts`;
    console.log(
      `${shape.padEnd(22)} ${(text.length / 1024 / 1024).toFixed(2).padStart(5)} MiB  ${ms.toFixed(0).padStart(7)} ms  ${gave}`,
    );
  }
}
