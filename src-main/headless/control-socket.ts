/**
 * The running runner's control socket: how `screenpop-headless dial <number>` uses the sign-in of
 * a runner already running for this user rather than a token of its own (a Yeastar P-Series API
 * application holds at most 8 tokens: docs/phone-systems/yeastar-p-series.md section 2), and how
 * that runner learns of the dial before its ring arrives (its own call, never a pop:
 * core/events/own-dials.ts).
 *
 * Why a socket, and why this one (README "dial"): the token itself never leaves the runner (a
 * token handed to another process would be a secret in transit, and a second holder to release
 * it); the runner's own CallControl does the dial. The socket is a Unix domain socket in a folder
 * only the user can enter: `$XDG_RUNTIME_DIR/screenpop/` (per user, 0700, cleared at logout) or
 * `<tmpdir>/screenpop-<uid>/`, created 0700 and refused when it is not a folder the user owns
 * with no group or other permission (a folder someone else made first); the socket itself is
 * chmod 0600. Its name is a hash of the phone system, address and API key: only a runner with the
 * same settings answers. Windows (named pipes, whose default ACL lets other users in) is not
 * served: `dial` signs in itself there.
 *
 * Protocol: one JSON line each way, then the connection closes. Request `{"type":"dial","number":
 * "..."}` (at most MAX_REQUEST_BYTES); answer the port's result (`{"ok":true,"callId":"..."}` or
 * `{"ok":false,"refusal":...,"words":[...],"message":...}`), validated at the client's boundary.
 */
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import { isMessageId } from '../../src-shared/i18n/catalogue.ts';
import { isCallId, isCallRefusal } from '../../src-shared/api/call-api.ts';
import { english, type Phrase, type Words } from '../../src-shared/i18n/phrase.ts';
import type { CallControlResult } from '../core/ports/call-control.ts';
import type { Settings } from '../core/settings/types.ts';

/** A request larger than this is not one of ours: the connection is closed. */
export const MAX_REQUEST_BYTES = 1024;
/** An answer larger than this is not one of ours. */
export const MAX_ANSWER_BYTES = 16 * 1024;
/** How long `dial` waits for the running runner (its dial is one request of at most 15 s). */
export const CONTROL_TIMEOUT_MS = 20_000;
/** How long the server gives a client to send its request. */
const REQUEST_TIMEOUT_MS = 5_000;

export interface ControlPlace {
  /** The folder only the user may enter. */
  dir: string;
  /** The socket in it. */
  path: string;
}

/**
 * Where the control socket of a runner with these settings is, for this user; null where none is
 * served (Windows, or no user id).
 */
export function controlPlace(
  settings: Pick<Settings, 'phoneSystem' | 'baseUrl' | 'apiKey'> &
    Partial<Pick<Settings, 'relayUrl' | 'relayTenant'>>,
  env: { XDG_RUNTIME_DIR?: string | undefined },
  platform: NodeJS.Platform = process.platform,
  uid: number | undefined = process.getuid?.(),
): ControlPlace | null {
  if (platform === 'win32' || uid === undefined) return null;
  const runtime = env.XDG_RUNTIME_DIR?.trim();
  const dir =
    runtime && runtime.startsWith('/')
      ? join(runtime, 'screenpop')
      : join(tmpdir(), `screenpop-${uid}`);
  const id = createHash('sha256')
    .update(
      JSON.stringify(
        settings.baseUrl
          ? [settings.phoneSystem, settings.baseUrl, settings.apiKey]
          : // Organisation mode (the relay alone): one runner per relay and tenant.
            ['organisation', settings.relayUrl, settings.relayTenant],
      ),
    )
    .digest('hex')
    .slice(0, 16);
  // A Unix socket's path is at most 104-108 bytes: the name is short.
  return { dir, path: join(dir, `runner-${id}.sock`) };
}

/**
 * The folder, made 0700 if missing, and checked: a folder (not a link), owned by `uid`, with no
 * group or other permission. Anything else throws (nobody else's folder is ever used).
 */
