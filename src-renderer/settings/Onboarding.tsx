/**
 * First run: which phone system, then two ways in. Connect a real phone system, or start the demo
 * (which plays the phone system chosen) and see a ring at once.
 */
import type { PhoneSystem } from '../../src-main/core/settings/types.ts';
import { useT } from '../shared/i18n.tsx';
import { settingsWords } from './fields.ts';

export interface OnboardingProps {
  phoneSystem: PhoneSystem;
  onPhoneSystem: (system: PhoneSystem) => void;
  onConnect: () => void;
  onDemo: () => void;
  startingDemo: boolean;
  demoError: string | null;
}

export function Onboarding({
  phoneSystem,
  onPhoneSystem,
  onConnect,
  onDemo,
  startingDemo,
  demoError,
}: OnboardingProps) {
  const t = useT();
  const { PHONE_SYSTEM_CHOICES } = settingsWords(t);
  return (
    <section className="welcome" aria-labelledby="welcome-title">
      <h1 id="welcome-title">{t.t('settings.welcome.title')}</h1>
      <p className="welcome__lead">{t.t('settings.welcome.lead')}</p>
      <fieldset className="radios welcome__systems" data-testid="phone-system">
        <legend className="field__label">{t.t('settings.welcome.phone-system')}</legend>
        {PHONE_SYSTEM_CHOICES.map((choice) => (
          <div className="radio" key={choice.value}>
            <input
              id={`system-${choice.value}`}
              type="radio"
              name="phoneSystem"
              value={choice.value}
              checked={phoneSystem === choice.value}
              onChange={() => onPhoneSystem(choice.value)}
              aria-describedby={`system-${choice.value}-hint`}
            />
            <div>
              <label htmlFor={`system-${choice.value}`}>{choice.label}</label>
              <p className="field__hint" id={`system-${choice.value}-hint`}>
                {choice.hint}
              </p>
            </div>
          </div>
        ))}
      </fieldset>
      <div className="choices">
        <button type="button" className="choice choice--primary" onClick={onConnect}>
          <span className="choice__title">{t.t('settings.welcome.connect')}</span>
          <span className="choice__text">{t.t('settings.welcome.connect-text')}</span>
          <span className="choice__arrow" aria-hidden="true">
            →
          </span>
        </button>
        <button type="button" className="choice" onClick={onDemo} disabled={startingDemo}>
          <span className="choice__title">
            {startingDemo ? t.t('settings.welcome.demo-starting') : t.t('settings.welcome.demo')}
          </span>
          <span className="choice__text">{t.t('settings.welcome.demo-text')}</span>
          <span className="choice__arrow" aria-hidden="true">
            →
          </span>
        </button>
      </div>
      {demoError && (
        <p className="notice notice--error" role="alert">
          {demoError}
        </p>
      )}
    </section>
  );
}
