/**
 * The settings form's parts: the controls bound to the form's state (a text field, a checkbox, a
 * select, radio buttons, each with its words from fields.ts), one component per section, the jump
 * list and the save bar. SettingsForm.tsx puts them in order.
 */
import type { ReactNode } from 'react';
import type { ScreenpopApi, SettingsView, StatusView } from '../../src-main/ipc/contract.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { ContactsFileField } from './ContactsFileField.tsx';
import { CrmPreview } from './CrmPreview.tsx';
import { CrmTest } from './CrmTest.tsx';
import { Checkbox, Radios, SelectField, TextField, type TextFieldProps } from './Field.tsx';
import { OrganisationSignIn } from './OrganisationSignIn.tsx';
import type { settingsWords } from './fields.ts';
import { type FieldName, type SectionId } from './fields.ts';
import { parseList, type FormValues } from './form-values.ts';
import { StatusPanel } from './StatusPanel.tsx';
import type { SettingsFormState } from './use-settings-form.ts';
import type { NoticeFeature } from '../../src-shared/wire/event-codes.ts';

export type SettingsWords = ReturnType<typeof settingsWords>;

type TextKey = {
  [K in keyof FormValues]: FormValues[K] extends string ? K : never;
}[keyof FormValues];

type BoolKey = {
  [K in keyof FormValues]: FormValues[K] extends boolean ? K : never;
}[keyof FormValues];

type ChoiceKey =
  | 'popupDisplay'
  | 'popupCorner'
  | 'language'
  | 'proxyMode'
  | 'proxyAuth'
  | 'phoneSystem'
  | 'crmProvider'
  | 'crmAuth'
  | 'callLogCalls';

type RadioKey = 'eventSource' | 'connectionMode';

/** The form's controls, each bound to its field's value, error and words. */
export function formControls(form: SettingsFormState, words: SettingsWords) {
  const { values, set, errorFor } = form;
  const { FIELDS, fieldWords, NOT_OFFERED } = words;

  function text(
    name: TextKey,
    options: Omit<
      TextFieldProps,
      'name' | 'label' | 'hint' | 'placeholder' | 'value' | 'onChange' | 'error'
    > & { hint?: ReactNode; placeholder?: string } = {},
  ) {
    const said = fieldWords(name, values.phoneSystem);
    return (
      <TextField
        hint={said.hint}
        placeholder={said.placeholder}
        {...options}
        name={name}
        label={said.label}
        error={errorFor(name)}
        value={values[name]}
        onChange={(v) => set(name, v)}
      />
    );
  }

  function check(name: BoolKey, options: { notOffered?: boolean } = {}) {
    const said = FIELDS[name];
    // A feature the phone system has no event for: shown off, and why (nothing is subscribed).
    const hint = options.notOffered ? NOT_OFFERED : said.hint;
    return (
      <Checkbox
        name={name}
        label={said.label}
        {...(hint ? { hint } : {})}
        checked={options.notOffered ? false : values[name]}
        {...(options.notOffered ? { disabled: true } : {})}
        onChange={(v) => set(name, v)}
      />
    );
  }

  /** A select over `choices`, with its field's words (as text() and check() for theirs). */
  function select<K extends ChoiceKey>(
    name: K,
    choices: readonly { value: FormValues[K]; label: string; lang?: string; hint?: string }[],
  ) {
    const said = FIELDS[name as FieldName];
    // A choice that says what it needs (a phone system) is the field's help while it is chosen.
    const hint = choices.find((c) => c.value === values[name])?.hint ?? said.hint;
    return (
      <SelectField
        name={name}
        label={said.label}
        {...(hint ? { hint } : {})}
        error={errorFor(name)}
        value={values[name]}
        choices={choices}
        onChange={(v) => set(name, v)}
      />
    );
  }

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

  return { text, check, select, radios };
}

export type FormControls = ReturnType<typeof formControls>;

/** What every section component is given. */
export interface SectionProps {
  api: ScreenpopApi;
  view: SettingsView;
  form: SettingsFormState;
  c: FormControls;
  words: SettingsWords;
  t: Translator;
}

export function sectionDomId(id: SectionId): string {
  return `section-${id}`;
}

/** Organisation mode: the relay alone, signed in as the user; no key, no secret, no extensions. */
export function isOrganisation(values: FormValues): boolean {
  return values.connectionMode === 'organisation';
}

/** A section: its title (a jump-list target) and the one line that says what it is for. */
export function Section({
  id,
  words,
  t,
  organisation,
  children,
}: {
  id: SectionId;
  words: SettingsWords;
  t: Translator;
  organisation: boolean;
  children: ReactNode;
}) {
  const said = words.SECTIONS.find((s) => s.id === id);
  return (
    <section className="section" id={sectionDomId(id)} aria-labelledby={`${id}-title`}>
      <div className="section__head">
        <h2 id={`${id}-title`} tabIndex={-1}>
          {said?.title}
        </h2>
        <p className="section__summary">
          {id === 'connection' && organisation
            ? t.t('settings.section.connection.summary-organisation')
            : said?.summary}
        </p>
      </div>
      {children}
    </section>
  );
}

