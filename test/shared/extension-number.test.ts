/**
 * What an extension is, one rule (src-shared/rules/phone-number-rules.ts) everywhere: what Settings and the
 * runner accept, which `to` matches as an extension, what the directory keys and the card show as
 * an extension. Before, Settings took up to 12 digits, the runner 15, and display and matching
 * treated only up to 6 as an extension: a 7-12-digit extension was accepted, then formatted and
 * matched as a telephone number.
 */
import { describe, expect, it } from 'vitest';
import {
  isExtensionNumber,
  MAX_EXTENSION_DIGITS,
} from '../../src-shared/rules/phone-number-rules.ts';
import { applyPatch, defaultSettings } from '../../src-main/core/settings/validate-settings.ts';
import { parseHeadlessArgs } from '../../src-main/headless/args.ts';
import { UserNumberMatcher } from '../../src-main/core/events/numbers.ts';
import { formatNumber, numberKey } from '../../src-main/core/numbers/phone-number.ts';
import { isExtension } from '../../src-renderer/shared/format.ts';

const LONGEST = '1234567';
const TOO_LONG = '12345678';

describe('what an extension is', () => {
  it('is 1 to 7 digits, nothing else', () => {
    expect(MAX_EXTENSION_DIGITS).toBe(7);
    for (const ok of ['1', '101', LONGEST]) expect(isExtensionNumber(ok), ok).toBe(true);
    for (const bad of ['', TOO_LONG, '+101', '10 1', '1a', '١٠١', ' 101'])
      expect(isExtensionNumber(bad), bad).toBe(false);
  });

  it('Settings and the runner accept exactly the same extensions', () => {
    const settings = (ext: string) => applyPatch(defaultSettings(), { extensions: [ext] }).ok;
    const runner = (ext: string) => {
      try {
        parseHeadlessArgs(['--base-url', 'https://acme.example.com', '--extension', ext]);
        return true;
      } catch {
        return false;
      }
    };
    for (const ext of ['101', LONGEST]) {
      expect(settings(ext), ext).toBe(true);
      expect(runner(ext), ext).toBe(true);
    }
    for (const ext of [TOO_LONG, '123456789012', '123456789012345', '1a']) {
      expect(settings(ext), ext).toBe(false);
      expect(runner(ext), ext).toBe(false);
    }
  });

  it('a 7-digit extension rings, keys and shows as an extension, not as a telephone number', () => {
    const matcher = new UserNumberMatcher({
      extensions: [LONGEST],
      dids: ['+1 415 555 0100'],
      defaultRegion: 'US',
    });
    expect(matcher.rejected).toEqual([]);
    expect(matcher.matches(LONGEST)).toBe(true);
    expect(matcher.matches('4155550100')).toBe(true);
    expect(numberKey(LONGEST, 'US')).toBe(`ext:${LONGEST}`);
    expect(formatNumber(LONGEST, 'US')).toBe(LONGEST);
    expect(isExtension(LONGEST)).toBe(true);
    // One digit more is a telephone number everywhere.
    expect(numberKey(TOO_LONG, 'US')).not.toMatch(/^ext:/);
    expect(isExtension(TOO_LONG)).toBe(false);
  });
});
