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
import { Checkbox, Field, fieldId } from './Field.tsx';
import { ConnectionResult } from './ConnectionResult.tsx';
import { CrmPreview } from './CrmPreview.tsx';
import type { FormValues } from './form-values.ts';
import { parseList, toFormValues, toPatch } from './form-values.ts';

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
  const dirty = useRef(false);

  // Settings changed elsewhere (tray menu toggles DND): take them unless the user is editing.
  useEffect(() => {
    if (!dirty.current) setValues(toFormValues(view.settings));
  }, [view]);

  function set<K extends keyof FormValues>(key: K, value: FormValues[K]): void {
    dirty.current = true;
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
      const result = await api.saveSettings(built.patch);
      if (result.ok) {
        dirty.current = false;
        setError(null);
        setValues(toFormValues(result.view.settings));
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

  const knownFields = new Set<string>([...Object.keys(values), 'secret']);
  const generalError = error && !knownFields.has(error.field) ? error.message : null;
  const firstExtension = parseList(values.extensions)[0];

  return (
    <form className="settings-form" onSubmit={(e) => void save(e)} noValidate>
      {header}
      <fieldset className="section">
        <legend>Phone system</legend>
        <Field
          name="baseUrl"
          label="Service address"
          hint="The address you sign in to, for example https://acme.example.com"
          error={errorFor('baseUrl')}
        >
          {(c) => (
            <input
              {...c}
              type="url"
              inputMode="url"
              autoComplete="off"
              spellCheck={false}
              placeholder="https://acme.example.com"
              value={values.baseUrl}
              onChange={(e) => set('baseUrl', e.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          name="apiKey"
          label="API key"
          hint="From the admin console, under API keys."
          error={errorFor('apiKey')}
        >
          {(c) => (
            <input
              {...c}
              type="text"
              autoComplete="off"
              spellCheck={false}
              value={values.apiKey}
              onChange={(e) => set('apiKey', e.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          name="secret"
          label="API secret"
          hint={
            view.hasSecret ? (
              <span data-testid="secret-stored">
                Stored in the keychain. Leave empty to keep it, or type a new one.
              </span>
            ) : (
              'Kept in your system keychain, never in a file.'
            )
          }
          error={errorFor('secret')}
        >
          {(c) => (
            <input
              {...c}
              type="password"
              autoComplete="new-password"
              spellCheck={false}
              placeholder={view.hasSecret ? 'Stored in keychain' : ''}
              value={values.secret}
              onChange={(e) => set('secret', e.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          name="extensions"
          label="Your extensions"
          hint="Separate several with commas or new lines, for example 101, 102"
          error={errorFor('extensions')}
        >
          {(c) => (
            <textarea
              {...c}
              rows={2}
              spellCheck={false}
              value={values.extensions}
              onChange={(e) => set('extensions', e.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          name="dids"
          label="Your direct numbers (optional)"
          hint="Numbers that ring you directly, in any common format."
          error={errorFor('dids')}
        >
          {(c) => (
            <textarea
              {...c}
              rows={2}
              spellCheck={false}
              value={values.dids}
              onChange={(e) => set('dids', e.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          name="defaultRegion"
          label="Country for local numbers"
          hint="Two letters, for example US or GB."
          error={errorFor('defaultRegion')}
        >
          {(c) => (
            <input
              {...c}
              className="input--short"
              type="text"
              maxLength={2}
              autoComplete="off"
              value={values.defaultRegion}
              onChange={(e) => set('defaultRegion', e.currentTarget.value)}
            />
          )}
        </Field>
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
            <Field
              name="relayUrl"
              label="Relay address"
              hint="wss:// address from your administrator. Needed for Relay."
              error={errorFor('relayUrl')}
            >
              {(c) => (
                <input
                  {...c}
                  type="url"
                  autoComplete="off"
                  spellCheck={false}
                  placeholder="wss://relay.example.com"
                  value={values.relayUrl}
                  onChange={(e) => set('relayUrl', e.currentTarget.value)}
                />
              )}
            </Field>
          </fieldset>

          <fieldset className="section">
            <legend>CRM link</legend>
            <Field
              name="crmUrlTemplate"
              label="Link template"
              hint={
                <>
                  Placeholders: <code>{'{from}'}</code> <code>{'{to}'}</code>{' '}
                  <code>{'{call_id}'}</code> <code>{'{caller_name}'}</code>. Leave empty for no CRM
                  button.
                </>
              }
              error={errorFor('crmUrlTemplate')}
            >
              {(c) => (
                <input
                  {...c}
                  type="text"
                  autoComplete="off"
                  spellCheck={false}
                  placeholder="https://crm.example.com/search?phone={from}"
                  value={values.crmUrlTemplate}
                  onChange={(e) => set('crmUrlTemplate', e.currentTarget.value)}
                />
              )}
            </Field>
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
            <Field
              name="contactsFile"
              label="Contacts file (optional)"
              hint="Full path of a CSV or vCard file. Names from the phone system's directory are used too."
              error={errorFor('contactsFile')}
            >
              {(c) => (
                <input
                  {...c}
                  type="text"
                  autoComplete="off"
                  spellCheck={false}
                  placeholder="contacts.csv or contacts.vcf"
                  value={values.contactsFile}
                  onChange={(e) => set('contactsFile', e.currentTarget.value)}
                />
              )}
            </Field>
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
              <Field name="popupDisplay" label="Show on" error={errorFor('popupDisplay')}>
                {(c) => (
                  <select
                    {...c}
                    value={values.popupDisplay}
                    onChange={(e) => set('popupDisplay', e.currentTarget.value as PopupDisplay)}
                  >
                    {DISPLAYS.map((d) => (
                      <option key={d.value} value={d.value}>
                        {d.label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <Field name="popupCorner" label="Corner" error={errorFor('popupCorner')}>
                {(c) => (
                  <select
                    {...c}
                    value={values.popupCorner}
                    onChange={(e) => set('popupCorner', e.currentTarget.value as PopupCorner)}
                  >
                    {CORNERS.map((d) => (
                      <option key={d.value} value={d.value}>
                        {d.label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <Field
                name="popupLingerSec"
                label="Stay after ringing stops (seconds)"
                error={errorFor('popupLingerSec')}
              >
                {(c) => (
                  <input
                    {...c}
                    className="input--short"
                    type="number"
                    min={0}
                    step={1}
                    inputMode="numeric"
                    value={values.popupLingerSec}
                    onChange={(e) => set('popupLingerSec', e.currentTarget.value)}
                  />
                )}
              </Field>
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
