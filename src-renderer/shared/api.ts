/**
 * The renderer's only door to the main process: `window.screenpop`, put there by the preload
 * (src-main/electron/preload.ts) and typed by the shared contract. Components receive the API as a
 * prop, so tests hand them a double of the same type.
 */
import type { ScreenpopApi } from '../../src-main/ipc/contract.ts';

declare global {
  interface Window {
    screenpop?: ScreenpopApi;
  }
}

export function getApi(): ScreenpopApi | null {
  return window.screenpop ?? null;
}
