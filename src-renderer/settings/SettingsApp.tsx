/**
 * The settings window. On first run (needsOnboarding) it opens on the welcome step; afterwards it
 * is the settings form, whose Connection section carries the one connection status.
 */
import { useState } from 'react';
import type { ScreenpopApi, SettingsView, StatusView } from '../../src-main/ipc/contract.ts';
import type { PhoneSystem } from '../../src-main/core/settings/types.ts';
import { useDocumentTitle, useT } from '../shared/i18n.tsx';
import { useLiveValue } from '../shared/live.ts';
import { Onboarding } from './Onboarding.tsx';
import { SettingsForm } from './SettingsForm.tsx';

type Step = 'welcome' | 'connect' | 'settings';

export function SettingsApp({ api }: { api: ScreenpopApi }) {
  const t = useT();
  useDocumentTitle(t.t('settings.title'));
  const [view, setView] = useState<SettingsView | null>(null);
  const [status, setStatus] = useState<StatusView | null>(null);
  const [step, setStep] = useState<Step | null>(null);
  const [loadError, setLoadError] = useState(false);
  const [startingDemo, setStartingDemo] = useState(false);
  const [demoError, setDemoError] = useState<string | null>(null);
  const [demoStarted, setDemoStarted] = useState(false);
  /** The welcome step's answer; saved before either way in (the demo plays it too). */
  const [phoneSystem, setPhoneSystem] = useState<PhoneSystem | null>(null);

  useLiveValue(api.onSettings, api.getSettings, {
    push: setView,
    answer: (initial) => {
      setView(initial);
      setStep(initial.needsOnboarding ? 'welcome' : 'settings');
    },
    failed: () => setLoadError(true),
  });
  useLiveValue(api.onStatus, api.getStatus, { push: setStatus });

  /** Saves the welcome step's phone system, when it differs from the one in force. */
  async function keepPhoneSystem(): Promise<void> {
    if (!view || !phoneSystem || phoneSystem === view.settings.phoneSystem) return;
    const saved = await api.saveSettings({ settings: { phoneSystem } });
    if (saved.ok) setView(saved.view);
  }

  async function startDemo(): Promise<void> {
    setStartingDemo(true);
    setDemoError(null);
    try {
      await keepPhoneSystem();
      setView(await api.startDemo());
      setDemoStarted(true);
      setStep('settings');
    } catch {
      setDemoError(t.t('settings.demo-failed'));
    } finally {
      setStartingDemo(false);
    }
  }

  if (loadError) {
    return (
      <main className="settings">
        <p className="notice notice--error" role="alert">
          {t.t('settings.load-failed')}
        </p>
      </main>
    );
  }
  if (!view || !step) {
    return (
      <main className="settings" aria-busy="true">
        <p>{t.t('settings.loading')}</p>
      </main>
    );
  }

  if (step === 'welcome') {
    return (
      <main className="settings">
        <Onboarding
          phoneSystem={phoneSystem ?? view.settings.phoneSystem}
          onPhoneSystem={setPhoneSystem}
          onConnect={() => {
            if (!phoneSystem || phoneSystem === view.settings.phoneSystem) setStep('connect');
            else void keepPhoneSystem().finally(() => setStep('connect'));
          }}
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
              <h1>{t.t('settings.connect-heading')}</h1>
              <p>{t.t('settings.connect-lead')}</p>
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
              <h1>{t.t('settings.heading')}</h1>
              {demoStarted && (
                <p className="notice notice--info" role="status" data-testid="demo-started">
                  {t.t('settings.demo-running')}
                </p>
              )}
            </header>
          }
        />
      )}
    </main>
  );
}
