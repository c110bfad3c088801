/**
 * The call history: newest first, with when it rang, who called, what they called, how it ended
 * and after how long. A search over names and numbers, a filter (All, Missed, Answered), per-row
 * Copy and Open in CRM (main copies and builds the link from its own record), and an export of the
 * rows shown as CSV (main asks where, in a native dialog, and writes the file).
 * Missed calls are highlighted with words as well as colour. Opening (or returning to) the window
 * marks them seen; the "New" marks stay for this visit so the user can still tell which ones they
 * had missed.
 *
 * A notification click selects its item (selection.ts): once the list has loaded, whichever comes
 * first, the row is shown (the filter and search cleared if they hid it), marked current, scrolled
 * to and focused, and the status line says which it is.
 */
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { ExportResult, HistoryItem, ScreenpopApi } from '../../src-main/ipc/contract.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { useT, useDocumentTitle } from '../shared/i18n.tsx';
import { useCopyFeedback, useLiveValue } from '../shared/live.ts';
import { callerHeadline } from '../shared/format.ts';
import { spokenText } from '../shared/InertText.tsx';
import { filterById, HISTORY_FILTERS, visibleItems } from './filters.ts';
import { HistoryRowView, itemId, wantsAttention } from './row-views.tsx';
import { selectedItem } from './selection.ts';

/** "No missed calls match “ada”.", "No calls match “ada”.", "No missed calls." */
function noMatch(filterId: string, query: string, t: Translator): string {
  return query
    ? t.t('history.no-match-query', { filter: filterId, query })
    : t.t('history.no-match', { filter: filterId });
}

/** What the status line says after an export. */
function exportMessage(result: ExportResult, t: Translator): string {
  switch (result.status) {
    case 'saved':
      return t.t('history.export-saved', { count: result.count, file: result.fileName });
    case 'failed':
      return result.message;
    case 'cancelled':
      return '';
  }
}

