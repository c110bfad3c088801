/**
 * The features built on the event catalogue beyond rings, each on its own event code and its own
 * scope (docs/wire-protocol.md section 6): the stream subscribes only to the codes of the features
 * that are on, and a key that lacks one code's scope turns off that feature alone, with the remedy,
 * while calls and the other features keep working. A phone system names its own code per feature,
 * or none where it has no such event (src-shared/wire/): that feature is "not offered".
 */
import { describeErrcode, ERRCODE, hintPhrase } from '../../../src-shared/api/service-errors.ts';
import { english, phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import { CALL_STATE_CHANGED } from '../../../src-shared/wire/envelope.ts';
import type { FeatureCodes, NoticeFeature } from '../../../src-shared/wire/event-codes.ts';
import { FEATURE_CODES } from '../../../src-shared/wire/event-codes.ts';

export {
  FEATURE_CODES,
  type FeatureCodes,
  type NoticeFeature,
} from '../../../src-shared/wire/event-codes.ts';

/** On/off per feature (Settings.features). */
export type FeatureToggles = Readonly<Record<NoticeFeature, boolean>>;

export const NOTICE_FEATURES: readonly NoticeFeature[] = ['voicemail', 'sms', 'trunk', 'presence'];

export const ALL_FEATURES_ON: FeatureToggles = {
  voicemail: true,
  sms: true,
  trunk: true,
  presence: true,
};

/**
 * The codes of the features that are on and offered. With the default, the core's own codes:
 * what a relay is asked to pass besides rings (the relay hands on the core's envelopes).
 */
export function noticeTopics(
  features: FeatureToggles,
  offered: FeatureCodes = FEATURE_CODES,
): number[] {
  return NOTICE_FEATURES.filter((f) => features[f] && offered[f] !== null).map(
    (f) => FEATURE_CODES[f],
  );
}

/**
 * The codes to subscribe to: calls always (and the codes that end them, `callEndCodes`), then the
 * code of each feature that is on and offered; each code once.
 */
export function topicsFor(
  features: FeatureToggles,
  codes: FeatureCodes = FEATURE_CODES,
  callCode = CALL_STATE_CHANGED,
  callEndCodes: readonly number[] = [],
): number[] {
  const topics = NOTICE_FEATURES.filter((f) => features[f]).map((f) => codes[f]);
  return [
    ...new Set([callCode, ...callEndCodes, ...topics.filter((c): c is number => c !== null)]),
  ];
}

export interface FeatureStatus {
  feature: NoticeFeature;
  /** The event code it rides on in the phone system's wire format; null when not offered. */
  code: number | null;
  /**
   * on: subscribed; off: turned off in settings; no-scope: the key lacks `event:<code>`;
   * not-offered: the phone system has no such event (nothing is subscribed).
   */
  state: 'on' | 'off' | 'no-scope' | 'not-offered';
  reason?: string;
  remedy?: string;
  /** The reason and remedy as catalogue phrases, for the edge to say in the user's language. */
  words?: { reason: Words; remedy: Words };
}

/**
 * Each feature's state, from the settings, the phone system's codes and the codes the service
 * refused (10003).
 */
export function featureStatuses(
  features: FeatureToggles,
  refused: readonly number[],
  codes: FeatureCodes = FEATURE_CODES,
): FeatureStatus[] {
  const scope = describeErrcode(ERRCODE.insufficientScope);
  return NOTICE_FEATURES.map((feature) => {
    const code = codes[feature];
    if (code === null) {
      const words = {
        reason: [
          phrase('status.feature-not-offered', { feature: [phrase(`status.feature.${feature}`)] }),
        ],
        remedy: [],
      };
      return { feature, code, state: 'not-offered', reason: english(words.reason), words };
    }
    if (!features[feature]) return { feature, code, state: 'off' };
    if (!refused.includes(code)) return { feature, code, state: 'on' };
    const words = {
      reason: [
        hintPhrase('scope-feature-off', {
          feature: [phrase(`status.feature.${feature}`)],
          code: String(code),
        }),
      ],
      remedy: [...scope.words.remedy, hintPhrase('scope-missing', { scopes: `event:${code}` })],
    };
    return {
      feature,
      code,
      state: 'no-scope',
      reason: english(words.reason),
      remedy: english(words.remedy),
      words,
    };
  });
}
