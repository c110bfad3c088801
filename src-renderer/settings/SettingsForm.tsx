/**
 * The settings form (also the "Connect to my phone system" step of onboarding), in sections a
 * person can scan (Connection, Your phone, Screen-pop & CRM, Notifications & start-up, Advanced),
 * with a jump list at the top and a save bar that stays at the bottom of the window however far
 * down the user is. It sends a patch to main and shows main's verdict: a field error next to its
 * field, or "Saved". The API secret is write-only: typed here, stored in the keychain by main,
 * never shown back. Every label and help text comes from fields.ts.
 */
import type { FormEvent, ReactNode } from 'react';
import { useEffect, useRef, useState } from 'react';
import type {
  ScreenpopApi,
  SettingsView,
  StatusView,
  TestConnectionResult,
} from '../../src-main/ipc/contract.ts';
import { ContactsFileField } from './ContactsFileField.tsx';
import { CrmPreview } from './CrmPreview.tsx';
import { CrmTest } from './CrmTest.tsx';
import {
  Checkbox,
  fieldId,
  LockContext,
  Radios,
  SelectField,
  TextField,
  type TextFieldProps,
} from './Field.tsx';
import { OrganisationSignIn } from './OrganisationSignIn.tsx';
import { settingsWords, type FieldName, type SectionId } from './fields.ts';
import { useT } from '../shared/i18n.tsx';
import type { FormValues } from './form-values.ts';
import {
  changedSettings,
  mergeUntouched,
  parseList,
  toFormValues,
  toPatch,
} from './form-values.ts';
import { StatusPanel } from './StatusPanel.tsx';
import { refusalText } from './refusal-words.ts';
import type { NoticeFeature } from '../../src-shared/event-codes.ts';
import { TESTED_FIELDS } from '../../src-shared/settings-changes.ts';

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

interface FieldError {
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
};

/** The CRM fields are one setting, `crmLookup`: a policy locks them together. */
const CRM_SETTING_OF: Record<string, string> = Object.fromEntries(
  Object.values(CRM_FIELD_OF_PART).map((k) => [k, 'crmLookup']),
);

/** Fields a connection test depends on: editing one makes a shown test result stale. */
const CONNECTION_FIELDS = new Set<string>([...TESTED_FIELDS, 'secret']);

function sectionDomId(id: SectionId): string {
  return `section-${id}`;
}

