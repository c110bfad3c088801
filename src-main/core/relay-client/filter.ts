import type { UserNumbers } from '../events/numbers.ts';
import { didForms } from '../numbers/phone-number.ts';
import type { RelayFilter } from '../../../src-shared/relay/relay-protocol.ts';
import { CALL_RECORD } from '../../../src-shared/wire/event-codes.ts';
import type { PhoneSystemWire } from '../../../src-shared/wire/phone-system.ts';
import { noticeTopics, type FeatureToggles } from '../events/features.ts';

/**
 * The codes beyond calls a desktop asks the relay for (the core's codes: the relay hands on the
 * core's envelopes whatever the phone system): each notice that is on and offered, and the call
 * records of the user's own calls where the phone system makes them (`callRecords`: History's talk
 * time, as on the direct stream; the relay routes a record to its callee, src-relay/envelope.ts).
 */
export function relayOptIns(
  features: FeatureToggles,
  wire: Pick<PhoneSystemWire, 'featureCodes' | 'callRecords'>,
): number[] {
  return [...noticeTopics(features, wire.featureCodes), ...(wire.callRecords ? [CALL_RECORD] : [])];
}

/**
 * The filter a desktop sends the relay, built from the same user settings the pipeline matches on.
 * The relay compares digits only and knows no region, so each DID is sent in the forms a `to` may
 * take (E.164, E.164 without +, national digits, and its digits as written): the relay's filter is
 * never narrower than the pipeline's own match, which stays the final judge of what pops.
 */
export function relayFilterFor(user: UserNumbers, optInEvents: number[] = []): RelayFilter {
  const dids = new Set<string>();
  for (const did of user.dids) for (const form of didForms(did, user.defaultRegion)) dids.add(form);
  return {
    extensions: [...new Set(user.extensions.map((e) => e.trim()).filter(Boolean))],
    dids: [...dids].slice(0, 200),
    events: [...new Set(optInEvents)],
  };
}