export function HistoryApp({ api }: { api: ScreenpopApi }) {
  const t = useT();
  useDocumentTitle(t.t('history.title'));
  const [items, setItems] = useState<HistoryItem[] | null>(null);
  const [loadError, setLoadError] = useState(false);
  // Missed calls the user had not seen when they arrived here; they keep their "New" mark for
  // this visit even after main records them as seen.
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const [filterId, setFilterId] = useState('all');
  const [query, setQuery] = useState('');
  const { copiedId, copy } = useCopyFeedback(api.copyHistoryNumber);
  const [exporting, setExporting] = useState(false);
  const [exported, setExported] = useState<ExportResult | null>(null);
  const [canOpenCrm, setCanOpenCrm] = useState(false);
  // Call back (issue 38): only where the phone system offers dialling; what came of it, said.
  const [canDial, setCanDial] = useState(false);
  const [callNews, setCallNews] = useState('');
  useEffect(() => {
    let live = true;
    api
      .callActionsOffered()
      .then((offered) => live && setCanDial(offered.includes('dial')))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [api]);
  const tRef = useRef(t);
  tRef.current = t;
  const callBack = useCallback(
    (callId: string) => {
      api
        .callBackFromHistory(callId)
        .then((r) => setCallNews(r.ok ? tRef.current.t('history.calling-back') : r.message))
        .catch(() => undefined);
    },
    [api],
  );
  const searchId = useId();

  // The item a notification click asked for (selection.ts). Refs, not state: the list's answer
  // and the selection may both arrive before React renders again, and neither may miss the other.
  const [selected, setSelected] = useState<string | null>(null);
  const [focusRequest, setFocusRequest] = useState(0);
  const listRef = useRef<HTMLOListElement>(null);
  const itemsRef = useRef<HistoryItem[] | null>(null);
  const askedRef = useRef<{ value: unknown } | null>(null);
  const filterRef = useRef({ filterId, query });
  filterRef.current = { filterId, query };
  /** Selects what was asked for once the list is here; an id it does not know selects nothing. */
  const applySelection = (): void => {
    const asked = askedRef.current;
    const list = itemsRef.current;
    if (!asked || !list) return;
    askedRef.current = null;
    const item = selectedItem(asked.value, list);
    setSelected(item ? itemId(item) : null);
    if (!item) return;
    const { filterId: shownFilter, query: shownQuery } = filterRef.current;
    if (visibleItems([item], filterById(shownFilter), shownQuery).length === 0) {
      setFilterId('all');
      setQuery('');
    }
    setFocusRequest((n) => n + 1);
  };
  useLiveValue<unknown>(api.onHistorySelect, api.takeHistorySelection, {
    push: (value) => {
      if (value === null) return; // the answer: nothing was asked for while the page loaded
      askedRef.current = { value };
      applySelection();
    },
  });
  // After the render that shows the selected row: scroll to it and focus it.
  useEffect(() => {
    if (focusRequest === 0 || selected === null) return;
    const row = Array.from(listRef.current?.children ?? []).find(
      (li) => li.getAttribute('data-call-id') === selected,
    );
    if (!(row instanceof HTMLElement)) return;
    row.scrollIntoView?.({ block: 'center' });
    row.focus({ preventScroll: true });
  }, [focusRequest, selected]);

  /** Shows `next`; returns true when it holds missed calls not yet seen. */
  const take = (next: HistoryItem[]): boolean => {
    setItems(next);
    itemsRef.current = next;
    applySelection();
    const unseen = next.filter((e) => !e.seen && wantsAttention(e)).map(itemId);
    if (unseen.length > 0) setFresh((prev) => new Set([...prev, ...unseen]));
    return unseen.length > 0;
  };
  const markSeen = useCallback(
    (): void => void api.markHistorySeen().catch(() => undefined),
    [api],
  );
  useLiveValue(api.onHistory, api.listHistory, {
    // Missed while the window is in front of the user: that counts as seen.
    push: (next) => {
      if (take(next) && document.hasFocus()) markSeen();
    },
    answer: take,
    // Opening the history is what "seen" means, whether or not the window has focus yet.
    answered: markSeen,
    failed: () => setLoadError(true),
  });
  // The CRM button shows when a CRM link is set (main builds and vets the link itself).
  useLiveValue(api.onSettings, api.getSettings, {
    push: (view) => setCanOpenCrm(view.settings.crmUrlTemplate !== ''),
  });
  useEffect(() => {
    window.addEventListener('focus', markSeen);
    return () => window.removeEventListener('focus', markSeen);
  }, [markSeen]);

  // Esc closes the history, as it would a dialog; nothing here can be lost by closing.
  useEffect(() => {
    const onKey = (event: KeyboardEvent): void => {
      if (event.key === 'Escape' && !event.defaultPrevented)
        api.closeWindow().catch(() => undefined);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [api]);

  const now = Date.now();
  const all = items ?? [];
  const filter = filterById(filterId);
  const shown = visibleItems(all, filter, query);
  const missed = all.filter((e) => e.kind === 'call' && e.outcome === 'missed').length;
  const calls = all.filter((e) => e.kind === 'call').length;
  const voicemails = all.filter((e) => e.kind === 'voicemail').length;
  const messages = all.filter((e) => e.kind === 'sms').length;
  const narrowed = shown.length !== all.length;
  const selectedEntry = selected === null ? undefined : all.find((e) => itemId(e) === selected);

  function openCrm(id: string): void {
    api.openHistoryCrm(id).catch(() => undefined);
  }

  async function exportCsv(): Promise<void> {
    setExporting(true);
    setExported(null);
    try {
      setExported(await api.exportHistoryCsv(shown.map(itemId)));
    } catch {
      setExported({ status: 'failed', message: t.t('history.export-failed') });
    } finally {
      setExporting(false);
    }
  }

  return (
    <main className="history">
      <header className="history__header">
        <div className="history__title">
          <h1>{t.t('history.title')}</h1>
          {all.length > 0 && (
            <p className="history__summary">
              {t.list(
                [
                  t.t('history.summary-calls', { count: calls }),
                  missed > 0 ? t.t('history.summary-missed', { count: missed }) : '',
                  voicemails > 0 ? t.t('history.summary-voicemails', { count: voicemails }) : '',
                  messages > 0 ? t.t('history.summary-messages', { count: messages }) : '',
                ].filter(Boolean),
                'unit',
              )}
            </p>
          )}
        </div>
        <button
          type="button"
          className="button"
          onClick={() => void exportCsv()}
          disabled={exporting || shown.length === 0}
          aria-describedby={`${searchId}-export`}
        >
          {exporting ? t.t('history.exporting') : t.t('history.export')}
        </button>
        <p className="visually-hidden" id={`${searchId}-export`}>
          {t.t('history.export-help')}
        </p>
      </header>

      {all.length > 0 && (
        <div className="history__tools" role="search">
          <div className="search">
            <label htmlFor={searchId} className="search__label">
              {t.t('history.search')}
            </label>
            <input
              id={searchId}
              type="search"
              className="search__input"
              placeholder={t.t('history.search-placeholder')}
              autoComplete="off"
              spellCheck={false}
              value={query}
              onChange={(e) => setQuery(e.currentTarget.value)}
              onKeyDown={(e) => {
                // Esc in a search with text clears it; only an empty search lets Esc close.
                if (e.key === 'Escape' && query !== '') {
                  e.preventDefault();
                  setQuery('');
                }
              }}
            />
          </div>
          <fieldset className="filters">
            <legend className="visually-hidden">{t.t('history.filter.legend')}</legend>
            {HISTORY_FILTERS.map((f) => {
              const count = all.filter((item) => f.matches(item)).length;
              return (
                <label key={f.id} className="filter" data-filter={f.id}>
                  <input
                    type="radio"
                    name="history-filter"
                    value={f.id}
                    checked={filter.id === f.id}
                    onChange={() => setFilterId(f.id)}
                  />
                  <span>
                    {t.t(f.label)} <span className="filter__count">{t.number(count)}</span>
                  </span>
                </label>
              );
            })}
          </fieldset>
        </div>
      )}

      <div role="status" className="history__status" data-testid="history-status">
        {callNews && (
          <p className="status" data-testid="call-news">
            {callNews}
          </p>
        )}
        {exported && exported.status !== 'cancelled' && (
          <p
            className={exported.status === 'saved' ? 'status status--ok' : 'status status--error'}
            data-testid="export-status"
          >
            {exportMessage(exported, t)}
          </p>
        )}
        {copiedId && <p className="visually-hidden">{t.t('history.number-copied')}</p>}
        {selectedEntry && (
          <p className="visually-hidden" data-testid="selected-news">
            {t.t('history.selected', { caller: spokenText(callerHeadline(selectedEntry, t), 40) })}
          </p>
        )}
        {narrowed && items && (
          <p className="visually-hidden">
            {t.t('history.showing', { shown: shown.length, total: all.length })}
          </p>
        )}
      </div>

      {loadError ? (
        <p className="notice notice--error" role="alert">
          {t.t('history.load-failed')}
        </p>
      ) : items === null ? (
        <p aria-busy="true">{t.t('history.loading')}</p>
      ) : all.length === 0 ? (
        <p className="history__empty">{t.t('history.empty')}</p>
      ) : shown.length === 0 ? (
        <div className="history__empty">
          <p>{noMatch(filter.id, query.trim(), t)}</p>
          <button
            type="button"
            className="button"
            onClick={() => {
              setQuery('');
              setFilterId('all');
            }}
          >
            {t.t('history.show-all')}
          </button>
        </div>
      ) : (
        <ol className="entries" aria-label={t.t('history.list')} ref={listRef}>
          {shown.map((item) => (
            <HistoryRowView
              key={itemId(item)}
              item={item}
              now={now}
              isNew={fresh.has(itemId(item))}
              selected={selected === itemId(item)}
              copied={copiedId === itemId(item)}
              canOpenCrm={canOpenCrm}
              onCopy={copy}
              onOpenCrm={openCrm}
              {...(canDial ? { onCallBack: callBack } : {})}
            />
          ))}
        </ol>
      )}
    </main>
  );
}
