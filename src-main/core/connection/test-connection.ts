import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import type { TestConnectionResult } from '../ports/views.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import {
  describeError,
  hintPhrase,
  isServiceError,
  type FaultId,
  type HintId,
} from '../../../src-shared/api/service-errors.ts';
import type { DirectoryEntry } from '../contacts/directory.ts';
import { numberKey } from '../numbers/phone-number.ts';
import { PLAIN_ENGLISH, type TranslatorSource } from '../../../src-shared/i18n/locale-state.ts';
import type { MessageId } from '../../../src-shared/i18n/catalogue.ts';
import type { Translator } from '../../../src-shared/i18n/translator.ts';
import { render } from '../../../src-shared/i18n/phrase.ts';
import { isLoopbackHost, isSecureOrLoopback } from '../../../src-shared/net/loopback.ts';
import type { PhoneSystem } from '../settings/types.ts';
import { wireFor } from '../../../src-shared/wire/index.ts';
import { ProxyConfigError } from '../../../src-shared/net/proxy.ts';

/**
 * "Test connection" in the settings window: exchanges the draft key and secret for a token (or,
 * on the application the running connection signs in with, uses its token: no new sign-in) and
 * lists the extensions, then says in plain words what happened and what to do, with the set-up
 * checks of the phone system (Yeastar: one application per desktop or the relay's gateway mode,
 * Call Status Monitor on trunks, the models with the API). Nothing is saved.
 */
export interface ConnectionProbe {
  /** The access token's value (ServiceClient.getToken(key, secret).accessToken, or the running one). */
  getToken(): Promise<string>;
  listExtensions(accessToken: string): Promise<DirectoryEntry[]>;
  /**
   * Gives back a token this probe took for the test (`del_token` where the phone system has it),
   * so that a test does not hold one of the application's tokens for 30 minutes. Absent on the
   * running connection's probe: its token is not the test's to give back.
   */
  release?(accessToken: string): Promise<void>;
}

export interface TestConnectionInput {
  /** The phone system the probe speaks (src-shared/wire/); the standard service if absent. */
  phoneSystem?: PhoneSystem;
  baseUrl: string;
  apiKey: string;
  /** The secret to test: the draft one, or the stored one. */
  secret: string | null;
  /** The probe is the running connection's (its token): no secret is needed. */
  running?: boolean;
  extensions: string[];
  defaultRegion: string;
}

export interface TestConnectionDeps {
  /** Builds a probe (a ServiceClient on the draft base URL, key and secret). */
  createProbe: (input: TestConnectionInput & { secret: string }) => ConnectionProbe;
  logger: Logger;
  /** Best-effort address of this computer towards `host`; defaults to the UDP-route trick. */
  localAddress?: (host: string) => Promise<string | null>;
  /** The language of the result's words (English, plain, when not given). */
  words?: TranslatorSource;
}

/** Checks the base URL the way the service client will use it: https, or http for this computer. */
export function checkBaseUrl(
  raw: string,
): { ok: true; url: URL } | { ok: false; message: MessageId } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { ok: false, message: 'status.test.address-incomplete' };
  }
  if (!isSecureOrLoopback(url)) return { ok: false, message: 'status.test.address-https' };
  if (url.username || url.password)
    return { ok: false, message: 'status.test.address-credentials' };
  return { ok: true, url };
}

/**
 * This computer's outbound address towards `host`: connecting a UDP socket sends nothing but makes
 * the OS pick the route and source address. Behind NAT this is a private address, not what the
 * service sees, which is why the result says which it is.
 */
export async function outboundAddress(host: string): Promise<string | null> {
  const h = host.replace(/^\[|\]$/g, '');
  const family = isIP(h) === 6 ? 'udp6' : 'udp4';
  return new Promise((resolve) => {
    const socket = createSocket(family);
    const done = (v: string | null) => {
      try {
        socket.close();
      } catch {
        /* already closed */
      }
      resolve(v);
    };
    socket.once('error', () => done(null));
    try {
      socket.connect(443, h, () => {
        try {
          done(socket.address().address);
        } catch {
          done(null);
        }
      });
    } catch {
      done(null);
    }
  });
}

function isPrivate(ip: string): boolean {
  return /^(10\.|127\.|192\.168\.|169\.254\.|172\.(1[6-9]|2\d|3[01])\.|::1$|fc|fd|fe80)/i.test(ip);
}

/** An IP address the service reported in its error text, if it did (some services say "IP x not allowed"). */
function ipInMessage(text: string): string | null {
  for (const m of text.matchAll(/[0-9a-fA-F:.]{7,45}/g)) if (isIP(m[0])) return m[0];
  return null;
}

