/**
 * Real proxies that ask for Negotiate (Kerberos) and NTLM, for the proxy authentication tests:
 *
 * - `KerberosRealm`: an MIT Kerberos KDC (Debian's krb5-kdc) of its own realm on a free
 *   127.0.0.1 port, from its own krb5.conf, kdc.conf and database in a temporary folder (through
 *   KRB5_CONFIG / KRB5_KDC_PROFILE: the machine's Kerberos settings are never read nor touched):
 *   `kdb5_util create -s`, the user `agent7` and the proxy's service principal `HTTP/localhost`
 *   (`kadmin.local addprinc`), the proxy's keytab (`ktadd`), `krb5kdc -n`; `kinit` puts the user's
 *   ticket into a credential cache of the test's (KRB5CCNAME).
 * - `SquidProxy`: Debian's squid with its own configuration on a free 127.0.0.1 port, asking for
 *   the schemes a test gives: Negotiate (`negotiate_kerberos_auth` with the realm's keytab), NTLM
 *   (`ntlm_fake_auth`, squid's test helper: a full NEGOTIATE / CHALLENGE / AUTHENTICATE exchange
 *   that accepts any user, since checking a password needs a domain controller) and Basic
 *   (`basic_fake_auth`). Its access log is the proof: one `TCP_TUNNEL/200 ... CONNECT host:port
 *   <user>` line per tunnel, naming the user it authenticated.
 *
 * The proxy's host name is `localhost`: with `rdns = false` and `dns_canonicalize_hostname =
 * false` in the realm's krb5.conf, GSSAPI asks for `HTTP/localhost@SCREENPOP.TEST` exactly as the
 * client names the proxy (no reverse lookup of 127.0.0.1, which differs between machines).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  envWithout,
  freePort,
  listening,
  sleep,
  type ProcessGroup,
  type Spawned,
} from './processes.ts';

const find = (...paths: string[]) => paths.find((p) => existsSync(p));
const SQUID = find('/usr/sbin/squid');
const HELPERS = '/usr/lib/squid';
const KDC = find('/usr/sbin/krb5kdc');
const KDB5_UTIL = find('/usr/sbin/kdb5_util');
const KADMIN_LOCAL = find('/usr/sbin/kadmin.local');
const KINIT = find('/usr/bin/kinit');

export const REALM = 'SCREENPOP.TEST';
/** libfaketime's variables (CI's second pass): see KerberosRealm.env(). */
const FAKE_CLOCK = ['LD_PRELOAD', 'FAKETIME', 'FAKETIME_SHARED', 'FAKETIME_DONT_FAKE_MONOTONIC'];
export const USER = 'agent7';

/** Whether squid and the KDC can run; under CI=true a missing one is a failure, not a skip. */
export function squidAndKdcAvailable(file: string): boolean {
  const missing = [
    ['squid', SQUID],
    ['ntlm_fake_auth (squid)', find(`${HELPERS}/ntlm_fake_auth`)],
    ['negotiate_kerberos_auth (squid)', find(`${HELPERS}/negotiate_kerberos_auth`)],
    ['krb5kdc (krb5-kdc)', KDC],
    ['kdb5_util (krb5-kdc)', KDB5_UTIL],
    ['kadmin.local (krb5-admin-server)', KADMIN_LOCAL],
    ['kinit (krb5-user)', KINIT],
  ]
    .filter(([, path]) => !path)
    .map(([name]) => name);
  if (missing.length === 0) return true;
  const message = `${file}: not installed: ${missing.join(', ')} (apt-get install squid krb5-kdc krb5-admin-server krb5-user)`;
  if (process.env.CI === 'true') throw new Error(`${message}; CI must install them (.ci/run)`);
  console.warn(`${message}; its proxy authentication tests are skipped`);
  return false;
}

/** Until `port` takes connections; throws with `detail` when `proc` exits or time runs out. */
async function untilListening(proc: Spawned, port: number, what: string, detail: () => string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (await listening(port)) return;
    if (!proc.running()) throw new Error(`${what} exited before listening\n${detail()}`);
    if (Date.now() > deadline) throw new Error(`${what} did not listen in 15 s\n${detail()}`);
    await sleep(50);
  }
}

