/**
 * Text from the service (errmsg, caller_id_name) is untrusted: it reaches the tray, the popup and the
 * logs as one printable line of bounded length.
 */
export function oneLine(text: string, maxLength: number): string {
  const clean = text.replace(/\p{Cc}+/gu, ' ').trim();
  return clean.length > maxLength ? `${clean.slice(0, maxLength - 3)}...` : clean;
}
