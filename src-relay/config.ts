import { z } from 'zod';
import type { LogLevel } from '../src-shared/process/log.ts';
import { EVENT_ID_WINDOW_MS } from '../src-shared/wire/event-codes.ts';
import { PHONE_SYSTEMS, phoneSystemsJoined } from '../src-shared/phone-systems/names.ts';
import {
  isExtensionNumber,
  isInternationalDid,
  MAX_EXTENSION_DIGITS,
} from '../src-shared/rules/phone-number-rules.ts';
import {
  AUTHORIZATION_PARAM_NAME,
  LOOPBACK_REDIRECT_HOSTS,
  MAX_AUTHORIZATION_PARAM_LENGTH,
  MAX_AUTHORIZATION_PARAMS,
  RESERVED_AUTHORIZATION_PARAMS,
  TENANT_PATTERN,
} from '../src-shared/relay/relay-protocol.ts';
import { canonicalEmail, sameAddressPairs } from '../src-shared/rules/email-address.ts';
import {
  addressList,
  isAddressOrRange,
  isHttpUrl,
  isIssuerUrl,
  sameServiceKey,
} from './config-network.ts';

/**
 * The relay's configuration: one schema (zod) gives the defaults, the types and the checks, so a
 * setting cannot be documented, defaulted and validated three different ways. A config file is
 * untrusted input: a misspelt or unknown setting, a wrong type or an unsafe value is refused with
 * the setting's path and what to write instead, before anything starts. This module is the schema
 * and its types; config-env.ts reads the file and the environment over it, and config-network.ts
 * holds the address and URL rules the schema checks with.
 */
/**
 * The webhook secret of the example config (deploy/relay/relay.json). It lets the example start as
 * is on this computer; check-config.ts refuses it on any address beyond it.
 */
export const EXAMPLE_SECRET = 'example-webhook-secret-replace-me';

const ms = (what: string) =>
  z
    .number({ error: `must be a number of milliseconds (${what})` })
    .int({ error: 'must be a whole number of milliseconds' })
    .positive({ error: 'must be more than 0' });
const count = (what: string) =>
  z
    .number({ error: `must be a whole number (${what})` })
    .int({ error: `must be a whole number (${what})` })
    .positive({ error: 'must be more than 0' });

// The one rule of what an extension is (src-shared/rules/phone-number-rules.ts), as Settings and the runner.
const extensionList = z
  .array(
    z.string().refine(isExtensionNumber, {
      error: `an extension is 1 to ${MAX_EXTENSION_DIGITS} digits`,
    }),
  )
  .min(1, { error: 'at least one extension' });

/**
 * Single sign-on with the organisation's OpenID Connect provider (organisation mode): desktops
 * sign in through the system browser (authorization code + PKCE) and present the ID token; the
 * relay checks it (issuer, audience, signature from the provider's JWKS, expiry) and maps the
 * e-mail address to extensions.
 */
