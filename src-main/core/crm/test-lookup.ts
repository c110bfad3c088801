/**
 * Settings' "Test lookup": a number in, what the CRM answered out, in plain words in the user's
 * language, with what to do about a failure. It runs a fresh lookup (no cache, no pause), with the
 * form's settings and, when the user typed one, the token not yet saved.
 */
import type { Translator } from '../../../src-shared/i18n/translator.ts';
import type { CrmLookupSettings } from '../settings/types.ts';
import type { CrmTestResult } from '../ports/views.ts';
import type { CrmCertificateProblem, CrmFailureKind } from './connector.ts';
import type { CrmLookup, CrmResult } from './lookup.ts';
import { lookupHost } from './template.ts';

/** How a CRM is named in words: "HubSpot", or the host of the lookup address. */
export function crmName(settings: CrmLookupSettings): string {
  if (settings.provider === 'hubspot') return 'HubSpot';
  return lookupHost(settings.urlTemplate) ?? 'CRM';
}

function failure(
  kind: CrmFailureKind,
  settings: CrmLookupSettings,
  t: Translator,
  certificate: CrmCertificateProblem | undefined,
): Pick<CrmTestResult, 'message' | 'remedy'> {
  const provider = crmName(settings);
  const hubspot = settings.provider === 'hubspot';
  switch (kind) {
    case 'certificate': {
      // The words the connection status uses for the same refusal, naming the CRM's host.
      const { fault, host } = certificate ?? { fault: 'certificate-untrusted', host: provider };
      return {
        message: t.t(`status.fault.${fault}.reason`, { host }),
        remedy: t.t(`status.fault.${fault}.remedy`, { host }),
      };
    }
    case 'timeout':
      return {
        message: t.t('status.crm.fail.timeout', { provider, seconds: settings.timeoutSec }),
        remedy: t.t('status.crm.fail.timeout-remedy'),
      };
    case 'rate-limited':
      return {
        message: t.t('status.crm.fail.rate-limited', { provider }),
        remedy: t.t('status.crm.fail.rate-limited-remedy'),
      };
    case 'auth':
      return {
        message: t.t('status.crm.fail.auth', { provider }),
        remedy: hubspot
          ? t.t('status.crm.fail.auth-remedy-hubspot')
          : t.t('status.crm.fail.auth-remedy'),
      };
    case 'forbidden':
      return {
        message: t.t('status.crm.fail.forbidden', { provider }),
        remedy: hubspot
          ? t.t('status.crm.fail.forbidden-remedy-hubspot')
          : t.t('status.crm.fail.forbidden-remedy'),
      };
    case 'network':
      return {
        message: t.t('status.crm.fail.network', { provider }),
        remedy: t.t('status.crm.fail.network-remedy'),
      };
    case 'server':
      return {
        message: t.t('status.crm.fail.server', { provider }),
        remedy: t.t('status.crm.fail.server-remedy'),
      };
    case 'bad-answer':
      return {
        message: t.t('status.crm.fail.bad-answer', { provider }),
        remedy: t.t('status.crm.fail.bad-answer-remedy'),
      };
    case 'no-credentials':
      return {
        message: t.t('status.crm.fail.no-credentials', { provider }),
        remedy: t.t('status.crm.fail.no-credentials-remedy'),
      };
  }
}

/** A lookup's result in the words Settings shows. */
export function describeTest(
  result: CrmResult,
  settings: CrmLookupSettings,
  t: Translator,
  ms: number,
): CrmTestResult {
  const provider = crmName(settings);
  switch (result.status) {
    case 'found':
      return {
        ok: true,
        message: t.t('status.crm.test.found', { provider, name: result.name }),
        found: { name: result.name, company: result.company, recordUrl: result.recordUrl },
        ms,
      };
    case 'not-found':
      return { ok: true, message: t.t('status.crm.test.not-found', { provider }), ms };
    case 'failed':
      return { ok: false, ...failure(result.kind, settings, t, result.certificate), ms };
    case 'skipped':
      return { ok: false, message: t.t('status.crm.test.not-a-number') };
  }
}

/** Runs the test: one lookup of `number` with a fresh service, then closes it. */
export async function testCrmLookup(
  lookup: CrmLookup | null,
  settings: CrmLookupSettings,
  number: string,
  t: Translator,
  now: () => number,
): Promise<CrmTestResult> {
  if (!lookup) return { ok: false, message: t.t('status.crm.test.none') };
  const started = now();
  try {
    const result = await lookup.lookup(number);
    return describeTest(result, settings, t, now() - started);
  } finally {
    lookup.close();
  }
}
