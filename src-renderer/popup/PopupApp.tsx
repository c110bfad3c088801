/**
 * The popup: a stack of cards, one per ringing (or lingering) call, newest on top. The window is
 * shown inactive by main and this page never calls focus() on its own: keys work once the user
 * has clicked into it. Esc dismisses the focused call (else the top one); Enter opens the CRM link
 * for it where its card offers one; N puts the cursor in a call's note (NoteField.tsx), the only
 * way besides a click that the note field gets focus. New rings are announced through an assertive live region.
 * While a trunk is not registered, a warning stands above the calls ("Calls from outside may not
 * reach you"), and the phone system's do-not-disturb is said there too.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type {
  CallNoteInput,
  CallAction,
  CallActionView,
  ConsultationView,
  PopupCard,
  RemoteAnswerView,
  ScreenpopApi,
  StatusView,
} from '../../src-main/ipc/contract.ts';
import type { PhoneAction, TransferChoice } from './CallCardView.tsx';
import { InertText } from '../shared/InertText.tsx';
import { spokenText } from '../shared/InertText.tsx';
import { calledLine, callerHeadline } from '../shared/format.ts';
import { useDocumentTitle, useT } from '../shared/i18n.tsx';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { cardActions } from './card-actions.ts';
import { cardId, PopupCardView } from './card-views.tsx';
import { useNow } from './use-now.ts';
import { useCopyFeedback, useLiveValue } from '../shared/live.ts';

/** Newest ring first; ringing calls above lingering ones so the live call is always on top. */
export function stackOrder(calls: readonly PopupCard[]): PopupCard[] {
  return [...calls].sort((a, b) => {
    const ringA = a.outcome === 'ringing' ? 0 : 1;
    const ringB = b.outcome === 'ringing' ? 0 : 1;
    if (ringA !== ringB) return ringA - ringB;
    return b.startedAt - a.startedAt;
  });
}

export function announcementFor(call: PopupCard, t: Translator): string {
  const line = calledLine(call, t);
  const to = line.name ?? line.number;
  const caller = spokenText(callerHeadline(call, t));
  return to
    ? t.t('popup.announce-to', { caller, line: spokenText(to, 40) })
    : t.t('popup.announce', { caller });
}

/** Whom a card consults, as Transfer's field named them: "Bob Stone (204)", or the number. */
export function consultingWho(c: ConsultationView): string {
  return c.targetName ? `${c.targetName} (${c.target})` : c.target;
}

