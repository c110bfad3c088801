import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src-shared/process/clock.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { describeError } from '../../src-shared/api/service-errors.ts';
import { MemoryCredentialStore } from '../../src-main/core/credentials/credential-store.ts';
import type { ConnectionStatus } from '../../src-main/core/events/contracts.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { enrolDevice } from '../../src-main/core/org/enrolment.ts';
import { organisationConnection } from '../../src-main/core/org/org-connection.ts';
import { orgKeychainAccount, OrgTokenSource } from '../../src-main/core/org/org-token-source.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { waitFor } from '../../rigs/wait.ts';
import { addUser, orgConfig, startOrgRelay } from '../../rigs/relay/users-support.ts';

// The desktop's side of organisation mode against the relay itself: what the user is told when
// the relay will not have them (docs/relay-protocol.md 2.2, the refusal table).
const tmp = useTempDir('relay-org-source-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setUp() {
  const org = await startOrgRelay(orgConfig(join(tmp.path, 'users.json')));
  cleanups.push(() => org.close());
  const secrets = new SecretRegistry();
  const transport = transportFor(
    { proxyMode: 'none', proxyUrl: '', caFile: '' },
    { logger: silentLogger, secrets, readFile: () => '' },
  );
  const keychain = new MemoryCredentialStore();
  const tokens = new OrgTokenSource({
    store: keychain,
    account: orgKeychainAccount(org.relay.url, 'acme'),
    fetch: transport.fetch,
    clock: systemClock,
    logger: silentLogger,
    secrets,
  });
  const connect = () => {
    const c = organisationConnection(
      { relayUrl: org.relay.url, tenant: 'acme', settings: DEFAULT_SETTINGS, tokens },
      { clock: systemClock, logger: silentLogger, transport },
    );
    const seen: ConnectionStatus[] = [];
    c.engine.onStatus((s) => seen.push(s));
    c.engine.start();
    cleanups.push(() => c.stop());
    return { c, seen };
  };
  return { ...org, transport, tokens, secrets, connect };
}

describe('organisation mode, the desktop side', () => {
  it('says "not signed in" with what to do when the keychain holds no credential of the relay', async () => {
    const { connect } = await setUp();
    const { c } = connect();
    await waitFor(() => c.engine.status().state === 'needs-attention', 'needs attention');
    expect(c.engine.status().reason).toContain('Not signed in to your organisation.');
  });

  it('enrols with a code, connects, and after a revoke while offline says the enrolment is no longer accepted', async () => {
    const { relay, users, transport, tokens, secrets, connect } = await setUp();
    const code = await addUser(users, 'alice', ['101']);
    const answer = await enrolDevice({
      relayUrl: relay.url,
      tenant: 'acme',
      code,
      label: 'test',
      fetch: transport.fetch,
      secrets,
    });
    expect(secrets.scrub(`code ${code} credential ${answer.credential}`)).not.toContain(code);
    await tokens.save({ kind: 'device', credential: answer.credential });
    const first = connect();
    await waitFor(() => first.c.engine.status().state === 'connected', 'connected');
    await first.c.stop();
    await users.revoke('acme', 'alice', Date.now());
    const again = connect();
    await waitFor(() => again.c.engine.status().state === 'needs-attention', 'needs attention');
    expect(again.c.engine.status().reason).toContain(
      'The relay no longer accepts this device’s enrolment.',
    );
  });

  it('says why an enrolment code is refused, in the relay’s words', async () => {
    const { relay, users, transport } = await setUp();
    const code = await addUser(users, 'alice', ['101']);
    await enrolDevice({
      relayUrl: relay.url,
      tenant: 'acme',
      code,
      label: 't',
      fetch: transport.fetch,
    });
    const second = await enrolDevice({
      relayUrl: relay.url,
      tenant: 'acme',
      code,
      label: 't',
      fetch: transport.fetch,
    }).catch((e: unknown) => e);
    const words = describeError(second);
    expect(words.fault).toBe('enrolment-refused');
    expect(words.needsUser).toBe(true);
    expect(words.reason).toContain('a code works once');
  });
});
