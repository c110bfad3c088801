/**
 * (30020) uaCSTA Call decoded as data, on the guide's own example (test/fixtures/yeastar-p-series/
 * event-30020-uacsta-call-start.json, from the page "(30020) uaCSTA Call",
 * https://help.yeastar.com/en/p-series/developer-guide/event-uacsta-call.html), and refused with a
 * reason (never a throw) where a field does not fit; and the desk phone's address rule.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeUacstaReport } from '../../src-shared/phone-systems/yeastar-uacsta.ts';
import { parseDeskPhoneAddress, sameDeskPhone } from '../../src-shared/rules/desk-phone-address.ts';

const example = readFileSync(
  join(
    import.meta.dirname,
    '..',
    'fixtures',
    'yeastar-p-series',
    'event-30020-uacsta-call-start.json',
  ),
  'utf8',
);

const frame = (msg: unknown, type = 30020) => JSON.stringify({ type, sn: '3631A2124XXX', msg });

describe('30020 uaCSTA Call', () => {
  it("decodes the guide's example: extension 2000 rings on the phone at 192.168.28.2:5060", () => {
    expect(decodeUacstaReport(example)).toEqual({
      ok: true,
      report: {
        operation: 'call_start',
        extension: '2000',
        uacstaCallId: '32789',
        ipAddress: '192.168.28.2:5060',
        phone: { host: '192.168.28.2', port: 5060 },
      },
    });
  });

  it('takes msg as an object too, and the other two operations', () => {
    for (const operation of ['call_answer', 'call_over'])
      expect(
        decodeUacstaReport(
          frame({ operation, extension: 2000, call_id: 32789, ip_address: '192.168.28.2:5060' }),
        ),
      ).toMatchObject({
        ok: true,
        report: { operation, extension: '2000', uacstaCallId: '32789' },
      });
  });

  it('refuses what does not fit, with a reason, never a throw', () => {
    const good = {
      operation: 'call_start',
      extension: '2000',
      call_id: '1',
      ip_address: '10.0.0.2',
    };
    const cases: [string, unknown][] = [
      ['operation', { ...good, operation: 'call_transfer' }],
      ['extension', { ...good, extension: '20 00' }],
      ['extension', { ...good, extension: '<b>2000</b>' }],
      ['call_id', { ...good, call_id: 'x'.repeat(65) }],
      ['call_id', { ...good, call_id: '1 2' }],
      ['ip_address', { ...good, ip_address: 'http://10.0.0.2/' }],
      ['ip_address', { ...good, ip_address: 'phone.example.org' }],
      ['ip_address', { ...good, ip_address: undefined }],
      ['msg', '{not json'],
      ['msg', ['call_start']],
    ];
    for (const [detail, msg] of cases)
      expect(decodeUacstaReport(frame(msg)), detail).toEqual({
        ok: false,
        reason: 'bad-field',
        detail,
      });
    expect(decodeUacstaReport(frame(good, 30011))).toEqual({ ok: false, reason: 'not-uacsta' });
    expect(decodeUacstaReport('{')).toEqual({ ok: false, reason: 'not-json' });
    expect(decodeUacstaReport('x'.repeat(70_000))).toEqual({ ok: false, reason: 'oversized' });
  });
});

describe("the desk phone's address (Settings)", () => {
  it('is an IP address with an optional SIP port, nothing else', () => {
    expect(parseDeskPhoneAddress(' 192.168.28.2 ')).toEqual({ host: '192.168.28.2' });
    expect(parseDeskPhoneAddress('192.168.28.2:5060')).toEqual({
      host: '192.168.28.2',
      port: 5060,
    });
    expect(parseDeskPhoneAddress('[FD00::0002]:5062')).toEqual({ host: 'fd00::2', port: 5062 });
    expect(parseDeskPhoneAddress('fd00::2')).toEqual({ host: 'fd00::2' });
    for (const bad of [
      '',
      'http://192.168.28.2',
      '192.168.28.2/',
      '192.168.28.256',
      '192.168.028.2',
      '192.168.28',
      '192.168.28.2:0',
      '192.168.28.2:65536',
      'phone.local',
      '192.168.28.2 5060',
      '[fd00::2',
      'javascript:alert(1)',
      '1'.repeat(70),
    ])
      expect(parseDeskPhoneAddress(bad), bad).toBeNull();
  });

  it('two addresses are one phone by IP, and by port where both give one', () => {
    const a = parseDeskPhoneAddress('10.0.0.2')!;
    expect(sameDeskPhone(a, parseDeskPhoneAddress('10.0.0.2:5060')!)).toBe(true);
    expect(
      sameDeskPhone(
        parseDeskPhoneAddress('10.0.0.2:5062')!,
        parseDeskPhoneAddress('10.0.0.2:5060')!,
      ),
    ).toBe(false);
    expect(sameDeskPhone(a, parseDeskPhoneAddress('10.0.0.3')!)).toBe(false);
  });
});
