/**
 * Proxy authentication in the CONNECT tunnel against scripted proxies on 127.0.0.1, each written
 * from the far side's documents: RFC 9110 11.7 (407, Proxy-Authenticate / Proxy-Authorization),
 * RFC 4559 (Negotiate), MS-NLMP (NTLM: the NEGOTIATE, CHALLENGE and AUTHENTICATE messages; the
 * proxy here checks the NTLMv2 proof with the password, as a domain controller would) and
 * RFC 7617 (Basic). What is checked: NTLM's three legs on one connection, a 407 body read past,
 * a proxy closing between the legs, the preference among offered schemes, a refusal after the
 * handshake with the proxy's words, the cap on legs, and that no token or password reaches an
 * error. The real squid and the real KDC are in test/blackbox/runner-proxy-auth.test.ts.
 */
import { createHmac } from 'node:crypto';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { networkFault } from '../../src-shared/net/net-errors.ts';
import {
  ccachePrincipal,
  gssapiProblem,
  loadGssapi,
  ticketOwner,
} from '../../src-shared/net/gssapi.ts';
import { md4, ntowfv2, ntlmv2Responses, parseNtlmChallenge } from '../../src-shared/net/ntlm.ts';
import { parseChallenges, ProxyAuthenticator } from '../../src-shared/net/proxy-auth.ts';
import type { ProxyServer } from '../../src-shared/net/proxy.ts';
import { openTunnel, ProxyError, type AuthOutcome } from '../../src-shared/net/tunnel.ts';
import { describeError } from '../../src-shared/api/service-errors.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { validatePolicy, withLocks } from '../../src-main/core/settings/policy.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';

const servers: net.Server[] = [];
const accepted = new Set<net.Socket>();
afterEach(async () => {
  for (const socket of accepted) socket.destroy();
  accepted.clear();
  await Promise.all(
    servers.splice(0).map((s) => new Promise<void>((done) => s.close(() => done()))),
  );
});

/** What the scripted proxy saw: per connection, the Proxy-Authorization of each CONNECT. */
interface Seen {
  connections: string[][];
}

type Reply = (auth: string | undefined, leg: number, socket: net.Socket) => string | 'close';

