import { describe, expect, it } from 'vitest';
import {
  dialLinkInArgs,
  dialTarget,
  MAX_DIAL_LINK_CHARS,
  needsConfirmation,
  parseDialLink,
} from '../../src-main/core/links/dial-link.ts';
import { dialableNumber } from '../../src-main/core/numbers/phone-number.ts';
import { english } from '../../src-shared/i18n/phrase.ts';

const ok = (link: string, region?: string) => {
  const r = parseDialLink(link, region);
  if (!r.ok) throw new Error(`refused ${link}: ${r.refusal}`);
  return r;
};
const refusal = (link: unknown, region?: string) => {
  const r = parseDialLink(link, region);
  return r.ok ? `dialled ${r.number}` : r.refusal;
};

describe('parseDialLink: what a link dials', () => {
  it.each([
    ['tel:+14155550123', undefined, '+14155550123'],
    ['TEL:+1-415-555-0123', undefined, '+14155550123'],
    ['tel:+1 (415) 555.0123', undefined, '+14155550123'],
    ['tel:%2B14155550123', undefined, '+14155550123'],
    ['tel:+442079460000;ext=12', undefined, '+442079460000'],
    // A national number: as the user's own phone would dial it (the one rule, phone-number.ts).
    ['tel:020 7946 0000', 'GB', '02079460000'],
    ['tel:(415) 555-0123', 'US', '4155550123'],
    ['tel:0044 20 7946 0000', 'US', '+442079460000'],
    ['tel:030/1234567', 'DE', '0301234567'],
    ['callto:+14155550123', undefined, '+14155550123'],
    ['callto://+14155550123', undefined, '+14155550123'],
    ['callto://+14155550123/', undefined, '+14155550123'],
    ['sip:+14155550123@pbx.example.com;user=phone', undefined, '+14155550123'],
    ['sip:101@pbx.example.com', undefined, '101'],
    ['tel:1001', undefined, '1001'],
  ])('%s (region %s) dials %s', (link, region, number) => {
    expect(ok(link, region).number).toBe(number);
  });

  it('shows the number as the user reads it: national in their region, international outside', () => {
    expect(ok('tel:+442079460000', 'GB').shown).toBe('020 7946 0000');
    expect(ok('tel:+442079460000', 'US').shown).toBe('+44 20 7946 0000');
  });

  it('drops a global number’s parameters: a premium number with phone-context stays that number', () => {
    // The confirmation shows +1 900 ...: the parameter cannot disguise or change what is dialled.
    const r = ok('tel:+19005550123;phone-context=example.com', 'US');
    expect(r.number).toBe('+19005550123');
    expect(r.shown).toBe('(900) 555-0123');
  });
});

describe('parseDialLink: hostile links are refused with words', () => {
  it.each([
    // not a call link
    ['javascript:alert(1)', 'not-a-call-link'],
    ['javascript://tel:+14155550123', 'not-a-call-link'],
    ['https://evil.example/tel:+14155550123', 'not-a-call-link'],
    ['tel', 'not-a-call-link'],
    ['', 'not-a-call-link'],
    [' data:text/html,tel:1', 'not-a-call-link'],
    // not a number
    ['tel:', 'not-a-number'],
    ['callto://', 'not-a-number'],
    ['sip:user@host', 'not-a-number'],
    ['sip:alice@pbx.example.com', 'not-a-number'],
    ['callto://skype.name', 'not-a-number'],
    ['tel:javascript:alert(1)', 'not-a-number'],
    ['tel:+1900;javascript:alert(1)', 'not-a-number'],
    ['tel:1234;phone-context=+1900', 'not-a-number'],
    ['tel:5550123;phone-context=example.com', 'not-a-number'],
    ['tel:+14155550123,,1234#', 'not-a-number'],
    ['tel:*99#', 'not-a-number'],
    ['tel:+1415555012p3', 'not-a-number'],
    ['tel:%252B14155550123', 'not-a-number'],
    ['tel:%E0%A4', 'not-a-number'],
    ['tel:+١٤١٥٥٥٥٠١٢٣', 'not-a-number'],
    ['tel:＋１４１５５５５０１２３', 'not-a-number'],
    ['tel:+123456789012345678', 'not-a-number'],
    ['tel:+1', 'not-a-number'],
    ['tel:+999999999999', 'not-a-number'],
    ['tel:--', 'not-a-number'],
    // hidden characters
    ['tel:+1415\u202e5550123', 'hidden-characters'],
    ['tel:+1415%E2%80%AE5550123', 'hidden-characters'],
    ['tel:+14155550123\u200b', 'hidden-characters'],
    ['tel:+1415%0A5550123', 'hidden-characters'],
    ['tel:+1415\u00005550123', 'hidden-characters'],
    ['tel:+1415%E2%81%A65550123', 'hidden-characters'],
    // over-long
    [`tel:+1${'0'.repeat(MAX_DIAL_LINK_CHARS)}`, 'too-long'],
  ])('%s → %s', (link, why) => {
    expect(refusal(link, 'US')).toBe(why);
  });

  it('dials a national number as written when no region is set (no country is guessed)', () => {
    for (const region of [undefined, 'not a region']) {
      const r = ok('tel:020 7946 0000', region);
      expect(r.number).toBe('02079460000');
      expect(r.shown).toBe('020 7946 0000');
    }
  });

  it('refuses what is not text, never throws', () => {
    for (const v of [undefined, null, 42, {}, ['tel:+14155550123'], Symbol('x')])
      expect(refusal(v)).toBe('not-a-call-link');
  });

  it('says each refusal in catalogue words', () => {
    const r = parseDialLink('tel:' + 'x'.repeat(300));
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(english([r.words])).toBe(
        `The call link is longer than 256 characters, so it is not dialled.`,
      );
    const s = parseDialLink('sip:user@host');
    if (!s.ok) expect(english([s.words])).toMatch(/not a number Screenpop can dial/);
  });
});

