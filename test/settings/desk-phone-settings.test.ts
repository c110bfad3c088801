/**
 * "Answer from Screenpop (supported desk phones)" and the desk phone's address (remote answer,
 * uaCSTA, issue 38 item 4): off by default; the address an IP address with an optional SIP port,
 * never a URL, refused with words under its field; both lockable by the organisation's policy.
 */
import { describe, expect, it } from 'vitest';
import { applyPatch } from '../../src-main/core/settings/validate-settings.ts';
import { validatePolicy, withLocks } from '../../src-main/core/settings/policy.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';

describe('remote answer settings', () => {
  it('off by default, with no address', () => {
    expect(DEFAULT_SETTINGS.answerFromDeskPhone).toBe(false);
    expect(DEFAULT_SETTINGS.deskPhoneAddress).toBe('');
  });

  it('takes an IP address with an optional port, written one way', () => {
    for (const [typed, kept] of [
      [' 192.168.1.20 ', '192.168.1.20'],
      ['192.168.1.20:5060', '192.168.1.20:5060'],
      ['[FD00::0002]:5062', '[fd00::2]:5062'],
      ['fd00::2', '[fd00::2]'],
      ['', ''],
    ])
      expect(applyPatch(DEFAULT_SETTINGS, { deskPhoneAddress: typed })).toMatchObject({
        ok: true,
        settings: { deskPhoneAddress: kept },
      });
  });

  it('refuses a URL, a host name or garbage, with words that say what it must be', () => {
    for (const bad of ['http://192.168.1.20', 'phone.local', '192.168.1.300', '10.0.0.1/24']) {
      const r = applyPatch(DEFAULT_SETTINGS, { deskPhoneAddress: bad });
      expect(r.ok, bad).toBe(false);
      expect(JSON.stringify(r)).toContain('status.settings.desk-phone-address');
    }
  });

  it("a policy can lock both (a fleet's desk phones)", () => {
    const { policy, problems } = validatePolicy({
      settings: { answerFromDeskPhone: true, deskPhoneAddress: '10.1.2.3' },
      locked: ['answerFromDeskPhone', 'deskPhoneAddress'],
    });
    expect(problems).toEqual([]);
    const user = { ...DEFAULT_SETTINGS, answerFromDeskPhone: false, deskPhoneAddress: '10.9.9.9' };
    expect(withLocks(user, policy)).toMatchObject({
      answerFromDeskPhone: true,
      deskPhoneAddress: '10.1.2.3',
    });
  });
});
