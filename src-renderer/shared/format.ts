/**
 * The renderer's one formatting module: how a number, a called line, a duration, a time and a
 * call's outcome read, the same in the popup and the history. No DOM, no React. Numbers arrive
 * formatted by main (libphonenumber-js, the user's region: `fromDisplay`, `toDisplay`); here they
 * only get their kind ("Ext. 101") and words around them. User-visible words live here or next to
 * the component that shows them, never assembled from caller text.
 */
import type { CallOutcome, CallText } from '../../src-main/ipc/contract.ts';

/** Longest run of digits that is an internal extension (as main's phone.ts decides). */
const MAX_EXTENSION_DIGITS = 6;

/** True for an internal extension: a few digits, no "+". */
export function isExtension(raw: string): boolean {
  const text = raw.trim();
  return /^[0-9]+$/.test(text) && text.length <= MAX_EXTENSION_DIGITS;
}

/**
 * A number as the user reads it: "Ext. 205" for an extension, else main's formatted form
 * ("(415) 555-0123", "+44 20 7946 0958"), else what was received.
 */
export function numberLabel(raw: string, display: string): string {
  const shown = display.trim() || raw.trim();
  if (isExtension(raw) && /^[0-9]+$/.test(shown)) return `Ext. ${shown}`;
  return shown;
}

/** The caller's number, labelled. */
export function callerNumber(call: CallText): string {
  return numberLabel(call.from, call.fromDisplay);
}

/** The caller's name when known (and not blank). */
export function callerName(call: CallText): string | null {
  return call.callerName?.trim() ? call.callerName : null;
}

/** The headline for a call: the caller's name when known, else the number, else "Unknown caller". */
export function callerHeadline(call: CallText): string {
  return callerName(call) ?? (callerNumber(call) || 'Unknown caller');
}

/** The line that rang (what a receptionist answers by): its name when known, and its number. */
export function calledLine(call: CallText): { name: string | null; number: string } {
  return {
    name: call.toName?.trim() ? call.toName : null,
    number: numberLabel(call.to, call.toDisplay),
  };
}

/**
 * A length of time in words, never like a clock time: "0 s", "42 s", "1 min 5 s", "8 min",
 * "1 h 2 min". Negative spans (a wall clock that stepped back) read as 0 s.
 */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (hours > 0) return minutes > 0 ? `${hours} h ${minutes} min` : `${hours} h`;
  if (minutes > 0) return seconds > 0 ? `${minutes} min ${seconds} s` : `${minutes} min`;
  return `${seconds} s`;
}

/** The same length for a screen reader: "1 minute 5 seconds". */
export function describeDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const part = (n: number, one: string) => `${n} ${n === 1 ? one : `${one}s`}`;
  const parts: string[] = [];
  if (hours > 0) parts.push(part(hours, 'hour'));
  if (minutes > 0) parts.push(part(minutes, 'minute'));
  if (hours === 0 && (seconds > 0 || parts.length === 0)) parts.push(part(seconds, 'second'));
  return parts.join(' ');
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

/** A call's outcome in words: one table for the popup, History, the CSV export and the tray. */
export { outcomeLabel } from '../../src-main/ipc/contract.ts';

/**
 * How long it rang, in the words that go after the outcome: "for 7 s" while ringing, "after 8 min"
 * once it stopped; empty when the end is not known (a call an older run left ringing).
 */
export function ringTime(
  call: { outcome: CallOutcome; startedAt: number; endedAt: number | null },
  now: number,
): string {
  if (call.outcome === 'ringing') return `for ${formatDuration(now - call.startedAt)}`;
  if (call.endedAt === null) return '';
  return `after ${formatDuration(call.endedAt - call.startedAt)}`;
}

/** A voicemail's length in the same words as a call's ("42 s", "1 min 5 s"); null when unknown. */
export function voicemailLength(sec: number | null): string | null {
  return sec === null || !Number.isFinite(sec) || sec < 0 ? null : formatDuration(sec * 1000);
}
