/**
 * The application menu. Electron installs its default one (Reload, Force Reload, Toggle Developer
 * Tools, Help links to electronjs.org) unless the app sets its own: on Windows and Linux it would
 * be the Settings and History windows' menu bar (autoHideMenuBar shows it on Alt) and Ctrl+R would
 * reload a page. There the app has none: text editing shortcuts are Chromium's own. macOS routes
 * Cmd+C, Cmd+V, Cmd+W and Cmd+Q through the application menu, so it keeps exactly those (the menu
 * bar itself never shows: Screenpop is a menu-bar app, LSUIElement).
 */
import type { MenuItemConstructorOptions } from 'electron';

export function applicationMenuTemplate(
  platform: NodeJS.Platform,
): MenuItemConstructorOptions[] | null {
  if (platform !== 'darwin') return null;
  // Electron's windowMenu on macOS holds Minimize, Zoom and Bring All to Front, no Close: Cmd+W
  // comes from the fileMenu role, whose only item on macOS is Close Window.
  return [{ role: 'appMenu' }, { role: 'fileMenu' }, { role: 'editMenu' }, { role: 'windowMenu' }];
}
