/**
 * The contacts file, chosen with the system's own file dialog (opened by main): the page never
 * types or invents a path, it only shows the one the user picked, and what main found in it.
 * Nothing changes until Save.
 */
import { useState } from 'react';
import { displayText } from '../../src-shared/ui/text.ts';
import type { ContactsFilePick, ScreenpopApi } from '../../src-main/ipc/contract.ts';
import { InertText } from '../shared/InertText.tsx';
import { Field } from './Field.tsx';
import { settingsWords } from './fields.ts';
import { useT } from '../shared/i18n.tsx';

/** The last part of a path, for the line that names the file (Windows or POSIX separators). */
export function fileNameOf(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).at(-1) ?? path;
}

/**
 * A path as shown: a file name may hold a right-to-left override that makes "gnp.exe" of
 * "exe.png"; shown without controls (the path saved is the one picked, unchanged).
 */
function shownPath(path: string): string {
  return displayText(path, 4096);
}

export interface ContactsFileFieldProps {
  api: ScreenpopApi;
  value: string;
  /** The saved value: a different one is "not saved yet". */
  saved: string;
  error: string | null;
  onChange: (path: string) => void;
}

export function ContactsFileField({ api, value, saved, error, onChange }: ContactsFileFieldProps) {
  const [picking, setPicking] = useState(false);
  const [pick, setPick] = useState<ContactsFilePick | null>(null);
  const t = useT();
  const text = settingsWords(t).FIELDS.contactsFile;

  async function choose(): Promise<void> {
    setPicking(true);
    try {
      const result = await api.chooseContactsFile();
      if (result.status === 'cancelled') return;
      setPick(result);
      if (result.status === 'picked') onChange(result.path);
    } catch {
      setPick({ status: 'failed', path: '', message: t.t('settings.contacts.dialog-failed') });
    } finally {
      setPicking(false);
    }
  }

  const failed = pick?.status === 'failed' ? pick.message : null;
  return (
    <Field name="contactsFile" label={text.label} hint={text.hint} error={error ?? failed} group>
      {(control) => (
        <div className="file-field">
          <div
            className="file-field__current"
            id={`${control.id}-current`}
            data-testid="contacts-file"
          >
            {value ? (
              <>
                <InertText text={shownPath(fileNameOf(value))} className="file-field__name" />
                <InertText
                  text={shownPath(value)}
                  className="file-field__path"
                  testId="contacts-path"
                />
              </>
            ) : (
              <span className="file-field__none">{t.t('settings.contacts.none')}</span>
            )}
          </div>
          <div className="file-field__actions">
            <button
              type="button"
              className="button"
              id={control.id}
              aria-describedby={[`${control.id}-current`, control['aria-describedby']]
                .filter(Boolean)
                .join(' ')}
              onClick={() => void choose()}
              disabled={picking || control.readOnly === true}
            >
              {picking
                ? t.t('settings.contacts.choosing')
                : value
                  ? t.t('settings.contacts.choose-another')
                  : t.t('settings.contacts.choose')}
            </button>
            {value && !control.readOnly && (
              <button
                type="button"
                className="button button--quiet"
                onClick={() => {
                  setPick(null);
                  onChange('');
                }}
              >
                {t.t('settings.contacts.remove')}
              </button>
            )}
          </div>
          {pick?.status === 'picked' && pick.path === value && (
            <p className="file-field__found" role="status" data-testid="contacts-found">
              {t.t('settings.contacts.found', { count: pick.contacts })}
              {value !== saved && ` ${t.t('settings.contacts.save-to-use')}`}
            </p>
          )}
        </div>
      )}
    </Field>
  );
}
