/**
 * A private desktop for the e2e suite on Linux, built from processes this suite starts and stops
 * by pid: an X display (Xvfb), a D-Bus session bus, an unlocked gnome-keyring on it (the OS keychain
 * keytar talks to) and a notification server (dunst, which owns org.freedesktop.Notifications, so
 * Electron's libnotify notifications are really shown), and, where weston is installed, a headless
 * Wayland compositor for the Wayland scenario. Everything lives in a temporary HOME, so
 * the developer's keychain, settings and notifications are never touched. Each missing tool is
 * reported in words, and the scenarios that need it skip with that reason.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import { join } from 'node:path';
import { keytarMissing } from '../../support/keytar.ts';
import { waitFor } from '../../../rigs/wait.ts';

export interface DesktopSession {
  home: string;
  /** The environment for every process of the session (the app included). */
  env: NodeJS.ProcessEnv;
  /** What this session lacks, per capability (absent key: available). */
  missing: {
    display?: string;
    bus?: string;
    keyring?: string;
    notifications?: string;
    wayland?: string;
  };
  /**
   * A Wayland compositor (weston, headless) beside the X display: what a scenario adds to the
   * environment to run the app as a Wayland client, as on Ubuntu GNOME or Fedora.
   */
  wayland?: { WAYLAND_DISPLAY: string; XDG_SESSION_TYPE: 'wayland' };
  stop(): Promise<void>;
}

export function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

/** Reads one line a child writes to the given stream, within a time limit. */
function firstLine(stream: NodeJS.ReadableStream, what: string, ms = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    stream.on('data', (d: Buffer) => {
      text += d.toString();
      const nl = text.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(text.slice(0, nl).trim());
      }
    });
    stream.on('end', () => {
      clearTimeout(timer);
      reject(new Error(`${what}: closed before answering`));
    });
  });
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export async function startDesktopSession(): Promise<DesktopSession> {
  const home = await mkdtemp(join(tmpdir(), 'screenpop-e2e-'));
  const runtime = join(home, 'run');
  await mkdir(runtime, { mode: 0o700 });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: 'en_US.UTF-8',
    HOME: home,
    XDG_RUNTIME_DIR: runtime,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
  };
  const missing: DesktopSession['missing'] = {};
  const children: ChildProcess[] = [];

  if (!hasCommand('Xvfb')) missing.display = 'Xvfb not found (apt-get install xvfb)';
  else {
    // -displayfd: Xvfb picks a free display and writes its number to fd 3 once it accepts clients.
    const xvfb = spawn(
      'Xvfb',
      ['-displayfd', '3', '-screen', '0', '1920x1080x24', '-nolisten', 'tcp'],
      {
        env,
        stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
      },
    );
    children.push(xvfb);
    const fd3 = xvfb.stdio[3] as Readable | null;
    if (!fd3) throw new Error('Xvfb: no display pipe');
    env.DISPLAY = `:${await firstLine(fd3, 'Xvfb')}`;
  }

  if (!hasCommand('dbus-daemon')) missing.bus = 'dbus-daemon not found (apt-get install dbus)';
  else {
    const bus = spawn(
      'dbus-daemon',
      ['--session', '--nofork', '--nopidfile', '--print-address=1'],
      {
        env,
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    children.push(bus);
    env.DBUS_SESSION_BUS_ADDRESS = await firstLine(bus.stdout, 'dbus-daemon');
  }

  if (missing.bus) missing.keyring = missing.bus;
  else if (!hasCommand('gnome-keyring-daemon'))
    missing.keyring = 'gnome-keyring-daemon not found (apt-get install gnome-keyring)';
  else {
    // Daemonizes itself; it ends with the bus it registered on.
    const keyring = spawnSync(
      'sh',
      ['-c', 'printf pw | gnome-keyring-daemon --unlock --components=secrets --daemonize'],
      { env, timeout: 15_000 },
    );
    if (keyring.status !== 0) missing.keyring = `gnome-keyring-daemon failed: ${keyring.stderr}`;
  }
  // The app reaches the keychain through keytar, an optional dependency (it builds against libsecret).
  const noKeytar = keytarMissing();
  if (noKeytar && !missing.keyring) missing.keyring = noKeytar;

  // A headless Wayland compositor (no GPU needed), for the scenario that shows what a native
  // Wayland window means for the popup.
  let wayland: DesktopSession['wayland'];
  if (!hasCommand('weston')) missing.wayland = 'weston not found (apt-get install weston)';
  else {
    const socket = 'wayland-screenpop';
    const weston = spawn(
      'weston',
      ['--backend=headless-backend.so', `--socket=${socket}`, '--idle-time=0'],
      { env, stdio: 'ignore' },
    );
    children.push(weston);
    try {
      await waitFor(() => existsSync(join(runtime, socket)), 'weston to open its socket', {
        timeoutMs: 10_000,
        intervalMs: 100,
      });
      wayland = { WAYLAND_DISPLAY: socket, XDG_SESSION_TYPE: 'wayland' };
    } catch (err) {
      missing.wayland = `weston did not start: ${(err as Error).message}`;
    }
  }

  if (missing.bus || missing.display)
    missing.notifications = missing.bus ?? missing.display ?? 'no desktop';
  else if (!hasCommand('dunst'))
    missing.notifications = 'no notification server: dunst not found (apt-get install dunst)';
  else {
    const dunst = spawn('dunst', [], { env, stdio: 'ignore' });
    children.push(dunst);
    const probe = () =>
      spawnSync(
        'dbus-send',
        [
          '--session',
          '--print-reply',
          '--dest=org.freedesktop.DBus',
          '/org/freedesktop/DBus',
          'org.freedesktop.DBus.NameHasOwner',
          'string:org.freedesktop.Notifications',
        ],
        { env, encoding: 'utf8' },
      ).stdout.includes('boolean true');
    try {
      await waitFor(probe, 'dunst to own org.freedesktop.Notifications', {
        timeoutMs: 10_000,
        intervalMs: 100,
      });
    } catch (err) {
      missing.notifications = `dunst did not start: ${(err as Error).message}`;
    }
  }

  return {
    home,
    env,
    missing,
    ...(wayland ? { wayland } : {}),
    async stop() {
      for (const child of children.reverse()) await stopChild(child);
      await rm(home, { recursive: true, force: true });
    },
  };
}