const oidcSchema = z
  .object({
    /** The provider's issuer, exactly as its discovery document says (https; http only on loopback). */
    issuer: z
      .string({ error: 'oidc.issuer is required' })
      .refine(isIssuerUrl, {
        error: 'oidc.issuer must be an https URL (http only for 127.0.0.1 or localhost)',
      })
      .refine((issuer) => !isEntraMultiTenantIssuer(issuer), {
        error:
          "Entra ID's /common and /organizations endpoints publish the issuer " +
          '"https://login.microsoftonline.com/{tenantid}/v2.0" as a template that no token carries, so ' +
          "no sign-in could be checked. Use your tenant's issuer, " +
          'https://login.microsoftonline.com/<tenant id>/v2.0 (Entra admin center > Overview > ' +
          'Tenant ID); for a multi-tenant app, configure one relay tenant per Entra tenant, each ' +
          "with that tenant's issuer",
      }),
    /** The desktop app's client id at the provider (a native client). */
    clientId: z
      .string({ error: 'oidc.clientId is required' })
      .min(1, { error: 'oidc.clientId is empty' }),
    /**
     * The client secret the provider's token endpoint wants of this native client even with PKCE
     * (Google's "Desktop app" clients). The relay hands it to every desktop that asks how to
     * sign in, so it can only be a value the provider says is not secret in an installed app;
     * it is still never logged (registered with the scrubber, here and on the desktop).
     */
    clientSecret: z.string().min(1, { error: 'is empty' }).optional(),
    /** The audience tokens must carry; default clientId (the ID token's audience). */
    audience: z.string().min(1).optional(),
    /** Scopes the desktop asks for (Google refuses offline_access: it wants access_type=offline). */
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/))
      .default(['openid', 'email', 'profile', 'offline_access']),
    /**
     * Extra parameters of the authorization request, as the provider documents them: Google's
     * `access_type: "offline"` (a refresh token) with `prompt: "consent"`, and `hd` (which only
     * preselects the domain; requiredClaims checks it). Not the ones the app sets itself.
     */
    authorizationParams: z
      .record(
        z.string(),
        z.string().max(MAX_AUTHORIZATION_PARAM_LENGTH, {
          error: `at most ${MAX_AUTHORIZATION_PARAM_LENGTH} characters`,
        }),
      )
      .superRefine((params, ctx) => {
        const names = Object.keys(params);
        if (names.length > MAX_AUTHORIZATION_PARAMS)
          ctx.addIssue({
            code: 'custom',
            message: `at most ${MAX_AUTHORIZATION_PARAMS} parameters`,
          });
        for (const name of names)
          if ((RESERVED_AUTHORIZATION_PARAMS as readonly string[]).includes(name))
            ctx.addIssue({
              code: 'custom',
              path: [name],
              message: `the app sets ${RESERVED_AUTHORIZATION_PARAMS.join(', ')} itself`,
            });
          else if (!AUTHORIZATION_PARAM_NAME.test(name))
            ctx.addIssue({
              code: 'custom',
              path: [name],
              message: 'a parameter name is 1 to 64 letters, digits, _ . or -',
            });
      })
      .optional(),
    /**
     * The loopback redirect's host: "127.0.0.1" (RFC 8252 8.3 recommends the IP literal) or
     * "localhost" (for a provider registration that names it). Registered exactly as
     * http://<host>:<port>/callback where the provider matches the port too.
     */
    redirectHost: z
      .enum(LOOPBACK_REDIRECT_HOSTS, {
        error: 'must be "127.0.0.1" or "localhost"',
      })
      .optional(),
    /**
     * A fixed loopback port for providers that match the redirect address exactly, port included
     * (Okta, Auth0); absent: any free port, as RFC 8252 7.3 asks of providers (Entra ID, Google,
     * Keycloak). 1024-65535, one no other program on the desktops listens on.
     */
    redirectPort: z
      .number({ error: 'must be a port number' })
      .int({ error: 'must be a whole number' })
      .min(1024, {
        error: 'must be 1024 to 65535 (no administrator rights needed)',
      })
      .max(65535, { error: 'must be 1024 to 65535' })
      .optional(),
    /** The claim holding the user's e-mail address (Entra ID: preferred_username or upn). */
    emailClaim: z.string().min(1).default('email'),
    /**
     * The claim by which the provider vouches for the e-mail claim; a token is admitted only when
     * it is the boolean true. Absent: `email_verified` for `email` (`xms_edov` at an Entra ID
     * issuer), none for another claim; null: none (the address is as good as the provider's
     * directory). users/oidc.ts, vouchingClaim().
     */
    emailVerifiedClaim: z.string().min(1).nullable().optional(),
    /**
     * Claims every ID token must carry, each with exactly this value or one of these values: the
     * organisation's Google Workspace domain (`hd`), the Entra ID tenant (`tid`).
     */
    requiredClaims: z
      .record(
        z.string().min(1),
        z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
          error: 'a required claim is a value or a list of values (text)',
        }),
      )
      .optional(),
    /** How far the provider's clock and the relay's may disagree on a token's times (s). */
    clockToleranceSec: z.number().int().min(0).max(300).default(60),
    /** Explicit mapping: e-mail address -> extensions (and numbers), before the users and the directory. */
    users: z
      .record(
        // Each key is checked below (relayConfigSchema) by the one rule of what an address is
        // and when two are one (src-shared/rules/email-address.ts), so the message can name it.
        z.string(),
        z
          .object({
            extensions: extensionList,
            // Full international numbers, matched exactly (NumberSet's exactOnly): a short one
            // would match nothing, and by a suffix it used to match colleagues' outbound calls.
            dids: z
              .array(
                z.string().refine(isInternationalDid, {
                  error: 'a DID is the full international number, + and the country code',
                }),
              )
              .default([]),
          })
          .strict(),
      )
      .default({}),
  })
  .strict()
  .superRefine((oidc, ctx) => {
    // Google's documented needs (docs/relay-protocol.md 2.3.1): said at start, not at the first
    // person's failed sign-in.
    if (!isGoogleIssuer(oidc.issuer)) return;
    if (oidc.scopes.includes('offline_access'))
      ctx.addIssue({
        code: 'custom',
        path: ['scopes'],
        message:
          'Google refuses the offline_access scope (invalid_scope): set "scopes": ["openid", "email", "profile"] and ' +
          '"authorizationParams": {"access_type": "offline", "prompt": "consent"} for a refresh token',
      });
    if (!oidc.clientSecret)
      ctx.addIssue({
        code: 'custom',
        path: ['clientSecret'],
        message:
          'Google\'s token endpoint wants the "Desktop app" client\'s secret even with PKCE: copy it from the client in Google Cloud console',
      });
    if (oidc.requiredClaims?.hd === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['requiredClaims'],
        message:
          'Google\'s issuer signs in every Google account: pin your Workspace domain with "requiredClaims": {"hd": "example.org"}',
      });
  });