export async function testConnection(
  input: TestConnectionInput,
  deps: TestConnectionDeps,
): Promise<TestConnectionResult> {
  const t = (deps.words ?? PLAIN_ENGLISH).current();
  const base = checkBaseUrl(input.baseUrl);
  if (!base.ok)
    return { ok: false, message: t.t(base.message), remedy: t.t('status.test.address-remedy') };
  if (!input.apiKey.trim())
    return {
      ok: false,
      message: t.t('status.test.key-empty'),
      remedy: t.t('status.test.key-remedy'),
    };
  if (!input.secret && !input.running)
    return {
      ok: false,
      message: t.t('status.test.secret-missing'),
      remedy: t.t('status.test.secret-remedy'),
    };
  let probe: ConnectionProbe;
  try {
    probe = deps.createProbe({ ...input, secret: input.secret ?? '' });
  } catch (err) {
    // The way out cannot be built (a "This proxy" setting without a usable address): say why and
    // what to do, not "the test could not run".
    if (err instanceof ProxyConfigError && err.words)
      return {
        ok: false,
        message: render(err.words.reason, t),
        remedy: render(err.words.remedy, t),
      };
    throw err;
  }
  let step: 'token' | 'list' = 'token';
  let taken: string | null = null;
  try {
    const token = await probe.getToken();
    if (probe.release) taken = token;
    step = 'list';
    const list = await probe.listExtensions(token);
    const result: TestConnectionResult = {
      ok: true,
      message: t.t('status.test.connected-count', { count: list.length }),
      extensionCount: list.length,
    };
    const mine = input.extensions[0];
    if (mine) {
      const key = numberKey(mine, input.defaultRegion);
      const found = list.find((e) => numberKey(e.number, input.defaultRegion) === key);
      if (found) {
        result.extensionName = found.callerIdName;
        result.message = t.t('status.test.connected-named', {
          extension: mine,
          name: found.callerIdName,
        });
      } else {
        result.message = t.t('status.test.connected-missing', {
          extension: mine,
          count: list.length,
        });
        result.remedy = t.t('status.test.check-extension');
      }
    }
    return withChecks(result, input.phoneSystem, null, t);
  } catch (err) {
    const failed = await explainFailure(err, step, base.url, deps, t);
    return withChecks(failed, input.phoneSystem, describeError(err).fault, t);
  } finally {
    if (taken !== null) await giveBack(probe, taken, deps.logger);
  }
}

/** A token taken for the test, given back; a failure only costs that token's 30 minutes. */
async function giveBack(probe: ConnectionProbe, token: string, logger: Logger): Promise<void> {
  try {
    await probe.release?.(token);
  } catch (err) {
    logger.info('the test token was not revoked; it expires by itself', {
      fault: describeError(err).fault,
    });
  }
}

/**
 * The set-up checks a phone system needs said (docs/phone-systems/yeastar-p-series.md section 8):
 * on Yeastar, one API application serves one desktop (8 tokens; a PBX may even keep one per
 * application), so a team uses the relay's gateway mode; a trunk without Call Status Monitor
 * sends outside calls without a caller; and where the API is not there at all, which models have it.
 * And where the system keeps the allowlist an address to allow goes on (its `ipToAllowMessage`).
 */
function withChecks(
  result: TestConnectionResult,
  phoneSystem: PhoneSystem | undefined,
  fault: FaultId | null,
  t: Translator,
): TestConnectionResult {
  const wire = wireFor(phoneSystem);
  const said =
    result.ipToAllow && wire.ipToAllowMessage
      ? { ...result, ipToAllowMessage: wire.ipToAllowMessage }
      : result;
  const setup = wire.setupChecks;
  if (!setup) return said;
  const checks: string[] = [];
  if (setup.apiMissing && (fault === 'ys-api-off' || fault === 'not-phone-system'))
    checks.push(t.t(setup.apiMissing));
  checks.push(...setup.always.map((id) => t.t(id)));
  return { ...said, checks };
}

/**
 * A failed test in the words the tray and the runner use for the same fault (service-errors.ts),
 * plus what only a test knows: which call failed, and for 10004 which address to allow.
 */
async function explainFailure(
  err: unknown,
  step: 'token' | 'list',
  base: URL,
  deps: TestConnectionDeps,
  t: Translator,
): Promise<TestConnectionResult> {
  const fault = describeError(err);
  deps.logger.info('connection test failed', { step, errcode: fault.errcode, fault: fault.fault });
  const result: TestConnectionResult = {
    ok: false,
    message: render(fault.words.reason, t),
    remedy: render(fault.words.remedy, t),
    ...(fault.errcode !== undefined && { errcode: fault.errcode }),
  };
  const kind = isServiceError(err) ? err.kind : undefined;
  // The standard service's scope names; other phone systems say theirs in their own fault words.
  if (fault.fault === 'insufficient-scope' && step === 'list')
    result.message = render([...fault.words.reason, hintPhrase('scope-extension-list')], t);
  // An address to allow (not one blocked for failed logins: allowing it changes nothing).
  if (kind === 'ip' && fault.fault !== 'ys-ip-blocked') {
    const { ip, hintId } = await addressToAllow(isServiceError(err) ? err.message : '', base, deps);
    result.message = render([...fault.words.reason, hintPhrase(hintId, ip ? { ip } : {})], t);
    if (ip) result.ipToAllow = ip;
  }
  return result;
}

/**
 * For an address not allowed (10004; Yeastar's 70087): the address the service reported in its error text if it did, else this computer's
 * outbound address, and which of the two it is (behind NAT the local address is not the one the
 * service sees).
 */
async function addressToAllow(
  serviceText: string,
  base: URL,
  deps: TestConnectionDeps,
): Promise<{ ip: string | null; hintId: HintId }> {
  const seen = ipInMessage(serviceText);
  if (seen) return { ip: seen, hintId: 'ip-reported' };
  const local = await (deps.localAddress ?? outboundAddress)(base.hostname).catch(() => null);
  if (!local) return { ip: null, hintId: 'ip-unknown' };
  // A service on this computer or this private network sees the local address itself.
  const host = base.hostname.replace(/^\[|\]$/g, '');
  if (isLoopbackHost(host) || (isIP(host) !== 0 && isPrivate(host)))
    return { ip: local, hintId: 'ip-same-network' };
  return { ip: local, hintId: isPrivate(local) ? 'ip-private' : 'ip-outbound' };
}
