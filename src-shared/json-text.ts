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
