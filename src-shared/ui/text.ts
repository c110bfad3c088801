/**
 * Caller ID is chosen by the caller: it can hold control characters, bidirectional overrides that
 * make "+1 555" read as something else, lone UTF-16 surrogates that make encodeURIComponent throw,
 * or kilobytes of junk. These helpers make such text safe to show and to encode; they never build
 * markup (the renderer shows text with textContent only).
 */

/** Longest caller text we keep; real caller names and numbers are far shorter. */
export const MAX_CALLER_TEXT = 256;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// C0/C1 controls, DEL, the line and paragraph separators, bidi embeddings/overrides/isolates,
// LRM/RLM/ALM, zero-width and BOM.
const UNSAFE_FOR_DISPLAY =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001F\u007F-\u009F\u061C\u200B-\u200F\u2028-\u202E\u2060-\u2069\uFEFF]/g;

/** Replaces lone surrogates with U+FFFD so the string is well-formed UTF-16 (encodable). */
export function toWellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

/** Cuts `text` to at most `max` code points (never splitting a surrogate pair). */
export function truncateCodePoints(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('');
}

/** Untrusted caller text made fit for display: well-formed, no controls or bidi tricks, bounded. */
export function displayText(value: unknown, max = MAX_CALLER_TEXT): string {
  if (typeof value !== 'string') return '';
  return truncateCodePoints(toWellFormed(value).replace(UNSAFE_FOR_DISPLAY, ''), max).trim();
}

/** Untrusted caller text kept close to what was received, but well-formed and bounded. */
export function boundedText(value: unknown, max = MAX_CALLER_TEXT): string {
  if (typeof value !== 'string') return '';
  return truncateCodePoints(toWellFormed(value), max);
}

/** Longest SMS preview shown in a notification, a card or a history row. */
export const MAX_PREVIEW_TEXT = 160;

/**
 * Untrusted message text as one inert line: line breaks and tabs become spaces (so words do not
 * run together), then displayText's rules, then cut to `max` code points with an ellipsis.
 */
export function previewText(value: unknown, max = MAX_PREVIEW_TEXT): string {
  if (typeof value !== 'string') return '';
  const oneLine = displayText(value.replace(/[\r\n\t\u2028\u2029\u0085]+/g, ' '), Infinity).replace(
    / {2,}/g,
    ' ',
  );
  return oneLine.length <= max || Array.from(oneLine).length <= max
    ? oneLine
    : `${Array.from(oneLine)
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}

/** Longest message text kept (the service's own limit for an SMS). */
export const MAX_MESSAGE_TEXT = 1600;

/**
 * Untrusted message text made fit to show in full: line breaks kept (at most two in a row), every
 * other control, bidi-override and zero-width character removed, bounded. Shown only as a text
 * node: nothing in it becomes markup or a link.
 */
export function messageText(value: unknown, max = MAX_MESSAGE_TEXT): string {
  if (typeof value !== 'string') return '';
  const lines = toWellFormed(value)
    .replace(/\r\n?|[\u2028\u2029\u0085]/g, '\n')
    .split('\n')
    .map((line) => line.replace(/\t/g, ' ').replace(UNSAFE_FOR_DISPLAY, '').trimEnd());
  return truncateCodePoints(
    lines
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim(),
    max,
  );
}