/** A proxy that answers each CONNECT head with `reply`; a 2xx answer opens an echo tunnel. */
async function scriptedProxy(reply: Reply): Promise<{ port: number; seen: Seen }> {
  const seen: Seen = { connections: [] };
  const server = net.createServer((socket) => {
    accepted.add(socket);
    socket.on('error', () => {});
    socket.once('close', () => accepted.delete(socket));
    const legs: string[] = [];
    seen.connections.push(legs);
    let buffer = '';
    let tunnel = false;
    socket.on('data', (chunk: Buffer) => {
      if (tunnel) return void socket.write(chunk);
      buffer += chunk.toString('latin1');
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffer.slice(0, end);
        buffer = buffer.slice(end + 4);
        const auth = /\r\nProxy-Authorization: ([^\r]*)/i.exec(head)?.[1];
        legs.push(auth ?? '');
        const answer = reply(auth, legs.length, socket);
        if (answer === 'close') return void socket.end();
        socket.write(answer);
        if (answer.startsWith('HTTP/1.1 2')) tunnel = true;
      }
    });
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { port: (server.address() as AddressInfo).port, seen };
}

const PAGE = '<html>407: sign in to the proxy</html>';
const challenge = (lines: string[], extra = '') =>
  `HTTP/1.1 407 Proxy Authentication Required\r\n${lines.map((l) => `Proxy-Authenticate: ${l}\r\n`).join('')}Content-Type: text/html\r\nContent-Length: ${PAGE.length}\r\n${extra}\r\n${PAGE}`;
const OPEN = 'HTTP/1.1 200 Connection established\r\n\r\n';

const SERVER_CHALLENGE = Buffer.from('0123456789abcdef', 'hex');
/** MS-NLMP 2.2.1.2: a CHALLENGE (unicode, NTLM, target info: the domain's NetBIOS name). */
function ntlmChallenge(): string {
  const domain = Buffer.from('CORP', 'utf16le');
  const info = Buffer.concat([
    Buffer.from([2, 0, domain.length, 0]),
    domain,
    Buffer.from([0, 0, 0, 0]),
  ]);
  const header = Buffer.alloc(48);
  header.write('NTLMSSP\0', 0, 'latin1');
  header.writeUInt32LE(2, 8);
  header.writeUInt16LE(domain.length, 12);
  header.writeUInt16LE(domain.length, 14);
  header.writeUInt32LE(48, 16);
  header.writeUInt32LE(0x00828205 | 0x00800000, 20);
  SERVER_CHALLENGE.copy(header, 24);
  header.writeUInt16LE(info.length, 40);
  header.writeUInt16LE(info.length, 42);
  header.writeUInt32LE(48 + domain.length, 44);
  return Buffer.concat([header, domain, info]).toString('base64');
}

/** Reads an AUTHENTICATE (type 3) message's fields, as the proxy's side does. */
function readAuthenticate(base64: string) {
  const m = Buffer.from(base64, 'base64');
  const f = (at: number) =>
    m.subarray(m.readUInt32LE(at + 4), m.readUInt32LE(at + 4) + m.readUInt16LE(at));
  return {
    type: m.readUInt32LE(8),
    nt: f(20),
    domain: f(28).toString('utf16le'),
    user: f(36).toString('utf16le'),
  };
}

/** The proxy's check of an NTLMv2 answer (MS-NLMP 3.3.2): the proof from the known password. */
function ntlmv2Valid(message: string, password: string): boolean {
  const { nt, user, domain } = readAuthenticate(message);
  const key = ntowfv2(password, user, domain);
  const blob = nt.subarray(16);
  const proof = createHmac('md5', key).update(SERVER_CHALLENGE).update(blob).digest();
  return proof.equals(nt.subarray(0, 16));
}

/** An NTLM proxy that accepts `password` for any user (domain from the message). */
const ntlmProxy =
  (
    password: string,
    refusal = 'HTTP/1.1 407 Access Denied by policy\r\nContent-Length: 0\r\n\r\n',
  ): Reply =>
  (auth) => {
    if (!auth) return challenge(['NTLM']);
    const token = auth.replace(/^NTLM /, '');
    const type = Buffer.from(token, 'base64').readUInt32LE(8);
    if (type === 1) return challenge([`NTLM ${ntlmChallenge()}`]);
    return ntlmv2Valid(token, password) ? OPEN : refusal;
  };

const TARGET = { host: 'service.example.com', port: 443 };
const noKerberos = () => Promise.reject(new Error('no kerberos here'));

function authenticator(mode: 'automatic' | 'basic' | 'none' = 'automatic') {
  const secrets: string[] = [];
  const live = new Set<string>();
  const auth = new ProxyAuthenticator({
    mode,
    gssapi: () => loadGssapi(noKerberos),
    onSecret: (s) => {
      secrets.push(s);
      live.add(s);
    },
    forgetSecret: (s) => live.delete(s),
    now: () => Date.now(),
  });
  return { auth, secrets, live };
}

async function tunnel(
  proxy: ProxyServer,
  auth: ProxyAuthenticator,
): Promise<{ outcome?: AuthOutcome; error?: unknown }> {
  let outcome: AuthOutcome | undefined;
  try {
    const socket = await openTunnel(proxy, TARGET, {
      deadlineMs: 5_000,
      auth,
      onAuthenticated: (o) => (outcome = o),
    });
    // The tunnel carries bytes both ways (the scripted proxy echoes them).
    socket.write('ping');
    const echoed = await new Promise<string>((done) => socket.once('data', (d) => done(String(d))));
    expect(echoed).toBe('ping');
    socket.destroy();
    return outcome ? { outcome } : {};
  } catch (error) {
    return { error };
  }
}

function judged(error: unknown) {
  const fault = networkFault(error, 'https://service.example.com/', 'get_token');
  expect(fault, String(error)).toBeDefined();
  return describeError(fault);
}

describe('NTLM: three legs on one connection', () => {
  it('answers the challenge with an NTLMv2 proof the proxy checks, all on one connection, the 407 page read past', async () => {
    const { port, seen } = await scriptedProxy(ntlmProxy('S3cret-pw'));
    const { auth, secrets, live } = authenticator();
    const result = await tunnel({ host: '127.0.0.1', port, auth: 'CORP\\agent7:S3cret-pw' }, auth);
    expect(result.error).toBeUndefined();
    expect(result.outcome).toMatchObject({
      scheme: 'NTLM',
      identity: 'CORP\\agent7',
      legs: 2,
      connections: 1,
    });
    // No credentials first (to learn the schemes), then type 1, then type 3: one TCP connection.
    expect(seen.connections).toHaveLength(1);
    const [first, type1, type3] = seen.connections[0]!;
    expect(first).toBe('');
    expect(Buffer.from(type1!.slice(5), 'base64').readUInt32LE(8)).toBe(1);
    expect(readAuthenticate(type3!.slice(5))).toMatchObject({
      type: 3,
      user: 'agent7',
      domain: 'CORP',
    });
    // The type 3 message is registered as a secret (it is a password equivalent for a replay).
    expect(secrets).toContain(type3!.slice(5));
    // ... for the handshake only: single-use, it is then forgotten (no registry growing per tunnel).
    expect(live.size).toBe(0);
    // The next tunnel leads with NTLM at once: two CONNECTs, not three.
    await tunnel({ host: '127.0.0.1', port, auth: 'CORP\\agent7:S3cret-pw' }, auth);
    expect(seen.connections[1]!.map((a) => a.split(' ')[0])).toEqual(['NTLM', 'NTLM']);
  });

  it('a proxy that closes the connection between the legs is a fault to retry, not a refusal', async () => {
    const { port } = await scriptedProxy((auth) =>
      !auth ? challenge(['NTLM']) : challenge([`NTLM ${ntlmChallenge()}`], 'Connection: close\r\n'),
    );
    const { error } = await tunnel(
      { host: '127.0.0.1', port, auth: 'CORP\\agent7:pw' },
      authenticator().auth,
    );
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as Error).message).toBe(
      `the proxy 127.0.0.1:${port} closed the connection between the NTLM legs (NTLM must finish on one connection)`,
    );
    expect(judged(error)).toMatchObject({ fault: 'proxy-dropped', needsUser: false });
  });

  it('a proxy that resets the connection after the challenge is a fault to retry', async () => {
    const { port } = await scriptedProxy((auth, _leg, socket) => {
      if (!auth) return challenge(['NTLM']);
      if (auth.startsWith('NTLM ') && Buffer.from(auth.slice(5), 'base64').readUInt32LE(8) === 3) {
        socket.resetAndDestroy();
        return 'close';
      }
      return challenge([`NTLM ${ntlmChallenge()}`]);
    });
    const { error } = await tunnel(
      { host: '127.0.0.1', port, auth: 'CORP\\agent7:pw' },
      authenticator().auth,
    );
    expect(judged(error)).toMatchObject({ fault: 'proxy-dropped', needsUser: false });
  });

  it('a refusal after the handshake needs the user, with the proxy’s words and never the password', async () => {
    const { port } = await scriptedProxy(ntlmProxy('the-right-one'));
    const { error } = await tunnel(
      { host: '127.0.0.1', port, auth: 'CORP\\agent7:Wr0ng-pw' },
      authenticator().auth,
    );
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as Error).message).toBe(
      `the proxy 127.0.0.1:${port} did not accept the NTLM sign-in of CORP\\agent7 (HTTP 407 Access Denied by policy)`,
    );
    expect(error).toMatchObject({
      auth: 'refused',
      scheme: 'NTLM',
      words: 'Access Denied by policy',
    });
    expect(judged(error)).toMatchObject({ fault: 'proxy-auth-refused', needsUser: true });
    expect(JSON.stringify(judged(error))).not.toContain('Wr0ng-pw');
  });

  it('a proxy that challenges for ever is given at most four legs on the connection', async () => {
    const { port, seen } = await scriptedProxy((auth) =>
      auth ? challenge([`NTLM ${ntlmChallenge()}`]) : challenge(['NTLM']),
    );
    const { error } = await tunnel(
      { host: '127.0.0.1', port, auth: 'CORP\\agent7:pw' },
      authenticator().auth,
    );
    expect(judged(error)).toMatchObject({ fault: 'proxy-auth-refused', needsUser: true });
    const authenticated = seen.connections.flat().filter((a) => a !== '');
    expect(authenticated.length).toBeLessThanOrEqual(4);
  });

  it('without a configured password NTLM says it needs one (there is no logged-on credential off Windows)', async () => {
    const { port } = await scriptedProxy(ntlmProxy('pw'));
    const { error } = await tunnel({ host: '127.0.0.1', port }, authenticator().auth);
    expect(error).toMatchObject({ auth: 'unavailable', scheme: 'NTLM' });
    expect((error as Error).message).toContain('NTLM needs a configured user name and password');
    expect(judged(error)).toMatchObject({ fault: 'proxy-auth-unavailable', needsUser: true });
  });
});

