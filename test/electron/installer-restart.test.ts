/**
 * Windows: an installer that closes Screenpop through the Restart Manager ('session-end' with the
 * reason 'close-app': an IT-pushed MSI upgrade) leaves a hidden restarter behind; nothing else does.
 * The far side here is the process spawner (no Windows, no PowerShell): what would run is read back.
 */
import { EventEmitter } from 'node:events';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  installerRestarter,
  restartScript,
  type InstallerRestartDeps,
} from '../../src-main/electron/installer-restart.ts';
import { silentLogger } from '../../src-shared/process/log.ts';

const EXE = 'C:\\Program Files\\Screenpop\\Screenpop.exe';

function setup(extra: Partial<InstallerRestartDeps> = {}) {
  const spawned: Array<{ command: string; args: string[]; options: SpawnOptions; unref: boolean }> =
    [];
  const restart = installerRestarter({
    platform: 'win32',
    packaged: true,
    executable: EXE,
    systemRoot: 'C:\\WINDOWS',
    spawn: (command, args, options) => {
      const child = Object.assign(new EventEmitter(), {
        unref() {
          entry.unref = true;
        },
      });
      const entry = { command, args, options, unref: false };
      spawned.push(entry);
      return child as unknown as ChildProcess;
    },
    logger: silentLogger,
    ...extra,
  });
  return { restart, spawned };
}

const decoded = (args: string[]) =>
  Buffer.from(args[args.indexOf('-EncodedCommand') + 1]!, 'base64').toString('utf16le');

describe('started again after an installer closed it (Windows)', () => {
  it('an MSI upgrade (Restart Manager: close-app) leaves one hidden, detached restarter, however many windows hear it', () => {
    const { restart, spawned } = setup();
    expect(restart(['close-app'])).toBe(true);
    expect(restart(['close-app'])).toBe(false); // the Settings window hears it too
    expect(spawned).toHaveLength(1);
    const [run] = spawned;
    expect(run!.command).toBe('C:\\WINDOWS\\System32\\WindowsPowerShell\\v1.0\\powershell.exe');
    expect(run!.options).toMatchObject({ detached: true, stdio: 'ignore', windowsHide: true });
    expect(run!.unref).toBe(true);
    const script = decoded(run!.args);
    expect(script).toBe(restartScript(EXE));
    expect(script).toContain(`$exe = '${EXE}'`);
    expect(script).toContain("OpenExisting('Global\\_MSIExecute')");
    expect(script).toContain('if (Test-Path -LiteralPath $exe) { Start-Process -FilePath $exe }');
  });

  it('a path with a quote stays one PowerShell string', () => {
    expect(restartScript("D:\\O'Brien\\Screenpop.exe")).toContain(
      "$exe = 'D:\\O''Brien\\Screenpop.exe'",
    );
  });

  it('log-off, shutdown, other systems and unpackaged runs start nothing', () => {
    const { restart, spawned } = setup();
    expect(restart(['logoff'])).toBe(false);
    expect(restart(['shutdown', 'critical'])).toBe(false);
    expect(setup({ platform: 'linux' }).restart(['close-app'])).toBe(false);
    expect(setup({ packaged: false }).restart(['close-app'])).toBe(false);
    expect(spawned).toEqual([]);
  });
});
