/**
 * The renderer's one formatting module: how a number, a called line, a duration, a time and a
 * call's outcome read, the same in the popup and the history. No DOM, no React. Numbers arrive
 * formatted by main (libphonenumber-js, the user's region: `fromDisplay`, `toDisplay`); here they
 * only get their kind ("Ext. 101") and words around them. Every word comes from the catalogue
 * through the window's Translator (src-shared/i18n), never assembled from caller text.
 */
import type { CallOutcome, CallText, NumberKind } from '../../src-main/ipc/contract.ts';
import { outcomeMessageId } from '../../src-shared/ui/call-outcome.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import { isExtensionNumber } from '../../src-shared/rules/phone-number-rules.ts';

/** True for an internal extension (src-shared/rules/phone-number-rules.ts), spaces around allowed. */
export function isExtension(raw: string): boolean {
  return isExtensionNumber(raw.trim());
}

/**
 * A number as the user reads it: "Ext. 205" for an extension, else main's formatted form
 * ("(415) 555-0123", "+44 20 7946 0958"), else what was received. Numbers keep their own format in
 * every language.
 */
export function numberLabel(raw: string, display: string, t: Translator): string {
  const shown = display.trim() || raw.trim();
  if (isExtension(raw) && /^[0-9]+$/.test(shown)) return t.t('common.extension', { number: shown });
  return shown;
}

/** The caller's number, labelled. */
export function callerNumber(call: CallText, t: Translator): string {
  return numberLabel(call.from, call.fromDisplay, t);
}

/** The caller's name when known (and not blank). */
export function callerName(call: CallText): string | null {
  return call.callerName?.trim() ? call.callerName : null;
}

/**
 * What the caller's number is to them ("mobile", "work"), from the contacts file; null when not
 * known or when it would say nothing ("other").
 */
export function numberKindWords(kind: NumberKind | null | undefined, t: Translator): string | null {
  switch (kind) {
    case 'mobile':
      return t.t('common.number-kind.mobile');
    case 'work':
      return t.t('common.number-kind.work');
    case 'home':
      return t.t('common.number-kind.home');
    case 'main':
      return t.t('common.number-kind.main');
    default:
      return null;
  }
}

/** The caller's company when known (and not blank). */
export function callerCompany(call: { callerCompany?: string | null }): string | null {
  return call.callerCompany?.trim() ? call.callerCompany : null;
}

/** The headline for a call: the caller's name when known, else the number, else "Unknown caller". */
export function callerHeadline(call: CallText, t: Translator): string {
  return callerName(call) ?? (callerNumber(call, t) || t.t('common.unknown-caller'));
}

/** The line that rang (what a receptionist answers by): its name when known, and its number. */
export function calledLine(call: CallText, t: Translator): { name: string | null; number: string } {
  return {
    name: call.toName?.trim() ? call.toName : null,
    number: numberLabel(call.to, call.toDisplay, t),
  };
}

/** Time of day for today's calls, date and time for older ones, in the window's language. */
export function formatCallTime(at: number, now: number, t: Translator): string {
  const when = new Date(at);
  const today = new Date(now);
  const sameDay =
    when.getFullYear() === today.getFullYear() &&
    when.getMonth() === today.getMonth() &&
    when.getDate() === today.getDate();
  return sameDay
    ? t.time(at)
    : t.dateTime(at, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
}

/** A call's outcome in words (common.outcome.*), the same as main's tray and CSV. */
export function outcomeWords(outcome: CallOutcome, t: Translator): string {
  return t.t(outcomeMessageId(outcome));
}

/**
 * How long it rang, in the words that go after the outcome: "for 7 sec" while ringing, "after
 * 8 min" once it stopped (`style` 'long' for screen readers: "for 7 seconds"); empty when the end
 * is not known (a call an older run left ringing).
 */
export function ringTime(
  call: { outcome: CallOutcome; startedAt: number; endedAt: number | null },
  now: number,
  t: Translator,
  style: 'short' | 'long' = 'short',
): string {
  if (call.outcome === 'ringing')
    return t.t('common.ring.for', { duration: t.duration(now - call.startedAt, style) });
  if (call.endedAt === null) return '';
  return t.t('common.ring.after', { duration: t.duration(call.endedAt - call.startedAt, style) });
}

/**
 * The ring time with the talk time after it, where the phone system's record gave one: "after
 * 8 sec, talked 2 min"; the ring time alone otherwise (a call not answered has no talk time).
 */
export function talkTime(
  call: { talkSec?: number },
  ring: string,
  t: Translator,
  style: 'short' | 'long' = 'short',
): string {
  const sec = call.talkSec;
  if (sec === undefined || !Number.isFinite(sec) || sec <= 0 || !ring) return ring;
  return t.t('common.ring.talked', { ring, talk: t.duration(sec * 1000, style) });
}

/** A voicemail's length in the same words as a call's ("42 sec"); null when unknown. */
export function voicemailLength(
  sec: number | null,
  t: Translator,
  style: 'short' | 'long' = 'short',
): string | null {
  return sec === null || !Number.isFinite(sec) || sec < 0 ? null : t.duration(sec * 1000, style);
}
