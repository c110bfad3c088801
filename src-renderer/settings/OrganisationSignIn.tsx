/**
 * Settings' organisation sign-in (connectionMode "organisation"): who this computer is signed in
 * as, "Sign in with your organisation…" (main opens the organisation's sign-in page in the system
 * browser and waits for it, with Cancel), "Enrol" with a one-time code from the administrator, and
 * "Sign out". Main does the work and keeps the credential; this page never sees a token, and there
 * is no API key or secret field in this mode.
 */
import { useState, type KeyboardEvent } from 'react';
import type {
  OrgRelayPatch,
  OrgSignInResult,
  ScreenpopApi,
  SettingsView,
} from '../../src-main/ipc/contract.ts';
import { InertText } from '../shared/InertText.tsx';
import { useT, WithValues } from '../shared/i18n.tsx';
import { Field } from './Field.tsx';

export interface OrganisationSignInProps {
  api: ScreenpopApi;
  view: SettingsView;
  /** The relay and tenant in the form (they may not be saved yet). */
  relay: OrgRelayPatch;
  /** The computer still holds an API key's secret, which signing in (or saving) removes. */
  leavesApiKey: boolean;
  /** Main signed in, enrolled or signed out: the settings as they are now. */
  onChanged: (view: SettingsView, what: 'signed-in' | 'signed-out') => void;
  /** Main named a field of the form (the relay address or tenant) as the problem. */
  onFieldError: (field: string, message: string) => void;
}

type Busy = 'sign-in' | 'enrol' | 'sign-out' | null;

export function OrganisationSignIn({
  api,
  view,
  relay,
  leavesApiKey,
  onChanged,
  onFieldError,
}: OrganisationSignInProps) {
  const t = useT();
  const [busy, setBusy] = useState<Busy>(null);
  const [code, setCode] = useState('');
  const [codeError, setCodeError] = useState<string | null>(null);
  const [problem, setProblem] = useState<{ message: string; remedy?: string } | null>(null);
  const signedIn = view.organisation?.signedIn ?? null;

  async function run(
    kind: 'sign-in' | 'enrol',
    request: () => Promise<OrgSignInResult>,
  ): Promise<void> {
    setBusy(kind);
    setProblem(null);
    try {
      const result = await request();
      if (result.ok) {
        setCode('');
        onChanged(result.view, 'signed-in');
      } else if (result.field) onFieldError(result.field, result.message);
      else if (!result.cancelled)
        setProblem({
          message: result.message,
          ...(result.remedy ? { remedy: result.remedy } : {}),
        });
    } catch {
      setProblem({
        message: t.t('settings.test-could-not-run'),
        remedy: t.t('settings.try-again-moment'),
      });
    } finally {
      setBusy(null);
    }
  }

  function enrol(): void {
    if (!code.trim()) {
      setCodeError(t.t('settings.org.code-needed'));
      return;
    }
    setCodeError(null);
    void run('enrol', () => api.enrolInOrganisation(relay, code.trim()));
  }

  async function signOut(): Promise<void> {
    setBusy('sign-out');
    setProblem(null);
    try {
      onChanged(await api.signOutOfOrganisation(), 'signed-out');
    } catch {
      setProblem({ message: t.t('settings.error.save-failed') });
    } finally {
      setBusy(null);
    }
  }

  const email = signedIn?.email;
  return (
    <div className="org-panel" data-testid="org-panel">
      <div className="org-panel__who">
        <p data-testid="org-signed-in">
          {!signedIn ? (
            t.t('settings.org.not-signed-in')
          ) : signedIn.via === 'device' ? (
            t.t('settings.org.signed-in-device')
          ) : email ? (
            <WithValues
              text={t.t('settings.org.signed-in-sso', { email: WithValues.slot('email') })}
              values={{ email: <InertText text={email} className="inline-inert" /> }}
            />
          ) : (
            t.t('settings.org.signed-in-sso-unnamed')
          )}
        </p>
        {signedIn && (
          <button
            type="button"
            className="button"
            onClick={() => void signOut()}
            disabled={busy !== null}
          >
            {t.t('settings.org.sign-out')}
          </button>
        )}
      </div>
      {leavesApiKey && (
        <p className="notice notice--info" data-testid="org-leaves-key">
          {t.t('settings.org.leaves-api-key')}
        </p>
      )}
      <div className="org-panel__way">
        <div className="org-panel__row">
          <button
            type="button"
            className="button button--primary"
            onClick={() => void run('sign-in', () => api.signInToOrganisation(relay))}
            disabled={busy !== null}
            aria-describedby="org-sign-in-hint"
          >
            {busy === 'sign-in'
              ? t.t('settings.org.signing-in')
              : signedIn
                ? t.t('settings.org.sign-in-again')
                : t.t('settings.org.sign-in')}
          </button>
          {busy === 'sign-in' && (
            <button
              type="button"
              className="button"
              onClick={() => void api.cancelOrganisationSignIn()}
            >
              {t.t('settings.org.cancel')}
            </button>
          )}
        </div>
        <p className="field__hint" id="org-sign-in-hint" role="status">
          {busy === 'sign-in' ? t.t('settings.org.waiting') : t.t('settings.org.sign-in-hint')}
        </p>
      </div>
      <div className="org-panel__way">
        <Field
          name="enrolCode"
          label={t.t('settings.org.enrol-label')}
          hint={t.t('settings.org.enrol-hint')}
          error={codeError}
        >
          {(control) => (
            <div className="org-panel__row org-panel__code">
              <input
                {...control}
                type="text"
                dir="ltr"
                translate="no"
                autoComplete="one-time-code"
                spellCheck={false}
                maxLength={64}
                value={code}
                onChange={(e) => {
                  setCode(e.currentTarget.value);
                  setCodeError(null);
                }}
                onKeyDown={(e: KeyboardEvent) => {
                  // Enter in the code field enrols; it must not save the form around it.
                  if (e.key !== 'Enter') return;
                  e.preventDefault();
                  enrol();
                }}
              />
              <button type="button" className="button" onClick={enrol} disabled={busy !== null}>
                {busy === 'enrol' ? t.t('settings.org.enrolling') : t.t('settings.org.enrol')}
              </button>
            </div>
          )}
        </Field>
      </div>
      {problem && (
        <div className="notice notice--error" role="alert" data-testid="org-problem">
          <p>{problem.message}</p>
          {problem.remedy && (
            <p>
              <strong>{t.t('settings.what-to-do')}</strong> {problem.remedy}
            </p>
          )}
        </div>
      )}
    </div>
  );
}
