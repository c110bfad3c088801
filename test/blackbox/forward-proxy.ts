/**
 * A real forward proxy for the proxy tests: Debian's tinyproxy, started in the foreground on a free
 * loopback port with its own configuration and access log (LogLevel Connect), optionally with Basic
 * authentication. Its log is the proof that traffic went through it: each tunnel is one
 * `Request (file descriptor N): CONNECT host:port HTTP/1.1` line.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  envWithout,
  freePort,
  until,
  type ProcessGroup,
  type Spawned,
} from '../../rigs/processes.ts';

export const TINYPROXY = ['/usr/bin/tinyproxy', '/usr/sbin/tinyproxy'].find((p) => existsSync(p));

/** Whether the proxy tests can run; under CI=true a missing tinyproxy is a failure, not a skip. */
export function tinyproxyAvailable(file: string): boolean {
  if (TINYPROXY) return true;
  const message = `${file}: tinyproxy not installed (apt-get install tinyproxy)`;
  if (process.env.CI === 'true') throw new Error(`${message}; CI must install it (.ci/run)`);
  console.warn(`${message}; its proxy tests are skipped`);
  return false;
}

const PROXY_VARS = ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NO_PROXY'];

/**
 * This environment without the proxy variables (either case) of the machine running the tests, nor
 * `more`: a process started with it goes direct unless the test names a proxy.
 */
export function envWithoutProxy(more: string[] = []): NodeJS.ProcessEnv {
  return envWithout([...PROXY_VARS, ...PROXY_VARS.map((v) => v.toLowerCase()), ...more]);
}

export class ForwardProxy {
  proc!: Spawned;
  port = 0;
  private readonly dir: string;
  private readonly group: ProcessGroup;
  private readonly auth: { user: string; password: string } | undefined;

  constructor(group: ProcessGroup, auth?: { user: string; password: string }) {
    this.group = group;
    this.auth = auth;
    this.dir = group.tempDir('forward-proxy-');
  }

  /** http://[user:password@]127.0.0.1:port, with the given credentials (default: its own). */
  url(credentials: { user: string; password: string } | undefined = this.auth): string {
    const userinfo = credentials
      ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@`
      : '';
    return `http://${userinfo}127.0.0.1:${this.port}`;
  }

  get logFile(): string {
    return join(this.dir, 'access.log');
  }

  async start(): Promise<this> {
    if (!TINYPROXY) throw new Error('tinyproxy is not installed');
    this.port ||= await freePort();
    const conf = join(this.dir, 'tinyproxy.conf');
    writeFileSync(
      conf,
      [
        `Port ${this.port}`,
        'Listen 127.0.0.1',
        'Timeout 60',
        `LogFile "${this.logFile}"`,
        'LogLevel Connect',
        'MaxClients 50',
        'Allow 127.0.0.1',
        `PidFile "${join(this.dir, 'tinyproxy.pid')}"`,
        // No ConnectPort line: CONNECT to any port (the simulator's and the relay's are free ones).
        ...(this.auth ? [`BasicAuth ${this.auth.user} ${this.auth.password}`] : []),
        '',
      ].join('\n'),
    );
    writeFileSync(this.logFile, '');
    this.proc = this.group.spawn('tinyproxy', TINYPROXY, ['-d', '-c', conf]);
    await until(
      () => this.log().includes('Reloading config file finished') || !this.proc.running(),
      'tinyproxy to start',
      10_000,
      () => this.proc.describe() + this.log(),
    );
    if (!this.proc.running()) throw new Error(`tinyproxy did not start\n${this.proc.describe()}`);
    return this;
  }

  log(): string {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  /** How many CONNECT requests named 127.0.0.1:`port` (each is one tunnel, one connection). */
  connectsTo(port: number): number {
    const pattern = new RegExp(`: CONNECT 127\\.0\\.0\\.1:${port} HTTP/1\\.1$`, 'gm');
    return this.log().match(pattern)?.length ?? 0;
  }
}