export function PopupApp({ api }: { api: ScreenpopApi }) {
  const t = useT();
  useDocumentTitle(t.t('popup.heading'));
  // The announcement is made in the language of the moment a call arrives.
  const tRef = useRef(t);
  tRef.current = t;
  const [calls, setCalls] = useState<PopupCard[]>([]);
  const [dismissed, setDismissed] = useState<ReadonlySet<string>>(new Set());
  const [announcement, setAnnouncement] = useState('');
  const { copiedId, copy } = useCopyFeedback(api.copyNumber);
  const [status, setStatus] = useState<StatusView | null>(null);
  // What the phone system offers (issue 38): asked again whenever the status changes.
  const [offered, setOffered] = useState<readonly CallAction[]>([]);
  const [callNews, setCallNews] = useState('');
  /**
   * Calls with an attended transfer under way: main keeps them (a reloaded page asks for them and
   * is sent each change), so Complete and Cancel stay on the card until main says it is over.
   */
  const [consultations, setConsultations] = useState<readonly ConsultationView[]>([]);
  // Answer and Decline per ringing call (remote answer): asked while it rings, each second.
  const [remote, setRemote] = useState<Readonly<Record<string, RemoteAnswerView>>>({});
  const announced = useRef(new Set<string>());
  const listRef = useRef<HTMLOListElement>(null);
  const rootRef = useRef<HTMLElement>(null);

  const visible = stackOrder(calls.filter((c) => !dismissed.has(cardId(c))));
  const now = useNow(visible.length > 0);
  const ringingIds = visible
    .filter((c) => c.outcome === 'ringing')
    .map(cardId)
    .join('\n');
  const remoteOffered = offered.includes('answer');
  // The match can change at any moment (a second call rings, the phone's report arrives), so it
  // is asked again each second while a call rings; main decides, the page only shows.
  const tick = Math.floor(now / 1000);
  useEffect(() => {
    if (!remoteOffered || ringingIds === '') return;
    let live = true;
    const ids = ringingIds.split('\n');
    void Promise.all(
      ids.map((id) =>
        api
          .remoteAnswer(id)
          .then((r): [string, RemoteAnswerView] => [id, r])
          .catch((): [string, RemoteAnswerView] => [id, { offered: false }]),
      ),
    ).then((answers) => live && setRemote(Object.fromEntries(answers)));
    return () => {
      live = false;
    };
  }, [api, remoteOffered, ringingIds, tick]);

  const receive = useCallback((next: PopupCard[]) => {
    setCalls(next);
    // A dismissed id that main no longer sends can be forgotten.
    setDismissed((prev) => {
      const ids = new Set(next.map(cardId));
      const kept = [...prev].filter((id) => ids.has(id));
      return kept.length === prev.size ? prev : new Set(kept);
    });
    const fresh = stackOrder(next).find(
      (c) => c.outcome === 'ringing' && !announced.current.has(cardId(c)),
    );
    // Remember the calls still shown, so each ring is announced once; forget the rest.
    announced.current = new Set(next.map(cardId));
    if (fresh) setAnnouncement(announcementFor(fresh, tRef.current));
  }, []);

  useLiveValue(api.onCalls, api.popupReady, { push: receive });
  useLiveValue(api.onStatus, api.getStatus, { push: setStatus });
  useLiveValue(api.onConsultations, api.consultations, { push: setConsultations });
  const consulting = new Map(consultations.map((c) => [c.callId, consultingWho(c)]));
  useEffect(() => {
    let live = true;
    api
      .callActionsOffered()
      .then((next) => live && setOffered(next))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [api, status]);

  const callAction = useCallback(
    (callId: string, action: PhoneAction, transfer?: TransferChoice) => {
      const card = calls.find((c) => cardId(c) === callId);
      let asked: Promise<CallActionView>;
      switch (action) {
        case 'call-back':
          asked = api.callBack(callId);
          break;
        case 'transfer':
          asked = api.transferCall(callId, transfer?.to ?? '', transfer?.mode ?? 'blind');
          break;
        case 'complete-transfer':
          asked = api.completeTransfer(callId);
          break;
        case 'cancel-transfer':
          asked = api.cancelTransfer(callId);
          break;
        case 'hangup':
          asked = api.hangUp(callId);
          break;
        case 'answer':
          asked = api.answerCall(callId);
          break;
        case 'decline':
          asked = api.declineCall(callId);
          break;
      }
      asked
        .then((r) => {
          const t = tRef.current;
          // Whether the card consults someone is main's to say (calls:consultations-changed).
          if (!r.ok) setCallNews(r.message);
          else if (action === 'call-back' && card)
            setCallNews(t.t('popup.calling-back', { number: card.from }));
          else if (action === 'transfer' && transfer?.mode === 'attended')
            setCallNews(t.t('popup.consulting', { target: transfer.shown }));
          else if (action === 'transfer' || action === 'complete-transfer')
            setCallNews(t.t('popup.transferred'));
          else if (action === 'cancel-transfer') setCallNews(t.t('popup.transfer-aborted'));
          else setCallNews('');
        })
        .catch(() => undefined);
    },
    [api, calls],
  );

  const findColleagues = useCallback((query: string) => api.findColleagues(query), [api]);

  // Tell main how tall the stack is, so the window fits it.
  useEffect(() => {
    const root = rootRef.current;
    if (!root || typeof ResizeObserver === 'undefined') return;
    let last = -1;
    const observer = new ResizeObserver(() => {
      const height = Math.ceil(root.getBoundingClientRect().height);
      if (height !== last) {
        last = height;
        api.reportPopupSize(height).catch(() => undefined);
      }
    });
    observer.observe(root);
    return () => observer.disconnect();
  }, [api]);

  const dismiss = useCallback(
    (callId: string) => {
      // If the user was working in this card, keep their place by moving to the next card.
      const list = listRef.current;
      const active = document.activeElement;
      const cards = list ? [...list.querySelectorAll<HTMLElement>('li[data-call-id]')] : [];
      const card = cards.find((li) => li.dataset.callId === callId);
      if (card && active && card.contains(active)) {
        const sibling = (card.nextElementSibling ??
          card.previousElementSibling) as HTMLElement | null;
        sibling?.querySelector<HTMLElement>('.card__body')?.focus();
      }
      setDismissed((prev) => new Set(prev).add(callId));
      api.dismiss(callId).catch(() => undefined);
    },
    [api],
  );

  const saveNote = useCallback(
    (callId: string, note: CallNoteInput) => {
      api.saveNote(callId, note).catch(() => undefined);
    },
    [api],
  );

  const openCrm = useCallback(
    (callId: string) => {
      api.openCrm(callId).catch(() => undefined);
    },
    [api],
  );

  // Esc / Enter act on the card that holds focus, else on the top card.
  useEffect(() => {
    function onKey(event: KeyboardEvent): void {
      if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
      const target = event.target instanceof Element ? event.target : null;
      // N puts the cursor in the note of the focused card, else of the top card that has one.
      if ((event.key === 'n' || event.key === 'N') && !target?.closest('input, select, textarea')) {
        const list = listRef.current;
        const focused = target?.closest<HTMLElement>('li[data-call-id]');
        const field =
          focused?.querySelector<HTMLTextAreaElement>('textarea[data-note-for]') ??
          list?.querySelector<HTMLTextAreaElement>('textarea[data-note-for]');
        if (field) {
          event.preventDefault();
          field.focus();
        }
        return;
      }
      if (event.key !== 'Escape' && event.key !== 'Enter') return;
      // Enter on a button activates that button, nothing more.
      if (event.key === 'Enter' && target?.closest('button, a, input, select, textarea')) return;
      const focused = target?.closest<HTMLElement>('li[data-call-id]')?.dataset.callId;
      const card = visible.find((c) => cardId(c) === focused) ?? visible[0];
      if (!card) return;
      event.preventDefault();
      if (event.key === 'Escape') dismiss(cardId(card));
      else if (cardActions(card).includes('crm')) openCrm(cardId(card));
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [visible, dismiss, openCrm]);

  return (
    <main className="popup" ref={rootRef}>
      <h1 className="visually-hidden">{t.t('popup.heading')}</h1>
      <div
        className="visually-hidden"
        role="alert"
        aria-live="assertive"
        aria-atomic="true"
        data-testid="announcer"
      >
        {announcement}
      </div>
      <div className="visually-hidden" role="status" aria-live="polite">
        {copiedId ? t.t('popup.number-copied') : ''}
      </div>
      {callNews && (
        <p className="banner" role="status" data-testid="call-news">
          <InertText text={callNews} fit="clamp" />
        </p>
      )}
      {status?.trunkWarning && (
        <p className="banner banner--warning" role="status" data-testid="trunk-warning">
          <span aria-hidden="true">⚠ </span>
          <InertText text={status.trunkWarning.message} fit="clamp" />
        </p>
      )}
      {status?.presence?.doNotDisturb && (
        <p className="banner" data-testid="presence-dnd">
          {t.t('popup.phone-dnd')}
        </p>
      )}
      {visible.length > 0 && (
        <ol
          className="stack"
          ref={listRef}
          aria-label={t.t('popup.stack', { count: visible.length })}
        >
          {visible.map((card) => (
            <PopupCardView
              key={cardId(card)}
              card={card}
              now={now}
              copied={copiedId === cardId(card)}
              onDismiss={dismiss}
              onOpenCrm={openCrm}
              onCopy={copy}
              onSaveNote={saveNote}
              offered={offered}
              remote={remote[cardId(card)]}
              onCallAction={callAction}
              findColleagues={findColleagues}
              {...(consulting.has(cardId(card))
                ? { consulting: consulting.get(cardId(card))! }
                : {})}
            />
          ))}
        </ol>
      )}
    </main>
  );
}
