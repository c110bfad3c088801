/**
 * The desktop's organisation account (organisation mode, docs/relay-protocol.md 2.2-2.3): what
 * Settings' "Sign in with your organisation", "Enrol" and "Sign out" do, and Test connection in
 * this mode. It asks the relay how to sign in (GET /v1/org/<tenant>), signs in through the system
 * browser (oidc-sign-in.ts) or spends an enrolment code (enrolment.ts), and keeps the result in the
 * keychain under the relay's account (org-token-source.ts). One OrgTokenSource per account serves
 * the connection and Test connection alike, so that a provider which rotates refresh tokens never
 * sees the same one spent twice.
 *
 * Nothing here holds or asks for the phone system's API key or secret.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import { phrase, type Words } from '../../../src-shared/i18n/phrase.ts';
import {
  AUTHORIZATION_PARAM_NAME,
  CLAIM_NAME,
  LOOPBACK_REDIRECT_HOSTS,
  MAX_AUTHORIZATION_PARAM_LENGTH,
  MAX_AUTHORIZATION_PARAMS,
  relayOrgPath,
  type LoopbackRedirectHost,
  type OidcClientInfo,
  type OrgSignInInfo,
  type RelayIdentity,
} from '../../../src-shared/relay/relay-protocol.ts';
import { unreachableFault } from '../../../src-shared/net/net-errors.ts';
import { describeError } from '../../../src-shared/api/service-errors.ts';
import type { Transport } from '../connection/connection.ts';
import type { CredentialStore } from '../credentials/credential-store.ts';
import type { ConnectionStatus } from '../events/contracts.ts';
import { RelayEventSource, relayHttpUrl } from '../relay-client/relay-source.ts';
import type { Settings } from '../settings/types.ts';
import { enrolDevice } from './enrolment.ts';
import { OidcSignInError, signInWithBrowser } from './oidc-sign-in.ts';
import {
  orgKeychainAccount,
  notSignedIn,
  OrgTokenSource,
  parseOrgCredential,
  type OrgCredential,
} from './org-token-source.ts';

/**
 * The settings organisation mode reads: where the relay is (relayUrl, relayTenant) and how to
 * reach it (the proxy and CA settings the transport is built from).
 */
type OrgSettings = Settings;

/** What a failed sign-in, enrolment or test says: in phrases, for the edge's language. */
export interface OrgFailure {
  reason: Words;
  remedy: Words;
  /** The person cancelled (Cancel, or a second sign-in started): nothing to explain. */
  cancelled?: boolean;
}

export class OrgAccountError extends Error {
  readonly failure: OrgFailure;
  constructor(failure: OrgFailure, options?: { cause?: unknown }) {
    super('organisation sign-in failed', options);
    this.name = 'OrgAccountError';
    this.failure = failure;
  }
}

export interface OrganisationAccountDeps {
  store: CredentialStore;
  clock: Clock;
  logger: Logger;
  secrets: SecretRegistry;
  /** The way out for these settings (proxy, CAs): the same transport as the connection's. */
  network: (settings: OrgSettings) => Transport;
  /** Hands the provider's sign-in page to the system browser (the app's safe openExternal). */
  openBrowser: (url: string) => Promise<void>;
  /** What the administrator sees for this device in `relay users list`. */
  deviceLabel: string;
  /** The page the browser shows when it comes back (in the user's language). */
  browserPage?: (outcome: 'signed-in' | 'failed') => string;
  /** How long a sign-in waits for the browser; default 5 minutes. */
  signInTimeoutMs?: number;
  /** How long Test connection waits for the relay to say who this is; default 15 s. */
  testTimeoutMs?: number;
}

/** What Settings shows of the stored sign-in (never the credential). */
export interface OrgSignInState {
  via: 'oidc' | 'device';
  /** The e-mail address the provider vouched for (single sign-on), else null. */
  email: string | null;
}

const RELAY_WORDS = {
  unreachable: (host: string) => ({
    reason: [phrase('status.org.relay-unreachable', { host })],
    remedy: [phrase('status.org.relay-unreachable-remedy')],
  }),
  noTenant: (tenant: string) => ({
    reason: [phrase('status.org.no-tenant', { tenant })],
    remedy: [phrase('status.org.no-tenant-remedy')],
  }),
  notRelay: (host: string) => ({
    reason: [phrase('status.org.not-a-relay', { host })],
    remedy: [phrase('status.org.relay-unreachable-remedy')],
  }),
};

export class OrganisationAccount {
  private readonly d: OrganisationAccountDeps;
  private readonly logger: Logger;
  private readonly sources = new Map<string, OrgTokenSource>();
  /** The settings each account's requests last went out with (its proxy and CAs). */
  private readonly lastSettings = new Map<string, OrgSettings>();
  private running: AbortController | null = null;

