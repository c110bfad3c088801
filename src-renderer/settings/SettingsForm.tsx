/**
 * The settings form (also the "Connect to my phone system" step of onboarding). It sends a patch to
 * main and shows main's verdict: a field error next to its field, or "Saved". The API secret is
 * write-only: typed here, stored in the keychain by main, never shown back.
 */
import type { FormEvent, ReactNode } from 'react';
import { useEffect, useRef, useState } from 'react';
import type {
  ScreenpopApi,
  SettingsView,
  TestConnectionResult,
} from '../../src-main/ipc/contract.ts';
import type {
  EventSourceMode,
  PopupCorner,
  PopupDisplay,
} from '../../src-main/core/settings/types.ts';
import { Checkbox, fieldId, SelectField, TextField, type TextFieldProps } from './Field.tsx';
import { ConnectionResult } from './ConnectionResult.tsx';
import { CrmPreview } from './CrmPreview.tsx';
import type { FormValues } from './form-values.ts';
import {
  changedSettings,
  mergeUntouched,
  parseList,
  toFormValues,
  toPatch,
} from './form-values.ts';

export interface SettingsFormProps {
  api: ScreenpopApi;
  view: SettingsView;
  onSaved: (view: SettingsView) => void;
  /** Onboarding shows only the connection essentials first. */
  onboarding?: boolean;
  header?: ReactNode;
  onBack?: () => void;
}

interface FieldError {
  field: string;
  message: string;
}

const SOURCE_CHOICES: { value: EventSourceMode; label: string; hint: string }[] = [
  { value: 'auto', label: 'Automatic', hint: 'Direct connection, plus the relay when one is set.' },
  { value: 'direct', label: 'Direct', hint: 'This computer connects to the phone system itself.' },
  { value: 'relay', label: 'Relay', hint: "Through your organisation's webhook relay." },
];

const CORNERS: { value: PopupCorner; label: string }[] = [
  { value: 'top-left', label: 'Top left' },
  { value: 'top-right', label: 'Top right' },
  { value: 'bottom-left', label: 'Bottom left' },
  { value: 'bottom-right', label: 'Bottom right' },
];

const DISPLAYS: { value: PopupDisplay; label: string }[] = [
  { value: 'primary', label: 'Main display' },
  { value: 'pointer', label: 'Display with the mouse pointer' },
];

