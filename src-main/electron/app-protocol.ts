/**
 * Serves dist/renderer/ as app://screenpop/. Only files under that folder, only GET, the CSP and
 * nosniff headers on every answer; anything else is a 404.
 */
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, relative, isAbsolute } from 'node:path';
import type { Protocol } from 'electron';
import type { Logger } from '../../src-shared/process/log.ts';
import { APP_HOST, APP_SCHEME } from './app-origin.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** The file under `root` for an app:// URL, or null when the URL is not ours or escapes the root. */
export function resolveAppFile(root: string, url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== `${APP_SCHEME}:` || u.host !== APP_HOST) return null;
  let path: string;
  try {
    path = decodeURIComponent(u.pathname);
  } catch {
    return null;
  }
  if (path.includes('\0')) return null;
  const file = normalize(join(root, path === '/' ? '/popup.html' : path));
  const rel = relative(root, file);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  return file;
}

export function registerAppProtocol(
  protocol: Protocol,
  root: string,
  csp: string,
  logger: Logger,
): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const headers = { 'Content-Security-Policy': csp, 'X-Content-Type-Options': 'nosniff' };
    const file = request.method === 'GET' ? resolveAppFile(root, request.url) : null;
    const type = file ? TYPES[extname(file).toLowerCase()] : undefined;
    if (!file || !type) return new Response('Not found', { status: 404, headers });
    try {
      const body = await readFile(file);
      return new Response(body, { status: 200, headers: { ...headers, 'Content-Type': type } });
    } catch {
      logger.warn('app file not found', { path: relative(root, file) });
      return new Response('Not found', { status: 404, headers });
    }
  });
}
