/**
 * The preload of every Screenpop window. It runs sandboxed (sandbox: true, contextIsolation: true),
 * so it may import only 'electron'; scripts/build-main.ts bundles it to CommonJS together with the
 * type-only-importing API factory. The renderer gets named functions on `window.screenpop` and
 * nothing else: never ipcRenderer, never a way to pick a channel.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { createScreenpopApi } from '../ipc/renderer-api.ts';

contextBridge.exposeInMainWorld('screenpop', createScreenpopApi(ipcRenderer));
