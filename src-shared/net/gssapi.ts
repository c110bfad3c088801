/**
 * The OS's Kerberos through the npm `kerberos` package (mongodb-js/kerberos: GSSAPI on Linux and
 * macOS, with the user's ticket cache; SSPI on Windows, with the logged-on user), loaded on first
 * use. It is an optional dependency: where it is not installed or its native part cannot load,
 * `loadGssapi` rejects with a GssapiUnavailable that says why and what to install, and the proxy
 * tunnel answers with the schemes it has (proxy-auth.ts).
 *
 * A failed step becomes a GssapiError whose `problem` says what the user can do: no ticket or an
 * expired one (sign in again: `kinit`, or lock and unlock a domain PC), the proxy's service
 * principal unknown to the KDC (IT's to register), anything else (its first line). The binding's
 * messages carry no token; a token is never put in an error.
 */

import { readFileSync } from 'node:fs';

export type GssapiProblem = 'no-ticket' | 'expired' | 'unknown-service' | 'other';

export class GssapiUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GssapiUnavailable';
  }
}

export class GssapiError extends Error {
  readonly problem: GssapiProblem;

  constructor(problem: GssapiProblem, message: string) {
    super(message);
    this.name = 'GssapiError';
    this.problem = problem;
  }
}

/** One client security context with a service (`HTTP@proxy.example.com`). */
export interface GssapiContext {
  /** The next token (base64) answering the service's (base64, '' at first). */
  step(challenge: string): Promise<string>;
  /** The client's principal (`user@REALM`, or `DOMAIN\user` on Windows) once known. */
  identity(): string | undefined;
}

export interface Gssapi {
  client(service: string): GssapiContext;
}

/** The part of the `kerberos` package used here. */
interface KerberosModule {
  initializeClient(
    service: string,
    options: { mechOID?: number },
  ): Promise<{
    step(challenge: string): Promise<string>;
    username: string | null;
    contextComplete: boolean;
  }>;
  GSS_MECH_OID_SPNEGO: number;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
}

/** What a GSSAPI/SSPI failure's words say the user can do. */
export function gssapiProblem(message: string): GssapiProblem {
  if (/expired|SEC_E_CONTEXT_EXPIRED|KRB_AP_ERR_TKT_EXPIRED/i.test(message)) return 'expired';
  if (
    /No credentials were supplied|credentials cache file .* not found|No Kerberos credentials|SEC_E_NO_CREDENTIALS|cannot find mechanisms to negotiate/i.test(
      message,
    )
  )
    return 'no-ticket';
  if (/not found in Kerberos database|SEC_E_TARGET_UNKNOWN|Server not found/i.test(message))
    return 'unknown-service';
  return 'other';
}

/**
 * The default principal of an MIT credential cache file (format 3 or 4, big-endian: version,
 * v4's header, then the principal's name type, component count, realm and components), or
 * undefined for anything else. Only names the user in the status: nothing here is a secret.
 */
export function ccachePrincipal(data: Buffer): string | undefined {
  try {
    const version = data.readUInt16BE(0);
    if (version !== 0x0503 && version !== 0x0504) return undefined;
    let at = 2;
    if (version === 0x0504) at += 2 + data.readUInt16BE(2);
    at += 4; // name type
    const count = data.readUInt32BE(at);
    at += 4;
    if (count < 1 || count > 8) return undefined;
    const text = () => {
      const length = data.readUInt32BE(at);
      if (length > 256 || at + 4 + length > data.length) throw new RangeError('too long');
      const value = data.subarray(at + 4, at + 4 + length).toString('utf8');
      at += 4 + length;
      return value;
    };
    const realm = text();
    const parts = Array.from({ length: count }, text);
    return /^[\x21-\x7e]+$/.test(`${parts.join('/')}@${realm}`)
      ? `${parts.join('/')}@${realm}`
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Who Negotiate signs in as, for the status (the binding names the user only once the proxy
 * completes the context, which a proxy answering CONNECT with 200 does not): on Windows the
 * logged-on user (`DOMAIN\user`, what SSPI uses); elsewhere the default principal of the
 * ticket cache when it is a file (KRB5CCNAME `FILE:` or the default /tmp/krb5cc_<uid>); else
 * undefined (KCM, the kernel keyring, macOS's API cache: the status then says `Negotiate`).
 */
export function ticketOwner(
  env: Record<string, string | undefined> = process.env,
  platform: string = process.platform,
  uid: number | undefined = process.getuid?.(),
): string | undefined {
  if (platform === 'win32')
    return env.USERDOMAIN && env.USERNAME ? `${env.USERDOMAIN}\\${env.USERNAME}` : env.USERNAME;
  const name = env.KRB5CCNAME ?? (uid !== undefined ? `FILE:/tmp/krb5cc_${uid}` : undefined);
  if (!name) return undefined;
  const path = name.startsWith('FILE:') ? name.slice(5) : name.includes(':') ? undefined : name;
  if (!path) return undefined;
  try {
    return ccachePrincipal(readFileSync(path).subarray(0, 4096));
  } catch {
    return undefined;
  }
}

/** Turns the loaded binding into the Gssapi port (SPNEGO, the mechanism HTTP Negotiate uses). */
export function gssapiOf(
  mod: KerberosModule,
  owner: () => string | undefined = () => ticketOwner(),
): Gssapi {
  return {
    client(service) {
      let client: Awaited<ReturnType<KerberosModule['initializeClient']>> | undefined;
      const fail = (error: unknown): never => {
        const text = firstLine(error);
        throw new GssapiError(gssapiProblem(text), text);
      };
      return {
        async step(challenge) {
          try {
            client ??= await mod.initializeClient(service, { mechOID: mod.GSS_MECH_OID_SPNEGO });
            return (await client.step(challenge)) ?? '';
          } catch (error) {
            return fail(error);
          }
        },
        identity: () => client?.username || owner(),
      };
    },
  };
}

/** Loads the `kerberos` package; rejects with a GssapiUnavailable saying why. */
export async function loadGssapi(
  importer: () => Promise<unknown> = () => import('kerberos'),
): Promise<Gssapi> {
  let mod: KerberosModule;
  try {
    const loaded = (await importer()) as KerberosModule & { default?: KerberosModule };
    mod = loaded.default ?? loaded;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const text = firstLine(error);
    const absent =
      (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && !/\.node\b/.test(text);
    throw new GssapiUnavailable(
      absent
        ? 'Negotiate (Kerberos) needs the optional "kerberos" package, which is not installed (npm ci with libkrb5-dev on Linux)'
        : `Negotiate (Kerberos) is unavailable: the "kerberos" package did not load (${text})`,
    );
  }
  if (typeof mod.initializeClient !== 'function')
    throw new GssapiUnavailable(
      'Negotiate (Kerberos) is unavailable: the "kerberos" package is not usable',
    );
  return gssapiOf(mod);
}