describe('several schemes offered', () => {
  const offering =
    (lines: string[], password: string): Reply =>
    (auth) => {
      if (!auth) return challenge(lines);
      if (auth.startsWith('Basic '))
        return Buffer.from(auth.slice(6), 'base64').toString() === `agent7:${password}`
          ? OPEN
          : challenge(lines);
      return ntlmProxy(password)(auth, 0, undefined as unknown as net.Socket);
    };

  it('Negotiate and Basic on one line: without Kerberos here, the configured Basic', async () => {
    const { port } = await scriptedProxy(offering(['Negotiate, Basic realm="corp, proxy"'], 'pw'));
    const { auth } = authenticator();
    const result = await tunnel({ host: '127.0.0.1', port, auth: 'agent7:pw' }, auth);
    expect(result.outcome).toMatchObject({ scheme: 'Basic', identity: 'agent7', legs: 1 });
  });

  it('NTLM before Basic when both are offered and a password is configured', async () => {
    const { port } = await scriptedProxy(offering(['Basic realm="corp"', 'NTLM'], 'pw'));
    const result = await tunnel(
      { host: '127.0.0.1', port, auth: 'agent7:pw' },
      authenticator().auth,
    );
    expect(result.outcome).toMatchObject({ scheme: 'NTLM', legs: 2, connections: 1 });
  });

  it('policy `basic`: Basic only, even where NTLM is offered first', async () => {
    const { port } = await scriptedProxy(offering(['NTLM', 'Basic realm="corp"'], 'pw'));
    const result = await tunnel(
      { host: '127.0.0.1', port, auth: 'agent7:pw' },
      authenticator('basic').auth,
    );
    expect(result.outcome).toMatchObject({ scheme: 'Basic' });
  });

  it('Negotiate alone, without Kerberos on this computer: says what is missing', async () => {
    const { port } = await scriptedProxy(() => challenge(['Negotiate']));
    const { auth } = new (class {
      auth = new ProxyAuthenticator({
        mode: 'automatic',
        gssapi: () =>
          loadGssapi(() =>
            Promise.reject(
              Object.assign(new Error("Cannot find package 'kerberos'"), {
                code: 'ERR_MODULE_NOT_FOUND',
              }),
            ),
          ),
        onSecret: () => {},
        now: () => Date.now(),
      });
    })();
    const { error } = await tunnel({ host: '127.0.0.1', port }, auth);
    expect((error as Error).message).toContain(
      'Negotiate (Kerberos) needs the optional "kerberos" package, which is not installed',
    );
    expect(judged(error)).toMatchObject({ fault: 'proxy-auth-unavailable', needsUser: true });
  });
});