/** A folder the squid workers (user `proxy` when started as root) can read and write. */
function openDir(path: string, mode: number): string {
  mkdirSync(path, { recursive: true });
  chmodSync(path, mode);
  return path;
}

export class KerberosRealm {
  port = 0;
  proc!: Spawned;
  readonly dir: string;
  readonly password = `pw-${Math.random().toString(36).slice(2)}`;
  private readonly group: ProcessGroup;

  constructor(group: ProcessGroup) {
    this.group = group;
    this.dir = openDir(group.tempDir('kerberos-realm-'), 0o755);
  }

  get keytab(): string {
    return join(this.dir, 'proxy.keytab');
  }

  /**
   * The environment a Kerberos program of this realm needs (the KDC's tools, kinit, squid's
   * helper), on the real clock: CI's second pass runs everything five years ahead with a preloaded
   * fake clock (libfaketime), which MIT Kerberos inside Node's process does not see (measured: its
   * requests carry the real time, and a faked KDC answers "Clock skew too great"). So the KDC,
   * kinit and squid run on the real clock too, as the Kerberos library of the runner does.
   */
  env(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
    return {
      ...envWithout(FAKE_CLOCK, base),
      KRB5_CONFIG: join(this.dir, 'krb5.conf'),
      KRB5_KDC_PROFILE: join(this.dir, 'kdc.conf'),
    };
  }

  async start(): Promise<this> {
    this.port = await freePort();
    const p = this.port;
    writeFileSync(
      join(this.dir, 'krb5.conf'),
      [
        '[libdefaults]',
        `  default_realm = ${REALM}`,
        '  dns_lookup_realm = false',
        '  dns_lookup_kdc = false',
        '  rdns = false',
        '  dns_canonicalize_hostname = false',
        '  udp_preference_limit = 1',
        '[realms]',
        `  ${REALM} = {`,
        `    kdc = 127.0.0.1:${p}`,
        '  }',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(this.dir, 'kdc.conf'),
      [
        '[kdcdefaults]',
        `  kdc_listen = 127.0.0.1:${p}`,
        `  kdc_tcp_listen = 127.0.0.1:${p}`,
        '[realms]',
        `  ${REALM} = {`,
        `    database_name = ${join(this.dir, 'principal')}`,
        `    key_stash_file = ${join(this.dir, 'stash')}`,
        `    acl_file = ${join(this.dir, 'kadm5.acl')}`,
        `    kdc_listen = 127.0.0.1:${p}`,
        `    kdc_tcp_listen = 127.0.0.1:${p}`,
        '    max_life = 10h',
        '  }',
        '',
      ].join('\n'),
    );
    const env = this.env();
    const run = (cmd: string, args: string[], input?: string) =>
      execFileSync(cmd, args, { env, input, stdio: ['pipe', 'pipe', 'pipe'], timeout: 20_000 });
    run(KDB5_UTIL!, ['create', '-s', '-r', REALM, '-P', `master-${this.password}`]);
    run(KADMIN_LOCAL!, ['-q', `addprinc -pw ${this.password} ${USER}`]);
    run(KADMIN_LOCAL!, ['-q', 'addprinc -randkey HTTP/localhost']);
    run(KADMIN_LOCAL!, ['-q', `ktadd -k ${this.keytab} HTTP/localhost`]);
    chmodSync(this.keytab, 0o644); // read by squid's helper, which runs as `proxy` under root
    this.proc = this.group.spawn('krb5kdc', KDC!, ['-n', '-P', join(this.dir, 'kdc.pid')], { env });
    await untilListening(this.proc, p, 'krb5kdc', () => this.proc.describe());
    return this;
  }

  /**
   * The user's ticket in a credential cache of its own (`FILE:<dir>/<name>`), `lifetime` as
   * kinit reads it (`10h`, `6s`); the environment for a program using it.
   */
  kinit(name: string, lifetime = '10h'): NodeJS.ProcessEnv {
    const cache = `FILE:${join(this.dir, name)}`;
    execFileSync(KINIT!, ['-l', lifetime, USER], {
      env: { ...this.env(), KRB5CCNAME: cache },
      input: `${this.password}\n`,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 10_000,
    });
    return { KRB5_CONFIG: join(this.dir, 'krb5.conf'), KRB5CCNAME: cache };
  }
}

export interface SquidSchemes {
  negotiate?: KerberosRealm;
  ntlm?: boolean;
  basic?: boolean;
}

export class SquidProxy {
  port = 0;
  proc!: Spawned;
  private readonly dir: string;
  private readonly group: ProcessGroup;
  private readonly schemes: SquidSchemes;

