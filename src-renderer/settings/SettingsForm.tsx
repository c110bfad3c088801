/**
 * The settings form (also the "Connect to my phone system" step of onboarding), in sections a
 * person can scan (Connection, Your phone, Screen-pop & CRM, Notifications & start-up, Advanced),
 * with a jump list at the top and a save bar that stays at the bottom of the window however far
 * down the user is. It sends a patch to main and shows main's verdict: a field error next to its
 * field, or "Saved". The API secret is write-only: typed here, stored in the keychain by main,
 * never shown back. Every label and help text comes from fields.ts. The state is the
 * useSettingsForm hook (use-settings-form.ts); each section is a component (settings-sections.tsx).
 */
import type { ReactNode } from 'react';
import type { ScreenpopApi, SettingsView, StatusView } from '../../src-main/ipc/contract.ts';
import { LockContext } from './Field.tsx';
import { settingsWords } from './fields.ts';
import { useT } from '../shared/i18n.tsx';
import {
  AdvancedSection,
  ConnectionSection,
  CrmSection,
  formControls,
  LanguageSection,
  NotificationsSection,
  PhoneSection,
  PopupSection,
  SaveBar,
  SectionNav,
  type SectionProps,
} from './settings-sections.tsx';
import { CRM_SETTING_OF, useSettingsForm } from './use-settings-form.ts';

export interface SettingsFormProps {
  api: ScreenpopApi;
  view: SettingsView;
  /** The live connection status (null during onboarding, where there is none yet). */
  status: StatusView | null;
  onSaved: (view: SettingsView) => void;
  /** Onboarding shows only the connection essentials. */
  onboarding?: boolean;
  header?: ReactNode;
  onBack?: () => void;
}

export function SettingsForm({
  api,
  view,
  status,
  onSaved,
  onboarding = false,
  header,
  onBack,
}: SettingsFormProps) {
  const t = useT();
  const words = settingsWords(t);
  const form = useSettingsForm({ api, view, status, onSaved, onboarding });
  const parts: SectionProps = { api, view, form, c: formControls(form, words), words, t };
  const managed = view.managed;
  const lockedBy = (name: string): string | null =>
    managed && (managed.locked as string[]).includes(CRM_SETTING_OF[name] ?? name)
      ? managed.by
      : null;

  return (
    <LockContext.Provider value={lockedBy}>
      <form className="settings-form" onSubmit={(e) => void form.save(e)} noValidate>
        {header}
        {managed && managed.locked.length > 0 && (
          <p className="managed-banner" data-testid="managed-banner">
            {words.managedBanner(managed.by, managed.locked.length)}
          </p>
        )}
        {!onboarding && <SectionNav sections={words.SECTIONS} t={t} />}
        <ConnectionSection {...parts} status={status} onboarding={onboarding} />
        <PhoneSection {...parts} status={status} />
        {!onboarding && (
          <>
            <PopupSection {...parts} />
            <CrmSection {...parts} />
            <NotificationsSection {...parts} />
            <LanguageSection {...parts} />
            <AdvancedSection {...parts} />
          </>
        )}
        <SaveBar form={form} t={t} onboarding={onboarding} onBack={onBack} />
      </form>
    </LockContext.Provider>
  );
}
