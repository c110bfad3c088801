/**
 * The call history: newest first, with when it rang, who called, what they called and how it
 * ended. Missed calls are highlighted with words as well as colour. Opening (or returning to) the
 * window marks them seen; the "New" marks stay for this visit so the user can still tell which
 * ones they had missed.
 */
import { useEffect, useState } from 'react';
import type { HistoryEntry, ScreenpopApi } from '../../src-main/ipc/contract.ts';
import { InertText } from '../shared/InertText.tsx';
import { formatCallTime, formatElapsed, outcomeLabel } from '../shared/format.ts';

function newestFirst(entries: readonly HistoryEntry[]): HistoryEntry[] {
  return [...entries].sort((a, b) => b.startedAt - a.startedAt);
}

export function HistoryApp({ api }: { api: ScreenpopApi }) {
  const [entries, setEntries] = useState<HistoryEntry[] | null>(null);
  const [loadError, setLoadError] = useState(false);
  // Missed calls the user had not seen when they arrived here; they keep their "New" mark for
  // this visit even after main records them as seen.
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());

  useEffect(() => {
    let live = true;
    /** Shows `next`; returns true when it holds missed calls not yet seen. */
    const take = (next: HistoryEntry[]): boolean => {
      setEntries(next);
      const unseen = next.filter((e) => !e.seen && e.outcome === 'missed').map((e) => e.callId);
      if (unseen.length > 0) setFresh((prev) => new Set([...prev, ...unseen]));
      return unseen.length > 0;
    };
    const markSeen = (): void => void api.markHistorySeen().catch(() => undefined);
    const off = api.onHistory((next) => {
      // Missed while the window is in front of the user: that counts as seen.
      if (live && take(next) && document.hasFocus()) markSeen();
    });
    api.listHistory().then(
      (initial) => {
        if (!live) return;
        take(initial);
        // Opening the history is what "seen" means, whether or not the window has focus yet.
        markSeen();
      },
      () => live && setLoadError(true),
    );
    window.addEventListener('focus', markSeen);
    return () => {
      live = false;
      off();
      window.removeEventListener('focus', markSeen);
    };
  }, [api]);

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
  const sorted = entries ? newestFirst(entries) : [];
  const missed = sorted.filter((e) => e.outcome === 'missed').length;

  return (
    <main className="history">
      <header className="history__header">
        <h1>Call history</h1>
        {entries && entries.length > 0 && (
          <p className="history__summary">
            {sorted.length} {sorted.length === 1 ? 'call' : 'calls'}
            {missed > 0 && `, ${missed} missed`}
          </p>
        )}
      </header>
      {loadError ? (
        <p className="notice notice--error" role="alert">
          The history could not be loaded.
        </p>
      ) : entries === null ? (
        <p aria-busy="true">Loading…</p>
      ) : sorted.length === 0 ? (
        <p className="history__empty">
          No calls yet. Calls that ring your extension will be listed here.
        </p>
      ) : (
        <ol className="entries" aria-label="Calls, newest first">
          {sorted.map((entry) => {
            const isNew = fresh.has(entry.callId);
            const name = entry.callerName?.trim() ? entry.callerName : null;
            return (
              <li
                key={entry.callId}
                className={`entry entry--${entry.outcome}`}
                data-call-id={entry.callId}
                data-outcome={entry.outcome}
              >
                <time className="entry__time" dateTime={new Date(entry.startedAt).toISOString()}>
                  {formatCallTime(entry.startedAt, now)}
                </time>
                <div className="entry__who">
                  <InertText
                    text={name ?? (entry.fromDisplay || entry.from)}
                    className="entry__caller"
                    testId="history-caller"
                  />
                  {name && (
                    <InertText text={entry.fromDisplay || entry.from} className="entry__number" />
                  )}
                  <span className="entry__to">
                    <span>to</span> <InertText text={entry.to} />
                  </span>
                </div>
                <div className="entry__outcome">
                  <span className={`outcome outcome--${entry.outcome}`}>
                    {outcomeLabel(entry.outcome)}
                  </span>
                  {isNew && <span className="new-mark">New</span>}
                  {entry.endedAt !== null && entry.outcome !== 'missed' && (
                    <span className="entry__duration">
                      {formatElapsed(entry.startedAt, entry.endedAt)}
                    </span>
                  )}
                </div>
              </li>
            );
          })}
        </ol>
      )}
    </main>
  );
}
