/**
 * electron-updater's requests (the feed's latest*.yml, the download, the differential download's
 * ranges) go out the app's one way (src-shared/net: the proxy the settings or the system choose,
 * its credentials from the keychain, the trusted CAs with the administrator's CA file), not through
 * electron-updater's own Electron session, which knows none of them: behind an authenticating
 * proxy its requests got a 407 nobody answered, and a TLS-inspecting proxy's certificate was
 * untrusted.
 *
 * electron-updater 6.8 makes every request through one executor (AppUpdater.httpExecutor, an
 * ElectronHttpExecutor built on builder-util-runtime's HttpExecutor), whose `createRequest` is the
 * only place a request is made. Node's http(s).request with the transport's agent takes its place;
 * HttpExecutor follows a Node response's redirects itself (its Electron-only 'redirect' handler is
 * not needed).
 */
import http from 'node:http';
import https from 'node:https';

/** What HttpExecutor passes to createRequest (builder-util-runtime RequestOptions, Node's shape). */
export interface UpdateRequestOptions extends http.RequestOptions {
  protocol?: string | null;
  hostname?: string | null;
}

/** The part of electron-updater's executor this replaces. */
export interface UpdateRequestExecutor {
  createRequest(
    options: UpdateRequestOptions,
    callback: (response: http.IncomingMessage) => void,
  ): unknown;
  addRedirectHandlers(...args: unknown[]): void;
}

export function isUpdateRequestExecutor(value: unknown): value is UpdateRequestExecutor {
  const v = value as Partial<UpdateRequestExecutor> | null;
  return typeof v?.createRequest === 'function' && typeof v.addRedirectHandlers === 'function';
}

/** Sends every request of `executor` through `agentFor` (NetTransport.agentFor of the settings in force). */
export function routeUpdateRequests(
  executor: UpdateRequestExecutor,
  agentFor: (url: URL) => http.Agent,
): void {
  executor.createRequest = (options, callback) => {
    const secure = options.protocol !== 'http:';
    const url = new URL(
      `${secure ? 'https' : 'http'}://${options.hostname ?? options.host ?? 'localhost'}/`,
    );
    const {
      session: _electronSession,
      redirect: _redirect,
      ...nodeOptions
    } = options as UpdateRequestOptions & { session?: unknown; redirect?: unknown };
    return (secure ? https : http).request({ ...nodeOptions, agent: agentFor(url) }, callback);
  };
  executor.addRedirectHandlers = () => {};
}
