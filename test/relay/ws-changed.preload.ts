/**
 * Loaded with `node --import` before the relay (ws-internals.test.ts): makes the installed `ws`
 * behave as a release that renamed the socket it keeps (`_socket`), the change the relay's
 * start-up check exists for. Only that process is changed; nothing on disk is.
 */
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../src-relay/cli.ts', import.meta.url));
const { WebSocket } = require('ws') as {
  WebSocket: { prototype: { setSocket(this: Record<string, unknown>, ...a: unknown[]): void } };
};
const setSocket = WebSocket.prototype.setSocket;
WebSocket.prototype.setSocket = function (this: Record<string, unknown>, ...args: unknown[]) {
  setSocket.apply(this, args);
  this._stream = this._socket;
  this._socket = null;
};
