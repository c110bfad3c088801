/**
 * The settings form's state: the values being edited and the settings main last sent (the
 * baseline), the one field error shown, Save and its verdict, Test connection and its result. The
 * section components (settings-sections.tsx) read and change the form only through this.
 */
import type { FormEvent } from 'react';
import { useEffect, useRef, useState } from 'react';
import type {
  ScreenpopApi,
  SettingsPatch,
  SettingsView,
  StatusView,
  TestConnectionResult,
} from '../../src-main/ipc/contract.ts';
import { fieldId } from './Field.tsx';
import { settingsWords } from './fields.ts';
import { useT } from '../shared/i18n.tsx';
import type { FormValues } from './form-values.ts';
import { changedSettings, mergeUntouched, toFormValues, toPatch } from './form-values.ts';
import { refusalText } from './refusal-words.ts';
import { TESTED_FIELDS } from '../../src-shared/rules/settings-changes.ts';

export interface FieldError {
  field: string;
  message: string;
}

/** The form's CRM fields, by the part of the one setting `crmLookup` each holds. */
const CRM_FIELD_OF_PART: Record<string, keyof FormValues> = {
  provider: 'crmProvider',
  urlTemplate: 'crmUrl',
  auth: 'crmAuth',
  nameField: 'crmNameField',
  companyField: 'crmCompanyField',
  recordUrlField: 'crmRecordField',
  timeoutSec: 'crmTimeoutSec',
  logUrl: 'crmLogUrl',
};

/** The CRM fields are one setting, `crmLookup`: a policy locks them together. */
export const CRM_SETTING_OF: Record<string, string> = Object.fromEntries(
  Object.values(CRM_FIELD_OF_PART).map((k) => [k, 'crmLookup']),
);

/** Fields a connection test depends on: editing one makes a shown test result stale. */
const CONNECTION_FIELDS = new Set<string>([...TESTED_FIELDS, 'secret']);

/** True when the form differs from what main last sent (a typed secret counts). */
function isDirty(values: FormValues, baseline: FormValues): boolean {
  const built = toPatch(values);
  if (
    !built.ok ||
    built.patch.secret !== undefined ||
    built.patch.crmSecret !== undefined ||
    built.patch.crmLogSecret !== undefined
  )
    return true;
  return Object.keys(changedSettings(built.patch, baseline).settings).length > 0;
}

export interface SettingsFormInput {
  api: ScreenpopApi;
  view: SettingsView;
  status: StatusView | null;
  onSaved: (view: SettingsView) => void;
  onboarding: boolean;
}

