/**
 * The desktop in organisation mode, in the test's process: what its Settings' "Sign in with your
 * organisation" runs, without Electron (the OpenID Connect sign-in through the test provider, the
 * organisation's token source on a memory keychain, the relay-only engine). Used by the
 * organisation and gateway black-box tests, which spawn the relay and the simulator as processes.
 */
import { expect } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import {
  relayOrgPath,
  type OrgSignInInfo,
  type RelayIdentity,
} from '../../src-shared/relay/relay-protocol.ts';
import { MemoryCredentialStore } from '../../src-main/core/credentials/credential-store.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { organisationConnection } from '../../src-main/core/org/org-connection.ts';
import { signInWithBrowser } from '../../src-main/core/org/oidc-sign-in.ts';
import { orgKeychainAccount, OrgTokenSource } from '../../src-main/core/org/org-token-source.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import type { Pop } from '../../src-main/core/events/pipeline.ts';
import type { startOidcProvider } from '../../rigs/oidc-provider.ts';
import { until } from '../../rigs/processes.ts';
import type { RelayProcess } from './services.ts';

/**
 * Signs `account` in at the organisation's provider and connects a desktop to the relay's tenant;
 * resolves once it is connected. `stops` gets the desktop's stop.
 */
export async function signInDesktop(
  relay: RelayProcess,
  tenant: string,
  idp: Awaited<ReturnType<typeof startOidcProvider>>,
  user: string,
  stops: Array<() => Promise<void>>,
) {
  const secrets = new SecretRegistry();
  const transport = transportFor(
    { proxyMode: 'none', proxyUrl: '', caFile: '' },
    { logger: silentLogger, secrets, readFile: () => '' },
  );
  const info = ((await (await fetch(relay.url + relayOrgPath(tenant))).json()) as OrgSignInInfo)
    .oidc!;
  let page: Promise<string> = Promise.resolve('');
  const tokens = await signInWithBrowser(info, {
    clock: systemClock,
    fetch: transport.fetch,
    openBrowser: (url) => {
      page = idp.signIn(url, user);
    },
  });
  expect(await page).toBe('Signed in.');
  const keychain = new MemoryCredentialStore();
  const account = orgKeychainAccount(relay.url, tenant);
  const source = new OrgTokenSource({
    store: keychain,
    account,
    fetch: transport.fetch,
    clock: systemClock,
    logger: silentLogger,
    secrets,
  });
  await source.save(
    { kind: 'oidc', refreshToken: tokens.refreshToken!, provider: info, email: tokens.email },
    { value: tokens.idToken, expiresAt: tokens.idTokenExpiresAt },
  );
  let identity: RelayIdentity | undefined;
  const desktop = organisationConnection(
    {
      relayUrl: relay.url,
      tenant,
      settings: { ...DEFAULT_SETTINGS, extensions: ['102'] },
      tokens: source,
    },
    { clock: systemClock, logger: silentLogger, transport, onIdentity: (id) => (identity = id) },
  );
  const desktopPops: Pop[] = [];
  desktop.engine.onPop((p) => desktopPops.push(p as Pop));
  desktop.engine.start();
  stops.push(() => desktop.stop());
  await until(
    () => desktop.engine.status().state === 'connected',
    'the desktop to connect',
    30_000,
    () => JSON.stringify(desktop.engine.status()),
  );
  return { desktop, desktopPops, keychain, account, identity: () => identity };
}
