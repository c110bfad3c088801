/**
 * Placeholders in the templates a person writes, the one list and the one pattern: the CRM link's
 * and the ring actions' call values (app/crm-url.ts, app/ring-actions.ts, settings and policy
 * checks), and the lookup address's number (crm/template.ts). A placeholder is `{name}`, a name
 * without braces; a name not in a template's list is refused where the template is checked.
 */

/** The call's values a link or a program argument may name. */
export const CALL_PLACEHOLDERS = ['from', 'to', 'call_id', 'caller_name'] as const;
export type CallPlaceholder = (typeof CALL_PLACEHOLDERS)[number];

/** The number a lookup address may name: `{number}` (E.164), `{digits}` (national digits). */
export const LOOKUP_PLACEHOLDERS = ['number', 'digits'] as const;
export type LookupPlaceholder = (typeof LOOKUP_PLACEHOLDERS)[number];

/** Longest template (a CRM link or a lookup address; the settings' check and the link's are one rule). */
export const MAX_TEMPLATE = 2048;

/** `{name}` in a template; group 1 is the name. Global: use with matchAll and replace only. */
export const PLACEHOLDER = /\{([^{}]*)\}/g;

/** The placeholders' names in `template`, in order, repeats kept. */
export function placeholderNames(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '');
}

/** The first name in `template` not in `known`, or null when every placeholder is known. */
export function unknownPlaceholder(template: string, known: readonly string[]): string | null {
  return placeholderNames(template).find((name) => !known.includes(name)) ?? null;
}

/**
 * The words of a refusal for the first unknown placeholder of a CRM link (`{placeholder}` and the
 * `{known}` ones, as the settings' and the link's messages say them), or null when all are known.
 */
export function unknownCallPlaceholder(
  template: string,
): { placeholder: string; known: string } | null {
  const unknown = unknownPlaceholder(template, CALL_PLACEHOLDERS);
  return unknown === null
    ? null
    : { placeholder: `{${unknown}}`, known: writtenPlaceholders(CALL_PLACEHOLDERS) };
}

/** The names as a template writes them: `{from}, {to}, {call_id}, {caller_name}`. */
export function writtenPlaceholders(names: readonly string[]): string {
  return names.map((p) => `{${p}}`).join(', ');
}

/**
 * `template` with each placeholder that `value` knows replaced by what it gives; a placeholder it
 * does not know (undefined) stays as written.
 */
export function fillPlaceholders(
  template: string,
  value: (name: string) => string | undefined,
): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => value(name) ?? whole);
}
