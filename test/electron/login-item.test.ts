import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  applyStartAtLogin,
  AUTOSTART_FILE,
  desktopExecQuote,
} from '../../src-main/electron/login-item.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('sp-autostart-');

const deps = (over: Partial<Parameters<typeof applyStartAtLogin>[1]> = {}) => ({
  platform: 'linux' as NodeJS.Platform,
  packaged: true,
  setLoginItemSettings: vi.fn(),
  executable: '/home/ada/Apps/Screenpop-0.1.0.AppImage',
  autostartDir: join(tmp.path, 'autostart'),
  logger: silentLogger,
  ...over,
});

describe('applyStartAtLogin', () => {
  it('writes and removes an XDG autostart entry on Linux', async () => {
    await applyStartAtLogin(true, deps());
    const text = await readFile(join(tmp.path, 'autostart', AUTOSTART_FILE), 'utf8');
    expect(text).toContain('Exec="/home/ada/Apps/Screenpop-0.1.0.AppImage" --ozone-platform=x11\n');
    expect(text.startsWith('[Desktop Entry]\n')).toBe(true);
    await applyStartAtLogin(false, deps());
    expect(await readdir(join(tmp.path, 'autostart'))).toEqual([]);
    await applyStartAtLogin(false, deps()); // already gone: fine
  });

  it('uses the login item API elsewhere, and does nothing unpackaged', async () => {
    const d = deps({ platform: 'win32' });
    await applyStartAtLogin(true, d);
    expect(d.setLoginItemSettings).toHaveBeenCalledWith({ openAtLogin: true });
    const dev = deps({ platform: 'darwin', packaged: false });
    await applyStartAtLogin(true, dev);
    expect(dev.setLoginItemSettings).not.toHaveBeenCalled();
  });

  it('quotes the executable path for the Exec key', () => {
    expect(desktopExecQuote('/opt/My "App"/$x`y\\z')).toBe('"/opt/My \\"App\\"/\\$x\\`y\\\\z"');
  });
});
