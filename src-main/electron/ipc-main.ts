/**
 * The main side of the typed IPC contract. `handle` and `send` are generic over the channel maps in
 * src-main/ipc/contract.ts, so a handler's parameters and result, and an event's arguments, are
 * checked by the compiler. Every invoke first passes the sender check (one of our windows, its
 * top frame, on our own origin) and the channel's argument validator; a refused call is logged and
 * never reaches the handler.
 */
import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import {
  INVOKE_CHANNELS,
  type EventChannel,
  type IpcEventMap,
  type IpcInvokeMap,
  type InvokeChannel,
} from '../ipc/contract.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import type { PageName } from './app-origin.ts';
import { CHANNEL_PAGES } from './ipc-pages.ts';
import { INVOKE_VALIDATORS } from './ipc-validate.ts';

export type Handler<C extends InvokeChannel> = (
  event: IpcMainInvokeEvent,
  ...args: Parameters<IpcInvokeMap[C]>
) => Awaited<ReturnType<IpcInvokeMap[C]>> | Promise<Awaited<ReturnType<IpcInvokeMap[C]>>>;

/** A handler for every invoke channel of the contract, and for nothing else. */
export type IpcHandlers = { [C in InvokeChannel]: Handler<C> };

export interface SenderPolicy {
  /** True when `contents` belongs to one of the app's windows. */
  isOurWebContents(contents: WebContents): boolean;
  /** Which of our pages `url` is (app:// origin, or the dev server in development); null if none. */
  pageOf(url: string): PageName | null;
}

export function isTrustedSender(
  event: IpcMainInvokeEvent,
  policy: SenderPolicy,
  channel: InvokeChannel,
): boolean {
  const frame = event.senderFrame;
  if (!frame) return false; // the frame navigated away or was destroyed
  if (frame.parent !== null) return false; // subframes never talk to main
  if (!policy.isOurWebContents(event.sender)) return false;
  const page = policy.pageOf(frame.url);
  return page !== null && CHANNEL_PAGES[channel].includes(page);
}

export class TypedIpcMain {
  private readonly ipcMain: IpcMain;
  private readonly policy: SenderPolicy;
  private readonly logger: Logger;
  private readonly channels = new Set<InvokeChannel>();

  constructor(ipcMain: IpcMain, policy: SenderPolicy, logger: Logger) {
    this.ipcMain = ipcMain;
    this.policy = policy;
    this.logger = logger.child({ component: 'ipc' });
  }

  handle<C extends InvokeChannel>(channel: C, fn: Handler<C>): void {
    const validate = INVOKE_VALIDATORS[channel];
    this.channels.add(channel);
    this.ipcMain.handle(channel, async (event: IpcMainInvokeEvent, ...raw: unknown[]) => {
      if (!isTrustedSender(event, this.policy, channel)) {
        this.logger.warn('IPC from an untrusted sender ignored', {
          channel,
          url: safeUrl(event.senderFrame?.url),
        });
        return undefined;
      }
      let args: Parameters<IpcInvokeMap[C]>;
      try {
        args = validate(raw);
      } catch (err) {
        this.logger.warn('IPC call with invalid arguments refused', { channel, error: err });
        // No cause on purpose: nothing of the original error may cross to the renderer.
        // eslint-disable-next-line preserve-caught-error
        throw new Error(`Invalid arguments for ${channel}`);
      }
      try {
        return await fn(event, ...args);
      } catch (err) {
        // The renderer gets a plain message; details stay in the (redacted) log.
        this.logger.error('IPC handler failed', { channel, error: err });
        // eslint-disable-next-line preserve-caught-error
        throw new Error(`${channel} failed`);
      }
    });
  }

  /** Registers the handler of every channel of the contract (the composition root's one call). */
  handleAll(handlers: IpcHandlers): void {
    const register = <C extends InvokeChannel>(channel: C) =>
      this.handle(channel, handlers[channel]);
    for (const channel of INVOKE_CHANNELS) register(channel);
  }

  removeAll(): void {
    for (const c of this.channels) this.ipcMain.removeHandler(c);
    this.channels.clear();
  }
}

/** Main -> renderer, typed over IpcEventMap. Destroyed windows are skipped. */
export function send<C extends EventChannel>(
  target: { webContents: WebContents; isDestroyed(): boolean } | null | undefined,
  channel: C,
  ...args: Parameters<IpcEventMap[C]>
): void {
  if (!target || target.isDestroyed() || target.webContents.isDestroyed()) return;
  target.webContents.send(channel, ...args);
}

/** Origin and path only: a foreign URL's query could carry anything. */
function safeUrl(url: string | undefined): string {
  if (!url) return '(none)';
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`.slice(0, 200);
  } catch {
    return '(unparseable)';
  }
}
