/**
 * NTLM (MS-NLMP) for proxy authentication with a configured user name and password: the
 * NEGOTIATE message (type 1), the proxy's CHALLENGE (type 2, untrusted: every offset and length is
 * checked against the message), and the AUTHENTICATE message (type 3) with an NTLMv2 response
 * (MS-NLMP 3.3.2). Only NTLMv2: LM and NTLMv1 answers are never sent.
 *
 * MD4 is written here because OpenSSL 3 (Node 17 and later) no longer offers it without the
 * legacy provider; it is used for the NT hash of the password only (MS-NLMP 3.3.1, NTOWFv1).
 *
 * The password, its NT hash and every message carrying a response are secrets of the caller's
 * (proxy-auth.ts registers them); nothing here logs.
 */
import { createHmac, randomBytes } from 'node:crypto';

const SIGNATURE = Buffer.from('NTLMSSP\0', 'latin1');

/** MS-NLMP 2.2.2.5 flags we ask for and answer with. */
const FLAGS = {
  unicode: 0x00000001,
  oem: 0x00000002,
  requestTarget: 0x00000004,
  ntlm: 0x00000200,
  alwaysSign: 0x00008000,
  extendedSessionSecurity: 0x00080000,
  targetInfo: 0x00800000,
  key128: 0x20000000,
  key56: 0x80000000,
} as const;

const NEGOTIATE_FLAGS =
  FLAGS.unicode |
  FLAGS.oem |
  FLAGS.requestTarget |
  FLAGS.ntlm |
  FLAGS.alwaysSign |
  FLAGS.extendedSessionSecurity |
  FLAGS.key128 |
  FLAGS.key56;

/** The largest CHALLENGE we read (real ones are a few hundred bytes). */
const MAX_CHALLENGE_BYTES = 4096;

// ---- MD4 (RFC 1320) ----

function rotl(x: number, n: number): number {
  return (x << n) | (x >>> (32 - n));
}

export function md4(input: Buffer): Buffer {
  const bitLength = input.length * 8;
  const padded = Buffer.alloc(Math.ceil((input.length + 9) / 64) * 64);
  input.copy(padded);
  padded[input.length] = 0x80;
  padded.writeUInt32LE(bitLength >>> 0, padded.length - 8);
  padded.writeUInt32LE(Math.floor(bitLength / 2 ** 32), padded.length - 4);
  let a = 0x67452301;
  let b = 0xefcdab89;
  let c = 0x98badcfe;
  let d = 0x10325476;
  const x = new Array<number>(16);
  const f = (p: number, q: number, r: number) => (p & q) | (~p & r);
  const g = (p: number, q: number, r: number) => (p & q) | (p & r) | (q & r);
  const h = (p: number, q: number, r: number) => p ^ q ^ r;
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) x[i] = padded.readUInt32LE(off + i * 4);
    const [aa, bb, cc, dd] = [a, b, c, d];
    const xi = (i: number) => x[i] ?? 0;
    for (const i of [0, 4, 8, 12]) {
      a = rotl((a + f(b, c, d) + xi(i)) | 0, 3);
      d = rotl((d + f(a, b, c) + xi(i + 1)) | 0, 7);
      c = rotl((c + f(d, a, b) + xi(i + 2)) | 0, 11);
      b = rotl((b + f(c, d, a) + xi(i + 3)) | 0, 19);
    }
    for (const i of [0, 1, 2, 3]) {
      a = rotl((a + g(b, c, d) + xi(i) + 0x5a827999) | 0, 3);
      d = rotl((d + g(a, b, c) + xi(i + 4) + 0x5a827999) | 0, 5);
      c = rotl((c + g(d, a, b) + xi(i + 8) + 0x5a827999) | 0, 9);
      b = rotl((b + g(c, d, a) + xi(i + 12) + 0x5a827999) | 0, 13);
    }
    for (const i of [0, 2, 1, 3]) {
      a = rotl((a + h(b, c, d) + xi(i) + 0x6ed9eba1) | 0, 3);
      d = rotl((d + h(a, b, c) + xi(i + 8) + 0x6ed9eba1) | 0, 9);
      c = rotl((c + h(d, a, b) + xi(i + 4) + 0x6ed9eba1) | 0, 11);
      b = rotl((b + h(c, d, a) + xi(i + 12) + 0x6ed9eba1) | 0, 15);
    }
    a = (a + aa) | 0;
    b = (b + bb) | 0;
    c = (c + cc) | 0;
    d = (d + dd) | 0;
  }
  const out = Buffer.alloc(16);
  out.writeInt32LE(a, 0);
  out.writeInt32LE(b, 4);
  out.writeInt32LE(c, 8);
  out.writeInt32LE(d, 12);
  return out;
}

// ---- messages ----

/** `DOMAIN\user`, `user@domain` or a bare `user` (the domain then comes from the challenge). */
export function splitNtlmUser(user: string): { domain: string | undefined; user: string } {
  const slash = user.indexOf('\\');
  if (slash > 0) return { domain: user.slice(0, slash), user: user.slice(slash + 1) };
  return { domain: undefined, user };
}

/** The NEGOTIATE message (type 1), base64, as the first `Proxy-Authorization: NTLM` token. */
export function ntlmNegotiate(): string {
  const message = Buffer.alloc(32);
  SIGNATURE.copy(message, 0);
  message.writeUInt32LE(1, 8);
  message.writeUInt32LE(NEGOTIATE_FLAGS >>> 0, 12);
  // Domain and workstation fields empty (length 0, offset 32).
  message.writeUInt32LE(32, 20);
  message.writeUInt32LE(32, 28);
  return message.toString('base64');
}

