/** Plain formatting helpers for times and call labels; no DOM, no React. */
import type { CallOutcome } from '../../src-main/ipc/contract.ts';

/** "0:07", "12:30", "1:02:03" since `startedAt`; never negative (a wall clock may step back). */
export function formatElapsed(startedAt: number, now: number): string {
  const total = Math.max(0, Math.floor((now - startedAt) / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const ss = String(seconds).padStart(2, '0');
  if (hours > 0) return `${hours}:${String(minutes).padStart(2, '0')}:${ss}`;
  return `${minutes}:${ss}`;
}

/** Spoken form of an elapsed time, for screen readers. */
export function describeElapsed(startedAt: number, now: number): string {
  const total = Math.max(0, Math.floor((now - startedAt) / 1000));
  if (total < 60) return `${total} ${total === 1 ? 'second' : 'seconds'}`;
  const minutes = Math.floor(total / 60);
  return `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`;
}

/** Time of day for today's calls, date and time for older ones, in the user's locale. */
export function formatCallTime(at: number, now: number, locale?: string): string {
  const when = new Date(at);
  const today = new Date(now);
  const sameDay =
    when.getFullYear() === today.getFullYear() &&
    when.getMonth() === today.getMonth() &&
    when.getDate() === today.getDate();
  const options: Intl.DateTimeFormatOptions = sameDay
    ? { hour: 'numeric', minute: '2-digit' }
    : { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' };
  return new Intl.DateTimeFormat(locale, options).format(when);
}

/** Words for a call's state while its card lingers; unknown states stay generic (untrusted). */
export function lingerLabel(state: string): string {
  switch (state) {
    case 'ringing':
      return 'Ringing';
    case 'answered':
      return 'Answered';
    case 'hold':
      return 'On hold';
    case 'ended':
      return 'Ended';
    case 'missed':
      return 'Missed';
    default:
      return 'No longer ringing';
  }
}

export function outcomeLabel(outcome: CallOutcome): string {
  switch (outcome) {
    case 'ringing':
      return 'Still ringing';
    case 'answered':
      return 'Answered';
    case 'missed':
      return 'Missed';
    case 'ended':
      return 'Ended';
    default:
      return 'Ended';
  }
}
