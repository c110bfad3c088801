/**
 * The history's CSV export: what a spreadsheet sees. Caller names and numbers are hostile input;
 * the cells must stay text (no formula, no new row, no reversed reading) and come back exactly
 * when parsed as RFC 4180.
 */
import { describe, expect, it } from 'vitest';
import { parseCsvRows } from '../../src-main/core/contacts/csv.ts';
import {
  csvCell,
  exportFileName,
  historyToCsv,
  localDateTime,
} from '../../src-main/core/history/history-csv.ts';
import type { HistoryEntry } from '../../src-main/ipc/contract.ts';

const utc = (at: number) => new Date(at).toISOString().replace('T', ' ').slice(0, 19);

function entry(over: Partial<HistoryEntry> & { callId: string }): HistoryEntry {
  return {
    kind: 'call',
    from: '+14155550123',
    fromDisplay: '(415) 555-0123',
    callerName: 'Ada Lovelace',
    callerCompany: null,
    numberKind: null,
    to: '101',
    toDisplay: '101',
    toName: null,
    startedAt: Date.UTC(2026, 10, 22, 9, 5, 0),
    endedAt: Date.UTC(2026, 10, 22, 9, 13, 0),
    outcome: 'answered',
    seen: true,
    ...over,
  };
}

/** The rows as a spreadsheet would read them (BOM and final line end removed). */
function rows(csv: string): string[][] {
  expect(csv.startsWith('\uFEFF')).toBe(true);
  expect(csv.endsWith('\r\n')).toBe(true);
  return parseCsvRows(csv.slice(1).replace(/\r\n$/, ''));
}

describe('history CSV', () => {
  it('writes a header and one row per call, in the order given, with durations in seconds', () => {
    const csv = historyToCsv(
      [
        entry({
          callId: 'c1',
          toName: 'Sales line',
          to: '+14155550100',
          callerCompany: '=Analytical Engines',
          numberKind: 'mobile',
        }),
        entry({ callId: 'c2', callerName: null, outcome: 'missed', endedAt: null }),
        entry({ callId: 'c3', outcome: 'answered-elsewhere' }),
      ],
      { dateTime: utc },
    );
    expect(rows(csv)).toEqual([
      [
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
        'Caller company',
        'Caller number type',
      ],
      [
        '2026-11-22 09:05:00',
        'Ada Lovelace',
        "'+14155550123",
        'Sales line',
        "'+14155550100",
        'Answered',
        '480',
        'c1',
        '',
        '',
        "'=Analytical Engines",
        'mobile',
      ],
      ['2026-11-22 09:05:00', '', "'+14155550123", '', '101', 'Missed', '', 'c2', '', '', '', ''],
      [
        '2026-11-22 09:05:00',
        'Ada Lovelace',
        "'+14155550123",
        '',
        '101',
        'Answered by a colleague',
        '480',
        'c3',
        '',
        '',
        '',
        '',
      ],
    ]);
    // Every cell quoted; rows end with CRLF.
    expect(csv.split('\r\n')[1]).toMatch(/^"2026-11-22 09:05:00","Ada Lovelace",/);
  });

  it.each([
    ['=HYPERLINK("https://evil.example","Click")', `'=HYPERLINK("https://evil.example","Click")`],
    ['+1+cmd|" /C calc"!A0', `'+1+cmd|" /C calc"!A0`],
    ['-2+3', "'-2+3"],
    ['@SUM(A1:A9)', "'@SUM(A1:A9)"],
    ['\t=1+1', "'=1+1"],
    ['\r=1+1', "'=1+1"],
    ['  =1+1', "'=1+1"],
    ['\u202E=1+1', "'=1+1"],
    ['\uFF1D1+1', "'\uFF1D1+1"],
    ['Ada = Lovelace', 'Ada = Lovelace'],
    ['O\u2019Brien, "Bob"', 'O\u2019Brien, "Bob"'],
  ])('makes %j inert text', (hostile, expected) => {
    const csv = historyToCsv([entry({ callId: 'x', callerName: hostile, from: hostile })], {
      dateTime: utc,
    });
    const [, row] = rows(csv);
    expect(row?.[1]).toBe(expected);
    expect(row?.[2]).toBe(expected);
    expect(row).toHaveLength(12);
  });

  it('keeps markup, line breaks and bidi overrides from making rows or reordering text', () => {
    const csv = historyToCsv(
      [
        entry({
          callId: 'line\r\nbreak',
          callerName: '<img src=x onerror=alert(1)>\nsecond line',
          from: '\u202Egnp.exe\u202C +1 555 0100',
        }),
        entry({ callId: 'long', callerName: 'A'.repeat(5000) }),
      ],
      { dateTime: utc },
    );
    expect(csv).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
    const parsed = rows(csv);
    expect(parsed).toHaveLength(3);
    expect(parsed[1]).toEqual([
      '2026-11-22 09:05:00',
      '<img src=x onerror=alert(1)>second line',
      'gnp.exe +1 555 0100',
      '',
      '101',
      'Answered',
      '480',
      'linebreak',
      '',
      '',
      '',
      '',
    ]);
    expect(parsed[2]?.[1]).toHaveLength(4096);
  });

  it('writes voicemails and messages as rows of their own kind; message text stays one inert cell', () => {
    const common = {
      from: '+4930123456',
      fromDisplay: '+49 30 123456',
      callerName: null,
      to: '101',
      toDisplay: '101',
      toName: null,
      startedAt: Date.UTC(2026, 10, 22, 9, 5, 0),
      seen: false,
    };
    const csv = historyToCsv(
      [
        { ...common, kind: 'voicemail', callId: 'voicemail:v1', durationSec: 42 },
        {
          ...common,
          kind: 'sms',
          callId: 'sms:m1',
          text: '=HYPERLINK("https://evil.example")\nsecond line',
          textTruncated: false,
        },
      ],
      { dateTime: utc },
    );
    const [, vm, sms] = rows(csv);
    expect(vm?.slice(5)).toEqual(['Voicemail', '', 'voicemail:v1', '42', '', '', '']);
    expect(sms?.slice(5)).toEqual([
      'SMS',
      '',
      'sms:m1',
      '',
      `'=HYPERLINK("https://evil.example") second line`,
      '',
      '',
    ]);
  });

  it('quotes every cell and doubles inner quotes', () => {
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('')).toBe('""');
  });

  it('writes local date and time, and names the file by the local date', () => {
    const at = new Date(2026, 0, 2, 3, 4, 5).getTime();
    expect(localDateTime(at)).toBe('2026-01-02 03:04:05');
    expect(exportFileName(at)).toBe('screenpop-calls-2026-01-02.csv');
  });
});
