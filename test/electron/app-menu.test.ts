/**
 * The application menu's keys as Electron expands its roles on each OS (the fake's expandRoles,
 * after Electron 45's menu-item-roles): macOS routes Cmd+W, Cmd+Q and the edit keys through it.
 */
import { describe, expect, it } from 'vitest';
import { applicationMenuTemplate } from '../../src-main/electron/app-menu.ts';
import { menuKeys } from '../support/electron-mock.ts';

const keysOn = (platform: NodeJS.Platform) => {
  const template = applicationMenuTemplate(platform);
  return menuKeys(template ? { template } : null, platform);
};

describe('the application menu', () => {
  it('macOS: Cmd+W closes the Settings or History window, Cmd+Q quits, the edit keys work', () => {
    const keys = keysOn('darwin');
    expect(keys.get('CommandOrControl+W')).toBe('close');
    expect(keys.get('CommandOrControl+Q')).toBe('quit');
    for (const key of ['C', 'V', 'X', 'A', 'Z'])
      expect(keys.has(`CommandOrControl+${key}`)).toBe(true);
  });

  it('macOS: no Reload nor Developer Tools', () => {
    const roles = [...keysOn('darwin').values()];
    expect(roles).not.toContain('reload');
    expect(roles).not.toContain('toggleDevTools');
  });

  it('Windows and Linux: no menu at all (Chromium gives the edit keys)', () => {
    expect(keysOn('win32').size).toBe(0);
    expect(keysOn('linux').size).toBe(0);
  });
});
