/**
 * One call in the popup stack. Everything that came from the caller is rendered through
 * InertText (text nodes only). The card fades while it lingers after the call stopped ringing.
 */
import { useId } from 'react';
import type { CallCard } from '../../src-main/ipc/contract.ts';
import { InertText, spokenText } from '../shared/InertText.tsx';
import { describeElapsed, formatElapsed, lingerLabel } from '../shared/format.ts';

export interface CallCardViewProps {
  call: CallCard;
  now: number;
  copied: boolean;
  onDismiss: (callId: string) => void;
  onOpenCrm: (callId: string) => void;
  onCopy: (callId: string) => void;
}

/** The headline for a call: the caller's name when known, else the number as formatted by main. */
export function callerHeadline(call: CallCard): string {
  const name = call.callerName?.trim();
  if (name) return call.callerName as string;
  return call.fromDisplay || call.from || 'Unknown caller';
}

export function CallCardView({
  call,
  now,
  copied,
  onDismiss,
  onOpenCrm,
  onCopy,
}: CallCardViewProps) {
  const ringing = call.state === 'ringing';
  const headline = callerHeadline(call);
  const hasName = Boolean(call.callerName?.trim());
  const spoken = spokenText(headline);
  // Ids from useId, not from the call id: a call id is the service's string and may hold spaces,
  // which would split an aria-labelledby list.
  const id = useId();
  const kickerId = `${id}-state`;
  const headingId = `${id}-caller`;
  const detailId = `${id}-detail`;
  return (
    <li
      className={ringing ? 'card' : 'card card--lingering'}
      data-call-id={call.callId}
      data-state={ringing ? 'ringing' : 'lingering'}
    >
      <article
        className="card__body"
        tabIndex={0}
        aria-labelledby={`${kickerId} ${headingId}`}
        aria-describedby={detailId}
      >
        <div className="card__top">
          <div className="card__titles">
            <p className="card__kicker" id={kickerId}>
              {ringing ? 'Incoming call' : lingerLabel(call.state)}
            </p>
            <h2 className="card__caller" id={headingId}>
              <InertText text={headline} fit="clamp" testId="caller-headline" />
            </h2>
          </div>
          <button
            type="button"
            className="card__dismiss"
            aria-label={`Dismiss call from ${spoken}`}
            title="Dismiss (Esc)"
            onClick={() => onDismiss(call.callId)}
          >
            <span aria-hidden="true">×</span>
          </button>
        </div>
        <div className="card__detail" id={detailId}>
          {hasName && (
            <p className="card__number">
              <InertText text={call.fromDisplay || call.from} fit="clamp" testId="caller-number" />
            </p>
          )}
          <p className="card__meta">
            <span className="card__to">
              <span className="card__label">Called</span>{' '}
              <InertText text={call.toDisplay || call.to} fit="clamp" testId="called" />
            </span>
            <span className="card__time">
              <span className="visually-hidden">{ringing ? 'ringing for ' : 'rang for '}</span>
              <span aria-hidden="true">{formatElapsed(call.startedAt, now)}</span>
              <span className="visually-hidden">{describeElapsed(call.startedAt, now)}</span>
            </span>
          </p>
        </div>
        <div className="card__actions">
          {call.canOpenCrm && (
            <button
              type="button"
              className="button button--primary"
              onClick={() => onOpenCrm(call.callId)}
              title="Open in CRM (Enter)"
            >
              Open in CRM
            </button>
          )}
          <button type="button" className="button" onClick={() => onCopy(call.callId)}>
            {copied ? 'Copied' : 'Copy number'}
          </button>
        </div>
      </article>
    </li>
  );
}