  constructor(deps: OrganisationAccountDeps) {
    this.d = deps;
    this.logger = deps.logger.child({ component: 'organisation' });
  }

  /**
   * The credential source of the relay and tenant in `settings`: one per keychain account, shared
   * by the connection and the test. Its requests go through the transport of the settings it was
   * last asked for.
   */
  tokens(settings: OrgSettings): OrgTokenSource {
    const account = orgKeychainAccount(settings.relayUrl, settings.relayTenant);
    this.lastSettings.set(account, settings);
    let source = this.sources.get(account);
    if (!source) {
      source = new OrgTokenSource({
        store: this.d.store,
        account,
        fetch: (input, init) =>
          this.d.network(this.lastSettings.get(account) ?? settings).fetch(input, init),
        clock: this.d.clock,
        logger: this.d.logger,
        secrets: this.d.secrets,
      });
      this.sources.set(account, source);
    }
    return source;
  }

  /** What the keychain holds for this relay and tenant, said without the credential. */
  async stored(settings: OrgSettings): Promise<OrgSignInState | null> {
    if (!settings.relayUrl || !settings.relayTenant) return null;
    const text = await this.d.store.getSecret(
      orgKeychainAccount(settings.relayUrl, settings.relayTenant),
    );
    const credential = parseOrgCredential(text);
    if (!credential) return null;
    return credential.kind === 'oidc'
      ? { via: 'oidc', email: credential.email }
      : { via: 'device', email: null };
  }

  /**
   * Signs in with the organisation's OpenID provider, as the relay names it, through the system
   * browser; keeps the sign-in in the keychain. A second call ends a first one still waiting.
   * Rejects with OrgAccountError.
   */
  async signIn(settings: OrgSettings): Promise<OrgSignInState> {
    this.running?.abort();
    const running = new AbortController();
    this.running = running;
    try {
      const info = await this.signInInfo(settings);
      if (!info.oidc)
        throw new OrgAccountError({
          reason: [phrase('status.org.no-single-sign-on', { tenant: settings.relayTenant })],
          remedy: [phrase('status.org.no-single-sign-on-remedy')],
        });
      const provider = info.oidc;
      const { fetch } = this.d.network(settings);
      let tokens;
      try {
        tokens = await signInWithBrowser(provider, {
          clock: this.d.clock,
          fetch,
          openBrowser: this.d.openBrowser,
          signal: running.signal,
          ...(this.d.browserPage ? { page: this.d.browserPage } : {}),
          ...(this.d.signInTimeoutMs !== undefined ? { timeoutMs: this.d.signInTimeoutMs } : {}),
        });
      } catch (error) {
        throw new OrgAccountError(this.browserFailure(error, provider.issuer, running.signal), {
          cause: error,
        });
      }
      this.d.secrets.add(tokens.idToken);
      const idToken = { value: tokens.idToken, expiresAt: tokens.idTokenExpiresAt };
      if (!tokens.refreshToken)
        // The person is signed in, so they work now; the sign-in ends with the ID token (the
        // status then says "sign in again", as when a provider stops renewing). Refusing here
        // would turn a provider set up without refresh tokens into no sign-in at all.
        this.logger.warn(
          'the sign-in provider gave no refresh token: this sign-in ends when its ID token does; ' +
            'configure refresh tokens at the provider (docs/relay-protocol.md 2.3.1)',
          { tenant: settings.relayTenant, expiresAt: new Date(idToken.expiresAt).toISOString() },
        );
      await this.keep(
        settings,
        {
          kind: 'oidc',
          refreshToken: tokens.refreshToken,
          provider,
          email: tokens.email,
          ...(tokens.refreshToken ? {} : { idToken }),
        },
        idToken,
      );
      this.logger.info('signed in with the organisation', { tenant: settings.relayTenant });
      return { via: 'oidc', email: tokens.email };
    } finally {
      if (this.running === running) this.running = null;
    }
  }

  /** Ends a sign-in waiting for the browser (Settings' Cancel). */
  cancel(): void {
    this.running?.abort();
  }

  /** Spends a one-time enrolment code for this device's credential. Rejects with OrgAccountError. */
  async enrol(settings: OrgSettings, code: string): Promise<RelayIdentity> {
    let answer;
    try {
      answer = await enrolDevice({
        relayUrl: settings.relayUrl,
        tenant: settings.relayTenant,
        code,
        label: this.d.deviceLabel,
        fetch: this.d.network(settings).fetch,
        secrets: this.d.secrets,
      });
    } catch (error) {
      const fault = describeError(error);
      throw new OrgAccountError(fault.words, { cause: error });
    }
    await this.keep(settings, { kind: 'device', credential: answer.credential });
    this.logger.info('enrolled', { tenant: settings.relayTenant, device: answer.device });
    return answer.identity;
  }

