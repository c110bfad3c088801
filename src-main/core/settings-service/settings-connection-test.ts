/**
 * Test connection from Settings: for an API key (the demo's when the demo is on, the running
 * connection's probe when the test is about the stored secret) and for organisation mode (the
 * relay, this computer's sign-in, who it is). The settings service checks the patch first.
 */
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import {
  keychainAccountOrNull as accountFor,
  type CredentialStore,
} from '../credentials/credential-store.ts';
import type { Settings } from '../settings/types.ts';
import type { ProbeTarget } from '../connection/connection.ts';
import type { DemoService } from '../ports/ports.ts';
import type { SettingsRefusal } from './settings-port.ts';
import {
  testConnection,
  type ConnectionProbe,
  type TestConnectionInput,
} from '../connection/test-connection.ts';
import type { SettingsPatch, TestConnectionResult } from '../ports/views.ts';
import { phrase, render, type Phrase } from '../../../src-shared/i18n/phrase.ts';
import { faultStatus } from '../events/status.ts';
import { describeError, ServiceError } from '../../../src-shared/api/service-errors.ts';
import type { OrganisationAccount } from '../org/org-account.ts';
import { PLAIN_ENGLISH, type TranslatorSource } from '../../../src-shared/i18n/locale-state.ts';
import { settingLabel, withSetting } from '../../../src-shared/i18n/setting-words.ts';

export interface SettingsTestDeps {
  logger: Logger;
  secrets: SecretRegistry;
  credentials: CredentialStore;
  createProbe: (input: TestConnectionInput & { secret: string }) => ConnectionProbe;
  runningProbe?: (target: ProbeTarget) => ConnectionProbe | null;
  localAddress?: (host: string) => Promise<string | null>;
  words?: TranslatorSource;
  organisation?: Pick<OrganisationAccount, 'test'>;
}

/** Organisation mode without a sign-in on this computer (or without the relay's address). */
export const NOT_SIGNED_IN = faultStatus(
  'needs-attention',
  describeError(
    new ServiceError({ kind: 'sign-in', fault: 'not-signed-in', message: 'not signed in' }),
  ),
);

/** A test that cannot run: the problem with a field, and "check <that field>". */
export function refusedTest(
  d: Pick<SettingsTestDeps, 'words'>,
  refused: Pick<SettingsRefusal, 'field' | 'words'>,
  words: readonly Phrase[] = withSetting(refused.field, refused.words),
): TestConnectionResult {
  const t = (d.words ?? PLAIN_ENGLISH).current();
  return {
    ok: false,
    message: render(words, t),
    remedy: render([phrase('status.test.check-field', { field: settingLabel(refused.field) })], t),
  };
}

/**
 * Test connection with an API key: `demo` is the running demo when the test is about it; `typed`
 * is the secret typed in the form, if any.
 */
export async function testApiKey(
  d: SettingsTestDeps,
  s: Settings,
  patch: SettingsPatch,
  demo: DemoService | null,
): Promise<TestConnectionResult> {
  const baseUrl = demo ? demo.baseUrl : s.baseUrl;
  const apiKey = demo ? demo.apiKey : s.apiKey;
  let secret = patch.secret?.trim() || null;
  if (secret) d.secrets.add(secret);
  if (!secret && demo) secret = demo.secret;
  const phoneSystem = demo ? (demo.phoneSystem ?? 'standard') : s.phoneSystem;
  // No new secret typed: the test is about the stored one, which the running connection (if it
  // is on this application) already holds a token for.
  const running = patch.secret?.trim()
    ? null
    : (d.runningProbe?.({ phoneSystem, baseUrl, apiKey }) ?? null);
  const account = accountFor(apiKey, baseUrl);
  if (!secret && !running && account)
    secret = await d.credentials.getSecret(account).catch(() => null);
  return testConnection(
    {
      phoneSystem,
      baseUrl,
      apiKey,
      secret,
      ...(running ? { running: true } : {}),
      extensions: demo ? [demo.extension] : s.extensions,
      defaultRegion: s.defaultRegion,
    },
    {
      createProbe: running ? () => running : d.createProbe,
      logger: d.logger,
      ...(d.words ? { words: d.words } : {}),
      ...(d.localAddress ? { localAddress: d.localAddress } : {}),
    },
  );
}

/** Test connection in organisation mode: the relay, this computer's sign-in, who it is. */
export async function testOrganisation(
  d: SettingsTestDeps,
  s: Settings,
  problem: SettingsRefusal | null,
): Promise<TestConnectionResult> {
  const t = (d.words ?? PLAIN_ENGLISH).current();
  if (problem) return refusedTest(d, problem, problem.words);
  if (!d.organisation) return { ok: false, message: render(NOT_SIGNED_IN.words?.reason ?? [], t) };
  const tested = await d.organisation.test(s);
  if (!tested.ok)
    return {
      ok: false,
      message: render(tested.failure.reason, t),
      remedy: render(tested.failure.remedy, t),
    };
  const { identity } = tested;
  return {
    ok: true,
    message: t.t('status.org.test-signed-in', {
      user: identity.user,
      via: identity.via,
      tenant: s.relayTenant,
      extensions: t.list(identity.extensions),
      count: identity.extensions.length,
    }),
  };
}