/**
 * Gateway mode (docs/relay-protocol.md section 2.4): the relay holds the phone system's API key and
 * secret itself and keeps its own event stream to the service, so no desktop needs them. The key
 * and the secret are never written in this JSON: each is read at start from a file (readable by
 * the relay's user only) or an environment variable.
 */
const secretSource = (what: string) =>
  z
    .string({ error: `${what} must be text` })
    .min(1, { error: `${what} is empty` })
    .optional();
const gatewaySchema = z
  .object({
    /** A file holding the API key (Client ID), or the environment variable holding it. */
    apiKeyFile: secretSource('gateway.apiKeyFile'),
    apiKeyEnv: secretSource('gateway.apiKeyEnv'),
    /** A file holding the API secret (Client Secret), or the environment variable holding it. */
    secretFile: secretSource('gateway.secretFile'),
    secretEnv: secretSource('gateway.secretEnv'),
    /**
     * Keep the service's event stream open (default). With webhook secrets as well, both deliver
     * and each event is stored once (by event_id); false: webhooks only (the credential then serves
     * the e-mail directory for single sign-on).
     */
    stream: z.boolean().default(true),
  })
  .strict();

const tenantSchema = z
  .object({
    /** The tenant's service base URL; client tokens are validated against it. */
    baseUrl: z.string({ error: 'baseUrl is not an http(s) URL' }).refine(isHttpUrl, {
      error: 'baseUrl is not an http(s) URL',
    }),
    /** Webhook secrets accepted now (several during a rotation). Remove a secret to retire it. */
    secrets: z
      .array(z.string().min(1, { error: 'a webhook secret is empty' }), {
        error: 'no webhook secrets',
      })
      .default([]),
    /**
     * Who may read the tenant's stream. "service-token": any desktop holding a service access
     * token of the tenant (it chooses its own filter). "users": only the relay's users (enrolled
     * devices, and OpenID Connect sign-ins where configured), each receiving their own
     * extensions' and numbers' events alone (docs/relay-protocol.md section 2.2).
     */
    access: z
      .enum(['service-token', 'users'], { error: 'access must be "service-token" or "users"' })
      .default('service-token'),
    /** Organisation mode's single sign-on (needs access "users"). */
    oidc: oidcSchema.optional(),
    /** Gateway mode: the relay holds the service's credential and keeps its own stream. */
    gateway: gatewaySchema.optional(),
    /**
     * What the tenant's service speaks: "standard" (docs/wire-protocol.md) or "yeastar-p-series"
     * (docs/phone-systems/yeastar-p-series.md): its webhooks' body and signature (X-Signature,
     * Base64), and how a desktop's access token is checked (in the query). Desktops get the core's
     * envelopes either way. Absent: "standard".
     */
    phoneSystem: z
      .enum(PHONE_SYSTEMS, {
        error: `phoneSystem must be ${phoneSystemsJoined(' or ', '"')}`,
      })
      .optional(),
    /**
     * Where webhook deliveries may come from (IP addresses or CIDR ranges); absent or empty:
     * anywhere. The signature is checked either way; this also keeps replays of a captured
     * delivery out.
     */
    allowFrom: z
      .array(
        z.string().refine(isAddressOrRange, {
          error: 'an allowFrom entry is not an IP address or CIDR range (e.g. "203.0.113.0/24")',
        }),
      )
      .optional(),
  })
  .strict();

