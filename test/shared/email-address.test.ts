import { describe, expect, it } from 'vitest';
import {
  canonicalEmail,
  sameAddressPairs,
  sameEmail,
} from '../../src-shared/rules/email-address.ts';

describe('canonicalEmail: addresses compared without Unicode folding', () => {
  it('lower-cases A-Z only, and trims', () => {
    expect(canonicalEmail('  Bob@Example.ORG ')).toBe('bob@example.org');
    expect(sameEmail('Bob@Example.org', 'bob@example.org')).toBe(true);
  });

  it('never folds a look-alike into an ASCII letter (toLowerCase and NFC both would)', () => {
    // Kelvin sign U+212A: toLowerCase() gives k, NFC gives K.
    expect('\u212Aate@example.org'.toLowerCase()).toBe('kate@example.org');
    expect(canonicalEmail('\u212Aate@example.org')).toBeNull();
    expect(canonicalEmail('kate@exampl\u212Ae.org')).toBeNull();
    // Dotted capital I U+0130: toLowerCase() gives i + a combining dot.
    expect(canonicalEmail('\u0130nfo@example.org')).toBeNull();
    expect(canonicalEmail('info@\u0130xample.org')).toBeNull();
    // Full-width letters in the domain, which IDNA maps to ASCII.
    expect(canonicalEmail('a@\uFF45xample.org')).toBeNull();
    expect(sameEmail('\u212Aate@example.org', 'kate@example.org')).toBe(false);
  });

  it('takes an internationalised domain in its mapped form, compared as its A-label', () => {
    expect(canonicalEmail('anna@bücher.de')).toBe('anna@xn--bcher-kva.de');
    expect(sameEmail('anna@bücher.de', 'Anna@XN--BCHER-KVA.DE')).toBe(true);
    // Not in the form IDNA maps it to (an upper-case Ü): refused, not folded.
    expect(canonicalEmail('anna@BÜcher.de')).toBeNull();
  });

  // Issue 34 item 4: the one function's table. Each row: what is typed, what it compares as.
  it.each([
    ['upper-case A-Z, trimmed', '  Alice@EXAMPLE.Org\t', 'alice@example.org'],
    ['the Kelvin sign (toLowerCase and NFC both make it k)', '\u212Aate@example.org', null],
    ['the Kelvin sign in the domain', 'kate@exampl\u212Ae.org', null],
    ['the dotted capital I (toLowerCase makes it i + a dot)', '\u0130nfo@example.org', null],
    ['the dotted capital I in the domain', 'info@\u0130xample.org', null],
    ['a non-ASCII local part, even in NFC', 'r\u00e9my@example.org', null],
    ['an IDN domain (NFC)', 'anna@b\u00fccher.de', 'anna@xn--bcher-kva.de'],
    ['the same domain typed decomposed (NFD)', 'anna@bu\u0308cher.de', 'anna@xn--bcher-kva.de'],
    [
      'the same domain as its A-label, upper-case',
      'ANNA@XN--BCHER-KVA.DE',
      'anna@xn--bcher-kva.de',
    ],
    ['an upper-case \u00dc (IDNA would fold it)', 'anna@B\u00dccher.de', null],
  ])('%s', (_why, typed, canonical) => {
    expect(canonicalEmail(typed)).toBe(canonical);
  });

  it('finds the names whose addresses are one (a configuration error)', () => {
    expect(
      sameAddressPairs([
        ['anna', 'anna@bu\u0308cher.de'],
        ['kate', 'kate@example.org'],
        ['kelvin', '\u212Aate@example.org'],
        ['anna2', 'Anna@xn--bcher-kva.de'],
      ]),
    ).toEqual([{ first: 'anna', second: 'anna2', address: 'anna@xn--bcher-kva.de' }]);
  });

  it('refuses what is not an address', () => {
    for (const text of ['', '@example.org', 'a@', 'a b@example.org', 'a@exa mple.org', 'a@-'])
      expect(canonicalEmail(text), text).toBeNull();
    expect(sameEmail('', '')).toBe(false);
  });
});
