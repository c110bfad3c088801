/**
 * Builds the renderer with Vite's JS API into a fresh temporary folder and serves it from
 * 127.0.0.1 on an ephemeral port, sending main's CSP header (with frame-ancestors, which a meta tag
 * cannot carry). Only files inside the build folder are served.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { contentSecurityPolicy } from '../../src-shared/ui/content-security-policy.ts';

/** The policy main sends with every page of ours (frame-ancestors included): the one that ships. */
const RENDERER_CSP = contentSecurityPolicy(null);

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

export interface ServedRenderer {
  origin: string;
  outDir: string;
  close(): Promise<void>;
}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export async function buildAndServeRenderer(): Promise<ServedRenderer> {
  const outDir = await mkdtemp(join(tmpdir(), 'screenpop-renderer-'));
  // Vitest sets NODE_ENV=test, which would make Vite bundle React's development build (with
  // StrictMode's double effects); the tests must exercise what ships.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({
      configFile: join(repoRoot, 'vite.config.ts'),
      mode: 'production',
      logLevel: 'silent',
      build: { outDir, emptyOutDir: true },
    });
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
  const root = resolve(outDir);
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
      const file = resolve(root, `.${path}`);
      if (req.method !== 'GET' || !file.startsWith(root + sep)) {
        res.writeHead(404).end();
        return;
      }
      try {
        const body = await readFile(file);
        res.writeHead(200, {
          'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
          'Content-Security-Policy': RENDERER_CSP,
          'Cache-Control': 'no-store',
        });
        res.end(body);
      } catch {
        res.writeHead(404).end();
      }
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('server has no port');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    outDir,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      await rm(outDir, { recursive: true, force: true });
    },
  };
}