/** Redis nodes as "host:port" ("[v6 address]:port"), at least one. */
const redisNodes = (setting: string) =>
  z
    .array(
      z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, {
        error: `a ${setting} entry is "host:port" (e.g. "redis-sentinel-1:26379")`,
      }),
    )
    .min(1, { error: `${setting} needs at least one "host:port"` });

const storageSchema = z.discriminatedUnion(
  'kind',
  [
    z.object({ kind: z.literal('memory'), snapshotFile: z.string().min(1).optional() }).strict(),
    z
      .object({
        kind: z.literal('redis'),
        /**
         * redis://[user:password@]host:port[/db] (rediss:// for TLS). With `sentinel` or `cluster`
         * its host is not used: only the data nodes' user, password, database and TLS.
         */
        url: z
          .string({ error: 'storage.url (redis://...) is required for the redis backend' })
          .min(1, { error: 'storage.url (redis://...) is required for the redis backend' })
          .optional(),
        keyPrefix: z.string().optional(),
        /** A Redis command (and the readiness PING) that takes longer fails: 503, retried. */
        commandTimeoutMs: ms('a Redis command that takes longer fails').default(2_000),
        /** Redis Sentinel (store/redis-connection.ts): the primary is asked of these sentinels. */
        sentinel: z
          .object({
            /** The monitored primary's name (`sentinel monitor <name> ...` in sentinel.conf). */
            name: z.string().min(1, { error: 'storage.sentinel.name is the monitored name' }),
            nodes: redisNodes('storage.sentinel.nodes'),
            /** The sentinels' own password (`requirepass` in sentinel.conf), if they have one. */
            password: z.string().min(1).optional(),
          })
          .strict()
          .optional(),
        /** Redis Cluster: some of its nodes (the rest are learnt); a tenant's keys share one slot. */
        cluster: z
          .object({ nodes: redisNodes('storage.cluster.nodes') })
          .strict()
          .optional(),
        /**
         * A webhook is answered 200 only once this many replicas have its event (Redis WAIT), so
         * a failover does not lose what was acknowledged; 0: as soon as the primary has it.
         */
        minReplicas: z
          .number({ error: 'storage.minReplicas must be a whole number' })
          .int({ error: 'storage.minReplicas must be a whole number' })
          .min(0, { error: 'storage.minReplicas must be 0 or more' })
          .default(0),
        /** How long a webhook waits for those replicas before it is answered 503 (retried). */
        replicaTimeoutMs: ms('how long to wait for the replicas').default(1_000),
        /**
         * Gateway mode: the tenant's upstream lease (gateway/lease.ts), renewed every fifth of it;
         * another instance takes a dead holder's stream over within 1.2 times this.
         */
        upstreamLeaseMs: ms('the gateway stream lease')
          .min(2_000, { error: 'must be at least 2000 (2 s): renewals are a fifth of it' })
          .max(120_000, { error: 'must be at most 120000 (2 minutes)' })
          .default(10_000),
      })
      .strict()
      .superRefine((s, ctx) => {
        if (s.sentinel && s.cluster)
          ctx.addIssue({
            code: 'custom',
            path: ['cluster'],
            message: 'storage: give either sentinel or cluster, not both',
          });
        if (s.minReplicas > 0 && s.replicaTimeoutMs >= s.commandTimeoutMs)
          ctx.addIssue({
            code: 'custom',
            path: ['replicaTimeoutMs'],
            message: 'storage.replicaTimeoutMs must be less than storage.commandTimeoutMs',
          });
        if (!s.url && !s.sentinel && !s.cluster)
          ctx.addIssue({
            code: 'custom',
            path: ['url'],
            message:
              'storage.url (redis://...) is required for the redis backend (or storage.sentinel, or storage.cluster)',
          });
      }),
  ],
  { error: 'storage.kind must be "memory" or "redis"' },
);

