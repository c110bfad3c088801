/**
 * Contacts files as people export them: the fixtures in fixtures/ follow the exporters' published
 * column lists and the vCard RFCs' own examples (fixtures/README.md says where each comes from).
 * Every test reads the file's bytes, as the directory does.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readContacts } from '../../src-main/core/contacts/contacts-file.ts';
import type { ContactsReading } from '../../src-main/core/contacts/types.ts';
import { contactsProblemWords } from '../../src-main/core/contacts/problem-words.ts';
import { english } from '../../src-shared/i18n/phrase.ts';

const fixture = (name: string) =>
  readContacts(readFileSync(new URL(`./fixtures/${name}`, import.meta.url)));

/** name -> "kind number" list, for compact expectations. */
function byName(reading: ContactsReading): Record<string, string[]> {
  return Object.fromEntries(
    reading.contacts.map((c) => [c.name, c.numbers.map((n) => `${n.kind} ${n.number}`)]),
  );
}

describe('Google Contacts CSV', () => {
  it('reads the older layout: Name, Phone n - Type/Value, several numbers in one cell', () => {
    const r = fixture('google-legacy.csv');
    expect(r.layout).toBe('google-csv');
    expect(byName(r)).toEqual({
      'Ada Lovelace': ['mobile +1 415-555-0101', 'work (415) 555-0102', 'work (415) 555-0103'],
      // No "Name": given + family names.
      'Grace Hopper': ['home +1 212 555 0104'],
      'Wählscheibe GmbH': ['main +49 30 1234567'],
    });
    expect(r.contacts[0]?.company).toBe('Analytical Engines Ltd');
    expect(r.skipped).toBe(1); // the contact with an e-mail address only
  });

  it('reads the current layout: First/Middle/Last Name, Phone n - Label, a company row', () => {
    const r = fixture('google.csv');
    expect(r.layout).toBe('google-csv');
    expect(byName(r)).toEqual({
      'Jürgen Müller': ['mobile +49 151 23456789', 'work +49 30 7654321', 'work +49 30 7654322'],
      // "* Home" is Google's mark for the primary number; the pager is not read.
      'Adrian von Gunten': ['home 031 378 65 65'],
      'Pizzeria Napoli': ['main +39 081 555 0123'],
      // A label the user typed: a number of another kind.
      'Customlabel Person': ['other +1 415 555 0111'],
    });
    expect(r.contacts[0]?.company).toBe('Müller & Söhne KG');
    expect(r.contacts[2]?.company).toBe(''); // the company is the name
  });
});

describe('Outlook CSV', () => {
  it('reads the English export, in Windows-1252, with a column per kind of number', () => {
    const r = fixture('outlook-en.csv');
    expect(r.layout).toBe('outlook-csv');
    expect(byName(r)).toEqual({
      // Accents intact (Windows-1252), fax not read, ID numbers not taken for phone numbers.
      'José Núñez': ['work (415) 555-0120', 'home (415) 555-0122', 'mobile (415) 555-0121'],
      'Bob Builder': ['mobile +44 7700 900123', 'main +44 20 7946 0958'],
      'Front Desk Services': ['main +1 (415) 555-0130'],
    });
    expect(r.contacts[0]?.company).toBe('Café Olé, Inc.');
  });

  it('reads the German export (Windows-1252) and the same file as Excel saves it (semicolons, UTF-8)', () => {
    const expected = {
      'Jürgen Müller': ['work 030 7654321', 'home 030 1112223', 'mobile 0151 23456789'],
      'Straßenbahn Fahrer': ['mobile +49 160 9876543', 'main +49 89 5550100'],
    };
    for (const name of ['outlook-de.csv', 'outlook-de-excel.csv']) {
      const r = fixture(name);
      expect(r.layout, name).toBe('outlook-csv');
      expect(byName(r), name).toEqual(expected);
      expect(r.contacts[0]?.company, name).toBe('Müller & Söhne KG');
    }
  });
});