describe('one rule for what Screenpop dials', () => {
  const texts = [
    '2008',
    '(415) 555-0123',
    '+1 415 555 0123',
    '0044 20 7946 0000',
    '020 7946 0000',
    '030/1234567',
    '+1 415 555',
    '*97',
    '1'.repeat(18),
  ];

  it('a link dials exactly what the phone-number module dials for its number', () => {
    for (const region of ['US', 'GB', 'DE', undefined])
      for (const text of texts) {
        const link = parseDialLink(`tel:${encodeURIComponent(text)}`, region);
        const rule = dialableNumber(text, region);
        expect(
          link.ok ? { dial: link.number, shown: link.shown } : null,
          `${text} ${region}`,
        ).toEqual(rule);
      }
  });

  it('dialTarget is that rule, with its refusals in words', () => {
    for (const region of ['US', undefined])
      for (const text of texts) {
        const t = dialTarget(text, region);
        const rule = dialableNumber(text, region);
        expect(t.ok ? { dial: t.number, shown: t.shown } : null, text).toEqual(rule);
      }
    const hidden = dialTarget('\u200e+1 415 555 0123\u200e', 'US');
    expect(hidden).toMatchObject({ ok: false, refusal: 'hidden-characters' });
    if (!hidden.ok) expect(english([hidden.words])).toMatch(/hidden/i);
    const letters = dialTarget('call me', 'US');
    expect(letters).toMatchObject({ ok: false, refusal: 'not-a-number' });
    if (!letters.ok) expect(english([letters.words])).toMatch(/not|no/i);
  });

  it('what it dials, read again, dials the same (CallActions hands it to the CallControl)', () => {
    for (const region of ['US', 'GB', undefined])
      for (const text of texts) {
        const first = dialableNumber(text, region);
        if (first) expect(dialableNumber(first.dial, region)?.dial, text).toBe(first.dial);
      }
  });
});

describe('needsConfirmation', () => {
  it('a link is always confirmed unless the policy turned confirmation off', () => {
    expect(needsConfirmation('link', true)).toBe(true);
    expect(needsConfirmation('link', false)).toBe(false);
    // Anything but an explicit false (a broken policy value) keeps the confirmation.
    expect(needsConfirmation('link', undefined as unknown as boolean)).toBe(true);
  });
  it('the user’s own click in Screenpop is not confirmed again', () => {
    expect(needsConfirmation('user', true)).toBe(false);
  });
});

describe('dialLinkInArgs', () => {
  it('finds the link a second launch carries among Chromium’s arguments', () => {
    expect(
      dialLinkInArgs(['/opt/Screenpop/screenpop', '--allow-file-access', 'tel:+14155550123']),
    ).toBe('tel:+14155550123');
    expect(dialLinkInArgs(['Screenpop.exe', 'CALLTO://+1415'])).toBe('CALLTO://+1415');
  });
  it('finds none among ordinary arguments', () => {
    expect(dialLinkInArgs(['screenpop', '--hidden', 'https://x.example', 42])).toBeNull();
  });
});
