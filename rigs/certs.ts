/**
 * A private certificate authority for tests, made with the openssl command line as an
 * organisation's IT would make one: a CA certificate, and server certificates it signs for
 * 127.0.0.1 / localhost (valid, expired, for another host), plus a self-signed one. An expired
 * certificate is issued by openssl running under faketime three days in the past (libfaketime).
 * Everything lives in the given folder; nothing is installed anywhere. As a Vitest fixture (made
 * before a file's tests, removed after them): test/support/test-ca.ts useTestCa.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const OPENSSL = ['/usr/bin/openssl', '/bin/openssl'].find((p) => existsSync(p));
/**
 * libfaketime itself, preloaded into openssl (FAKETIME=-3d), not the `faketime` wrapper: the
 * wrapper opens a named semaphore per run and failed CI once with "faketime: sem_open: File
 * exists" (a name left by an earlier run whose process id came back).
 */
export const FAKETIME = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
].find((p) => existsSync(p));

/** Whether the certificate tests can run; under CI=true a missing tool is a failure, not a skip. */
export function certToolsAvailable(file: string): boolean {
  const missing = [!OPENSSL && 'openssl', !FAKETIME && 'faketime'].filter(Boolean);
  if (missing.length === 0) return true;
  const message = `${file}: ${missing.join(' and ')} not installed (apt-get install ${missing.join(' ')})`;
  if (process.env.CI === 'true') throw new Error(`${message}; CI must install it (.ci/run)`);
  console.warn(`${message}; its certificate tests are skipped`);
  return false;
}

export interface CertFiles {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

export interface TestCa {
  /** The CA certificate (PEM file), what an administrator gives Screenpop as its CA file. */
  caFile: string;
  caPem: string;
  /**
   * A server certificate signed by this CA. `hosts`: subjectAltName entries (default IP:127.0.0.1
   * and DNS:localhost); `expired`: valid for one day, three days ago.
   */
  issue(name: string, options?: { hosts?: string[]; expired?: boolean }): CertFiles;
}

function openssl(args: string[], options: { past?: boolean } = {}): void {
  if (!OPENSSL) throw new Error('openssl is not installed');
  const env =
    options.past && FAKETIME
      ? { ...process.env, LD_PRELOAD: FAKETIME, FAKETIME: '-3d', FAKETIME_DONT_FAKE_MONOTONIC: '1' }
      : process.env;
  execFileSync(OPENSSL, args, { stdio: 'pipe', env });
}

function files(dir: string, name: string): CertFiles {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
}

const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
const LOCAL = ['IP:127.0.0.1', 'DNS:localhost'];

export function makeTestCa(dir: string, name = 'Screenpop Test Root CA'): TestCa {
  const caFile = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  openssl([
    'req',
    '-x509',
    ...KEY,
    '-keyout',
    caKey,
    '-out',
    caFile,
    '-days',
    '30',
    '-subj',
    `/O=Screenpop tests/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  let serial = 1;
  return {
    caFile,
    caPem: readFileSync(caFile, 'utf8'),
    issue(leaf, options = {}) {
      const csr = join(dir, `${leaf}.csr`);
      const ext = join(dir, `${leaf}.ext`);
      const base = files.bind(null, dir);
      openssl([
        'req',
        ...KEY,
        '-keyout',
        join(dir, `${leaf}.key`),
        '-out',
        csr,
        '-subj',
        `/CN=${leaf}`,
      ]);
      writeFileSync(
        ext,
        `basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=${(options.hosts ?? LOCAL).join(',')}\n`,
      );
      openssl(
        [
          'x509',
          '-req',
          '-in',
          csr,
          '-CA',
          caFile,
          '-CAkey',
          caKey,
          '-set_serial',
          String(serial++),
          '-days',
          options.expired ? '1' : '20',
          '-extfile',
          ext,
          '-out',
          join(dir, `${leaf}.crt`),
        ],
        { past: options.expired ?? false },
      );
      return base(leaf);
    },
  };
}

/** A certificate signed by nobody but itself, for 127.0.0.1 (what a careless proxy presents). */
export function makeSelfSigned(dir: string, name = 'self-signed'): CertFiles {
  openssl([
    'req',
    '-x509',
    ...KEY,
    '-keyout',
    join(dir, `${name}.key`),
    '-out',
    join(dir, `${name}.crt`),
    '-days',
    '20',
    '-subj',
    `/CN=${name}`,
    '-addext',
    `subjectAltName=${LOCAL.join(',')}`,
  ]);
  return files(dir, name);
}
