/**
 * The dial box (issue 38, tray menu "Call a number…"): one number field, focused when the window
 * opens (the user opened it), Call or Enter dials through main (dial:call; main's dial rule judges
 * the text), and the answer is said in words in a status line: calling, or the refusal in the
 * user's language (not offered, not a number, the permission the phone system lacks). Escape
 * closes the window.
 */
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { ScreenpopApi } from '../../src-main/ipc/contract.ts';
import { useDocumentTitle, useT } from '../shared/i18n.tsx';

/** The IPC contract's limit: a longer text never reaches main. */
const MAX_NUMBER = 64;

type News = { ok: boolean; text: string } | null;

export function DialApp({ api }: { api: ScreenpopApi }) {
  const t = useT();
  useDocumentTitle(t.t('desktop.dial-box.title'));
  const [number, setNumber] = useState('');
  const [busy, setBusy] = useState(false);
  const [news, setNews] = useState<News>(null);
  const field = useRef<HTMLInputElement>(null);
  const fieldId = useId();
  const hintId = useId();

  useEffect(() => {
    field.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') void api.closeWindow().catch(() => undefined);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [api]);

  const call = (e: FormEvent) => {
    e.preventDefault();
    const typed = number.trim();
    if (!typed || busy) return;
    setBusy(true);
    api
      .dialNumber(typed)
      .then((r) =>
        setNews(
          r.ok
            ? { ok: true, text: t.t('desktop.dial-box.calling', { number: typed }) }
            : { ok: false, text: r.message },
        ),
      )
      .catch(() => undefined)
      .finally(() => {
        setBusy(false);
        field.current?.focus();
      });
  };

  return (
    <main className="dial">
      <h1 className="dial__title">{t.t('desktop.dial-box.title')}</h1>
      <form className="dial__form" onSubmit={call}>
        <label className="dial__label" htmlFor={fieldId}>
          {t.t('desktop.dial-box.label')}
        </label>
        <div className="dial__row">
          <input
            ref={field}
            id={fieldId}
            className="dial__field"
            type="tel"
            dir="ltr"
            inputMode="tel"
            autoComplete="off"
            spellCheck={false}
            maxLength={MAX_NUMBER}
            aria-describedby={hintId}
            value={number}
            onChange={(e) => setNumber(e.target.value)}
          />
          <button
            className="button button--primary"
            type="submit"
            disabled={busy || number.trim() === ''}
          >
            {t.t('desktop.dial-box.call')}
          </button>
        </div>
        <p id={hintId} className="dial__hint">
          {t.t('desktop.dial-box.hint')}
        </p>
      </form>
      <div role="status" className="dial__status" data-testid="dial-news">
        {news && (
          <p className={news.ok ? 'status status--ok' : 'status status--error'}>{news.text}</p>
        )}
      </div>
    </main>
  );
}