describe('vCard', () => {
  it('reads 2.1: QUOTED-PRINTABLE in UTF-8 and ISO-8859-1, soft line breaks, bare types, N without FN', () => {
    const r = fixture('vcard21-android.vcf');
    expect(byName(r)).toEqual({
      'Jürgen Müller': ['mobile +49 151 23456789', 'work +49 30 7654321'],
      'Пётр Ильич Чайковский': ['home +7 495 123-45-67'],
      // A nested AGENT card is not a contact of its own; the photo's base64 is not read as lines.
      'Renée François': ['mobile 0612345678'],
    });
  });

  it('reads Apple/iCloud 3.0: grouped TEL with X-ABLabel, company cards, N without FN, escapes', () => {
    const r = fixture('vcard30-apple.vcf');
    expect(byName(r)).toEqual({
      'Johnny Appleseed': [
        'mobile +1 (408) 555-0100',
        'work +1 408 555 0102',
        'mobile +1 408 555 0103',
        'other +1 408 555 0104',
      ],
      'Acme Plumbing': ['main +1 (650) 555-0140'],
      'Hiroshi Nakamura': ['mobile +81 90-1234-5678'],
      'Smith, Jane ; Co': ['other +1 212 555 0150'],
    });
    expect(r.contacts[0]?.company).toBe('Apple Inc.');
  });

  it("reads RFC 2426's and RFC 6350's own examples", () => {
    expect(byName(fixture('rfc2426-section7.vcf'))).toEqual({
      'Frank Dawson': ['work +1-919-676-9515'],
      'Tim Howes': ['work +1-415-937-3419'],
    });
    const simon = fixture('rfc6350-section8.vcf');
    expect(byName(simon)).toEqual({
      // tel: URIs lose the scheme and the ;ext= parameter.
      'Simon Perreault': ['work +1-418-656-9254', 'mobile +1-418-262-6501'],
    });
    expect(simon.contacts[0]?.company).toBe('Viagenie');
  });
});

describe('a file that gives nothing says why', () => {
  it('names the columns of a CSV without a phone column, or without a name column', () => {
    expect(readContacts('Name,E-mail Address,Phonetic First Name\nAda,ada@example.com,\n')).toEqual(
      {
        layout: 'csv',
        contacts: [],
        skipped: 1,
        problem: {
          kind: 'no-phone-column',
          columns: ['Name', 'E-mail Address', 'Phonetic First Name'],
        },
      },
    );
    expect(readContacts('E-mail,Mobile\nada@example.com,+14155550123\n').problem).toEqual({
      kind: 'no-name-column',
      columns: ['E-mail', 'Mobile'],
    });
  });

  it('says which columns it read when no row has both a name and a number', () => {
    expect(
      readContacts('First Name,Last Name,Mobile Phone\nAda,Lovelace,\n,,+1415\n').problem,
    ).toEqual({
      kind: 'no-rows',
      nameColumns: ['First Name', 'Last Name'],
      phoneColumns: ['Mobile Phone'],
      rows: 2,
    });
  });

  it('counts the cards of a vCard file without numbers', () => {
    expect(
      readContacts('BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada\r\nEMAIL:a@b.c\r\nEND:VCARD\r\n').problem,
    ).toEqual({ kind: 'no-cards', cards: 1, withNumber: 0 });
    expect(readContacts('').problem).toEqual({ kind: 'empty' });
    expect(readContacts('Name,Phone\r\n').problem).toEqual({ kind: 'empty' });
  });
});