export async function ownerOnlyFolder(dir: string, uid = process.getuid?.()): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await lstat(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a folder`);
  if (uid !== undefined && st.uid !== uid) throw new Error(`${dir} belongs to another user`);
  if ((st.mode & 0o077) !== 0) throw new Error(`${dir} is open to other users`);
}

/** Whether something answers on the socket at `path` now. */
function listening(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface ControlServer {
  close(): Promise<void>;
}

/**
 * Serves `dial` requests on the control socket; null when it cannot (the folder is not the user's
 * alone, another runner of the same settings serves it already, or listening failed: said in the
 * log, and `dial` then signs in itself).
 */
export async function serveControl(opts: {
  place: ControlPlace;
  dial: (number: string) => Promise<CallControlResult>;
  logger: Logger;
  clock: Clock;
}): Promise<ControlServer | null> {
  const { place, logger, clock } = opts;
  try {
    await ownerOnlyFolder(place.dir);
    if (await listening(place.path)) {
      logger.warn('another runner with these settings already serves dial; not serving it here');
      return null;
    }
    await unlink(place.path).catch(() => undefined); // a socket left by a runner that died
  } catch (error) {
    logger.warn('the control socket is not served (dial will sign in itself)', { error });
    return null;
  }
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const timer = clock.setTimeout(() => socket.destroy(), REQUEST_TIMEOUT_MS);
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (Buffer.byteLength(buffer) > MAX_REQUEST_BYTES) {
        clock.clearTimeout(timer);
        socket.destroy();
        return;
      }
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      clock.clearTimeout(timer);
      socket.removeAllListeners('data');
      void answer(buffer.slice(0, end)).then(
        (result) => socket.end(`${JSON.stringify(result)}\n`),
        () => socket.destroy(),
      );
    });
  });
  const answer = async (
    line: string,
  ): Promise<CallControlResult | { ok: false; error: string }> => {
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch {
      return { ok: false, error: 'not-json' };
    }
    const r = request as { type?: unknown; number?: unknown } | null;
    if (r?.type !== 'dial' || typeof r.number !== 'string')
      return { ok: false, error: 'unknown-request' };
    logger.info('dial asked on the control socket');
    return opts.dial(r.number);
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(place.path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    await chmod(place.path, 0o600);
  } catch (error) {
    server.close();
    logger.warn('the control socket is not served (dial will sign in itself)', { error });
    return null;
  }
  server.on('error', (error) => logger.warn('control socket error', { error }));
  logger.info('serving dial on the control socket');
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The answer of a running runner, as the port's result, or undefined when it is not one. */
export function parseControlAnswer(text: string): CallControlResult | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  if (v.ok === true) {
    const callId = v.callId;
    if (callId !== undefined && (typeof callId !== 'string' || !isCallId(callId))) return undefined;
    return callId === undefined ? { ok: true } : { ok: true, callId };
  }
  if (v.ok !== false || !isCallRefusal(v.refusal)) return undefined;
  const words = wordsOf(v.words);
  if (!words) return undefined;
  return {
    ok: false,
    refusal: v.refusal,
    words,
    message: english(words),
  };
}

/** Phrases from another process: known ids only, values plain text or numbers (or phrases). */
function wordsOf(value: unknown, depth = 0): Words | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > 8 || depth > 2)
    return undefined;
  const out: Phrase[] = [];
  for (const p of value) {
    const { id, values } = (p ?? {}) as { id?: unknown; values?: unknown };
    if (typeof id !== 'string' || !isMessageId(id)) return undefined;
    if (values === undefined) {
      out.push({ id });
      continue;
    }
    if (values === null || typeof values !== 'object') return undefined;
    const clean: Record<string, string | number | Words> = {};
    for (const [k, v] of Object.entries(values as Record<string, unknown>)) {
      if (typeof v === 'string') clean[k] = v.slice(0, 256);
      else if (typeof v === 'number' && Number.isFinite(v)) clean[k] = v;
      else {
        const nested = wordsOf(v, depth + 1);
        if (!nested) return undefined;
        clean[k] = nested;
      }
    }
    out.push({ id, values: clean });
  }
  return out;
}

/**
 * Asks the runner serving `place` to dial `number`. Undefined when no runner serves it (no
 * socket, nobody listening, the folder not the user's alone): the caller then signs in itself. A
 * runner that took the request and then failed to answer usably is a refusal (`unreachable`):
 * the call may have been placed, so it is not tried a second time.
 */
export async function dialThroughRunner(
  place: ControlPlace,
  number: string,
  clock: Clock,
  timeoutMs = CONTROL_TIMEOUT_MS,
): Promise<CallControlResult | 'no-answer' | undefined> {
  try {
    await ownerOnlyFolder(place.dir);
  } catch {
    return undefined;
  }
  return new Promise((resolve) => {
    const socket = createConnection(place.path);
    let connected = false;
    let text = '';
    const timer = clock.setTimeout(() => socket.destroy(), timeoutMs);
    const done = (result: CallControlResult | 'no-answer' | undefined) => {
      clock.clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    socket.setEncoding('utf8');
    socket.once('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify({ type: 'dial', number })}\n`);
    });
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_ANSWER_BYTES) done('no-answer');
    });
    socket.once('end', () => done(parseControlAnswer(text.trim()) ?? 'no-answer'));
    socket.once('error', () => done(connected ? 'no-answer' : undefined));
    socket.once('close', () => done(connected ? 'no-answer' : undefined));
  });
}
