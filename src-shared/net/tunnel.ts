/**
 * An HTTP CONNECT tunnel through a forward proxy (RFC 9110 9.3.6): a TCP connection to the proxy,
 * `CONNECT host:port`, Basic credentials when the proxy has them, and the proxy's `200` before the
 * socket is handed over (to TLS for https/wss, as is for http/ws). Failures are `ProxyError`s that
 * name the proxy's host and port and never carry its credentials.
 */
import net from 'node:net';
import type { ProxyServer } from './proxy.ts';
import { ProxyError } from './proxy-error.ts';
import { GssapiError } from './gssapi.ts';
import {
  knownScheme,
  MAX_AUTH_LEGS,
  parseChallenges,
  type AuthExchange,
  type Challenge,
  type ProxyAuthenticator,
  type ProxyAuthScheme,
  type Unavailable,
} from './proxy-auth.ts';

export { ProxyError, type ProxyFailure } from './proxy-error.ts';

/** The proxy's answer head is small; anything larger is not a proxy speaking HTTP. */
const MAX_HEAD_BYTES = 16 * 1024;

function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export { ABANDON_OPTION } from '../stream/ws-socket.ts';

/**
 * A proxy's answer head: its final status (2xx to 5xx), or undefined when it is not an HTTP/1.x
 * status line we can act on (a 1xx to a CONNECT is not one either).
 */
function statusOf(head: Buffer): number | undefined {
  const line = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
  const match = /^HTTP\/1\.[01] ([2-5]\d\d)(?: |$)/.exec(line);
  return match ? Number(match[1]) : undefined;
}

/** The body of a 407 is read and dropped to keep the connection for the next leg, up to this. */
const MAX_BODY_BYTES = 64 * 1024;

/** One answer of the proxy's, head parsed (and a non-2xx answer's body read past). */
interface Answer {
  status: number;
  /** The status line's reason phrase, cleaned for a message (the proxy's own words). */
  words: string;
  authenticate: string[];
  /** The proxy will close the connection after this answer (or its body has no length). */
  closing: boolean;
  /** Bytes after a 2xx head: the tunnel's first bytes. */
  rest: Buffer;
}

/** What the proxy authentication of one tunnel took, for the log and the diagnostics. */
export interface AuthOutcome {
  proxy: string;
  scheme: ProxyAuthScheme;
  identity: string | undefined;
  /** Authenticated CONNECTs sent (Negotiate 1, NTLM 2, Basic 1). */
  legs: number;
  /** TCP connections it took (2 when the proxy closed after its first 407). */
  connections: number;
  ms: number;
}

export interface TunnelLimits {
  /**
   * The whole CONNECT (reaching the proxy, its answer's head to the last byte, every leg of its
   * authentication) must be done within this many ms of the call: an absolute deadline, so that a
   * proxy dripping its answer one byte at a time cannot hold the connection for ever.
   */
  deadlineMs: number;
  /** The caller gave up (a fetch aborted, a socket closed while connecting): end the tunnel now. */
  signal?: AbortSignal | undefined;
  /**
   * Answers the proxy's 407 (proxy-auth.ts). Without it, Basic alone, sent with the first CONNECT
   * when the proxy has credentials.
   */
  auth?: ProxyAuthenticator | undefined;
  /** Told once the proxy accepted an authenticated CONNECT. */
  onAuthenticated?: ((outcome: AuthOutcome) => void) | undefined;
}

/** The reason phrase of a status line: printable ASCII, at most 120 characters. */
function wordsOf(line: string): string {
  return line
    .replace(/^HTTP\/1\.[01] \d\d\d ?/, '')
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(0, 120);
}

