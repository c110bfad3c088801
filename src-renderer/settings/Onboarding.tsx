/** First run: two ways in. Connect a real phone system, or start the demo and see a ring at once. */
import { useT } from '../shared/i18n.tsx';

export interface OnboardingProps {
  onConnect: () => void;
  onDemo: () => void;
  startingDemo: boolean;
  demoError: string | null;
}

export function Onboarding({ onConnect, onDemo, startingDemo, demoError }: OnboardingProps) {
  const t = useT();
  return (
    <section className="welcome" aria-labelledby="welcome-title">
      <h1 id="welcome-title">{t.t('settings.welcome.title')}</h1>
      <p className="welcome__lead">{t.t('settings.welcome.lead')}</p>
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
