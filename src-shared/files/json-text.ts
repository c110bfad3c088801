/**
 * JSON.parse for text that may hold what must never reach a log: V8's SyntaxError quotes the text
 * around the fault (`Unexpected token 'x', "...+14155550123..." is not valid JSON`), so a corrupt
 * settings, history, snapshot or config file would put caller numbers or secrets into the log or
 * onto the screen. This reports where it failed, never what was there.
 */
export type JsonResult = { ok: true; value: unknown } | { ok: false; where: string };

export function parseJson(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, where: whereJsonFailed(err) };
  }
}

/** " (line L, column C)", " (at character N)" or "" from a JSON.parse error, without its quote. */
export function whereJsonFailed(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  const at = /line (\d+) column (\d+)/.exec(message);
  if (at) return ` (line ${at[1]}, column ${at[2]})`;
  const pos = /at position (\d+)/.exec(message);
  if (pos) return ` (at character ${Number(pos[1]) + 1})`;
  if (/Unexpected end of JSON input/.test(message)) return ' (it ends too early)';
  return '';
}

/**
 * Characters JSON.stringify leaves raw that a reader of the line may act on: C1 controls (U+0085
 * NEL ends a line for readers that split the Unicode way; U+009B is a terminal's CSI), DEL, the
 * line and paragraph separators, bidirectional marks, embeddings, overrides and isolates (a
 * terminal or viewer reorders the text around them), zero-width and invisible formatting
 * characters, the BOM and the interlinear annotation marks. (C0 controls and lone surrogates
 * JSON.stringify already writes as escapes.)
 */
const RAW_IN_JSON =
  /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

/**
 * One JSON text on one line, ending in "\n", with every such character escaped (`\u0085`) in every
 * field: the one serializer of JSON lines (the runner's stdout, every log line, the diagnostics'
 * log.jsonl). A parser reads the same values back; a line reader or a terminal sees only ASCII
 * punctuation where they were.
 */
export function jsonLine(value: unknown): string {
  const text = JSON.stringify(value).replace(
    RAW_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `${text}\n`;
}