export function SettingsForm({
  api,
  view,
  onSaved,
  onboarding = false,
  header,
  onBack,
}: SettingsFormProps) {
  const [values, setValues] = useState<FormValues>(() => toFormValues(view.settings));
  const [error, setError] = useState<FieldError | null>(null);
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  const [testing, setTesting] = useState(false);
  const [testResult, setTestResult] = useState<TestConnectionResult | null>(null);
  // The settings as main last sent them: saving sends only what differs from these.
  const baseline = useRef<FormValues>(toFormValues(view.settings));

  // Settings changed elsewhere (the tray toggles Do Not Disturb): take the new value of every
  // field the user has not edited here, keep their edits.
  useEffect(() => {
    const incoming = toFormValues(view.settings);
    const before = baseline.current;
    baseline.current = incoming;
    setValues((prev) => mergeUntouched(prev, before, incoming));
  }, [view]);

  function set<K extends keyof FormValues>(key: K, value: FormValues[K]): void {
    setSaved(null);
    setValues((prev) => ({ ...prev, [key]: value }));
    if (error?.field === key) setError(null);
  }

  function errorFor(field: string): string | null {
    return error?.field === field ? error.message : null;
  }

  function showError(reported: FieldError): void {
    // Main names list entries as `extensions[1]`: the error belongs next to the list's field.
    const next = { field: reported.field.replace(/\[\d+\]$/, ''), message: reported.message };
    setError(next);
    // The user pressed Save in this window, so moving focus to the field is expected here.
    window.requestAnimationFrame(() => document.getElementById(fieldId(next.field))?.focus());
  }

  async function save(event: FormEvent): Promise<void> {
    event.preventDefault();
    setSaved(null);
    const built = toPatch(values);
    if (!built.ok) {
      showError(built);
      return;
    }
    setSaving(true);
    try {
      const result = await api.saveSettings(changedSettings(built.patch, baseline.current));
      if (result.ok) {
        setError(null);
        baseline.current = toFormValues(result.view.settings);
        setValues(baseline.current);
        setSaved(
          onboarding ? 'Saved. Screenpop now watches for calls to your extension.' : 'Saved.',
        );
        onSaved(result.view);
      } else {
        showError({ field: result.field, message: result.message });
      }
    } catch {
      setError({ field: '', message: 'Saving failed. Please try again.' });
    } finally {
      setSaving(false);
    }
  }

  async function testConnection(): Promise<void> {
    const built = toPatch(values);
    if (!built.ok) {
      showError(built);
      return;
    }
    setTesting(true);
    setTestResult(null);
    try {
      setTestResult(await api.testConnection(built.patch));
    } catch {
      setTestResult({
        ok: false,
        message: 'The test could not run.',
        remedy: 'Try again in a moment.',
      });
    } finally {
      setTesting(false);
    }
  }

  type TextKey = {
    [K in keyof FormValues]: FormValues[K] extends string ? K : never;
  }[keyof FormValues];

  function text(
    name: TextKey,
    label: string,
    options: Omit<TextFieldProps, 'name' | 'label' | 'value' | 'onChange' | 'error'> = {},
  ) {
    return (
      <TextField
        {...options}
        name={name}
        label={label}
        error={errorFor(name)}
        value={values[name]}
        onChange={(v) => set(name, v)}
      />
    );
  }

  const knownFields = new Set<string>([...Object.keys(values), 'secret']);
  const generalError = error && !knownFields.has(error.field) ? error.message : null;
  const firstExtension = parseList(values.extensions)[0];

  return (
    <form className="settings-form" onSubmit={(e) => void save(e)} noValidate>
      {header}
      <fieldset className="section">
        <legend>Phone system</legend>
        {text('baseUrl', 'Service address', {
          type: 'url',
          hint: 'The address you sign in to, for example https://acme.example.com',
          placeholder: 'https://acme.example.com',
        })}
        {text('apiKey', 'API key', { hint: 'From the admin console, under API keys.' })}
        {text('secret', 'API secret', {
          type: 'password',
          autoComplete: 'new-password',
          placeholder: view.hasSecret ? 'Stored in keychain' : '',
          hint: view.hasSecret ? (
            <span data-testid="secret-stored">
              Stored in the keychain. Leave empty to keep it, or type a new one.
            </span>
          ) : (
            'Kept in your system keychain, never in a file.'
          ),
        })}
        {text('extensions', 'Your extensions', {
          multiline: true,
          hint: 'Separate several with commas or new lines, for example 101, 102',
        })}
        {text('dids', 'Your direct numbers (optional)', {
          multiline: true,
          hint: 'Numbers that ring you directly, in any common format.',
        })}
        {text('defaultRegion', 'Country for local numbers', {
          short: true,
          maxLength: 2,
          hint: 'Two letters, for example US or GB.',
        })}
        <div className="actions">
          <button
            type="button"
            className="button"
            onClick={() => void testConnection()}
            disabled={testing}
          >
            {testing ? 'Testing…' : 'Test connection'}
          </button>
        </div>
        <div role="status" aria-live="polite">
          {testResult && (
            <ConnectionResult
              result={testResult}
              {...(firstExtension ? { extension: firstExtension } : {})}
            />
          )}
        </div>
      </fieldset>

      {!onboarding && (
        <>
          <fieldset className="section">
            <legend>How calls reach this computer</legend>
            <div className="radios" role="radiogroup" aria-labelledby="source-label">
              <p className="field__label" id="source-label">
                Event source
              </p>
              {SOURCE_CHOICES.map((choice) => (
                <div className="radio" key={choice.value}>
                  <input
                    id={`source-${choice.value}`}
                    type="radio"
                    name="eventSource"
                    value={choice.value}
                    checked={values.eventSource === choice.value}
                    onChange={() => set('eventSource', choice.value)}
                    aria-describedby={`source-${choice.value}-hint`}
                  />
                  <div>
                    <label htmlFor={`source-${choice.value}`}>{choice.label}</label>
                    <p className="field__hint" id={`source-${choice.value}-hint`}>
                      {choice.hint}
                    </p>
                  </div>
                </div>
              ))}
              {errorFor('eventSource') && <p className="field__error">{errorFor('eventSource')}</p>}
            </div>
            {text('relayUrl', 'Relay address', {
              type: 'url',
              placeholder: 'wss://relay.example.com',
              hint: 'wss:// address from your administrator. Needed for Relay.',
            })}
            {text('relayTenant', 'Relay tenant', {
              placeholder: 'acme',
              hint: 'The tenant name your relay administrator gave you; leave empty to use the first part of the service address.',
            })}
          </fieldset>

          <fieldset className="section">
            <legend>CRM link</legend>
            {text('crmUrlTemplate', 'Link template', {
              placeholder: 'https://crm.example.com/search?phone={from}',
              hint: (
                <>
                  Placeholders: <code>{'{from}'}</code> <code>{'{to}'}</code>{' '}
                  <code>{'{call_id}'}</code> <code>{'{caller_name}'}</code>. Leave empty for no CRM
                  button.
                </>
              ),
            })}
            <CrmPreview api={api} template={values.crmUrlTemplate} id="crm-preview" />
            <Checkbox
              name="autoOpenCrm"
              label="Open the CRM link by itself when a call rings"
              checked={values.autoOpenCrm}
              onChange={(v) => set('autoOpenCrm', v)}
            />
          </fieldset>

          <fieldset className="section">
            <legend>Caller names</legend>
            {text('contactsFile', 'Contacts file (optional)', {
              placeholder: 'contacts.csv or contacts.vcf',
              hint: "Full path of a CSV or vCard file. Names from the phone system's directory are used too.",
            })}
          </fieldset>

          <fieldset className="section">
            <legend>Alerts</legend>
            <Checkbox
              name="doNotDisturb"
              label="Do not disturb"
              hint="No popups or sounds; calls still go to the history."
              checked={values.doNotDisturb}
              onChange={(v) => set('doNotDisturb', v)}
            />
            <Checkbox
              name="sound"
              label="Play a sound when a call rings"
              checked={values.sound}
              onChange={(v) => set('sound', v)}
            />
            <Checkbox
              name="startAtLogin"
              label="Start Screenpop when I sign in"
              checked={values.startAtLogin}
              onChange={(v) => set('startAtLogin', v)}
            />
          </fieldset>

          <fieldset className="section">
            <legend>Popup</legend>
            <div className="row">
              <SelectField
                name="popupDisplay"
                label="Show on"
                error={errorFor('popupDisplay')}
                value={values.popupDisplay}
                choices={DISPLAYS}
                onChange={(v) => set('popupDisplay', v)}
              />
              <SelectField
                name="popupCorner"
                label="Corner"
                error={errorFor('popupCorner')}
                value={values.popupCorner}
                choices={CORNERS}
                onChange={(v) => set('popupCorner', v)}
              />
              {text('popupLingerSec', 'Stay after ringing stops (seconds)', {
                type: 'number',
                short: true,
                min: 0,
              })}
            </div>
          </fieldset>
        </>
      )}

      {generalError && (
        <p className="notice notice--error" role="alert">
          {generalError}
        </p>
      )}
      <div className="actions actions--footer">
        {onBack && (
          <button type="button" className="button" onClick={onBack}>
            Back
          </button>
        )}
        <button type="submit" className="button button--primary" disabled={saving}>
          {saving ? 'Saving…' : onboarding ? 'Save and connect' : 'Save'}
        </button>
        <p className="actions__status" role="status" data-testid="save-status">
          {saved}
        </p>
      </div>
    </form>
  );
}