describe('a proxy that closes after its 407 without saying so', () => {
  // No `Connection: close` on the 407, then the proxy's FIN (seen from real proxies and from the
  // update feed's proxy in test/electron/update-network.test.ts): the close may land before or
  // after our next CONNECT is written. Basic needs no particular connection: it goes on a new one.
  const closingAfter = (when: 'at-once' | 'later'): Reply => {
    // A connection that had its 407 answers nothing more: it only closes.
    const refused = new WeakSet<net.Socket>();
    return (auth, _leg, socket) => {
      if (refused.has(socket)) return '';
      if (auth === `Basic ${Buffer.from('agent7:pw').toString('base64')}`) return OPEN;
      refused.add(socket);
      if (when === 'at-once') process.nextTick(() => socket.end());
      else setTimeout(() => socket.end(), 20);
      return challenge(['Basic realm="corp"']);
    };
  };

  for (const when of ['at-once', 'later'] as const)
    it(`Basic on a new connection when the close comes ${when === 'at-once' ? 'with the 407' : 'after our next CONNECT'}`, async () => {
      const { port, seen } = await scriptedProxy(closingAfter(when));
      const result = await tunnel(
        { host: '127.0.0.1', port, auth: 'agent7:pw' },
        authenticator().auth,
      );
      expect(result.error).toBeUndefined();
      expect(result.outcome).toMatchObject({ scheme: 'Basic', connections: 2 });
      expect(seen.connections.length).toBe(2);
    });
});