  /** Forgets this relay's sign-in on this computer (the keychain entry). */
  async signOut(settings: OrgSettings): Promise<void> {
    this.cancel();
    const account = orgKeychainAccount(settings.relayUrl, settings.relayTenant);
    await this.d.store.deleteSecret(account);
    this.sources.delete(account);
    this.logger.info('signed out of the organisation', { tenant: settings.relayTenant });
  }

  /**
   * Test connection in organisation mode: the relay answers for this tenant, this computer holds a
   * sign-in, and the relay accepts it and says who it is (a session opened and closed again).
   */
  async test(
    settings: OrgSettings,
  ): Promise<{ ok: true; identity: RelayIdentity } | { ok: false; failure: OrgFailure }> {
    try {
      await this.signInInfo(settings);
    } catch (error) {
      return { ok: false, failure: failureOf(error) };
    }
    if (!(await this.stored(settings).catch(() => null)))
      return { ok: false, failure: describeError(notSignedIn()).words };
    const { clock, logger } = this.d;
    const transport = this.d.network(settings);
    return new Promise((resolve) => {
      let settled = false;
      const source = new RelayEventSource({
        name: 'relay-test',
        relayUrl: settings.relayUrl,
        tenant: settings.relayTenant,
        tokens: this.tokens(settings),
        filter: { extensions: [], dids: [], events: [] },
        clock,
        logger,
        createSocket: transport.createSocket,
        onIdentity: (identity) => finish({ ok: true, identity }),
      });
      const timer = clock.setTimeout(
        () => finish({ ok: false, failure: statusFailure(source.status(), true) }),
        this.d.testTimeoutMs ?? 15_000,
      );
      const off = source.onStatus((status) => {
        if (status.state === 'needs-attention' || (status.state === 'offline' && status.words))
          finish({ ok: false, failure: statusFailure(status, false) });
      });
      function finish(
        result: { ok: true; identity: RelayIdentity } | { ok: false; failure: OrgFailure },
      ) {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        off();
        void source.stop().finally(() => resolve(result));
      }
      source.start();
    });
  }

  /** GET /v1/org/<tenant>: how this tenant's users sign in. Rejects with OrgAccountError. */
  async signInInfo(settings: OrgSettings): Promise<OrgSignInInfo> {
    const url = relayHttpUrl(settings.relayUrl, relayOrgPath(settings.relayTenant));
    const host = new URL(url).host;
    let res: Response;
    try {
      res = await this.d.network(settings).fetch(url, {
        headers: { Accept: 'application/json' },
        signal: AbortSignal.timeout(15_000),
      });
    } catch (error) {
      // A proxy or certificate fault has its own words; a socket error names the relay's host,
      // port and what happened; anything else: the relay is not reached.
      const fault = describeError(error);
      const unreachable =
        fault.fault === 'unexpected' ? unreachableFault(error, url, 'relay') : undefined;
      throw new OrgAccountError(
        unreachable
          ? { ...RELAY_WORDS.unreachable(host), reason: describeError(unreachable).words.reason }
          : fault.fault === 'unexpected' || fault.fault === 'network'
            ? RELAY_WORDS.unreachable(host)
            : fault.words,
        { cause: error },
      );
    }
    if (res.status === 404) throw new OrgAccountError(RELAY_WORDS.noTenant(settings.relayTenant));
    const body: unknown = res.ok ? await res.json().catch(() => null) : null;
    const info = signInInfoOf(body);
    if (!info) {
      this.logger.warn('the relay answered the sign-in question with something else', {
        status: res.status,
      });
      throw new OrgAccountError(RELAY_WORDS.notRelay(host));
    }
    if (info.oidc?.clientSecret) this.d.secrets.add(info.oidc.clientSecret);
    return info;
  }

  private async keep(
    settings: OrgSettings,
    credential: OrgCredential,
    idToken?: { value: string; expiresAt: number },
  ): Promise<void> {
    try {
      await this.tokens(settings).save(credential, idToken);
    } catch (error) {
      this.logger.error('the organisation sign-in could not be kept in the keychain', { error });
      throw new OrgAccountError(
        {
          reason: [phrase('status.org.keychain-failed')],
          remedy: [phrase('status.org.keychain-failed-remedy')],
        },
        { cause: error },
      );
    }
  }

