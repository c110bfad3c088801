import { describe, expect, it } from 'vitest';
import {
  applyChromiumSwitches,
  chromiumSwitches,
  MIN_DEV_SHM_BYTES,
} from '../../src-main/electron/chromium-switches.ts';
import { app } from '../support/electron-mock.ts';

const MiB = 1024 * 1024;

describe('Chromium switches', () => {
  it('moves shared memory out of a small /dev/shm (a container) on Linux only, never turns the sandbox off', () => {
    expect(chromiumSwitches({ platform: 'linux', devShmBytes: 64 * MiB })).toEqual([
      { name: 'disable-dev-shm-usage', why: expect.stringContaining('64 MiB') },
    ]);
    expect(chromiumSwitches({ platform: 'linux', devShmBytes: MIN_DEV_SHM_BYTES })).toEqual([]);
    expect(chromiumSwitches({ platform: 'linux', devShmBytes: null })).toEqual([]);
    expect(chromiumSwitches({ platform: 'win32', devShmBytes: 1 })).toEqual([]);
    for (const facts of [
      { platform: 'linux' as const, devShmBytes: 1 },
      { platform: 'darwin' as const, devShmBytes: null },
    ])
      expect(chromiumSwitches(facts).map((s) => s.name)).not.toContain('no-sandbox');
  });

  it('adds a switch to Chromium’s command line once, and not when the user gave it already', () => {
    const line = app.commandLine;
    line.switches.clear();
    expect(applyChromiumSwitches(line, { platform: 'linux', devShmBytes: 64 * MiB })).toHaveLength(
      1,
    );
    expect(line.hasSwitch('disable-dev-shm-usage')).toBe(true);
    expect(applyChromiumSwitches(line, { platform: 'linux', devShmBytes: 64 * MiB })).toEqual([]);
    line.switches.clear();
  });
});
