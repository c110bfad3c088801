/**
 * What an extension is, the one rule for every place that needs it: Settings and the runner's
 * --extension (what may be entered), matching a call's `to` (which strings skip the telephone
 * number parser), the directory and the card (which numbers are shown as they are instead of being
 * formatted as telephone numbers). An extension is 1 to 7 digits, nothing else: the widest format
 * of the Yeastar family (docs/wire-protocol.md section 6, "what an extension is"). A longer string
 * of digits, or one starting with "+", is a telephone number.
 */
export const MAX_EXTENSION_DIGITS = 7;

const EXTENSION = new RegExp(`^[0-9]{1,${MAX_EXTENSION_DIGITS}}$`);

/** True for an extension number exactly as written (no spaces, no signs). */
export function isExtensionNumber(text: string): boolean {
  return EXTENSION.test(text);
}
