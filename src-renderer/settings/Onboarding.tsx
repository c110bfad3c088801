/** First run: two ways in. Connect a real phone system, or start the demo and see a ring at once. */
export interface OnboardingProps {
  onConnect: () => void;
  onDemo: () => void;
  startingDemo: boolean;
  demoError: string | null;
}

export function Onboarding({ onConnect, onDemo, startingDemo, demoError }: OnboardingProps) {
  return (
    <section className="welcome" aria-labelledby="welcome-title">
      <h1 id="welcome-title">Welcome to Screenpop</h1>
      <p className="welcome__lead">
        When your phone rings, Screenpop shows who is calling, before you pick up: their name, their
        number, and a link to their record in your CRM.
      </p>
      <div className="choices">
        <button type="button" className="choice choice--primary" onClick={onConnect}>
          <span className="choice__title">Connect to my phone system</span>
          <span className="choice__text">
            You will need the service address, an API key and secret, and your extension.
          </span>
          <span className="choice__arrow" aria-hidden="true">
            →
          </span>
        </button>
        <button type="button" className="choice" onClick={onDemo} disabled={startingDemo}>
          <span className="choice__title">
            {startingDemo ? 'Starting the demo…' : 'Try the demo'}
          </span>
          <span className="choice__text">
            A built-in practice phone system rings you in a few seconds. Nothing to set up.
          </span>
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