/** Reads the proxy's answers one after the other on one socket. */
class AnswerReader {
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (a: Answer) => void; reject: (e: Error) => void } | undefined;
  private failure: Error | undefined;
  /** Bytes of a non-2xx body still to drop before the next answer. */
  private skip = 0;
  private readonly name: string;
  readonly socket: net.Socket;
  /** The proxy has ended its side (FIN or close): nothing more can be sent on this connection. */
  ended = false;

  constructor(socket: net.Socket, name: string) {
    this.socket = socket;
    this.name = name;
    socket.on('data', this.onData);
    socket.once('end', () => (this.ended = true));
    socket.once('close', () => (this.ended = true));
  }

  next(): Promise<Answer> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.parse();
    });
  }

  /** The socket failed or closed: the pending read (and every later one) rejects with `error`. */
  fail(error: Error): void {
    this.failure ??= error;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(this.failure);
  }

  detach(): void {
    this.socket.off('data', this.onData);
  }

  private readonly onData = (chunk: Buffer) => {
    if (this.skip > 0) {
      const dropped = Math.min(this.skip, chunk.length);
      this.skip -= dropped;
      chunk = chunk.subarray(dropped);
    }
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    this.parse();
  };

  private notHttp(): Error {
    return new ProxyError(
      'dropped',
      this.name,
      `the proxy ${this.name} sent an answer that is not HTTP`,
    );
  }

  private parse(): void {
    if (!this.waiting || this.skip > 0) return;
    const head = this.buffer;
    // Known as soon as the first line is there (or cannot be one): no need to wait for more.
    if (head.length >= 9 && !/^HTTP\/1\.[01] $/.test(head.subarray(0, 9).toString('latin1'))) {
      this.fail(this.notHttp());
      return;
    }
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > MAX_HEAD_BYTES) this.fail(this.notHttp());
      return;
    }
    const status = statusOf(head);
    if (status === undefined) {
      this.fail(this.notHttp());
      return;
    }
    const lines = head.subarray(0, end).toString('latin1').split('\r\n');
    const header = (name: string) =>
      lines
        .slice(1)
        .filter((l) => l.slice(0, name.length + 1).toLowerCase() === `${name}:`)
        .map((l) => l.slice(name.length + 1).trim());
    const version10 = lines[0]!.startsWith('HTTP/1.0');
    const connection = header('connection')
      .concat(header('proxy-connection'))
      .join(',')
      .toLowerCase();
    let closing = connection.includes('close') || (version10 && !connection.includes('keep-alive'));
    let rest = head.subarray(end + 4);
    if (status < 200 || status >= 300) {
      // Drop the body (an error page) so that the next leg's answer starts clean.
      const length = header('content-length')[0];
      const chunked = header('transfer-encoding').join(',').toLowerCase().includes('chunked');
      if (
        chunked ||
        length === undefined ||
        !/^\d{1,9}$/.test(length) ||
        Number(length) > MAX_BODY_BYTES
      ) {
        closing = true;
        rest = Buffer.alloc(0);
      } else {
        const size = Number(length);
        const now = Math.min(size, rest.length);
        this.skip = size - now;
        rest = rest.subarray(now);
      }
    }
    this.buffer = status >= 200 && status < 300 ? Buffer.alloc(0) : rest;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting.resolve({
      status,
      words: wordsOf(lines[0]!),
      authenticate: header('proxy-authenticate').concat(
        status === 401 ? header('www-authenticate') : [],
      ),
      closing,
      rest: status >= 200 && status < 300 ? rest : Buffer.alloc(0),
    });
  }
}

/** The token a challenge list gives `scheme` ('' when the scheme is offered bare). */
function tokenFor(challenges: Challenge[], scheme: ProxyAuthScheme): string | undefined {
  return challenges.find((c) => knownScheme(c.scheme) === scheme)?.data;
}

/**
 * Opens a tunnel to `target` through `proxy`. Resolves with the connected socket once the proxy
 * answered 2xx; rejects with a ProxyError otherwise or when the deadline passes first, and with an
 * AbortError when `limits.signal` aborts.
 *
 * A 407 is answered with the best scheme the proxy offers that `limits.auth` can use (Negotiate,
 * NTLM, Basic), every leg on the same connection (NTLM's type 1/2/3 must be); a proxy that closes
 * after its first 407, before any credentials, is reconnected to once. At most MAX_AUTH_LEGS
 * authenticated CONNECTs per tunnel: no handshake loops.
 *
 * Only the proxy's own answer (407, 403, 502, ...) is a decision of the proxy's. A connection
 * closed or reset before any answer, an answer that is not HTTP and one that does not end in time
 * are `dropped` / `timeout`: transient, like a network fault (net-errors.ts).
 */