/** True when the form differs from what main last sent (a typed secret counts). */
function isDirty(values: FormValues, baseline: FormValues): boolean {
  const built = toPatch(values);
  if (!built.ok || built.patch.secret !== undefined || built.patch.crmSecret !== undefined)
    return true;
  return Object.keys(changedSettings(built.patch, baseline).settings).length > 0;
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
  const {
    CORNERS,
    CRM_AUTHS,
    CRM_PROVIDERS,
    CRM_SECRET_HUBSPOT,
    DISPLAYS,
    PROXY_MODES,
    FIELDS,
    fieldWords,
    NOT_OFFERED,
    PHONE_SYSTEM_CHOICES,
    FORM_ERRORS,
    LANGUAGES,
    MODE_CHOICES,
    managedBanner,
    SECRET_STORED,
    SECTIONS,
    SOURCE_CHOICES,
  } = settingsWords(t);
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

  async function save(event: FormEvent): Promise<void> {
    event.preventDefault();
    setSaved(null);
    const built = toPatch(values);
    if (!built.ok) {
      showError({ field: built.field, message: t.t(built.message, built.values) });
      return;
    }
    setSaving(true);
    try {
      const result = await api.saveSettings(changedSettings(built.patch, baseline.current));
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
    const built = toPatch(values);
    if (!built.ok) {
      showError({ field: built.field, message: t.t(built.message, built.values) });
      return;
    }
    setTesting(true);
    setTest(null);
    const unsaved = isDirty(values, baseline.current);
    try {
      setTest({ result: await api.testConnection(built.patch), unsaved });
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

  type TextKey = {
    [K in keyof FormValues]: FormValues[K] extends string ? K : never;
  }[keyof FormValues];

  function text(
    name: TextKey,
    options: Omit<
      TextFieldProps,
      'name' | 'label' | 'hint' | 'placeholder' | 'value' | 'onChange' | 'error'
    > & { hint?: ReactNode; placeholder?: string } = {},
  ) {
    const words = fieldWords(name, values.phoneSystem);
    return (
      <TextField
        hint={words.hint}
        placeholder={words.placeholder}
        {...options}
        name={name}
        label={words.label}
        error={errorFor(name)}
        value={values[name]}
        onChange={(v) => set(name, v)}
      />
    );
  }

  type BoolKey = {
    [K in keyof FormValues]: FormValues[K] extends boolean ? K : never;
  }[keyof FormValues];

  function check(name: BoolKey, options: { notOffered?: boolean } = {}) {
    const words = FIELDS[name];
    // A feature the phone system has no event for: shown off, and why (nothing is subscribed).
    const hint = options.notOffered ? NOT_OFFERED : words.hint;
    return (
      <Checkbox
        name={name}
        label={words.label}
        {...(hint ? { hint } : {})}
        checked={options.notOffered ? false : values[name]}
        {...(options.notOffered ? { disabled: true } : {})}
        onChange={(v) => set(name, v)}
      />
    );
  }

  type ChoiceKey =
    | 'popupDisplay'
    | 'popupCorner'
    | 'language'
    | 'proxyMode'
    | 'phoneSystem'
    | 'crmProvider'
    | 'crmAuth';

  /** A select over `choices`, with its field's words (as text() and check() for theirs). */
  function select<K extends ChoiceKey>(
    name: K,
    choices: readonly { value: FormValues[K]; label: string; lang?: string; hint?: string }[],
  ) {
    const words = FIELDS[name as FieldName];
    // A choice that says what it needs (a phone system) is the field's help while it is chosen.
    const hint = choices.find((c) => c.value === values[name])?.hint ?? words.hint;
    return (
      <SelectField
        name={name}
        label={words.label}
        {...(hint ? { hint } : {})}
        error={errorFor(name)}
        value={values[name]}
        choices={choices}
        onChange={(v) => set(name, v)}
      />
    );
  }

  type RadioKey = 'eventSource' | 'connectionMode';

  /** Radio buttons over `choices`, each with its meaning (as select() for a list). */
  function radios<K extends RadioKey>(
    name: K,
    choices: readonly { value: FormValues[K]; label: string; hint: string }[],
  ) {
    return (
      <Radios
        name={name}
        label={FIELDS[name].label}
        error={errorFor(name)}
        value={values[name]}
        choices={choices}
        onChange={(v) => set(name, v)}
      />
    );
  }

  function section(id: SectionId, body: ReactNode) {
    const words = SECTIONS.find((s) => s.id === id);
    return (
      <section className="section" id={sectionDomId(id)} aria-labelledby={`${id}-title`}>
        <div className="section__head">
          <h2 id={`${id}-title`} tabIndex={-1}>
            {words?.title}
          </h2>
          <p className="section__summary">
            {id === 'connection' && organisation
              ? t.t('settings.section.connection.summary-organisation')
              : words?.summary}
          </p>
        </div>
        {body}
      </section>
    );
  }

  const knownFields = new Set<string>([...Object.keys(values), 'secret']);
  const generalError = error && !knownFields.has(error.field) ? error.message : null;
  const firstExtension = parseList(values.extensions)[0];
  const dirty = isDirty(values, baseline.current);
  const crmUnsaved =
    values.crmSecret !== '' ||
    Object.keys(CRM_SETTING_OF).some(
      (k) => values[k as keyof FormValues] !== baseline.current[k as keyof FormValues],
    );
  const shownSections = onboarding ? SECTIONS.slice(0, 2) : SECTIONS;
  const managed = view.managed;
  const lockedBy = (name: string): string | null =>
    managed && (managed.locked as string[]).includes(CRM_SETTING_OF[name] ?? name)
      ? managed.by
      : null;
  // What the phone system has no event for (main's word, from its wire dialect).
  const notOffered = (feature: NoticeFeature) =>
    view.notOffered?.[values.phoneSystem]?.includes(feature) ?? false;
  // Organisation mode: the relay alone, signed in as the user; no key, no secret, no extensions.
  const organisation = values.connectionMode === 'organisation';
  const orgExtensions = status?.organisation?.extensions ?? [];

  return (
    <LockContext.Provider value={lockedBy}>
      <form className="settings-form" onSubmit={(e) => void save(e)} noValidate>
        {header}
        {managed && managed.locked.length > 0 && (
          <p className="managed-banner" data-testid="managed-banner">
            {managedBanner(managed.by, managed.locked.length)}
          </p>
        )}
        {!onboarding && (
          <nav className="section-nav" aria-label={t.t('settings.sections-nav')}>
            <ul>
              {shownSections.map((s) => (
                <li key={s.id}>
                  <button
                    type="button"
                    className="section-nav__link"
                    onClick={() => {
                      document
                        .getElementById(sectionDomId(s.id))
                        ?.scrollIntoView({ block: 'start' });
                      document.getElementById(`${s.id}-title`)?.focus({ preventScroll: true });
                    }}
                  >
                    {s.title}
                  </button>
                </li>
              ))}
            </ul>
          </nav>
        )}

        {section(
          'connection',
          <>
            <div ref={panelRef}>
              <StatusPanel
                status={onboarding ? null : status}
                test={test?.result ?? null}
                testUnsaved={test?.unsaved ?? false}
                testing={testing}
                onTest={() => void testConnection()}
                phoneSystem={values.phoneSystem}
                {...(firstExtension ? { extension: firstExtension } : {})}
              />
            </div>
            {radios('connectionMode', MODE_CHOICES)}
            {organisation ? (
              <>
                {text('relayUrl', { type: 'url', hint: t.t('settings.org.relay-url-hint') })}
                {text('relayTenant', { hint: t.t('settings.org.relay-tenant-hint') })}
                <OrganisationSignIn
                  api={api}
                  view={view}
                  relay={{
                    relayUrl: values.relayUrl.trim(),
                    relayTenant: values.relayTenant.trim(),
                  }}
                  leavesApiKey={view.settings.connectionMode !== 'organisation' && view.hasSecret}
                  onChanged={(next, what) => {
                    setError(null);
                    setTest(null);
                    setSaved(
                      t.t(
                        what === 'signed-in'
                          ? 'settings.org.signed-in-now'
                          : 'settings.org.signed-out-now',
                      ),
                    );
                    onSaved(next);
                  }}
                  onFieldError={(field, message) => showError({ field, message })}
                />
              </>
            ) : (
              <>
                {select('phoneSystem', PHONE_SYSTEM_CHOICES)}
                {text('baseUrl', { type: 'url' })}
                {text('apiKey')}
                {text('secret', {
                  type: 'password',
                  autoComplete: 'new-password',
                  placeholder: view.hasSecret ? SECRET_STORED.placeholder : '',
                  placeholderIsWords: true,
                  ...(view.hasSecret
                    ? { hint: <span data-testid="secret-stored">{SECRET_STORED.hint}</span> }
                    : {}),
                })}
              </>
            )}
          </>,
        )}

        {section(
          'phone',
          <>
            {organisation ? (
              <p className="field__hint org-extensions" data-testid="org-extensions">
                {t.t('settings.org.extensions-from-relay', {
                  count: orgExtensions.length,
                  extensions: t.list(orgExtensions),
                })}
              </p>
            ) : (
              <>
                {text('extensions', { multiline: true })}
                {text('dids', { multiline: true })}
              </>
            )}
            {text('defaultRegion', { short: true, maxLength: 2 })}
          </>,
        )}

        {!onboarding && (
          <>
            {section(
              'popup',
              <>
                <div className="row">
                  {select('popupDisplay', DISPLAYS)}
                  {select('popupCorner', CORNERS)}
                  {text('popupLingerSec', { type: 'number', short: true, min: 0 })}
                </div>
                {text('crmUrlTemplate')}
                <CrmPreview api={api} template={values.crmUrlTemplate} id="crm-preview" />
                {check('autoOpenCrm')}
                <ContactsFileField
                  api={api}
                  value={values.contactsFile}
                  saved={baseline.current.contactsFile}
                  error={errorFor('contactsFile')}
                  onChange={(path) => set('contactsFile', path)}
                />
              </>,
            )}

            {section(
              'crm',
              <>
                {select('crmProvider', CRM_PROVIDERS)}
                {values.crmProvider === 'generic' && (
                  <>
                    {text('crmUrl', { type: 'url' })}
                    {select('crmAuth', CRM_AUTHS)}
                    <div className="row">
                      {text('crmNameField', { short: true })}
                      {text('crmCompanyField', { short: true })}
                      {text('crmRecordField', { short: true })}
                    </div>
                  </>
                )}
                {(values.crmProvider === 'hubspot' ||
                  (values.crmProvider === 'generic' && values.crmAuth !== 'none')) && (
                  <TextField
                    name="crmSecret"
                    type="password"
                    autoComplete="new-password"
                    label={
                      values.crmProvider === 'hubspot'
                        ? CRM_SECRET_HUBSPOT.label
                        : FIELDS.crmSecret.label
                    }
                    hint={
                      values.crmProvider === 'hubspot'
                        ? CRM_SECRET_HUBSPOT.hint
                        : FIELDS.crmSecret.hint
                    }
                    placeholder={view.hasCrmSecret ? t.t('settings.crm-secret.stored') : ''}
                    placeholderIsWords
                    error={errorFor('crmSecret')}
                    value={values.crmSecret}
                    onChange={(v) => set('crmSecret', v)}
                  />
                )}
                {values.crmProvider !== 'none' && (
                  <>
                    {text('crmTimeoutSec', { type: 'number', short: true, min: 1 })}
                    <CrmTest
                      api={api}
                      disabled={false}
                      unsaved={crmUnsaved}
                      patch={() => {
                        const built = toPatch(values);
                        if (built.ok) return built.patch;
                        showError({
                          field: built.field,
                          message: t.t(built.message, built.values),
                        });
                        return null;
                      }}
                    />
                  </>
                )}
              </>,
            )}

            {section(
              'notifications',
              <>
                {check('doNotDisturb')}
                {check('sound')}
                {check('startAtLogin')}
                <fieldset className="features" data-testid="features">
                  <legend className="field__label">{t.t('settings.besides-calls')}</legend>
                  {check('featureVoicemail', { notOffered: notOffered('voicemail') })}
                  {check('featureSms', { notOffered: notOffered('sms') })}
                  {check('featureTrunk', { notOffered: notOffered('trunk') })}
                  {check('featurePresence', { notOffered: notOffered('presence') })}
                </fieldset>
              </>,
            )}

            {section('language', select('language', LANGUAGES))}

            {section(
              'advanced',
              <>
                {!organisation && (
                  <>
                    {radios('eventSource', SOURCE_CHOICES)}
                    {text('relayUrl', { type: 'url' })}
                    {text('relayTenant')}
                  </>
                )}
                {select('proxyMode', PROXY_MODES)}
                {text('proxyUrl', { type: 'url' })}
              </>,
            )}
          </>
        )}

        <div className="save-bar" data-testid="save-bar">
          {generalError && (
            <p className="save-bar__error" role="alert">
              {generalError}
            </p>
          )}
          <div className="save-bar__row">
            {onBack && (
              <button type="button" className="button" onClick={onBack}>
                {t.t('settings.back')}
              </button>
            )}
            <button type="submit" className="button button--primary" disabled={saving}>
              {saving
                ? t.t('settings.saving')
                : onboarding
                  ? t.t('settings.save-and-connect')
                  : t.t('settings.save')}
            </button>
            <p className="save-bar__status" role="status" data-testid="save-status">
              {saved}
            </p>
            {!saved && dirty && (
              <p className="save-bar__dirty" data-testid="unsaved">
                {t.t('settings.unsaved')}
              </p>
            )}
          </div>
        </div>
      </form>
    </LockContext.Provider>
  );
}
