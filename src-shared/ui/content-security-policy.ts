/**
 * The one Content-Security-Policy of the app's own pages. Main sends it as a response header with
 * every page (app://screenpop/ and, in development, Vite's dev server), and the Vite build writes
 * it into each page's meta tag, so a page opened any other way (a test server, a saved copy) is
 * still held to it. Both come from here: the two were once written separately and had drifted (the
 * meta tag lacked font-src and object-src, and its connect-src 'none' blocked the dev server).
 */
export type CspPlacement = 'header' | 'meta';

/**
 * @param devOrigin the Vite dev server's origin (http://127.0.0.1:5173), allowed to connect for
 *   hot reload; null for the built app.
 * @param placement 'meta' leaves out frame-ancestors, which browsers ignore in a meta tag (with a
 *   console warning); the header carries it.
 */
export function contentSecurityPolicy(
  devOrigin: string | null,
  placement: CspPlacement = 'header',
): string {
  const connect = devOrigin
    ? `connect-src ${devOrigin} ${devOrigin.replace(/^http/, 'ws')}`
    : "connect-src 'none'";
  const directives = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    connect,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ];
  if (placement === 'header') directives.push("frame-ancestors 'none'");
  return directives.join('; ');
}