export function openTunnel(
  proxy: ProxyServer,
  target: { host: string; port: number },
  limits: TunnelLimits,
): Promise<net.Socket> {
  const name = hostPort(proxy.host, proxy.port);
  const authority = hostPort(target.host, target.port);
  const { deadlineMs, signal } = limits;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const started = Date.now();
    let settled = false;
    let connected = false;
    let reader: AnswerReader | undefined;
    const finish = () => {
      settled = true;
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (error: Error) => {
      if (settled) return;
      finish();
      reader?.socket.destroy();
      reject(error);
    };
    const onAbort = () => fail(abortError(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(
      () =>
        fail(
          connected
            ? new ProxyError(
                'timeout',
                name,
                `the proxy ${name} did not complete its answer within ${Math.round(deadlineMs / 1000)} s`,
                { code: 'ETIMEDOUT' },
              )
            : new ProxyError(
                'unreachable',
                name,
                `the proxy ${name} could not be reached within ${Math.round(deadlineMs / 1000)} s`,
                { code: 'ETIMEDOUT' },
              ),
        ),
      deadlineMs,
    );

    /** The scheme whose next leg is on its way (the connection must stay until it is answered). */
    let midway: string | undefined;
    const between = () =>
      midway
        ? `between the ${midway} legs (${midway} must finish on one connection)`
        : 'before answering CONNECT';

    /** A new connection to the proxy, resolved once connected. */
    const connect = (): Promise<AnswerReader> =>
      new Promise((done, failed) => {
        reader?.socket.destroy();
        const socket = net.connect({ host: proxy.host, port: proxy.port });
        const current = new AnswerReader(socket, name);
        reader = current;
        let open = false;
        socket.once('error', (error: NodeJS.ErrnoException) => {
          const e = open
            ? new ProxyError(
                'dropped',
                name,
                `the proxy ${name} ended the connection ${between()} (${error.code ?? 'error'})`,
                { code: error.code ?? 'ECONNRESET' },
              )
            : new ProxyError(
                'unreachable',
                name,
                `the proxy ${name} could not be reached (${error.code ?? 'error'})`,
                {
                  code: error.code ?? 'ECONNREFUSED',
                },
              );
          current.fail(e);
          failed(e);
        });
        socket.once('close', () => {
          const e = new ProxyError(
            'dropped',
            name,
            `the proxy ${name} closed the connection ${between()}`,
          );
          current.fail(e);
          failed(e);
        });
        socket.once('connect', () => {
          connected = true;
          open = true;
          done(current);
        });
      });

    const send = (conn: AnswerReader, authorization: string | undefined) => {
      const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
      if (authorization)
        lines.push(`Proxy-Authorization: ${authorization}`, 'Proxy-Connection: keep-alive');
      conn.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    };

    const run = async (): Promise<net.Socket> => {
      const auth = limits.auth;
      let conn = await connect();
      let connections = 1;
      let legs = 0;
      let exchange: AuthExchange | undefined;
      /** The first credentials were sent again on a new connection (see below): only once. */
      let resent = false;
      const unavailable: Unavailable[] = [];
      // The first CONNECT: with the scheme that worked last time with this proxy; without an
      // authenticator, Basic when the proxy has credentials (as before Negotiate and NTLM).
      let authorization: string | undefined;
      if (!auth) {
        if (proxy.auth)
          authorization = `Basic ${Buffer.from(proxy.auth, 'utf8').toString('base64')}`;
      } else {
        const remembered = auth.remembered(proxy);
        if (remembered) {
          const begun = await auth.begin(proxy, [remembered]);
          exchange = begun.exchange;
          if (exchange) used.push(exchange);
          authorization = await exchange?.respond('').catch(() => undefined);
          if (!authorization) exchange = undefined;
        }
      }
      for (;;) {
        if (settled) throw new Error('settled');
        send(conn, authorization);
        if (authorization) legs++;
        let answer: Answer;
        try {
          answer = await conn.next();
        } catch (error) {
          // A proxy that closes after its 407 without saying so (no `Connection: close`), the
          // close landing after our next CONNECT was written: the first credentials go again on
          // a new connection, once. A close between the legs of a multi-leg scheme stays a drop.
          const firstCredentials = authorization !== undefined && legs === 1 && !midway;
          if (resent || !firstCredentials || !(error instanceof ProxyError)) throw error;
          if (error.failure !== 'dropped') throw error;
          resent = true;
          legs = 0;
          conn = await connect();
          connections++;
          continue;
        }
        if (answer.status >= 200 && answer.status < 300) {
          // RFC 9110 9.3.6: any 2xx answer to CONNECT means the tunnel is open.
          if (exchange && auth) {
            const final = tokenFor(parseChallenges(answer.authenticate), exchange.scheme);
            // Negotiate's mutual authentication token; a failure to check it is not fatal to a
            // tunnel the proxy opened (the proxy, not the service, is who it authenticates).
            if (final) await exchange.finish(final).catch(() => undefined);
            auth.succeeded(proxy, exchange.scheme);
            limits.onAuthenticated?.({
              proxy: name,
              scheme: exchange.scheme,
              identity: exchange.identity(),
              legs,
              connections,
              ms: Date.now() - started,
            });
          }
          conn.detach();
          if (answer.rest.length > 0) conn.socket.unshift(answer.rest);
          return conn.socket;
        }
        if (answer.status !== 407 && answer.status !== 401)
          throw new ProxyError(
            'refused',
            name,
            `the proxy ${name} refused the connection to ${authority} (HTTP ${answer.status})`,
            { status: answer.status },
          );
        const challenges = parseChallenges(answer.authenticate);
        if (!auth) {
          // 407 is the standard answer; some proxies (tinyproxy) answer wrong credentials with 401.
          throw new ProxyError(
            'auth',
            name,
            proxy.auth
              ? `the proxy ${name} did not accept the proxy user name and password (HTTP ${answer.status})`
              : `the proxy ${name} asks for a user name and password (HTTP ${answer.status})`,
            { status: answer.status },
          );
        }
        if (exchange) {
          // A leg of a multi-leg scheme: the proxy's token for the next one, on this connection.
          const token = tokenFor(challenges, exchange.scheme);
          const next =
            token && exchange.scheme !== 'Basic' && legs < MAX_AUTH_LEGS
              ? await respond(exchange, token)
              : undefined;
          if (next === undefined) {
            auth.forget(proxy);
            throw refusedAfter(exchange, answer);
          }
          if (answer.closing)
            throw new ProxyError(
              'dropped',
              name,
              `the proxy ${name} closed the connection between the ${exchange.scheme} legs (${exchange.scheme} must finish on one connection)`,
            );
          authorization = next;
          midway = exchange.scheme;
          continue;
        }
        // The first 407: choose among the schemes offered.
        let offered = [
          ...new Set(challenges.map((c) => knownScheme(c.scheme)).filter((s) => s !== undefined)),
        ];
        const drop = (scheme: ProxyAuthScheme) => (offered = offered.filter((s) => s !== scheme));
        authorization = undefined;
        while (!authorization) {
          const begun = await auth.begin(proxy, offered);
          unavailable.push(...begun.unavailable);
          for (const u of begun.unavailable) drop(u.scheme);
          const candidate = begun.exchange;
          if (candidate) used.push(candidate);
          if (!candidate) throw cannotAnswer(answer, challenges, unavailable);
          try {
            authorization = await candidate.respond(tokenFor(challenges, candidate.scheme) ?? '');
            exchange = candidate;
          } catch (error) {
            // This scheme cannot start here (no Kerberos ticket, an expired one): the next one.
            unavailable.push({
              scheme: candidate.scheme,
              reason: (error as Error).message,
              ...(error instanceof GssapiError && { problem: error.problem }),
            });
          }
          drop(candidate.scheme);
        }
        if (answer.closing || conn.ended) {
          conn = await connect();
          connections++;
        }
      }
    };

    /** No scheme the proxy offers can be answered here: say each one's reason. */
    const cannotAnswer = (answer: Answer, challenges: Challenge[], unavailable: Unavailable[]) => {
      const named = challenges.map((c) => c.scheme).join(', ') || 'none named';
      const ticket = unavailable.some((u) => u.problem === 'expired' || u.problem === 'no-ticket');
      return new ProxyError(
        'auth',
        name,
        unavailable.length === 0
          ? `the proxy ${name} asks for a sign-in in a scheme this computer does not speak (${named}; HTTP ${answer.status})`
          : `the proxy ${name} asks for a sign-in this computer cannot give (HTTP ${answer.status}): ${unavailable.map((u) => `${u.scheme}: ${u.reason}`).join('; ')}`,
        {
          status: answer.status,
          auth: ticket ? 'ticket' : 'unavailable',
          scheme: unavailable.length ? unavailable.map((u) => u.scheme).join(', ') : named,
        },
      );
    };

    /** The next leg's header; a GSSAPI or NTLM failure on the way is the proxy's refusal. */
    const respond = async (exchange: AuthExchange, token: string) => {
      try {
        return await exchange.respond(token);
      } catch (error) {
        throw new ProxyError(
          'auth',
          name,
          `the proxy ${name}'s ${exchange.scheme} challenge could not be answered (${(error as Error).message})`,
          {
            auth: error instanceof GssapiError && error.problem !== 'other' ? 'ticket' : 'refused',
            scheme: exchange.scheme,
          },
        );
      }
    };

    const refusedAfter = (exchange: AuthExchange, answer: Answer) => {
      const who = exchange.identity();
      return new ProxyError(
        'auth',
        name,
        `the proxy ${name} did not accept the ${exchange.scheme} sign-in${who ? ` of ${who}` : ''} (HTTP ${answer.status}${answer.words ? ` ${answer.words}` : ''})`,
        { status: answer.status, auth: 'refused', scheme: exchange.scheme, words: answer.words },
      );
    };

    /** Every exchange begun for this tunnel, told when the handshake is over. */
    const used: AuthExchange[] = [];
    const over = () => {
      for (const e of used.splice(0)) e.done();
    };
    run()
      .finally(over)
      .then(
        (socket) => {
          if (settled) {
            socket.destroy();
            return;
          }
          finish();
          socket.removeAllListeners('error');
          socket.removeAllListeners('close');
          resolve(socket);
        },
        (error: Error) => fail(error),
      );
  });
}

/** What an aborted fetch rejects with (a DOMException named AbortError), with the signal's reason. */
function abortError(signal: AbortSignal | undefined): Error {
  const error = new Error('the connection was abandoned before the proxy answered', {
    cause: signal?.reason,
  });
  error.name = 'AbortError';
  return error;
}
