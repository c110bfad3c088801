/**
 * The generic lookup's address and answer mapping, checked at the boundary (settings, policy,
 * runner flags) and used by generic.ts:
 *
 * - The URL template is https only, and its placeholders (`{number}`: E.164 such as +14155550123;
 *   `{digits}`: the national number's digits) may stand only inside a query parameter's value, so a
 *   caller ID can never change the host, the path or which parameter it is: each value is
 *   percent-encoded before it goes in. No user name or password in the address (they belong in the
 *   keychain).
 * - A field path picks a value from the JSON answer: `name`, `contact.company`, `results.0.name`
 *   (or `results[0].name`); several paths separated by spaces are joined with a space
 *   (`first_name last_name`).
 */

import {
  fillPlaceholders,
  LOOKUP_PLACEHOLDERS,
  MAX_TEMPLATE,
  placeholderNames,
  type LookupPlaceholder,
} from './placeholders.ts';

export type { LookupPlaceholder } from './placeholders.ts';
const MARKER = 'spcrmmarker0';

export type TemplateProblem =
  | 'empty'
  | 'too-long'
  | 'not-a-url'
  | 'not-https'
  | 'credentials'
  | 'unknown-placeholder'
  | 'placeholder-outside-query'
  | 'no-placeholder';

/** Why a lookup URL template cannot be used, or null when it can. */
export function lookupTemplateProblem(template: string): TemplateProblem | null {
  const t = template.trim();
  if (t === '') return 'empty';
  if (t.length > MAX_TEMPLATE) return 'too-long';
  const names = placeholderNames(t);
  if (names.some((name) => !(LOOKUP_PLACEHOLDERS as readonly string[]).includes(name)))
    return 'unknown-placeholder';
  if (names.length === 0) return 'no-placeholder';
  let url: URL;
  try {
    url = new URL(fillPlaceholders(t, () => MARKER));
  } catch {
    return 'not-a-url';
  }
  if (url.protocol !== 'https:') return 'not-https';
  if (url.username || url.password) return 'credentials';
  const outside = `${url.host}${url.pathname}${url.hash}`;
  if (outside.includes(MARKER)) return 'placeholder-outside-query';
  for (const [key] of url.searchParams)
    if (key.includes(MARKER)) return 'placeholder-outside-query';
  return null;
}

/** The host a lookup template's address names (its placeholders filled), or null when none. */
export function lookupHost(template: string): string | null {
  try {
    return new URL(fillPlaceholders(template.trim(), () => 'x')).host || null;
  } catch {
    return null;
  }
}

/** The template with each placeholder's value percent-encoded; null when the template is unusable. */
export function fillLookupTemplate(
  template: string,
  values: Record<LookupPlaceholder, string>,
): string | null {
  if (lookupTemplateProblem(template) !== null) return null;
  return fillPlaceholders(template.trim(), (name) =>
    encodeURIComponent(values[name as LookupPlaceholder]),
  );
}

const SEGMENT = /^[A-Za-z0-9_$@-]{1,64}$/;
const MAX_SEGMENTS = 8;
const MAX_PATHS = 4;

/** A field path's segments (`results[0].name` -> ['results', '0', 'name']); null when invalid. */
function segments(path: string): string[] | null {
  const parts = path.replace(/\[(\d{1,4})\]/g, '.$1').split('.');
  if (parts.length === 0 || parts.length > MAX_SEGMENTS) return null;
  return parts.every((p) => SEGMENT.test(p)) ? parts : null;
}

/** Whether a mapping is usable: '' (not mapped) or up to four valid paths separated by spaces. */
export function fieldMappingOk(mapping: string): boolean {
  const paths = mapping.trim().split(/\s+/).filter(Boolean);
  if (paths.length > MAX_PATHS) return false;
  return paths.every((p) => segments(p) !== null);
}

/** The text at `mapping` in `answer` (strings and finite numbers; the paths' values joined). */
export function pickField(answer: unknown, mapping: string): string {
  const values: string[] = [];
  for (const path of mapping.trim().split(/\s+/).filter(Boolean)) {
    const parts = segments(path);
    if (!parts) return '';
    let at: unknown = answer;
    for (const part of parts) {
      if (at === null || typeof at !== 'object') {
        at = undefined;
        break;
      }
      // Own properties only: "__proto__" or "constructor" never reach the prototype.
      at = Object.hasOwn(at, part) ? (at as Record<string, unknown>)[part] : undefined;
    }
    if (typeof at === 'string' && at.trim() !== '') values.push(at.trim());
    else if (typeof at === 'number' && Number.isFinite(at)) values.push(String(at));
  }
  return values.join(' ');
}
