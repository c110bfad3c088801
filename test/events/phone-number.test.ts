/**
 * One reading of a telephone number (src-main/core/numbers/phone-number.ts) behind the three places that
 * read one: the pipeline's match of a call's `to`, the directory's key and the relay filter's forms
 * of a DID. For every way a user may write a DID, and every way a `to` may arrive, all three agree.
 */
import { describe, expect, it } from 'vitest';
import { UserNumberMatcher } from '../../src-main/core/events/numbers.ts';
import { numberKey } from '../../src-main/core/numbers/phone-number.ts';
import { relayFilterFor } from '../../src-main/core/relay-client/filter.ts';
import { NumberSet } from '../../src-shared/relay/relay-protocol.ts';

const WRITTEN = ['+1 (415) 555-0100', '415-555-0100', '(415) 555 0100', '1 415 555 0100'];
const ARRIVING = ['+14155550100', '14155550100', '4155550100', '+1 415 555 0100'];

describe('one reading of a telephone number', () => {
  for (const region of ['US', ' us ']) {
    it(`matcher, directory key and relay filter agree (region ${JSON.stringify(region)})`, () => {
      for (const did of WRITTEN) {
        const user = { extensions: ['101'], dids: [did], defaultRegion: region };
        const matcher = new UserNumberMatcher(user);
        const relay = new NumberSet(relayFilterFor(user).dids);
        expect(matcher.rejected, did).toEqual([]);
        expect(numberKey(did, region), did).toBe('+14155550100');
        for (const to of ARRIVING) {
          expect(matcher.matches(to), `${did} <- ${to}`).toBe(true);
          expect(relay.has(to), `relay ${did} <- ${to}`).toBe(true);
          expect(numberKey(to, region), to).toBe('+14155550100');
        }
        expect(matcher.matches('+14155550199')).toBe(false);
        expect(numberKey('+14155550199', region)).not.toBe('+14155550100');
      }
    });
  }

  it('a DID that is not a possible number is refused by the matcher and keyed raw', () => {
    const user = { extensions: [], dids: ['+1 415 555'], defaultRegion: 'US' };
    expect(new UserNumberMatcher(user).rejected).toEqual(['+1 415 555']);
    expect(numberKey('+1 415 555', 'US')).toBe('+1415555');
    // The relay is sent its digits only: never narrower than the pipeline, which refuses it.
    expect(relayFilterFor(user).dids).toEqual(['+1415555']);
  });
});