const clientsSchema = z
  .object({
    /** Heartbeat interval the relay advertises to clients (ms). */
    heartbeatMs: ms('heartbeat interval').default(25_000),
    /** A client that sends nothing for this long is closed with 4000 (ms). */
    idleTimeoutMs: ms('idle time-out').default(60_000),
    /** A session is closed with 4002 (reconnect with a fresh token) after this long (ms). */
    authMaxAgeMs: ms('authorisation age').default(60 * 60_000),
    /** A client whose unsent data exceeds this is closed with 4008 and resumes from its cursor. */
    maxBufferedBytes: count('bytes').default(4 * 1024 * 1024),
    /** Events read from storage per page when a client resumes. */
    replayBatch: count('events').default(500),
    /** A hello must arrive within this long after the upgrade (ms). */
    helloTimeoutMs: ms('hello time-out').default(10_000),
    /** Frames a client may send per minute (a burst of 20 is allowed); beyond it: 4400. */
    maxFramesPerMinute: count('frames').default(60),
    /** Unsent bytes of all clients together; beyond it, clients that are not reading are dropped. */
    sendBudgetBytes: count('bytes').default(64 * 1024 * 1024),
    /** Sessions at once, in all. */
    maxSessions: count('sessions').default(20_000),
    /** Sessions at once from one client address (see trustProxy). */
    maxSessionsPerAddress: count('sessions').default(1_000),
    /** Sessions at once with one access token (one desktop needs 1, briefly 2). */
    maxSessionsPerToken: count('sessions').default(8),
  })
  .strict();

const authSchema = z
  .object({
    /** How long a positive answer of the service is trusted (ms). */
    positiveTtlMs: ms('positive cache').default(5 * 60_000),
    /** How long a negative answer is remembered (ms). */
    negativeTtlMs: ms('negative cache').default(10_000),
    /** Time-out of one check at the service (ms). */
    timeoutMs: ms('check time-out').default(5_000),
    /** Checks waiting on the service at once; more wait in a queue, fairly by client address. */
    maxInFlight: count('checks').default(100),
    /** Checks that may wait in the queue; beyond it (or after queueTimeoutMs) the answer is 503. */
    maxQueued: count('checks').default(10_000),
    queueTimeoutMs: ms('longest wait in the queue').default(10_000),
    /** Refused tokens per client address per minute (burst as much); beyond it unknown tokens get 429. */
    maxFailuresPerAddressPerMinute: count('refusals').default(20),
  })
  .strict();

const retentionSchema = z
  .object({
    /** Events kept per tenant at most (Redis: MAXLEN ~, approximate). */
    maxEvents: count('events').default(100_000),
    /** Events older than this are dropped (ms). */
    maxAgeMs: ms('event age').default(24 * 3600_000),
    /** How long an event_id is remembered for dedupe (ms); at least 25 hours. */
    dedupeTtlMs: ms('dedupe window')
      .min(EVENT_ID_WINDOW_MS, {
        error: 'must be at least 25 hours (the service retries for 24)',
      })
      .default(EVENT_ID_WINDOW_MS),
  })
  .strict();

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

const baseSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8787),
    tls: z
      .object({
        certFile: z.string().min(1, { error: 'tls needs both certFile and keyFile' }),
        keyFile: z.string().min(1, { error: 'tls needs both certFile and keyFile' }),
      })
      .strict()
      .optional(),
    /**
     * Behind a reverse proxy every client comes from the proxy's address: set this so the client
     * address (for the per-address limits) is the right-most X-Forwarded-For entry instead.
     */
    trustProxy: z.boolean().default(false),
    /**
     * Who may read `/metrics` and the per-tenant detail of `/healthz` (both name tenants):
     * `anywhere` (the default, as before), or `loopback`: only a client on this host (by the
     * socket's address, never X-Forwarded-For); others get 404 from /metrics and a bare
     * `{"ok":true}` from /healthz. Behind a reverse proxy on the same host every client is
     * loopback: restrict the paths at the proxy (README, TLS).
     */
    metricsFrom: z.enum(['anywhere', 'loopback']).default('anywhere'),
    maxBodyBytes: count('bytes').default(64 * 1024),
    http: z
      .object({
        /** A request whose headers have not all arrived by then is cut (ms). */
        headersTimeoutMs: ms('headers time-out').default(10_000),
        /** A request not fully received by then is cut (ms). */
        requestTimeoutMs: ms('request time-out').default(15_000),
      })
      .strict()
      .prefault({}),
    tenants: z.record(z.string(), tenantSchema),
    storage: storageSchema.prefault({ kind: 'memory' }),
    /**
     * Where the users of tenants with `access: "users"` are kept: with the memory event store, this
     * JSON file (written atomically, mode 0600); with Redis, in Redis beside the events.
     */
    users: z
      .object({
        file: z.string().min(1, { error: 'users.file is empty' }).optional(),
        /**
         * The key enrolment codes are stored under (HMAC-SHA-256), kept apart from the users: a
         * file (mode 0600) or an environment variable's name (users/code-key.ts). Without it codes
         * are stored as their plain SHA-256, which a copy of the users can be searched for.
         */
        codeKeyFile: z.string().min(1, { error: 'users.codeKeyFile is empty' }).optional(),
        codeKeyEnv: z.string().min(1, { error: 'users.codeKeyEnv is empty' }).optional(),
      })
      .strict()
      .refine((u) => u.codeKeyFile === undefined || u.codeKeyEnv === undefined, {
        error: 'users: give codeKeyFile or codeKeyEnv, not both',
      })
      .prefault({}),
    retention: retentionSchema.prefault({}),
    clients: clientsSchema.prefault({}),
    auth: authSchema.prefault({}),
    /**
     * The relay's own connections out (token checks, a gateway's stream, OpenID Connect): they go
     * through the proxy of HTTPS_PROXY / NO_PROXY (the environment) and trust, besides Node's roots
     * and the system's store, the CA certificates of this PEM file (outbound.ts).
     */
    outbound: z
      .object({
        caFile: z
          .string({ error: 'outbound.caFile must be the path of a PEM file' })
          .min(1, { error: 'outbound.caFile is empty: name a PEM file, or remove the setting' })
          .optional(),
      })
      .strict()
      .prefault({}),
    logLevel: z
      .enum(LOG_LEVELS, { error: `logLevel must be one of ${LOG_LEVELS.join(', ')}` })
      .default('info'),
    /** How long a graceful shutdown waits for in-flight webhooks (ms). */
    shutdownGraceMs: ms('drain time').default(10_000),
  })
  .strict();

