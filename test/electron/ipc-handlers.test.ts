/**
 * Handler registration is one object typed over the IPC contract (IpcHandlers): the compiler, not
 * a check at run time, says when a channel has no handler. The @ts-expect-error lines below are
 * the proof: `npm run typecheck` fails if any of them compiles (a missing channel, a channel the
 * contract does not have, a handler of the wrong type).
 */
import { describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../support/electron-mock.ts'));

import type { IpcMain } from 'electron';
import { ipcHandlers, type IpcContext } from '../../src-main/electron/ipc-handlers.ts';
import { TypedIpcMain, type IpcHandlers } from '../../src-main/electron/ipc-main.ts';
import { INVOKE_CHANNELS } from '../../src-main/ipc/contract.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { ipcMain, resetElectronMock } from '../support/electron-mock.ts';

// The handlers are closures: building them reads nothing of the context.
const handlers = ipcHandlers({} as IpcContext);

describe('IPC handlers, typed over the contract', () => {
  it('has a handler for every invoke channel and for nothing else', () => {
    expect(Object.keys(handlers).sort()).toEqual([...INVOKE_CHANNELS].sort());
  });

  it('handleAll registers each of them with ipcMain', () => {
    resetElectronMock();
    const ipc = new TypedIpcMain(
      ipcMain as unknown as IpcMain,
      { isOurWebContents: () => true, pageOf: () => 'settings' },
      memoryLogger(new SecretRegistry()),
    );
    ipc.handleAll(handlers);
    expect([...ipcMain.handlers.keys()].sort()).toEqual([...INVOKE_CHANNELS].sort());
    ipc.removeAll();
    expect(ipcMain.handlers.size).toBe(0);
  });

  it('does not compile without a channel, with a foreign channel or with a wrong handler', () => {
    const { 'window:close': _left, ...withoutOne } = handlers;
    // @ts-expect-error: 'window:close' has no handler
    const missing: IpcHandlers = withoutOne;
    const foreign: IpcHandlers = {
      ...handlers,
      // @ts-expect-error: the contract has no such channel
      'files:delete-all': () => {},
    };
    const wrong: IpcHandlers = {
      ...handlers,
      // @ts-expect-error: settings:get answers a SettingsView, not a number
      'settings:get': () => 42,
    };
    // At run time they are plain objects; the point is that the compiler refuses them.
    expect(Object.keys(missing)).not.toContain('window:close');
    expect(Object.keys(foreign)).toContain('files:delete-all');
    expect(typeof wrong['settings:get']).toBe('function');
  });
});
