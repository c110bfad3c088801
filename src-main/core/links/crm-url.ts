import {
  allowedSchemeSet,
  urlRefusal,
  vetExternalUrl,
  type UrlCheck,
  type UrlRefusal,
} from './external-url.ts';
import { boundedText } from '../../../src-shared/ui/text.ts';
import {
  CALL_PLACEHOLDERS,
  fillPlaceholders,
  MAX_TEMPLATE,
  unknownCallPlaceholder,
  type CallPlaceholder,
} from '../crm/placeholders.ts';

/**
 * The CRM link: a template such as `https://crm.example.com/search?phone={from}&call={call_id}`
 * filled with the call's values. Each value is encodeURIComponent'd before it goes in (caller ID is
 * untrusted: it cannot add a path, a query, a fragment or a scheme), placeholders may sit only in the
 * path, query or fragment (never in the scheme, host or credentials), and the result goes through the
 * same vetting as every external link.
 */
export interface CrmValues {
  from: string;
  to: string;
  call_id: string;
  caller_name: string;
}

/** A made-up call for the settings preview. */
export const SAMPLE_CALL: CrmValues = {
  from: '+14155550123',
  to: '101',
  call_id: 'c0ffee-1234',
  caller_name: 'Ada Lovelace',
};

/** Checks the template itself: known placeholders only, and none before the path. */
export function checkTemplate(
  template: string,
  allowedSchemes: readonly string[],
): { ok: true } | UrlRefusal {
  if (typeof template !== 'string' || template.trim() === '')
    return urlRefusal('status.link.crm-none');
  if (template.length > MAX_TEMPLATE)
    return urlRefusal('status.link.crm-too-long', { max: String(MAX_TEMPLATE) });
  const unknown = unknownCallPlaceholder(template);
  if (unknown) return urlRefusal('status.link.crm-placeholder', unknown);
  // Substitute a marker and see where the parser put it.
  const marker = 'spmarker0';
  let probe: URL;
  try {
    probe = new URL(fillPlaceholders(template.trim(), () => marker));
  } catch {
    return urlRefusal('status.link.crm-invalid');
  }
  const head = `${probe.protocol}${probe.username}${probe.password}${probe.host}`;
  if (head.includes(marker)) return urlRefusal('status.link.crm-placeholder-host');
  const scheme = probe.protocol.replace(/:$/, '');
  if (!allowedSchemeSet(allowedSchemes).has(scheme))
    return urlRefusal('status.link.crm-scheme', { scheme });
  return { ok: true };
}

/** Fills the template with the call's values and vets the result. */
export function buildCrmUrl(
  template: string,
  values: CrmValues,
  allowedSchemes: readonly string[] = [],
): UrlCheck {
  const check = checkTemplate(template, allowedSchemes);
  if (!check.ok) return check;
  // encodeURIComponent leaves dots alone, and the URL parser resolves a path segment of "." or ".."
  // (even written %2E) as a step up: a caller ID of ".." would move the link to another page of the
  // CRM. No real caller value is only dots, so such a call gets no link.
  for (const name of CALL_PLACEHOLDERS)
    if (/^\.{1,2}$/.test(boundedText(values[name] ?? '').trim()))
      return urlRefusal('status.link.crm-value', { name, value: values[name] ?? '' });
  const filled = fillPlaceholders(template.trim(), (name) =>
    encodeURIComponent(boundedText(values[name as CallPlaceholder] ?? '')),
  );
  return vetExternalUrl(filled, allowedSchemes);
}

/** What settings:preview-crm shows: the template filled with a sample call. */
export function previewCrmUrl(template: string, allowedSchemes: readonly string[] = []): UrlCheck {
  return buildCrmUrl(template, SAMPLE_CALL, allowedSchemes);
}
