/**
 * "Test lookup": a number in, what the CRM answered out, in plain words (main runs the lookup with
 * the form's settings and the token typed here, not yet saved). The CRM's answer is untrusted text:
 * only ever React text (main's sentence quotes the name as inert text, the company goes through
 * InertText), and the record link is shown as text, never a clickable link in Settings.
 */
import { useState } from 'react';
import type { CrmTestResult, ScreenpopApi, SettingsPatch } from '../../src-main/ipc/contract.ts';
import { InertText } from '../shared/InertText.tsx';
import { useT } from '../shared/i18n.tsx';

export interface CrmTestProps {
  api: ScreenpopApi;
  /** The form as a patch, or null when the form has an error (shown by the form). */
  patch: () => SettingsPatch | null;
  /** The form's CRM settings differ from the saved ones. */
  unsaved: boolean;
  disabled: boolean;
}

export function CrmTest({ api, patch, unsaved, disabled }: CrmTestProps) {
  const t = useT();
  const [number, setNumber] = useState('');
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<{ answer: CrmTestResult; unsaved: boolean } | null>(null);

  async function run(): Promise<void> {
    const built = patch();
    if (!built) return;
    setRunning(true);
    setResult(null);
    try {
      setResult({ answer: await api.testCrmLookup(built, number.trim()), unsaved });
    } catch {
      setResult({
        answer: { ok: false, message: t.t('settings.crm-test.could-not-run') },
        unsaved,
      });
    } finally {
      setRunning(false);
    }
  }

  const answer = result?.answer;
  return (
    <div className="crm-test" data-testid="crm-test">
      <div className="crm-test__row">
        <div className="field">
          <label className="field__label" htmlFor="crm-test-number">
            {t.t('settings.crm-test.number')}
          </label>
          <input
            id="crm-test-number"
            className="crm-test__number number"
            type="text"
            inputMode="tel"
            dir="ltr"
            autoComplete="off"
            placeholder="+1 415 555 0123"
            value={number}
            maxLength={64}
            onChange={(e) => setNumber(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                void run();
              }
            }}
          />
        </div>
        <button
          type="button"
          className="button"
          disabled={disabled || running || number.trim() === ''}
          onClick={() => void run()}
        >
          {running ? t.t('settings.crm-test.testing') : t.t('settings.crm-test.button')}
        </button>
      </div>
      <div aria-live="polite" data-testid="crm-test-result">
        {answer && (
          <div
            className={answer.ok ? 'crm-test__result' : 'crm-test__result crm-test__result--failed'}
          >
            {/* Main's sentence in the user's language, in full (never cut: it is the answer). */}
            <p className="crm-test__message">{answer.message}</p>
            {answer.found?.company && (
              <p>
                {t.t('settings.crm-test.company')}{' '}
                <InertText text={answer.found.company} testId="crm-test-company" />
              </p>
            )}
            {answer.found?.recordUrl && (
              <p>
                {t.t('settings.crm-test.record')}{' '}
                <bdi dir="ltr" className="crm-preview__url" data-testid="crm-test-record">
                  {answer.found.recordUrl}
                </bdi>
              </p>
            )}
            {answer.remedy && <p className="field__hint">{answer.remedy}</p>}
            {answer.ms !== undefined && (
              <p className="field__hint">{t.t('settings.crm-test.took', { ms: answer.ms })}</p>
            )}
            {result?.unsaved && <p className="field__hint">{t.t('settings.crm-test.unsaved')}</p>}
          </div>
        )}
      </div>
    </div>
  );
}
