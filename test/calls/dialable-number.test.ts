/**
 * What Screenpop may dial (src-main/core/numbers/phone-number.ts `dialableNumber`, issue 38): the
 * one phone-number module reads the number given to Call, a transfer, `tel:` links and the runner's
 * `dial`; anything that is not a dialable number is refused (null), never sent.
 */
import { describe, expect, it } from 'vitest';
import { dialableNumber } from '../../src-main/core/numbers/phone-number.ts';

describe('dialableNumber', () => {
  it('extensions and short codes as they are; telephone numbers as the user would dial them', () => {
    expect(dialableNumber('2008', 'US')).toEqual({ dial: '2008', shown: '2008' });
    expect(dialableNumber(' 20-08 ', 'US')).toEqual({ dial: '2008', shown: '2008' });
    expect(dialableNumber('(415) 555-0199', 'US')).toEqual({
      dial: '4155550199',
      shown: '(415) 555-0199',
    });
    expect(dialableNumber('+44 20 7946 0958', 'US')).toEqual({
      dial: '+442079460958',
      shown: '+44 20 7946 0958',
    });
    expect(dialableNumber('0044 20 7946 0958', 'US')?.dial).toBe('+442079460958');
    // No region: a DID-shaped number is dialled as written.
    expect(dialableNumber('030/1234567', undefined)).toEqual({
      dial: '0301234567',
      shown: '030/1234567',
    });
  });

  it('refuses what is not a dialable number', () => {
    for (const raw of [
      '',
      '   ',
      'javascript:alert(1)',
      'tel:+14155550199',
      '+1 415 555 0199;ext=12',
      '+1-415-555-0199;phone-context=example.com',
      '*97',
      '#31#4155550199',
      '١٢٣٤٥٦٧٨٩٠', // Arabic-Indic digits
      '４１５５５５０１９９', // full-width digits
      '415\u202e5550199', // a bidi override
      '415\n5550199',
      '1'.repeat(18),
      `+1 ${'5'.repeat(40)}`,
      '+1 415 555', // not a possible number in its country
      '555-0199x',
      42,
      null,
    ])
      expect(dialableNumber(raw, 'US'), JSON.stringify(raw)).toBeNull();
  });
});
