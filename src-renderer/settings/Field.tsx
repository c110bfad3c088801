/**
 * A labelled form row with an optional hint and the field's error (from main's SaveResult) shown
 * right under it and tied to the input with aria-describedby / aria-invalid.
 */
import type { ReactNode } from 'react';
import { createContext, useContext } from 'react';
import { settingsWords } from './fields.ts';
import { useT } from '../shared/i18n.tsx';

export interface FieldControlProps {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: true;
  /** The organisation's policy locked this setting: shown, not editable. */
  readOnly?: true;
}

/**
 * Who locked a setting (the organisation's policy, SettingsView.managed), by the setting's name;
 * null when the user may change it. Every field looks itself up here, so no field needs code of
 * its own to show a lock.
 */
export const LockContext = createContext<(name: string) => string | null>(() => null);

export function useLock(name: string): string | null {
  return useContext(LockContext)(name);
}

/** "Locked by …", tied to the control with aria-describedby. */
export function LockNote({ id, by }: { id: string; by: string }) {
  const { lockedByText } = settingsWords(useT());
  return (
    <p className="field__lock" id={id} data-testid="locked-note">
      {/* Drawn, not an emoji: not every system has an emoji font. */}
      <svg className="field__lock-icon" viewBox="0 0 12 14" aria-hidden="true" focusable="false">
        <path d="M3 6V4a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" strokeWidth="1.6" />
        <rect x="1" y="6" width="10" height="8" rx="1.5" fill="currentColor" />
      </svg>
      {lockedByText(by)}
    </p>
  );
}

export interface FieldProps {
  name: string;
  label: string;
  hint?: ReactNode;
  error?: string | null;
  /**
   * The field is a group of controls (buttons), not one input: the label names the group, and
   * the controls keep their own names.
   */
  group?: boolean;
  children: (control: FieldControlProps) => ReactNode;
}

export function fieldId(name: string): string {
  return `field-${name}`;
}

export function Field({ name, label, hint, error, group = false, children }: FieldProps) {
  const lockedBy = useLock(name);
  const id = fieldId(name);
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const lockId = lockedBy ? `${id}-lock` : undefined;
  const describedBy = [errorId, lockId, hintId].filter(Boolean).join(' ') || undefined;
  const control: FieldControlProps = { id };
  if (describedBy) control['aria-describedby'] = describedBy;
  if (error) control['aria-invalid'] = true;
  if (lockedBy) control.readOnly = true;
  return (
    <div
      className={['field', error && 'field--error', lockedBy && 'field--locked']
        .filter(Boolean)
        .join(' ')}
      data-field={name}
      data-locked={lockedBy ? 'true' : undefined}
      {...(group ? { role: 'group', 'aria-labelledby': `${id}-label` } : {})}
    >
      {group ? (
        <span className="field__label" id={`${id}-label`}>
          {label}
        </span>
      ) : (
        <label className="field__label" htmlFor={id}>
          {label}
        </label>
      )}
      {children(control)}
      {lockId && lockedBy && <LockNote id={lockId} by={lockedBy} />}
      {error && (
        <p className="field__error" id={errorId} data-testid={`error-${name}`}>
          {error}
        </p>
      )}
      {hint && (
        <p className="field__hint" id={hintId}>
          {hint}
        </p>
      )}
    </div>
  );
}

export interface CheckboxProps {
  name: string;
  label: string;
  hint?: string;
  checked: boolean;
  /** Not a choice here (a feature the phone system does not offer). */
  disabled?: boolean;
  onChange: (checked: boolean) => void;
}

export function Checkbox({ name, label, hint, checked, disabled, onChange }: CheckboxProps) {
  const lockedBy = useLock(name);
  const id = fieldId(name);
  const describedBy =
    [lockedBy ? `${id}-lock` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div
      className={lockedBy ? 'check check--locked' : 'check'}
      data-field={name}
      data-locked={lockedBy ? 'true' : undefined}
    >
      <input
        id={id}
        type="checkbox"
        checked={checked}
        disabled={lockedBy !== null || disabled === true}
        onChange={(e) => onChange(e.currentTarget.checked)}
        aria-describedby={describedBy}
      />
      <div>
        <label htmlFor={id}>{label}</label>
        {lockedBy && <LockNote id={`${id}-lock`} by={lockedBy} />}
        {hint && (
          <p className="field__hint" id={`${id}-hint`}>
            {hint}
          </p>
        )}
      </div>
    </div>
  );
}

