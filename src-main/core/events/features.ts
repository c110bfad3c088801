/**
 * The features built on the event catalogue beyond rings, each on its own event code and its own
 * scope (docs/wire-protocol.md section 6): the stream subscribes only to the codes of the features
 * that are on, and a key that lacks one code's scope turns off that feature alone, with the remedy,
 * while calls and the other features keep working.
 */
import { describeErrcode, ERRCODE, hintPhrase } from '../../../src-shared/service-errors.ts';
import { english, phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import {
  PRESENCE_CHANGED,
  SMS_RECEIVED,
  TRUNK_STATUS_CHANGED,
  VOICEMAIL_RECEIVED,
} from './catalogue.ts';
import { CALL_STATE_CHANGED } from './envelope.ts';

export type NoticeFeature = 'voicemail' | 'sms' | 'trunk' | 'presence';

/** On/off per feature (Settings.features). */
export type FeatureToggles = Readonly<Record<NoticeFeature, boolean>>;

export const NOTICE_FEATURES: readonly NoticeFeature[] = ['voicemail', 'sms', 'trunk', 'presence'];

export const FEATURE_CODES: Readonly<Record<NoticeFeature, number>> = {
  voicemail: VOICEMAIL_RECEIVED,
  sms: SMS_RECEIVED,
  trunk: TRUNK_STATUS_CHANGED,
  presence: PRESENCE_CHANGED,
};

export const ALL_FEATURES_ON: FeatureToggles = {
  voicemail: true,
  sms: true,
  trunk: true,
  presence: true,
};

/** The codes of the features that are on (what a relay is asked to pass besides rings). */
export function noticeTopics(features: FeatureToggles): number[] {
  return NOTICE_FEATURES.filter((f) => features[f]).map((f) => FEATURE_CODES[f]);
}

/** The codes to subscribe to: calls always, then each feature that is on. */
export function topicsFor(features: FeatureToggles): number[] {
  return [CALL_STATE_CHANGED, ...noticeTopics(features)];
}

export interface FeatureStatus {
  feature: NoticeFeature;
  code: number;
  /** on: subscribed; off: turned off in settings; no-scope: the key lacks `event:<code>`. */
  state: 'on' | 'off' | 'no-scope';
  reason?: string;
  remedy?: string;
  /** The reason and remedy as catalogue phrases, for the edge to say in the user's language. */
  words?: { reason: Words; remedy: Words };
}

/** Each feature's state, from the settings and the codes the service refused (10003). */
export function featureStatuses(
  features: FeatureToggles,
  refused: readonly number[],
): FeatureStatus[] {
  const scope = describeErrcode(ERRCODE.insufficientScope);
  return NOTICE_FEATURES.map((feature) => {
    const code = FEATURE_CODES[feature];
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
