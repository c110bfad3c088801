/**
 * Windows: started again after an installer closed it.
 *
 * An MSI the organisation pushes (Intune, SCCM, Group Policy) upgrades Screenpop while it runs:
 * Windows Installer asks the Restart Manager to close it, which reaches the app as a window's
 * 'session-end' with the reason 'close-app'. Nothing starts it again: the MSI's "run after
 * finish" is off and would not run in a silent install anyway (and an install running as SYSTEM
 * must not start the user's app), Windows' own restart registration (RegisterApplicationRestart)
 * is not offered by Electron, and the login item only starts it at the next sign-in.
 *
 * So, on that reason only, the app leaves a small hidden PowerShell behind in the user's session
 * before it ends: it waits while Windows Installer runs (its `Global\_MSIExecute` mutex exists),
 * at most 30 minutes, then starts the installed executable again if it is still there (an
 * uninstall removes it: then nothing starts). Log-off and shutdown ('logoff', 'shutdown',
 * 'critical') start nothing. Only a packaged app (an unpackaged run has no installer).
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { win32 } from 'node:path';
import type { Logger } from '../../src-shared/process/log.ts';

export const INSTALLER_WAIT_MINUTES = 30;

export interface InstallerRestartDeps {
  platform: NodeJS.Platform;
  packaged: boolean;
  /** The executable to start again (process.execPath). */
  executable: string;
  /** %SystemRoot% (Windows' folder), where PowerShell is. */
  systemRoot: string | undefined;
  spawn: (command: string, args: string[], options: SpawnOptions) => ChildProcess;
  logger: Logger;
}

/** PowerShell's text for a single-quoted string: quotes doubled. */
function psQuoted(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** The waiting script (PowerShell), for `executable`. */
export function restartScript(executable: string): string {
  return [
    `$exe = ${psQuoted(executable)}`,
    `$deadline = (Get-Date).AddMinutes(${INSTALLER_WAIT_MINUTES})`,
    'Start-Sleep -Seconds 5',
    'while ((Get-Date) -lt $deadline) {',
    '  $busy = $true',
    "  try { [System.Threading.Mutex]::OpenExisting('Global\\_MSIExecute').Dispose() }",
    '  catch [System.Threading.WaitHandleCannotBeOpenedException] { $busy = $false }',
    '  catch { }',
    '  if (-not $busy) { break }',
    '  Start-Sleep -Seconds 5',
    '}',
    'if (Test-Path -LiteralPath $exe) { Start-Process -FilePath $exe }',
  ].join('\n');
}

/**
 * What each window's 'session-end' calls with the event's reasons (Electron's
 * WindowSessionEndEvent): leaves the restarter behind when an installer closes the app, once
 * however many windows hear it; true when it did.
 */
export function installerRestarter(
  d: InstallerRestartDeps,
): (reasons: readonly string[]) => boolean {
  let left = false;
  return (reasons) => {
    if (left || !reasons.includes('close-app')) return false;
    left = restartAfterInstaller(d);
    return left;
  };
}

function restartAfterInstaller(d: InstallerRestartDeps): boolean {
  if (d.platform !== 'win32' || !d.packaged) return false;
  const powershell = win32.join(
    d.systemRoot || 'C:\\Windows',
    'System32',
    'WindowsPowerShell',
    'v1.0',
    'powershell.exe',
  );
  try {
    const child = d.spawn(
      powershell,
      [
        '-NoProfile',
        '-NonInteractive',
        '-ExecutionPolicy',
        'Bypass',
        '-WindowStyle',
        'Hidden',
        '-EncodedCommand',
        Buffer.from(restartScript(d.executable), 'utf16le').toString('base64'),
      ],
      { detached: true, stdio: 'ignore', windowsHide: true },
    );
    child.on('error', (err) =>
      d.logger.error('the restart after the installer could not start', { error: err }),
    );
    child.unref();
    d.logger.info('an installer closes Screenpop; it starts again when the installer is done');
    return true;
  } catch (err) {
    d.logger.error('the restart after the installer could not start', { error: err });
    return false;
  }
}