export interface TextFieldProps {
  name: string;
  label: string;
  hint?: ReactNode;
  error?: string | null;
  value: string;
  onChange: (value: string) => void;
  type?: 'text' | 'url' | 'password' | 'number';
  /** A two-line textarea, for lists. */
  multiline?: boolean;
  /** A narrow input for a few characters (region, seconds). */
  short?: boolean;
  placeholder?: string;
  /** The placeholder is words to translate ("Stored in keychain"), not an example of data. */
  placeholderIsWords?: boolean;
  maxLength?: number;
  autoComplete?: string;
  min?: number;
}

/** A Field holding one text input (or textarea) with the form's usual settings. */
export function TextField(props: TextFieldProps) {
  const { name, label, hint, error, value, onChange, type = 'text', multiline, short } = props;
  // Every text setting is data written left to right (addresses, keys, numbers, codes), in every
  // language; its example placeholder is data too, not words to translate.
  const data = { dir: 'ltr', translate: props.placeholderIsWords ? undefined : 'no' } as const;
  return (
    <Field name={name} label={label} hint={hint} error={error ?? null}>
      {(c) =>
        multiline ? (
          <textarea
            {...c}
            {...data}
            rows={2}
            spellCheck={false}
            value={value}
            onChange={(e) => onChange(e.currentTarget.value)}
          />
        ) : (
          <input
            {...c}
            {...data}
            type={type}
            className={short ? 'input--short' : undefined}
            inputMode={type === 'url' ? 'url' : type === 'number' ? 'numeric' : undefined}
            autoComplete={props.autoComplete ?? 'off'}
            spellCheck={false}
            placeholder={props.placeholder}
            maxLength={props.maxLength}
            min={props.min}
            value={value}
            onChange={(e) => onChange(e.currentTarget.value)}
          />
        )
      }
    </Field>
  );
}

export interface SelectFieldProps<T extends string> {
  name: string;
  label: string;
  hint?: string;
  error?: string | null;
  value: T;
  /** `lang` marks a choice written in another language (a language's own name). */
  choices: readonly { value: T; label: string; lang?: string }[];
  onChange: (value: T) => void;
}

/** A Field holding a select over a fixed set of choices. */
export function SelectField<T extends string>(props: SelectFieldProps<T>) {
  const { name, label, hint, error, value, choices, onChange } = props;
  return (
    <Field name={name} label={label} error={error ?? null} {...(hint ? { hint } : {})}>
      {({ readOnly, ...c }) => (
        <select
          {...c}
          disabled={readOnly === true}
          value={value}
          onChange={(e) => {
            const picked = choices.find((choice) => choice.value === e.currentTarget.value);
            if (picked) onChange(picked.value);
          }}
        >
          {choices.map((choice) => (
            <option key={choice.value} value={choice.value} lang={choice.lang}>
              {choice.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export interface RadiosProps<T extends string> {
  /** The setting's name (its lock, its error, the ids of its choices). */
  name: string;
  label: string;
  error?: string | null;
  value: T;
  /** Each choice with what it means. */
  choices: readonly { value: T; label: string; hint: string }[];
  onChange: (value: T) => void;
}

/** A group of radio buttons over a setting's choices, each with its meaning under it. */
export function Radios<T extends string>(props: RadiosProps<T>) {
  const { name, label, error, value, choices, onChange } = props;
  const lockedBy = useLock(name);
  const id = fieldId(name);
  const lockId = `${id}-lock`;
  return (
    <div
      className="radios"
      role="radiogroup"
      id={id}
      tabIndex={-1}
      aria-labelledby={`${id}-label`}
      data-field={name}
      data-locked={lockedBy ? 'true' : undefined}
    >
      <p className="field__label" id={`${id}-label`}>
        {label}
      </p>
      {choices.map((choice) => (
        <div className="radio" key={choice.value}>
          <input
            id={`${id}-${choice.value}`}
            type="radio"
            name={name}
            value={choice.value}
            checked={value === choice.value}
            disabled={lockedBy !== null}
            onChange={() => onChange(choice.value)}
            aria-describedby={[lockedBy ? lockId : '', `${id}-${choice.value}-hint`]
              .filter(Boolean)
              .join(' ')}
          />
          <div>
            <label htmlFor={`${id}-${choice.value}`}>{choice.label}</label>
            <p className="field__hint" id={`${id}-${choice.value}-hint`}>
              {choice.hint}
            </p>
          </div>
        </div>
      ))}
      {lockedBy && <LockNote id={lockId} by={lockedBy} />}
      {error && (
        <p className="field__error" data-testid={`error-${name}`}>
          {error}
        </p>
      )}
    </div>
  );
}