describe('hostile files', () => {
  it('reads the good rows around broken ones', () => {
    const csv = [
      'Name,Phone',
      '"Unclosed quote, +1 415 555 0100', // swallows the rest of the file as one field
    ].join('\n');
    expect(readContacts(csv).contacts).toEqual([]);
    const rows = [
      'Name,Phone,Mobile',
      'Short row',
      ',,',
      '"=HYPERLINK(""http://evil.example"")",+1 415 555 0101,',
      'Extra,+1 415 555 0102,,,,,,,,,,,,,,,,,,',
      '\u202Eevil\u202C,+1 415 555 0103,',
    ].join('\r\n');
    const r = readContacts(rows);
    // The text is kept as it is (the directory makes it inert to show); nothing runs or breaks.
    expect(r.contacts.map((c) => c.name)).toEqual([
      '=HYPERLINK("http://evil.example")',
      'Extra',
      '\u202Eevil\u202C',
    ]);
    expect(r.skipped).toBe(1); // "Short row" (a row of empty cells is a blank line, not a contact)
  });

  it('stops at the number limit', () => {
    const rows = ['Name,Phone'];
    for (let i = 0; i < 100; i++) rows.push(`P${i},+1415555${String(i).padStart(4, '0')}`);
    const r = readContacts(rows.join('\n'), 10);
    expect(r.contacts).toHaveLength(10);
  });

  it('survives cards that never end, unbalanced ENDs and junk lines', () => {
    const vcf = [
      'END:VCARD',
      'BEGIN:VCARD',
      'FN:Ada',
      'TEL;TYPE="unterminated:+14155550100',
      'TEL:+14155550101',
      ':no name',
      'garbage without colon',
      'END:VCARD',
      'BEGIN:VCARD',
      'FN:Never ends',
      'TEL:+14155550199',
    ].join('\n');
    expect(byName(readContacts(vcf))).toEqual({ Ada: ['other +14155550101'] });
  });

  // vCard 2.1 lines as phones write them: 76 characters, ending in a soft line break.
  const softLine = `${'=41'.repeat(25)}=\r\n`;

  it('joins a quoted-printable value across hundreds of soft line breaks', () => {
    const lines = Math.floor((60 * 1024) / softLine.length); // just under the 64 KiB a value may have
    const r = readContacts(
      'BEGIN:VCARD\r\nVERSION:2.1\r\nTEL;CELL:+14155550100\r\n' +
        `FN;ENCODING=QUOTED-PRINTABLE:${softLine.repeat(lines)}=42\r\nEND:VCARD\r\n`,
    );
    expect(r.contacts.map((c) => c.name)).toEqual([`${'A'.repeat(25 * lines)}B`]);
  });

  it('refuses a quoted-printable value that runs on for megabytes, naming the line it starts on', () => {
    // 2 MB of soft line breaks (the whole file fits the 5 MiB the directory reads): this took
    // 13 s (70 s on the probe's machine) and gave one contact named with megabytes of "A".
    const good = 'BEGIN:VCARD\r\nVERSION:2.1\r\nFN:Ada\r\nTEL:+14155550100\r\nEND:VCARD\r\n';
    const damaged =
      'BEGIN:VCARD\r\nVERSION:2.1\r\nTEL;CELL:+14155550101\r\n' +
      `FN;ENCODING=QUOTED-PRINTABLE:${softLine.repeat(Math.floor(2_000_000 / softLine.length))}A\r\n` +
      'END:VCARD\r\n';
    const r = readContacts(new TextEncoder().encode(good + damaged));
    expect(r.problem).toEqual({ kind: 'long-value', line: 9, limitKb: 64 });
    expect(r.contacts).toEqual([]);
    if (r.problem?.kind !== 'long-value') return;
    expect(english(contactsProblemWords(r.problem))).toBe(
      'The contacts file looks damaged at line 9: a quoted-printable value starting there runs on ' +
        'for more than 64 KB (each of its lines ends in “=”, which carries the value on to the next ' +
        'line). No contacts were read from the file. Export the contacts again, or open the file ' +
        'in a text editor, go to line 9 and end the value there (delete the “=” at the end of its ' +
        'last line).',
    );
  });

  it('counts a folded line as one when it names the line of a long value', () => {
    const r = readContacts(
      'BEGIN:VCARD\r\nNOTE:folded\r\n over\r\n\tthree lines\r\n' +
        `NOTE;QUOTED-PRINTABLE:${softLine.repeat(1000)}A\r\nEND:VCARD\r\n`,
    );
    expect(r.problem).toEqual({ kind: 'long-value', line: 5, limitKb: 64 });
  });

  it('tells CSV from vCard in a file ending in 250,000 blank lines', () => {
    // The test for "BEGIN:VCARD on a line of its own" retried from every line start across the
    // blank lines: 49 s for 200,000 of them.
    const rows = 'Name,Mobile\nAda,+14155550100\n';
    const r = readContacts(rows + '\n'.repeat(250_000));
    expect(byName(r)).toEqual({ Ada: ['mobile +14155550100'] });
  });
});