describe('the setting and the policy', () => {
  it('a policy locking proxyAuth to basic keeps the app from answering NTLM, whatever the user set', async () => {
    const { port, seen } = await scriptedProxy(ntlmProxy('pw'));
    const { policy, problems } = validatePolicy({
      managedBy: 'IT',
      settings: { proxyAuth: 'basic' },
      locked: ['proxyAuth'],
    });
    expect(problems).toEqual([]);
    const settings = withLocks(
      { ...DEFAULT_SETTINGS, proxyMode: 'manual', proxyUrl: `http://127.0.0.1:${port}` },
      policy,
    );
    expect(settings.proxyAuth).toBe('basic');
    const transport = transportFor(settings, {
      logger: silentLogger,
      secrets: new SecretRegistry(),
      readFile: () => '',
      // The proxy's user name and password from the keychain, as the app keeps them.
      proxyCredentials: () => Promise.resolve('CORP\\agent7:pw'),
    });
    const error = await transport.fetch('http://service.example.com/x').catch((e: unknown) => e);
    const cause = (error as { cause?: unknown }).cause;
    expect(cause).toMatchObject({ failure: 'auth', auth: 'unavailable' });
    expect((cause as Error).message).toContain('NTLM is not allowed (proxy authentication: basic)');
    // Not one NTLM message was sent.
    expect(seen.connections.flat().filter((a) => a.startsWith('NTLM'))).toEqual([]);
    expect(transport.decisions()).toMatchObject({ proxyAuthMode: 'basic', proxyAuth: {} });
  });

  it('by default (automatic) the same keychain credentials answer NTLM, and the diagnostics say so', async () => {
    const { port } = await scriptedProxy(ntlmProxy('pw'));
    const transport = transportFor(
      { ...DEFAULT_SETTINGS, proxyMode: 'manual', proxyUrl: `http://127.0.0.1:${port}` },
      {
        logger: silentLogger,
        secrets: new SecretRegistry(),
        readFile: () => '',
        proxyCredentials: () => Promise.resolve('CORP\\agent7:pw'),
      },
    );
    // The echoing tunnel is no HTTP server: the fetch fails after the tunnel opened.
    await transport.fetch('http://service.example.com/x').catch(() => undefined);
    expect(transport.decisions()).toMatchObject({
      proxyAuthMode: 'automatic',
      proxyAuth: { [`127.0.0.1:${port}`]: 'NTLM as CORP\\agent7' },
    });
    expect(transport.proxyAuthInUse()).toEqual({ scheme: 'NTLM', identity: 'CORP\\agent7' });
  });
});

