/**
 * One call in the popup stack. Everything that came from the caller is rendered through InertText
 * (text nodes only). Two looks:
 *
 * - Ringing: a coloured card with a moving signal (still under prefers-reduced-motion), the line
 *   that rang right under the status (a receptionist answers by it: "Acme Sales, good morning"),
 *   the queue or ring group the call came through when the PBX names one ("Queue Sales"), then
 *   who is calling, then the actions.
 * - Done (answered, answered by a colleague, missed, ended; it lingers a few seconds): grey, flat
 *   and two lines shorter, its outcome in words and an icon, and only the action that still helps.
 */
import { useId, useState } from 'react';
import type {
  CallAction,
  CallCard,
  CallNoteInput,
  Colleague,
  TransferMode,
  RemoteAnswerView,
} from '../../src-main/ipc/contract.ts';
import { NoteField } from './NoteField.tsx';
import { TransferForm } from './TransferForm.tsx';
import { InertText, spokenText } from '../shared/InertText.tsx';
import {
  calledLine,
  callerCompany,
  callerHeadline,
  callerName,
  callerNumber,
  numberKindWords,
  outcomeWords,
  ringTime,
} from '../shared/format.ts';
import { useT } from '../shared/i18n.tsx';
import { cardActions, crmLabel, type CardAction } from './card-actions.ts';

export interface CallCardViewProps {
  card: CallCard;
  now: number;
  copied: boolean;
  onDismiss: (id: string) => void;
  onOpenCrm: (id: string) => void;
  onCopy: (id: string) => void;
  /** The note card's values for main (popup:save-note); absent: no note field is shown. */
  onSaveNote?: (id: string, note: CallNoteInput) => void;
  /** What the phone system offers (issue 38); nothing where it offers no call actions. */
  offered?: readonly CallAction[];
  /**
   * Call back, Answer, Decline, Hang up, Complete and Cancel transfer, and Transfer with where to
   * (`transfer`: the number, blind or attended, and how the card names the target meanwhile).
   */
  onCallAction?: (id: string, action: PhoneAction, transfer?: TransferChoice) => void;
  /** Transfer's colleague picker (main's directory); absent: the field takes a number only. */
  findColleagues?: (query: string) => Promise<Colleague[]>;
  /** Whom the user is consulting in an attended transfer of this call; absent: none under way. */
  consulting?: string;
  /** Answer and Decline on this ringing call: shown or not, and why not (main asks uaCSTA). */
  remote?: RemoteAnswerView;
}

export interface TransferChoice {
  to: string;
  mode: TransferMode;
  shown: string;
}

/** The card's actions that act on the call (card-actions.ts's, less the CRM link and Copy). */
export type PhoneAction = Exclude<CardAction, 'crm' | 'copy'>;

const PHONE_WORDS = {
  'call-back': 'popup.call-back',
  answer: 'popup.answer',
  decline: 'popup.decline',
  transfer: 'popup.transfer',
  hangup: 'popup.hang-up',
  'complete-transfer': 'popup.transfer-complete',
  'cancel-transfer': 'popup.transfer-abort',
} as const;

const OUTCOME_ICON: Record<CallCard['outcome'], string> = {
  ringing: '',
  answered: '✓',
  'answered-elsewhere': '↪',
  missed: '✕',
  voicemail: '✉',
  declined: '⊘',
  ended: '–',
};

