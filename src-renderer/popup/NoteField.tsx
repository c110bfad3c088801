/**
 * The note card's field (issue 39): under the card of a call the user answered, a short note and
 * the outcome choices, kept while the user talks and for a while after the call (main's
 * `callNoteSec`). Keyboard first and never taking focus by itself: the popup is shown without
 * focus, and the field gets it only when the user clicks it, clicks "Add a note (N)" or presses N
 * in the popup. Enter logs the call (Shift+Enter is a new line); a change and Enter again updates
 * the same call; what is typed goes to main as it is typed (a pause of 400 ms), so the time
 * running out logs the latest text. All text stays text: a textarea's value and text nodes.
 */
import { useEffect, useId, useRef, useState } from 'react';
import type { CallNoteInput, CallNoteView } from '../../src-main/ipc/contract.ts';
import { MAX_CALL_NOTE_CHARS } from '../../src-shared/rules/call-log-rule.ts';
import { useT } from '../shared/i18n.tsx';

export interface NoteFieldProps {
  callId: string;
  note: CallNoteView;
  now: number;
  onSave: (callId: string, note: CallNoteInput) => void;
}

const SAVE_PAUSE_MS = 400;

export function NoteField({ callId, note, now, onSave }: NoteFieldProps) {
  const t = useT();
  const id = useId();
  // The draft is the user's: main's pushes (the countdown, "Logged") never overwrite it.
  const [text, setText] = useState(note.text);
  const [disposition, setDisposition] = useState<string | null>(note.disposition);
  const textRef = useRef<HTMLTextAreaElement>(null);
  const sent = useRef({ text: note.text, disposition: note.disposition });

  // Typing reaches main after a pause, so the time running out logs what is there.
  useEffect(() => {
    if (text === sent.current.text && disposition === sent.current.disposition) return;
    const timer = setTimeout(() => {
      sent.current = { text, disposition };
      onSave(callId, { text, disposition, submit: false });
    }, SAVE_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [text, disposition, callId, onSave]);

  const submit = (next: { text: string; disposition: string | null }) => {
    sent.current = next;
    onSave(callId, { ...next, submit: true });
  };

  const status = note.logged
    ? t.t('popup.note.logged')
    : note.closesAt === null
      ? t.t('popup.note.logs-after-call')
      : t.t('popup.note.logs-in', {
          duration: t.duration(Math.max(0, note.closesAt - now)),
        });
  const full = text.length >= MAX_CALL_NOTE_CHARS;

  return (
    <div className="note" data-testid="note-card" data-logged={note.logged ? 'true' : 'false'}>
      <div className="note__row">
        <label className="note__label" htmlFor={`${id}-text`}>
          {t.t('popup.note.label')}
        </label>
        <button
          type="button"
          className="button button--quiet note__open"
          data-note-open={callId}
          onClick={() => textRef.current?.focus()}
        >
          {t.t('popup.note.open-key')}
        </button>
      </div>
      <textarea
        id={`${id}-text`}
        ref={textRef}
        className="note__text"
        data-testid="note-text"
        data-note-for={callId}
        rows={2}
        maxLength={MAX_CALL_NOTE_CHARS}
        value={text}
        aria-describedby={`${id}-status`}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key !== 'Enter' || e.shiftKey || e.nativeEvent.isComposing) return;
          e.preventDefault();
          submit({ text, disposition });
        }}
      />
      <div className="note__row">
        <label className="note__label" htmlFor={`${id}-outcome`}>
          {t.t('popup.note.outcome')}
        </label>
        <select
          id={`${id}-outcome`}
          className="note__outcome"
          data-testid="note-outcome"
          value={disposition ?? ''}
          onChange={(e) => setDisposition(e.target.value === '' ? null : e.target.value)}
          onKeyDown={(e) => {
            if (e.key !== 'Enter') return;
            e.preventDefault();
            submit({ text, disposition });
          }}
        >
          <option value="">{t.t('popup.note.outcome-none')}</option>
          {note.choices.map((choice) => (
            <option key={choice} value={choice}>
              {choice}
            </option>
          ))}
        </select>
      </div>
      <p className="note__status" id={`${id}-status`} data-testid="note-status" aria-live="polite">
        {full ? t.t('popup.note.too-long', { max: MAX_CALL_NOTE_CHARS }) : status}
        {!full && <span className="note__hint"> · {t.t('popup.note.hint')}</span>}
      </p>
    </div>
  );
}