export interface NtlmChallenge {
  flags: number;
  serverChallenge: Buffer;
  targetName: string;
  targetInfo: Buffer;
}

export class NtlmError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NtlmError';
  }
}

function field(message: Buffer, at: number): Buffer {
  const length = message.readUInt16LE(at);
  const offset = message.readUInt32LE(at + 4);
  if (length === 0) return Buffer.alloc(0);
  if (offset > message.length || offset + length > message.length)
    throw new NtlmError('the NTLM challenge has a field outside the message');
  return message.subarray(offset, offset + length);
}

/** The CHALLENGE message (type 2) from its base64; throws NtlmError when it is not one. */
export function parseNtlmChallenge(base64: string): NtlmChallenge {
  if (base64.length > (MAX_CHALLENGE_BYTES * 4) / 3 + 4 || !/^[A-Za-z0-9+/]+=*$/.test(base64))
    throw new NtlmError('the NTLM challenge is not base64 of a reasonable size');
  const message = Buffer.from(base64, 'base64');
  if (message.length < 32 || !message.subarray(0, 8).equals(SIGNATURE))
    throw new NtlmError('the NTLM challenge does not start with NTLMSSP');
  if (message.readUInt32LE(8) !== 2) throw new NtlmError('the NTLM message is not a challenge');
  const flags = message.readUInt32LE(20);
  // The target name is only a default for the domain: one that does not fit the message (squid's
  // ntlm_fake_auth sends such) is read as none. The target info goes into the answer, so it is
  // read only when the flag says it is there, and must fit.
  let targetName: string;
  try {
    const name = field(message, 12);
    targetName = flags & FLAGS.unicode ? name.toString('utf16le') : name.toString('latin1');
  } catch {
    targetName = '';
  }
  const hasInfo = (flags & FLAGS.targetInfo) !== 0 && message.length >= 48;
  return {
    flags,
    serverChallenge: Buffer.from(message.subarray(24, 32)),
    targetName,
    targetInfo: hasInfo ? Buffer.from(field(message, 40)) : Buffer.alloc(0),
  };
}

/** MS-NLMP NTOWFv2: HMAC-MD5 of the NT hash over UPPER(user) + domain, in UTF-16LE. */
export function ntowfv2(password: string, user: string, domain: string): Buffer {
  const ntHash = md4(Buffer.from(password, 'utf16le'));
  return createHmac('md5', ntHash)
    .update(Buffer.from(user.toUpperCase() + domain, 'utf16le'))
    .digest();
}

/** Windows FILETIME (100 ns since 1601) as 8 little-endian bytes. */
function fileTime(ms: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64LE((BigInt(Math.round(ms)) + 11_644_473_600_000n) * 10_000n);
  return out;
}

export interface NtlmCredentials {
  user: string;
  password: string;
  /** The domain; default the one in `DOMAIN\user`, else the challenge's target name. */
  domain?: string | undefined;
  workstation?: string | undefined;
}

/** MS-NLMP 3.3.2 NTLMv2 responses for a challenge (clientChallenge and time for test vectors). */
export function ntlmv2Responses(
  key: Buffer,
  serverChallenge: Buffer,
  targetInfo: Buffer,
  clientChallenge: Buffer,
  time: Buffer,
): { nt: Buffer; lm: Buffer } {
  const blob = Buffer.concat([
    Buffer.from([1, 1, 0, 0, 0, 0, 0, 0]),
    time,
    clientChallenge,
    Buffer.alloc(4),
    targetInfo,
    Buffer.alloc(4),
  ]);
  const proof = createHmac('md5', key).update(serverChallenge).update(blob).digest();
  const lmProof = createHmac('md5', key).update(serverChallenge).update(clientChallenge).digest();
  return {
    nt: Buffer.concat([proof, blob]),
    lm: Buffer.concat([lmProof, clientChallenge]),
  };
}

/** The AUTHENTICATE message (type 3), base64, answering `challenge` with NTLMv2. */
export function ntlmAuthenticate(
  challenge: NtlmChallenge,
  credentials: NtlmCredentials,
  now: number,
): string {
  const split = splitNtlmUser(credentials.user);
  const domain = credentials.domain ?? split.domain ?? challenge.targetName;
  const key = ntowfv2(credentials.password, split.user, domain);
  const { nt, lm } = ntlmv2Responses(
    key,
    challenge.serverChallenge,
    challenge.targetInfo,
    randomBytes(8),
    fileTime(now),
  );
  const unicode = (challenge.flags & FLAGS.unicode) !== 0;
  const text = (s: string) => Buffer.from(s, unicode ? 'utf16le' : 'latin1');
  const fields = [
    lm,
    nt,
    text(domain),
    text(split.user),
    text(credentials.workstation ?? ''),
    Buffer.alloc(0),
  ];
  const header = Buffer.alloc(64);
  SIGNATURE.copy(header, 0);
  header.writeUInt32LE(3, 8);
  let offset = 64;
  fields.forEach((value, i) => {
    const at = 12 + i * 8;
    header.writeUInt16LE(value.length, at);
    header.writeUInt16LE(value.length, at + 2);
    header.writeUInt32LE(offset, at + 4);
    offset += value.length;
  });
  const flags =
    (NEGOTIATE_FLAGS & ~(unicode ? FLAGS.oem : FLAGS.unicode)) |
    (challenge.flags & FLAGS.targetInfo);
  header.writeUInt32LE(flags >>> 0, 60);
  return Buffer.concat([header, ...fields]).toString('base64');
}
