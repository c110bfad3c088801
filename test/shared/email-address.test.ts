import { describe, expect, it } from 'vitest';
import { canonicalEmail, sameEmail } from '../../src-shared/rules/email-address.ts';

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
    // Decomposed ü (not NFC): refused.
    expect(canonicalEmail('anna@bu\u0308cher.de')).toBeNull();
  });

  it('refuses what is not an address', () => {
    for (const text of ['', '@example.org', 'a@', 'a b@example.org', 'a@exa mple.org', 'a@-'])
      expect(canonicalEmail(text), text).toBeNull();
    expect(sameEmail('', '')).toBe(false);
  });
});
