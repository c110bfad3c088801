/**
 * What a DID and a region are, one rule each (src-shared/rules/phone-number-rules.ts) everywhere: what
 * Settings (and so the runner's --did) accept, what the relay's config and `relay users add` accept
 * in organisation mode (the same rule in international form), and which DIDs a desktop's hello may
 * carry. Before, there were four rules: Settings took 3-32 characters of `+0-9 ().-` (no `/`),
 * the relay's organisation DIDs any length, the hello 1-40 characters of an alphabet with letters,
 * `*` and `#`; Settings and the Settings window each upper-cased a region their own way.
 */
import { describe, expect, it } from 'vitest';
import {
  isDid,
  isInternationalDid,
  isShortNumber,
  regionCode,
} from '../../src-shared/rules/phone-number-rules.ts';
import { applyPatch, defaultSettings } from '../../src-main/core/settings/validate-settings.ts';
import { parseClientMessage, sanitiseFilter } from '../../src-shared/relay/relay-protocol.ts';
import { parseConfig } from '../../src-relay/config.ts';
import { crmQuery } from '../../src-main/core/crm/lookup.ts';
import { numberKey, regionOf } from '../../src-main/core/numbers/phone-number.ts';

const WRITTEN = [
  '+1 (415) 555-0100',
  '(415) 555-0100',
  '030/1234567',
  '+49 30/555 0001',
  '00 44 20 7946 0000',
  '+1 415 555 0100          ', // spaces after: trimmed
  `+1${' '.repeat(30)}4155550100`, // 43 characters
  `+1${' '.repeat(20)}4155550100`, // 33 characters
  '555',
  '12',
  '123456789012345678', // 18 digits
  '*123#',
  'abc',
  '+44 20 7946 0000 ext 5',
  '',
];

const settingsTake = (did: string) => applyPatch(defaultSettings(), { dids: [did] }).ok;

const relayTakes = (did: string) => {
  try {
    parseConfig({
      users: { file: '/var/lib/screenpop-relay/users.json' },
      tenants: {
        acme: {
          baseUrl: 'https://acme.example.com',
          secrets: ['webhook-secret'],
          access: 'users',
          oidc: {
            issuer: 'https://idp.example.com',
            clientId: 'desktop',
            users: { 'alice@example.org': { extensions: ['101'], dids: [did] } },
          },
        },
      },
    });
    return true;
  } catch (error) {
    // Only the DID may be refused: anything else is this test's own mistake.
    expect(String(error)).toMatch(/a DID is the full international number/);
    return false;
  }
};

const helloTakes = (did: string) =>
  !(
    'error' in
    parseClientMessage(
      JSON.stringify({
        type: 'hello',
        v: 1,
        filter: { extensions: [], dids: [did] },
        cursor: null,
      }),
    )
  );

describe('what a DID is', () => {
  it('is an optional +, digits and ( ) . - / or spaces, 3 to 17 digits, 40 characters at most', () => {
    expect(WRITTEN.filter(isDid)).toEqual([
      '+1 (415) 555-0100',
      '(415) 555-0100',
      '030/1234567',
      '+49 30/555 0001',
      '00 44 20 7946 0000',
      '+1 415 555 0100          ',
      `+1${' '.repeat(20)}4155550100`,
      '555',
    ]);
  });

  it.each(WRITTEN)('Settings, the hello and the desktop filter agree on %j', (did) => {
    expect({ settings: settingsTake(did), hello: helloTakes(did) }).toEqual({
      settings: isDid(did),
      hello: isDid(did),
    });
    expect(sanitiseFilter({ extensions: [], dids: [did], events: [] }).dropped).toBe(
      isDid(did) ? 0 : 1,
    );
  });

  it.each(WRITTEN)(
    'the relay takes %j in organisation mode exactly when it is international',
    (did) => {
      expect(relayTakes(did)).toBe(isInternationalDid(did));
      expect(isInternationalDid(did)).toBe(isDid(did) && did.trim().startsWith('+'));
    },
  );
});

describe('what a region is', () => {
  it('is two letters, any case, spaces around; Settings keep it upper-case', () => {
    for (const [typed, code] of [
      ['us', 'US'],
      [' gb ', 'GB'],
      ['USA', null],
      ['', null],
      ['1A', null],
      ['ß', null], // upper-cased it would be SS
      ['ﬀ', null],
    ] as const) {
      expect(regionCode(typed), typed).toBe(code);
      expect(regionOf(typed) ?? null, typed).toBe(code);
      const saved = applyPatch(defaultSettings(), { defaultRegion: typed });
      expect(saved.ok ? saved.settings.defaultRegion : null, typed).toBe(code);
    }
  });
});

describe('a short number', () => {
  it('is up to 7 digits without +: keyed as an extension and never sent to the CRM', () => {
    // In Germany a 7-digit number can be a local telephone number; here it is an extension.
    for (const n of ['1234567', '123 4567', '101']) {
      expect(isShortNumber(n), n).toBe(true);
      expect(numberKey(n, 'DE'), n).toMatch(/^ext:/);
      expect(crmQuery(n, 'DE'), n).toBeNull();
    }
    expect(isShortNumber('12345678')).toBe(false);
    expect(isShortNumber('+1234567')).toBe(false);
    expect(crmQuery('030 12345678', 'DE')?.e164).toBe('+493012345678');
  });
});