export function useSettingsForm({ api, view, status, onSaved, onboarding }: SettingsFormInput) {
  const t = useT();
  const { FORM_ERRORS } = settingsWords(t);
  const [values, setValues] = useState<FormValues>(() => toFormValues(view.settings));
  const [error, setError] = useState<FieldError | null>(null);
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  const [testing, setTesting] = useState(false);
  const [test, setTest] = useState<{ result: TestConnectionResult; unsaved: boolean } | null>(null);
  // The settings as main last sent them: saving sends only what differs from these.
  const baseline = useRef<FormValues>(toFormValues(view.settings));
  const panelRef = useRef<HTMLDivElement>(null);
  const liveState = status?.state;

  // Settings changed elsewhere (the tray toggles Do Not Disturb): take the new value of every
  // field the user has not edited here, keep their edits.
  useEffect(() => {
    const incoming = toFormValues(view.settings);
    const before = baseline.current;
    baseline.current = incoming;
    setValues((prev) => mergeUntouched(prev, before, incoming));
  }, [view]);

  // The live connection changed state: that is newer than a test result, which goes.
  useEffect(() => {
    setTest(null);
  }, [liveState]);

  function set<K extends keyof FormValues>(key: K, value: FormValues[K]): void {
    setSaved(null);
    setValues((prev) => ({ ...prev, [key]: value }));
    if (error?.field === key) setError(null);
    if (CONNECTION_FIELDS.has(key)) setTest(null);
  }

  function errorFor(field: string): string | null {
    return error?.field === field ? error.message : null;
  }

  function showError(reported: FieldError): void {
    // Main names list entries as `extensions[1]`: the error belongs next to the list's field. The
    // CRM lookup is one setting shown as several fields: main names the part (`crmLookup.nameField`)
    // when it can, else its error goes next to the address (own CRM) or the choice of CRM.
    const field = reported.field.replace(/\[\d+\]$/, '');
    const part = /^crmLookup\.(\w+)$/.exec(field)?.[1];
    const crmField =
      (part !== undefined ? CRM_FIELD_OF_PART[part] : undefined) ??
      (values.crmProvider === 'generic' ? 'crmUrl' : 'crmProvider');
    const next = {
      field: field.startsWith('crmLookup') ? crmField : field,
      message: reported.message,
    };
    setError(next);
    // The user pressed Save in this window, so moving focus to the field is expected here.
    window.requestAnimationFrame(() => document.getElementById(fieldId(next.field))?.focus());
  }

  /** The form as a patch for main, or null after showing the form's own error at its field. */
  function patchOrShowError(): SettingsPatch | null {
    const built = toPatch(values);
    if (built.ok) return built.patch;
    showError({ field: built.field, message: t.t(built.message, built.values) });
    return null;
  }

  const knownFields = new Set<string>([...Object.keys(values), 'secret']);

  async function save(event: FormEvent): Promise<void> {
    event.preventDefault();
    setSaved(null);
    const patch = patchOrShowError();
    if (!patch) return;
    setSaving(true);
    try {
      const result = await api.saveSettings(changedSettings(patch, baseline.current));
      if (result.ok) {
        setError(null);
        setTest(null);
        baseline.current = toFormValues(result.view.settings);
        setValues(baseline.current);
        setSaved(t.t(onboarding ? 'settings.saved-onboarding' : 'settings.saved'));
        onSaved(result.view);
      } else {
        // The CRM lookup's parts go beside their fields too (showError maps them).
        const name = result.field.replace(/\[\d+\]$/, '');
        const beside = knownFields.has(name) || name.startsWith('crmLookup');
        showError({
          field: result.field,
          message: refusalText(result.field, result.words, beside, t),
        });
      }
    } catch {
      setError({ field: '', message: FORM_ERRORS.saveFailed });
    } finally {
      setSaving(false);
    }
  }

  async function testConnection(): Promise<void> {
    const patch = patchOrShowError();
    if (!patch) return;
    setTesting(true);
    setTest(null);
    const unsaved = isDirty(values, baseline.current);
    try {
      setTest({ result: await api.testConnection(patch), unsaved });
    } catch {
      setTest({
        result: {
          ok: false,
          message: t.t('settings.test-could-not-run'),
          remedy: t.t('settings.try-again-moment'),
        },
        unsaved,
      });
    } finally {
      setTesting(false);
      // The answer is at the top of the section; bring it into view (the user pressed the button).
      window.requestAnimationFrame(() => panelRef.current?.scrollIntoView({ block: 'nearest' }));
    }
  }

  /** An organisation sign-in or sign-out happened (OrganisationSignIn): say so, take main's view. */
  function organisationChanged(next: SettingsView, what: 'signed-in' | 'signed-out'): void {
    setError(null);
    setTest(null);
    setSaved(
      t.t(what === 'signed-in' ? 'settings.org.signed-in-now' : 'settings.org.signed-out-now'),
    );
    onSaved(next);
  }

  return {
    values,
    set,
    errorFor,
    showError,
    patchOrShowError,
    save,
    saving,
    saved,
    testConnection,
    testing,
    test,
    organisationChanged,
    /** The settings main last sent. */
    baseline: baseline.current,
    panelRef,
    generalError: error && !knownFields.has(error.field) ? error.message : null,
    dirty: isDirty(values, baseline.current),
    crmUnsaved:
      values.crmSecret !== '' ||
      Object.keys(CRM_SETTING_OF).some(
        (k) => values[k as keyof FormValues] !== baseline.current[k as keyof FormValues],
      ),
  };
}

export type SettingsFormState = ReturnType<typeof useSettingsForm>;