export const relayConfigSchema = baseSchema.superRefine((config, ctx) => {
  const names = Object.keys(config.tenants);
  if (names.length === 0)
    ctx.addIssue({ code: 'custom', path: ['tenants'], message: 'no tenants configured' });
  for (const name of names)
    if (!TENANT_PATTERN.test(name))
      ctx.addIssue({
        code: 'custom',
        path: ['tenants', name],
        message: `tenant name "${name}" is not allowed (letters, digits, ".", "_", "-"; up to 63)`,
      });
  for (const name of names)
    if (config.tenants[name]!.oidc && config.tenants[name]!.access !== 'users')
      ctx.addIssue({
        code: 'custom',
        path: ['tenants', name, 'oidc'],
        message: `tenants.${name}.oidc needs "access": "users" (single sign-on admits the relay's users only)`,
      });
  for (const name of names) {
    const mapping = config.tenants[name]!.oidc?.users ?? {};
    for (const address of Object.keys(mapping))
      if (canonicalEmail(address) === null)
        ctx.addIssue({
          code: 'custom',
          path: ['tenants', name, 'oidc', 'users'],
          message: `tenants.${name}.oidc.users: "${address}" is not an e-mail address the relay compares (an ASCII local part, the address in NFC, a host name or IDN domain; no Unicode look-alikes such as the Kelvin sign)`,
        });
    for (const { first, second } of sameAddressPairs(Object.keys(mapping).map((e) => [e, e])))
      ctx.addIssue({
        code: 'custom',
        path: ['tenants', name, 'oidc', 'users'],
        message: `tenants.${name}.oidc.users maps "${first}" and "${second}", which are one address (case of A-Z and the domain's form do not count): keep one`,
      });
  }
  for (const name of names) {
    const t = config.tenants[name]!;
    // Events come from webhooks, or from the gateway's own stream: a tenant needs one of them.
    if (t.secrets.length === 0 && !t.gateway?.stream)
      ctx.addIssue({
        code: 'custom',
        path: ['tenants', name, 'secrets'],
        message: `no webhook secrets (tenants.${name}.secrets), and no gateway stream: give the tenant its webhook secret, or a gateway (tenants.${name}.gateway) to keep its own stream`,
      });
    const g = t.gateway;
    if (!g) continue;
    for (const [what, file, env] of [
      ['apiKey', g.apiKeyFile, g.apiKeyEnv],
      ['secret', g.secretFile, g.secretEnv],
    ] as const)
      if ((file === undefined) === (env === undefined))
        ctx.addIssue({
          code: 'custom',
          path: ['tenants', name, 'gateway'],
          message: `tenants.${name}.gateway needs exactly one of ${what}File (a file holding it) or ${what}Env (an environment variable holding it); never the value itself`,
        });
  }
  const withUsers = names.filter((n) => config.tenants[n]!.access === 'users');
  if (withUsers.length > 0 && config.storage.kind === 'memory' && !config.users.file)
    ctx.addIssue({
      code: 'custom',
      path: ['users', 'file'],
      message: `users.file is needed: tenant ${withUsers[0]} has access "users" and the memory store keeps its users in that file (or use the redis storage)`,
    });
  // The relay admits a client when its token works at the tenant's base URL; it cannot tell
  // which tenant a token belongs to. Two tenants behind one base URL would admit each other's
  // desktops to each other's stream, so that configuration is refused.
  const byUrl = new Map<string, string>();
  for (const [name, t] of Object.entries(config.tenants)) {
    if (!isHttpUrl(t.baseUrl)) continue;
    const key = sameServiceKey(t.baseUrl);
    const other = byUrl.get(key);
    if (other !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['tenants', name, 'baseUrl'],
        message: `tenants ${other} and ${name} have the same baseUrl; the relay checks a desktop's token against its tenant's base URL and cannot tell whose a token is, so each tenant needs its own`,
      });
    else byUrl.set(key, name);
  }
});

export type RelayConfig = z.output<typeof relayConfigSchema>;
export type TenantConfig = RelayConfig['tenants'][string];
export type ClientOptions = RelayConfig['clients'];
export type OidcConfig = NonNullable<TenantConfig['oidc']>;
export type GatewayConfig = NonNullable<TenantConfig['gateway']>;
export type RelayConfigInput = z.input<typeof relayConfigSchema>;

/** Parses and checks a configuration object; throws `relay config: <path>: <problem>; ...`. */
export function parseConfig(input: unknown): RelayConfig {
  const result = relayConfigSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.join('.');
    if (issue.code === 'unrecognized_keys')
      return issue.keys
        .map((k) => `${path ? path + '.' : ''}${k}: not a relay setting (check its spelling)`)
        .join('; ');
    // Messages that already name their setting stand alone.
    return path && !issue.message.startsWith(path) ? `${path}: ${issue.message}` : issue.message;
  });
  throw new Error('relay config: ' + problems.join('; '));
}

/** Google's issuer (OpenID Connect discovery at accounts.google.com; the legacy form without https). */
function isGoogleIssuer(issuer: string): boolean {
  return /^(https:\/\/)?accounts\.google\.com\/?$/i.test(issuer.trim());
}

/**
 * Entra ID's multi-tenant authorities (/common and /organizations, v1 or v2.0), whose
 * discovery documents name the issuer `https://login.microsoftonline.com/{tenantid}/v2.0` (a
 * template), or an issuer holding that template: whatever the host (national clouds, a proxy).
 */
function isEntraMultiTenantIssuer(issuer: string): boolean {
  if (/\{tenantid\}|%7btenantid%7d/i.test(issuer)) return true;
  try {
    const path = new URL(issuer).pathname.toLowerCase().replace(/\/+$/, '');
    return /^\/(common|organizations)(\/v2\.0)?$/.test(path);
  } catch {
    return false;
  }
}

// Kept here so the relay's modules import it from the config, as before the split.
export { addressList };
export type { LogLevel };
