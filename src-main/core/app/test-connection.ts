import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import type { TestConnectionResult } from '../../ipc/contract.ts';
import type { Logger } from '../log.ts';
import type { DirectoryEntry } from './directory.ts';
import { normalizeNumber } from './phone.ts';

/**
 * "Test connection" in the settings window: exchanges the draft key and secret for a token and
 * lists the extensions, then says in plain words what happened and what to do. Nothing is saved.
 */
export interface ConnectionProbe {
  /** The access token's value (ServiceClient.getToken(key, secret).accessToken). */
  getToken(): Promise<string>;
  listExtensions(accessToken: string): Promise<DirectoryEntry[]>;
}

export interface TestConnectionInput {
  baseUrl: string;
  apiKey: string;
  /** The secret to test: the draft one, or the stored one. */
  secret: string | null;
  extensions: string[];
  defaultRegion: string;
}

export interface TestConnectionDeps {
  /** Builds a probe (a ServiceClient on the draft base URL, key and secret). */
  createProbe: (input: TestConnectionInput & { secret: string }) => ConnectionProbe;
  logger: Logger;
  /** Best-effort address of this computer towards `host`; defaults to the UDP-route trick. */
  localAddress?: (host: string) => Promise<string | null>;
}

const DEFAULT_REMEDY: Record<number, string> = {
  10001:
    'Correct the API key and secret; regenerate the key in the admin console if the secret is lost.',
  10002: 'Try again; if it keeps happening, check this computer’s clock.',
  10003:
    'Edit the API key in the admin console and grant the missing scope (extension list and call events).',
  10004: "Add this computer's IP address to the API key's allowlist in the admin console.",
};

interface ErrorLike {
  errcode?: unknown;
  remedy?: unknown;
  kind?: unknown;
  message?: unknown;
  status?: unknown;
}

/** Checks the base URL the way the service client will use it: https, or http for this computer. */
export function checkBaseUrl(raw: string): { ok: true; url: URL } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return {
      ok: false,
      message: 'The service address is not a complete address (e.g. https://acme.example.com).',
    };
  }
  const local =
    url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local))
    return { ok: false, message: 'The service address must start with https://.' };
  if (url.username || url.password)
    return { ok: false, message: 'The service address must not contain a user name or password.' };
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
  const base = checkBaseUrl(input.baseUrl);
  if (!base.ok)
    return {
      ok: false,
      message: base.message,
      remedy: 'Enter the address your administrator gave you.',
    };
  if (!input.apiKey.trim())
    return {
      ok: false,
      message: 'The API key is empty.',
      remedy: 'Paste the API key from the admin console.',
    };
  if (!input.secret)
    return {
      ok: false,
      message: 'No API secret is set.',
      remedy: 'Paste the API secret shown when the key was created.',
    };
  const probe = deps.createProbe({ ...input, secret: input.secret });
  let step: 'token' | 'list' = 'token';
  try {
    const token = await probe.getToken();
    step = 'list';
    const list = await probe.listExtensions(token);
    const result: TestConnectionResult = {
      ok: true,
      message: `Connected. The service lists ${list.length} extension${list.length === 1 ? '' : 's'}.`,
      extensionCount: list.length,
    };
    const mine = input.extensions[0];
    if (mine) {
      const key = normalizeNumber(mine, input.defaultRegion);
      const found = list.find((e) => normalizeNumber(e.number, input.defaultRegion) === key);
      if (found) {
        result.extensionName = found.callerIdName;
        result.message = `Connected. Extension ${mine} belongs to ${found.callerIdName}.`;
      } else {
        result.message = `Connected, but extension ${mine} is not in the service's list of ${list.length}.`;
        result.remedy = 'Check the extension number.';
      }
    }
    return result;
  } catch (err) {
    return explainFailure(err as ErrorLike, step, base.url, deps);
  }
}

async function explainFailure(
  err: ErrorLike,
  step: 'token' | 'list',
  base: URL,
  deps: TestConnectionDeps,
): Promise<TestConnectionResult> {
  const errcode = typeof err?.errcode === 'number' ? err.errcode : undefined;
  const remedy =
    typeof err?.remedy === 'string' && err.remedy
      ? err.remedy
      : errcode !== undefined
        ? DEFAULT_REMEDY[errcode]
        : undefined;
  const text = typeof err?.message === 'string' ? err.message : '';
  deps.logger.info('connection test failed', { step, errcode, kind: err?.kind });
  switch (errcode) {
    case 10001:
      return { ok: false, errcode, message: 'The service rejected the API key or secret.', remedy };
    case 10002:
      return {
        ok: false,
        errcode,
        message: 'The service said the access token had already expired.',
        remedy,
      };
    case 10003:
      return {
        ok: false,
        errcode,
        message:
          step === 'list'
            ? 'Signed in, but the API key may not list extensions (missing scope).'
            : 'The API key lacks a required scope.',
        remedy,
      };
    case 10004: {
      const seen = ipInMessage(text);
      if (seen)
        return {
          ok: false,
          errcode,
          ipToAllow: seen,
          message: `The service refused this computer's address (${seen}, as the service sees it).`,
          remedy,
        };
      const local = await (deps.localAddress ?? outboundAddress)(base.hostname).catch(() => null);
      // A service on this computer or this private network sees the local address itself.
      const host = base.hostname.replace(/^\[|\]$/g, '');
      if (local && (host === 'localhost' || (isIP(host) !== 0 && isPrivate(host)))) {
        return {
          ok: false,
          errcode,
          ipToAllow: local,
          message: `The service refused this computer's address, ${local} (the service is on this network, so that is the address it sees).`,
          remedy,
        };
      }
      if (local && !isPrivate(local)) {
        return {
          ok: false,
          errcode,
          ipToAllow: local,
          message: `The service refused this computer's address. This computer's outbound address is ${local}.`,
          remedy,
        };
      }
      return {
        ok: false,
        errcode,
        ...(local ? { ipToAllow: local } : {}),
        message: local
          ? `The service refused this computer's address. Locally this computer is ${local}, a private address: the allowlist needs this computer's public IP as the service sees it (your network administrator knows it).`
          : "The service refused this computer's address: the allowlist needs this computer's public IP as the service sees it.",
        remedy,
      };
    }
  }
  const kind = typeof err?.kind === 'string' ? err.kind : '';
  if (
    kind === 'network' ||
    kind === 'timeout' ||
    /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|fetch failed|timed? ?out|ETIMEDOUT|ECONNRESET/i.test(text)
  ) {
    return {
      ok: false,
      message: `Could not reach ${base.host}.`,
      remedy: 'Check the service address and this computer’s network connection.',
    };
  }
  if (errcode !== undefined)
    return {
      ok: false,
      errcode,
      message: `The service answered with error ${errcode}.`,
      ...(remedy ? { remedy } : {}),
    };
  return {
    ok: false,
    message: `The service gave an unexpected answer${kind ? ` (${kind})` : ''}.`,
    remedy: 'Check the service address; try again later.',
  };
}