  private browserFailure(error: unknown, issuer: string, signal: AbortSignal): OrgFailure {
    const host = hostOf(issuer);
    if (signal.aborted)
      return { reason: [phrase('status.org.sign-in-cancelled')], remedy: [], cancelled: true };
    if (error instanceof OidcSignInError) {
      this.logger.warn('the organisation sign-in did not complete', {
        kind: error.kind,
        error,
      });
      if (error.kind === 'cancelled')
        return {
          reason: [phrase('status.org.sign-in-not-completed')],
          remedy: [phrase('status.org.sign-in-again-remedy')],
        };
      if (error.kind === 'timeout')
        return {
          reason: [phrase('status.org.sign-in-timeout')],
          remedy: [phrase('status.org.sign-in-again-remedy')],
        };
      if (error.kind === 'port-taken' && error.loopback)
        return {
          reason: [phrase('status.org.sign-in-port-taken', error.loopback)],
          remedy: [phrase('status.org.sign-in-port-taken-remedy', { port: error.loopback.port })],
        };
      return {
        reason: [phrase('status.org.provider-failed', { host })],
        remedy: [phrase('status.org.provider-failed-remedy')],
      };
    }
    // The browser could not be opened (the address refused by the link gate, or no browser).
    this.logger.warn('the sign-in page could not be opened', { error });
    return {
      reason: [phrase('status.org.browser-failed', { host })],
      remedy: [phrase('status.org.provider-failed-remedy')],
    };
  }
}

function failureOf(error: unknown): OrgFailure {
  return error instanceof OrgAccountError ? error.failure : describeError(error).words;
}

/** A status's words as a failure; `late`: it did not come to an end within the time allowed. */
function statusFailure(status: ConnectionStatus, late: boolean): OrgFailure {
  if (!late && status.words?.reason)
    return { reason: status.words.reason, remedy: status.words.remedy ?? [] };
  return {
    reason: [phrase('status.org.test-no-answer')],
    remedy: [phrase('status.org.relay-unreachable-remedy')],
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url.slice(0, 80);
  }
}

/** The relay's answer, checked: it is the network's, not ours. */
function signInInfoOf(body: unknown): OrgSignInInfo | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const v = body as Record<string, unknown>;
  if (typeof v.tenant !== 'string' || typeof v.enrolment !== 'boolean') return null;
  if (v.oidc === null) return { tenant: v.tenant, oidc: null, enrolment: v.enrolment };
  const o = v.oidc as Record<string, unknown> | undefined;
  if (
    !o ||
    typeof o.issuer !== 'string' ||
    o.issuer.length > 2048 ||
    typeof o.clientId !== 'string' ||
    o.clientId.length > 256 ||
    !Array.isArray(o.scopes) ||
    o.scopes.length > 20 ||
    !o.scopes.every((s) => typeof s === 'string' && /^[\x21-\x7e]{1,64}$/.test(s))
  )
    return null;
  try {
    const issuer = new URL(o.issuer);
    if (issuer.protocol !== 'https:' && issuer.protocol !== 'http:') return null;
  } catch {
    return null;
  }
  const oidc: OidcClientInfo = {
    issuer: o.issuer,
    clientId: o.clientId,
    scopes: o.scopes as string[],
  };
  if (o.clientSecret !== undefined) {
    if (typeof o.clientSecret !== 'string' || o.clientSecret.length > 512) return null;
    if (o.clientSecret) oidc.clientSecret = o.clientSecret;
  }
  if (o.authorizationParams !== undefined) {
    const p = o.authorizationParams as Record<string, unknown>;
    if (!p || typeof p !== 'object' || Array.isArray(p)) return null;
    const entries = Object.entries(p);
    if (
      entries.length > MAX_AUTHORIZATION_PARAMS ||
      !entries.every(
        ([k, x]) =>
          AUTHORIZATION_PARAM_NAME.test(k) &&
          typeof x === 'string' &&
          x.length <= MAX_AUTHORIZATION_PARAM_LENGTH,
      )
    )
      return null;
    oidc.authorizationParams = Object.fromEntries(entries) as Record<string, string>;
  }
  if (o.redirectHost !== undefined) {
    if (!(LOOPBACK_REDIRECT_HOSTS as readonly unknown[]).includes(o.redirectHost)) return null;
    oidc.redirectHost = o.redirectHost as LoopbackRedirectHost;
  }
  if (o.redirectPort !== undefined) {
    const port = o.redirectPort;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
      return null;
    oidc.redirectPort = port;
  }
  if (o.emailClaim !== undefined) {
    if (typeof o.emailClaim !== 'string' || !CLAIM_NAME.test(o.emailClaim)) return null;
    oidc.emailClaim = o.emailClaim;
  }
  return { tenant: v.tenant, oidc, enrolment: v.enrolment };
}
