/**
 * A labelled form row with an optional hint and the field's error (from main's SaveResult) shown
 * right under it and tied to the input with aria-describedby / aria-invalid.
 */
import type { ReactNode } from 'react';

export interface FieldControlProps {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: true;
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
  const id = fieldId(name);
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [errorId, hintId].filter(Boolean).join(' ') || undefined;
  const control: FieldControlProps = { id };
  if (describedBy) control['aria-describedby'] = describedBy;
  if (error) control['aria-invalid'] = true;
  return (
    <div
      className={error ? 'field field--error' : 'field'}
      data-field={name}
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
  onChange: (checked: boolean) => void;
}

export function Checkbox({ name, label, hint, checked, onChange }: CheckboxProps) {
  const id = fieldId(name);
  return (
    <div className="check" data-field={name}>
      <input
        id={id}
        type="checkbox"
        checked={checked}
        onChange={(e) => onChange(e.currentTarget.checked)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
      <div>
        <label htmlFor={id}>{label}</label>
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
  maxLength?: number;
  autoComplete?: string;
  min?: number;
}

/** A Field holding one text input (or textarea) with the form's usual settings. */
export function TextField(props: TextFieldProps) {
  const { name, label, hint, error, value, onChange, type = 'text', multiline, short } = props;
  return (
    <Field name={name} label={label} hint={hint} error={error ?? null}>
      {(c) =>
        multiline ? (
          <textarea
            {...c}
            rows={2}
            spellCheck={false}
            value={value}
            onChange={(e) => onChange(e.currentTarget.value)}
          />
        ) : (
          <input
            {...c}
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
  error?: string | null;
  value: T;
  choices: readonly { value: T; label: string }[];
  onChange: (value: T) => void;
}

/** A Field holding a select over a fixed set of choices. */
export function SelectField<T extends string>(props: SelectFieldProps<T>) {
  const { name, label, error, value, choices, onChange } = props;
  return (
    <Field name={name} label={label} error={error ?? null}>
      {(c) => (
        <select
          {...c}
          value={value}
          onChange={(e) => {
            const picked = choices.find((choice) => choice.value === e.currentTarget.value);
            if (picked) onChange(picked.value);
          }}
        >
          {choices.map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
