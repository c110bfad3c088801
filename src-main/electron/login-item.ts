/**
 * "Start at login". macOS and Windows: app.setLoginItemSettings. Linux has no such API in
 * Electron, so an XDG autostart entry (~/.config/autostart/screenpop.desktop) is written or removed;
 * for an AppImage it points at the AppImage file (APPIMAGE), not at the temporary mount, and it
 * starts under XWayland like the menu entries (LINUX_LAUNCH_ARGS).
 * Only packaged apps register themselves: a development run would register the bare Electron binary.
 */
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../src-shared/files/atomic-file.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import { LINUX_LAUNCH_ARGS } from './chromium-switches.ts';

export interface LoginItemDeps {
  platform: NodeJS.Platform;
  packaged: boolean;
  setLoginItemSettings: (settings: { openAtLogin: boolean }) => void;
  /** The executable to start: process.env.APPIMAGE for an AppImage, else process.execPath. */
  executable: string;
  /** $XDG_CONFIG_HOME/autostart (default ~/.config/autostart). */
  autostartDir: string;
  logger: Logger;
}

export const AUTOSTART_FILE = 'screenpop.desktop';

/** A desktop-entry Exec argument, quoted as the Desktop Entry Specification requires. */
export function desktopExecQuote(path: string): string {
  return `"${path.replace(/["`$\\]/g, (c) => `\\${c}`)}"`;
}

export function autostartEntry(executable: string): string {
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Name=Screenpop',
    'Comment=Shows who is calling the moment your extension rings',
    `Exec=${[desktopExecQuote(executable), ...LINUX_LAUNCH_ARGS].join(' ')}`,
    'Terminal=false',
    'X-GNOME-Autostart-enabled=true',
    '',
  ].join('\n');
}

export async function applyStartAtLogin(enabled: boolean, deps: LoginItemDeps): Promise<void> {
  if (!deps.packaged) return;
  try {
    if (deps.platform === 'linux') {
      const file = join(deps.autostartDir, AUTOSTART_FILE);
      if (enabled) await writeFileAtomic(file, autostartEntry(deps.executable), 0o644);
      else
        await unlink(file).catch((err: NodeJS.ErrnoException) =>
          err.code === 'ENOENT' ? undefined : Promise.reject(err),
        );
    } else {
      deps.setLoginItemSettings({ openAtLogin: enabled });
    }
  } catch (err) {
    deps.logger.warn('start at login could not be changed', { error: err });
  }
}