/** The jump list at the top: a button per section, to its title. */
export function SectionNav({
  sections,
  t,
}: {
  sections: SettingsWords['SECTIONS'];
  t: Translator;
}) {
  return (
    <nav className="section-nav" aria-label={t.t('settings.sections-nav')}>
      <ul>
        {sections.map((s) => (
          <li key={s.id}>
            <button
              type="button"
              className="section-nav__link"
              onClick={() => {
                document.getElementById(sectionDomId(s.id))?.scrollIntoView({ block: 'start' });
                document.getElementById(`${s.id}-title`)?.focus({ preventScroll: true });
              }}
            >
              {s.title}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export function ConnectionSection({
  api,
  view,
  form,
  c,
  words,
  t,
  status,
  onboarding,
}: SectionProps & { status: StatusView | null; onboarding: boolean }) {
  const { values, test } = form;
  const organisation = isOrganisation(values);
  const firstExtension = parseList(values.extensions)[0];
  return (
    <Section id="connection" words={words} t={t} organisation={organisation}>
      <div ref={form.panelRef}>
        <StatusPanel
          status={onboarding ? null : status}
          test={test?.result ?? null}
          testUnsaved={test?.unsaved ?? false}
          testing={form.testing}
          onTest={() => void form.testConnection()}
          {...(firstExtension ? { extension: firstExtension } : {})}
        />
      </div>
      {c.radios('connectionMode', words.MODE_CHOICES)}
      {organisation ? (
        <>
          {c.text('relayUrl', { type: 'url', hint: t.t('settings.org.relay-url-hint') })}
          {c.text('relayTenant', { hint: t.t('settings.org.relay-tenant-hint') })}
          <OrganisationSignIn
            api={api}
            view={view}
            relay={{
              relayUrl: values.relayUrl.trim(),
              relayTenant: values.relayTenant.trim(),
            }}
            leavesApiKey={view.settings.connectionMode !== 'organisation' && view.hasSecret}
            onChanged={form.organisationChanged}
            onFieldError={(field, message) => form.showError({ field, message })}
          />
        </>
      ) : (
        <>
          {c.select('phoneSystem', words.PHONE_SYSTEM_CHOICES)}
          {c.text('baseUrl', { type: 'url' })}
          {c.text('apiKey')}
          {c.text('secret', {
            type: 'password',
            autoComplete: 'new-password',
            placeholder: view.hasSecret ? words.SECRET_STORED.placeholder : '',
            placeholderIsWords: true,
            ...(view.hasSecret
              ? { hint: <span data-testid="secret-stored">{words.SECRET_STORED.hint}</span> }
              : {}),
          })}
        </>
      )}
    </Section>
  );
}

export function PhoneSection({
  form,
  c,
  words,
  t,
  status,
}: SectionProps & { status: StatusView | null }) {
  const organisation = isOrganisation(form.values);
  const orgExtensions = status?.organisation?.extensions ?? [];
  return (
    <Section id="phone" words={words} t={t} organisation={organisation}>
      {organisation ? (
        <p className="field__hint org-extensions" data-testid="org-extensions">
          {t.t('settings.org.extensions-from-relay', {
            count: orgExtensions.length,
            extensions: t.list(orgExtensions),
          })}
        </p>
      ) : (
        <>
          {c.text('extensions', { multiline: true })}
          {c.text('dids', { multiline: true })}
        </>
      )}
      {c.text('defaultRegion', { short: true, maxLength: 2 })}
      {/* Remote answer (uaCSTA) is the direct mode's: the relay carries no uaCSTA requests. */}
      {!organisation && c.check('answerFromDeskPhone')}
      {!organisation &&
        form.values.answerFromDeskPhone &&
        c.text('deskPhoneAddress', { short: true, maxLength: 64 })}
    </Section>
  );
}

export function PopupSection({ api, form, c, words, t }: SectionProps) {
  const { values } = form;
  return (
    <Section id="popup" words={words} t={t} organisation={isOrganisation(values)}>
      <div className="row">
        {c.select('popupDisplay', words.DISPLAYS)}
        {c.select('popupCorner', words.CORNERS)}
        {c.text('popupLingerSec', { type: 'number', short: true, min: 0 })}
      </div>
      {c.text('crmUrlTemplate')}
      <CrmPreview api={api} template={values.crmUrlTemplate} id="crm-preview" />
      {c.check('autoOpenCrm')}
      <ContactsFileField
        api={api}
        value={values.contactsFile}
        saved={form.baseline.contactsFile}
        error={form.errorFor('contactsFile')}
        onChange={(path) => form.set('contactsFile', path)}
      />
    </Section>
  );
}

export function CrmSection({ api, view, form, c, words, t }: SectionProps) {
  const { values } = form;
  const { FIELDS, CRM_SECRET_HUBSPOT } = words;
  return (
    <Section id="crm" words={words} t={t} organisation={isOrganisation(values)}>
      {c.select('crmProvider', words.CRM_PROVIDERS)}
      {values.crmProvider === 'generic' && (
        <>
          {c.text('crmUrl', { type: 'url' })}
          {c.select('crmAuth', words.CRM_AUTHS)}
          <div className="row">
            {c.text('crmNameField', { short: true })}
            {c.text('crmCompanyField', { short: true })}
            {c.text('crmRecordField', { short: true })}
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
            values.crmProvider === 'hubspot' ? CRM_SECRET_HUBSPOT.label : FIELDS.crmSecret.label
          }
          hint={values.crmProvider === 'hubspot' ? CRM_SECRET_HUBSPOT.hint : FIELDS.crmSecret.hint}
          placeholder={view.hasCrmSecret ? t.t('settings.crm-secret.stored') : ''}
          placeholderIsWords
          error={form.errorFor('crmSecret')}
          value={values.crmSecret}
          onChange={(v) => form.set('crmSecret', v)}
        />
      )}
      {values.crmProvider !== 'none' && (
        <>
          {c.text('crmTimeoutSec', { type: 'number', short: true, min: 1 })}
          <CrmTest
            api={api}
            disabled={false}
            unsaved={form.crmUnsaved}
            patch={form.patchOrShowError}
          />
        </>
      )}
      {c.select('callLogCalls', words.CALL_LOG_CALLS)}
      {values.callLogCalls !== 'none' && (
        <>
          {c.text('callNoteSec', { type: 'number', short: true, min: 0 })}
          {c.text('callLogChoices', { multiline: true })}
        </>
      )}
      {values.crmProvider === 'generic' && (
        <>
          {c.text('crmLogUrl', { type: 'url' })}
          <TextField
            name="crmLogSecret"
            type="password"
            autoComplete="new-password"
            label={FIELDS.crmLogSecret.label}
            hint={FIELDS.crmLogSecret.hint}
            placeholder={view.hasCrmLogSecret ? t.t('settings.crm-secret.stored') : ''}
            placeholderIsWords
            error={form.errorFor('crmLogSecret')}
            value={values.crmLogSecret}
            onChange={(v) => form.set('crmLogSecret', v)}
          />
        </>
      )}
    </Section>
  );
}

export function NotificationsSection({ view, form, c, words, t }: SectionProps) {
  // What the phone system has no event for (main's word, from its wire dialect).
  const notOffered = (feature: NoticeFeature) =>
    view.notOffered?.[form.values.phoneSystem]?.includes(feature) ?? false;
  return (
    <Section id="notifications" words={words} t={t} organisation={isOrganisation(form.values)}>
      {c.check('doNotDisturb')}
      {c.check('sound')}
      {c.check('startAtLogin')}
      <fieldset className="features" data-testid="features">
        <legend className="field__label">{t.t('settings.besides-calls')}</legend>
        {c.check('featureVoicemail', { notOffered: notOffered('voicemail') })}
        {c.check('featureSms', { notOffered: notOffered('sms') })}
        {c.check('featureTrunk', { notOffered: notOffered('trunk') })}
        {c.check('featurePresence', { notOffered: notOffered('presence') })}
      </fieldset>
    </Section>
  );
}

export function LanguageSection({ form, c, words, t }: SectionProps) {
  return (
    <Section id="language" words={words} t={t} organisation={isOrganisation(form.values)}>
      {c.select('language', words.LANGUAGES)}
    </Section>
  );
}

export function AdvancedSection({ form, c, words, t }: SectionProps) {
  const organisation = isOrganisation(form.values);
  return (
    <Section id="advanced" words={words} t={t} organisation={organisation}>
      {!organisation && (
        <>
          {c.radios('eventSource', words.SOURCE_CHOICES)}
          {c.text('relayUrl', { type: 'url' })}
          {c.text('relayTenant')}
        </>
      )}
      {c.select('proxyMode', words.PROXY_MODES)}
      {c.text('proxyUrl', { type: 'url' })}
      {c.select('proxyAuth', words.PROXY_AUTH_MODES)}
    </Section>
  );
}

/** The bar at the bottom: the form's general error, Back, Save, "Saved" or "Unsaved changes". */
export function SaveBar({
  form,
  t,
  onboarding,
  onBack,
}: {
  form: SettingsFormState;
  t: Translator;
  onboarding: boolean;
  onBack: (() => void) | undefined;
}) {
  const { generalError, saving, saved, dirty } = form;
  return (
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
  );
}