describe('pieces', () => {
  it('reads challenges however they are split over lines and commas', () => {
    expect(parseChallenges(['Negotiate, NTLM', 'Basic realm="a, b", charset="UTF-8"'])).toEqual([
      { scheme: 'Negotiate', data: '' },
      { scheme: 'NTLM', data: '' },
      { scheme: 'Basic', data: 'realm="a, b", charset="UTF-8"' },
    ]);
    expect(parseChallenges(['Negotiate YIIBzQ==, Basic realm="x"'])).toEqual([
      { scheme: 'Negotiate', data: 'YIIBzQ==' },
      { scheme: 'Basic', data: 'realm="x"' },
    ]);
  });

  it('MD4 and NTLMv2 give the published test vectors (RFC 1320; MS-NLMP 4.2.4)', () => {
    expect(md4(Buffer.from('abc')).toString('hex')).toBe('a448017aaf21d8525fc10ae87aa6729d');
    const key = ntowfv2('Password', 'User', 'Domain');
    expect(key.toString('hex')).toBe('0c868a403bfd7a93a3001ef22ef02e3f');
    const info = Buffer.from(
      '02000c0044006f006d00610069006e0001000c0053006500720076006500720000000000',
      'hex',
    );
    const { nt, lm } = ntlmv2Responses(
      key,
      SERVER_CHALLENGE,
      info,
      Buffer.alloc(8, 0xaa),
      Buffer.alloc(8),
    );
    expect(nt.subarray(0, 16).toString('hex')).toBe('68cd0ab851e51c96aabc927bebef6a1c');
    expect(lm.toString('hex')).toBe('86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa');
  });

  it('refuses a challenge that is not one, without reading outside it', () => {
    expect(() => parseNtlmChallenge('bm90IG50bG0=')).toThrow('does not start with NTLMSSP');
    const bad = Buffer.from(ntlmChallenge(), 'base64');
    bad.writeUInt32LE(0xffff, 44); // the target info's offset past the end
    expect(() => parseNtlmChallenge(bad.toString('base64'))).toThrow('outside the message');
  });

  it('names who Negotiate signs in as: DOMAIN\\user on Windows, the ticket cache file’s principal elsewhere', () => {
    expect(ticketOwner({ USERDOMAIN: 'CORP', USERNAME: 'agent7' }, 'win32')).toBe('CORP\\agent7');
    // MIT credential cache format 4: version, header (length 0), principal (type, 1 component,
    // realm, component).
    const text = (s: string) => Buffer.concat([Buffer.from([0, 0, 0, s.length]), Buffer.from(s)]);
    const cache = Buffer.concat([
      Buffer.from([5, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1]),
      text('CORP.EXAMPLE'),
      text('agent7'),
    ]);
    expect(ccachePrincipal(cache)).toBe('agent7@CORP.EXAMPLE');
    expect(ccachePrincipal(Buffer.from('not a cache'))).toBeUndefined();
    expect(ticketOwner({ KRB5CCNAME: 'KCM:' }, 'linux')).toBeUndefined();
  });

  it('tells an expired or missing Kerberos ticket from other failures', () => {
    expect(gssapiProblem('Ticket expired')).toBe('expired');
    expect(
      gssapiProblem(
        'No credentials were supplied, or the credentials were unavailable or inaccessible: No Kerberos credentials available',
      ),
    ).toBe('no-ticket');
    expect(gssapiProblem('Server HTTP/proxy@CORP not found in Kerberos database')).toBe(
      'unknown-service',
    );
  });
});