export function CallCardView({
  card,
  now,
  copied,
  onDismiss,
  onOpenCrm,
  onCopy,
  onSaveNote,
  offered = [],
  remote,
  onCallAction,
  findColleagues,
  consulting,
}: CallCardViewProps) {
  const t = useT();
  const [transferring, setTransferring] = useState(false);
  const ringing = card.outcome === 'ringing';
  const headline = callerHeadline(card, t);
  const name = callerName(card);
  const number = callerNumber(card, t);
  const company = name ? callerCompany(card) : null;
  const kind = name ? numberKindWords(card.numberKind, t) : null;
  const line = calledLine(card, t);
  const spoken = spokenText(headline);
  const actions = cardActions(card, offered, { consulting: consulting !== undefined, remote });
  // Why Answer and Decline are not on this ringing call, where remote answer is set up.
  const remoteWhy =
    ringing && offered.includes('answer') && remote && !remote.offered ? remote.why : undefined;
  const crm = crmLabel(card, t);
  // Ids from useId, not from the call id: a call id is the service's string and may hold spaces,
  // which would split an aria-labelledby list.
  const id = useId();
  const kickerId = `${id}-state`;
  const headingId = `${id}-caller`;
  const detailId = `${id}-detail`;
  const transferId = `${id}-transfer`;
  const closeTransfer = (): void => setTransferring(false);
  const classes = ['card', ringing ? 'card--ringing' : 'card--done', `card--${card.outcome}`];
  return (
    <li
      className={classes.join(' ')}
      data-call-id={card.callId}
      data-state={ringing ? 'ringing' : 'lingering'}
      data-outcome={card.outcome}
    >
      <article
        className="card__body"
        tabIndex={0}
        aria-labelledby={`${kickerId} ${headingId}`}
        aria-describedby={detailId}
      >
        <div className="card__top">
          <p className="card__kicker" id={kickerId}>
            {ringing ? (
              <span className="card__signal" aria-hidden="true" />
            ) : (
              <span className="card__icon" aria-hidden="true">
                {OUTCOME_ICON[card.outcome]}
              </span>
            )}
            <span className="card__status">{outcomeWords(card.outcome, t)}</span>{' '}
            <span className="card__elapsed" data-testid="elapsed">
              <span aria-hidden="true">{ringTime(card, now, t)}</span>
              <span className="visually-hidden">{ringTime(card, now, t, 'long')}</span>
            </span>
          </p>
          <button
            type="button"
            className="card__dismiss"
            aria-label={t.t('popup.dismiss-call', { caller: spoken })}
            title={t.t('popup.dismiss-key')}
            onClick={() => onDismiss(card.callId)}
          >
            <span aria-hidden="true">×</span>
          </button>
        </div>
        <div className="card__detail" id={detailId}>
          <p className="card__line" data-testid="called-line">
            <span className="card__label">{t.t('popup.called')}</span>
            <span className="card__line-what">
              {line.name && (
                <InertText text={line.name} className="card__line-name" testId="called-name" />
              )}
              <InertText text={line.number} className="number" testId="called" />
            </span>
          </p>
          {card.group && (
            <p className="card__line card__group" data-testid="call-group">
              <span className="card__label">
                {t.t(card.group.kind === 'queue' ? 'popup.via-queue' : 'popup.via-ring-group')}
              </span>
              <InertText
                text={card.group.name}
                className="card__line-name"
                testId="call-group-name"
              />
            </p>
          )}
          <h2 className="card__caller" id={headingId}>
            <InertText
              text={headline}
              fit={name ? 'clamp' : 'line'}
              className={name ? undefined : 'number'}
              testId="caller-headline"
            />
          </h2>
          {card.transferredBy && (
            <p className="card__line card__transfer" data-testid="transferred-by">
              <span className="card__label">{t.t('popup.transferred-by')}</span>
              <span className="card__line-what">
                <InertText text={card.transferredBy} testId="transferred-by-name" />
              </span>
            </p>
          )}
          {consulting !== undefined && card.outcome === 'answered' && (
            <p className="card__consulting" data-testid="consulting">
              <InertText text={t.t('popup.consulting', { target: consulting })} fit="clamp" />
            </p>
          )}
          {card.callerUnseen && (
            <p className="card__lookup" data-testid="caller-unseen">
              {t.t('popup.caller-unseen')}
            </p>
          )}
          {company && (
            <p className="card__company">
              <InertText text={company} testId="caller-company" />
            </p>
          )}
          {ringing && card.crmLookup === 'pending' && (
            <p className="card__lookup" data-testid="crm-looking-up">
              {t.t('popup.crm-looking-up')}
            </p>
          )}
          {name && number && (
            <p className="card__number">
              <InertText text={number} className="number" testId="caller-number" />
              {kind && (
                <span className="card__number-kind" data-testid="number-kind">
                  {kind}
                </span>
              )}
            </p>
          )}
        </div>
        {remoteWhy && (
          <p
            className="card__lookup card__remote-why"
            data-testid="remote-answer-why"
            title={remoteWhy}
          >
            <InertText text={remoteWhy} fit="clamp" />
          </p>
        )}
        {actions.length > 0 && (
          <div className="card__actions">
            {actions.map((action) => {
              if (action === 'crm')
                return (
                  <button
                    key={action}
                    type="button"
                    className={ringing ? 'button button--primary' : 'button button--quiet'}
                    onClick={() => onOpenCrm(card.callId)}
                    title={t.t('popup.action-key', { action: crm })}
                  >
                    {crm}
                  </button>
                );
              if (action === 'copy')
                return (
                  <button
                    key={action}
                    type="button"
                    className={ringing ? 'button' : 'button button--quiet'}
                    onClick={() => onCopy(card.callId)}
                  >
                    {copied ? t.t('popup.copied') : t.t('popup.copy-number')}
                  </button>
                );
              return (
                <button
                  key={action}
                  type="button"
                  className={`button button--call button--${action}${
                    action === 'complete-transfer' ? ' button--primary' : ''
                  }`}
                  data-action={action}
                  aria-expanded={action === 'transfer' ? transferring : undefined}
                  aria-controls={action === 'transfer' && transferring ? transferId : undefined}
                  onClick={() =>
                    action === 'transfer'
                      ? setTransferring((open) => !open)
                      : onCallAction?.(card.callId, action)
                  }
                >
                  {t.t(PHONE_WORDS[action])}
                </button>
              );
            })}
          </div>
        )}
        {transferring && actions.includes('transfer') && (
          <TransferForm
            id={transferId}
            {...(findColleagues ? { findColleagues } : {})}
            onTransfer={(to, mode, shown) => {
              onCallAction?.(card.callId, 'transfer', { to, mode, shown });
              closeTransfer();
            }}
            onClose={closeTransfer}
          />
        )}
        {card.note && onSaveNote && (
          <NoteField callId={card.callId} note={card.note} now={now} onSave={onSaveNote} />
        )}
      </article>
    </li>
  );
}