  constructor(group: ProcessGroup, schemes: SquidSchemes) {
    this.group = group;
    this.schemes = schemes;
    this.dir = openDir(group.tempDir('squid-'), 0o755);
    openDir(join(this.dir, 'logs'), 0o777);
  }

  /** `http://[userinfo@]localhost:port` (localhost: the name of its service principal). */
  url(userinfo = ''): string {
    return `http://${userinfo ? `${userinfo}@` : ''}localhost:${this.port}`;
  }

  get accessLog(): string {
    return join(this.dir, 'logs', 'access.log');
  }

  async start(): Promise<this> {
    this.port = await freePort();
    const { negotiate, ntlm, basic } = this.schemes;
    const conf = join(this.dir, 'squid.conf');
    writeFileSync(
      conf,
      [
        `http_port 127.0.0.1:${this.port}`,
        'visible_hostname screenpop-test-proxy',
        `pid_filename ${join(this.dir, 'logs', 'squid.pid')}`,
        `cache_log ${join(this.dir, 'logs', 'cache.log')}`,
        `access_log stdio:${this.accessLog}`,
        `coredump_dir ${join(this.dir, 'logs')}`,
        'cache deny all',
        'cache_mem 8 MB',
        'icp_port 0',
        'htcp_port 0',
        'pinger_enable off',
        'shutdown_lifetime 0 seconds',
        ...(negotiate
          ? [
              `auth_param negotiate program ${HELPERS}/negotiate_kerberos_auth -s HTTP/localhost@${REALM}`,
              'auth_param negotiate children 2',
              'auth_param negotiate keep_alive on',
            ]
          : []),
        ...(ntlm
          ? [`auth_param ntlm program ${HELPERS}/ntlm_fake_auth`, 'auth_param ntlm children 2']
          : []),
        ...(basic ? [`auth_param basic program ${HELPERS}/basic_fake_auth`] : []),
        'acl authenticated proxy_auth REQUIRED',
        'http_access allow authenticated',
        'http_access deny all',
        '',
      ].join('\n'),
    );
    const env = envWithout(FAKE_CLOCK, {
      ...(negotiate ? negotiate.env() : process.env),
      KRB5_KTNAME: negotiate ? `FILE:${negotiate.keytab}` : '',
    });
    writeFileSync(this.accessLog, '');
    chmodSync(this.accessLog, 0o666);
    // -n: a service name of its own, so that squids started side by side share nothing.
    this.proc = this.group.spawn('squid', SQUID!, ['-N', '-n', `sp${this.port}`, '-f', conf], {
      env,
    });
    await untilListening(
      this.proc,
      this.port,
      'squid',
      () => this.proc.describe() + this.cacheLog(),
    );
    return this;
  }

  cacheLog(): string {
    try {
      return readFileSync(join(this.dir, 'logs', 'cache.log'), 'utf8');
    } catch {
      return '';
    }
  }

  log(): string {
    try {
      return readFileSync(this.accessLog, 'utf8');
    } catch {
      return '';
    }
  }

  /** Tunnels squid opened to 127.0.0.1:`port`, with the user it authenticated for each. */
  tunnelsTo(port: number): string[] {
    const pattern = new RegExp(`TCP_TUNNEL/200 \\d+ CONNECT 127\\.0\\.0\\.1:${port} (\\S+)`, 'g');
    return [...this.log().matchAll(pattern)].map((m) => m[1] ?? '');
  }

  /** 407 answers squid gave to CONNECTs to 127.0.0.1:`port` (each a leg of a handshake). */
  challengesTo(port: number): number {
    return (
      this.log().match(new RegExp(`TCP_DENIED/407 \\d+ CONNECT 127\\.0\\.0\\.1:${port} `, 'g'))
        ?.length ?? 0
    );
  }
}
