/**
 * Settings' organisation steps (Sign in, Enrol): the form's relay and tenant checked as a settings
 * patch (and against the policy), the step run on the organisation account, and its failure said
 * in the window's language. On success the runtime saves the patch and applies it.
 */
import type { Settings } from '../settings/types.ts';
import { render } from '../../../src-shared/i18n/phrase.ts';
import type { Translator } from '../../../src-shared/i18n/translator.ts';
import type { OrganisationAccount } from '../org/org-account.ts';
import { OrgAccountError } from '../org/org-account.ts';
import type { SettingsService } from '../settings-service/settings-service.ts';
import type { OrgRelayPatch, OrgSignInResult } from '../ports/views.ts';

/** The settings patch an organisation step saves once it succeeded. */
export function organisationPatch(relay: OrgRelayPatch): Partial<Settings> {
  return {
    connectionMode: 'organisation',
    relayUrl: relay.relayUrl,
    relayTenant: relay.relayTenant,
    demoMode: false,
  };
}

/**
 * Runs `step` for the form's relay; returns null when it succeeded (the caller saves
 * `organisationPatch(relay)`), else the refusal or failure to show.
 */
export async function runOrganisationStep(
  relay: OrgRelayPatch,
  step: (account: OrganisationAccount, settings: Settings) => Promise<unknown>,
  d: {
    settings: Pick<SettingsService, 'check' | 'organisationProblem'>;
    account: OrganisationAccount | undefined;
    words: Translator;
    /** Who manages the policy (the Settings view's `managed.by`). */
    managedBy: () => string;
  },
): Promise<Extract<OrgSignInResult, { ok: false }> | null> {
  const t = d.words;
  // A refused field is said beside it, in the window's language (the refusal's words).
  const checked = d.settings.check(organisationPatch(relay));
  if (!checked.ok) return { ok: false, field: checked.field, message: render(checked.words, t) };
  // A policy that locks API-key mode leaves the mode out of the patch: signing in would store
  // a credential and say "signed in" while nothing changed.
  if (checked.settings.connectionMode !== 'organisation')
    return {
      ok: false,
      field: 'connectionMode',
      message: t.t('settings.locked-by', { by: d.managedBy() }),
    };
  const problem = d.settings.organisationProblem(checked.settings);
  if (problem) return { ok: false, field: problem.field, message: render(problem.words, t) };
  const account = d.account;
  if (!account) return { ok: false, message: t.t('status.org.not-available') };
  try {
    await step(account, checked.settings);
  } catch (err) {
    if (!(err instanceof OrgAccountError)) throw err;
    const { failure } = err;
    return {
      ok: false,
      message: render(failure.reason, t),
      ...(failure.remedy.length ? { remedy: render(failure.remedy, t) } : {}),
      ...(failure.cancelled ? { cancelled: true } : {}),
    };
  }
  return null;
}
