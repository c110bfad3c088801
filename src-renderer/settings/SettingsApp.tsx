/**
 * The settings window. On first run (needsOnboarding) it opens on the welcome step; afterwards it
 * is the settings form, whose Connection section carries the one connection status.
 */
import { useEffect, useState } from 'react';
import type { ScreenpopApi, SettingsView, StatusView } from '../../src-main/ipc/contract.ts';
import { Onboarding } from './Onboarding.tsx';
import { SettingsForm } from './SettingsForm.tsx';

type Step = 'welcome' | 'connect' | 'settings';

export function SettingsApp({ api }: { api: ScreenpopApi }) {
  const [view, setView] = useState<SettingsView | null>(null);
  const [status, setStatus] = useState<StatusView | null>(null);
  const [step, setStep] = useState<Step | null>(null);
  const [loadError, setLoadError] = useState(false);
  const [startingDemo, setStartingDemo] = useState(false);
  const [demoError, setDemoError] = useState<string | null>(null);
  const [demoStarted, setDemoStarted] = useState(false);

  useEffect(() => {
    let live = true;
    const offSettings = api.onSettings((next) => setView(next));
    const offStatus = api.onStatus((next) => setStatus(next));
    api.getSettings().then(
      (initial) => {
        if (!live) return;
        setView(initial);
        setStep(initial.needsOnboarding ? 'welcome' : 'settings');
      },
      () => live && setLoadError(true),
    );
    api.getStatus().then(
      (initial) => live && setStatus(initial),
      () => undefined,
    );
    return () => {
      live = false;
      offSettings();
      offStatus();
    };
  }, [api]);

  async function startDemo(): Promise<void> {
    setStartingDemo(true);
    setDemoError(null);
    try {
      setView(await api.startDemo());
      setDemoStarted(true);
      setStep('settings');
    } catch {
      setDemoError('The demo could not start. Please try again.');
    } finally {
      setStartingDemo(false);
    }
  }

  if (loadError) {
    return (
      <main className="settings">
        <p className="notice notice--error" role="alert">
          Settings could not be loaded. Close this window and open it again from the tray.
        </p>
      </main>
    );
  }
  if (!view || !step) {
    return (
      <main className="settings" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  }

  if (step === 'welcome') {
    return (
      <main className="settings">
        <Onboarding
          onConnect={() => setStep('connect')}
          onDemo={() => void startDemo()}
          startingDemo={startingDemo}
          demoError={demoError}
        />
      </main>
    );
  }

  return (
    <main className="settings">
      {step === 'connect' ? (
        <SettingsForm
          api={api}
          view={view}
          status={null}
          onboarding
          onSaved={(next) => {
            setView(next);
            if (!next.needsOnboarding) setStep('settings');
          }}
          onBack={() => setStep('welcome')}
          header={
            <header className="settings__header">
              <h1>Connect to your phone system</h1>
              <p>Ask your administrator for these if you do not have them.</p>
            </header>
          }
        />
      ) : (
        <SettingsForm
          api={api}
          view={view}
          status={status}
          onSaved={setView}
          header={
            <header className="settings__header">
              <h1>Settings</h1>
              {demoStarted && (
                <p className="notice notice--info" role="status" data-testid="demo-started">
                  The demo is running: a practice call will ring in a few seconds. Connect your real
                  phone system here whenever you are ready.
                </p>
              )}
            </header>
          }
        />
      )}
    </main>
  );
}
