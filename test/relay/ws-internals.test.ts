/**
 * The relay writes frames under `ws` through its internals (src-relay/ws-frames.ts), so it checks
 * them at start-up and refuses to start, with words and exit 1, if a `ws` release changed them
 * (before, it would have accepted clients and delivered them nothing). The check runs against the
 * real `ws`; the changed ones are the real `ws` altered the way a release could alter it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import { describe, expect, it } from 'vitest';
import { StartupError } from '../../src-relay/startup-errors.ts';
import { assertWsInternals, wsInternalsProblem } from '../../src-relay/ws-internals.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { runRelayWith } from '../../rigs/relay/relay-process.ts';

/** The real server, whose upgraded sockets are changed by `change` before the relay sees them. */
function changedWs(change: (ws: WebSocket & Record<string, unknown>) => void) {
  return class extends WebSocketServer {
    override handleUpgrade(
      ...[req, socket, head, done]: Parameters<WebSocketServer['handleUpgrade']>
    ) {
      super.handleUpgrade(req, socket, head, (ws, r) => {
        change(ws as WebSocket & Record<string, unknown>);
        done(ws, r);
      });
    }
  };
}

describe('the ws internals check', () => {
  it('passes with the ws this repository installs', () => {
    expect(wsInternalsProblem()).toBeNull();
    expect(() => assertWsInternals()).not.toThrow();
  });

  it('refuses a ws that keeps its socket under another name, saying what changed and what to do', () => {
    const renamed = changedWs((ws) => {
      ws._stream = ws._socket;
      ws._socket = null;
    });
    expect(wsInternalsProblem(renamed)).toMatch(/no longer keeps its socket as `_socket`/);
    expect(() => assertWsInternals(renamed)).toThrow(StartupError);
    expect(() => assertWsInternals(renamed)).toThrow(
      /^ws \d+\.\d+\.\d+ is not the ws the relay was built for: .* deliver them nothing\. Install the ws version package\.json pins/,
    );
  });

  it('refuses a ws that no longer writes a frame straight to its socket', () => {
    const deferred = changedWs((ws) => {
      const send = ws.send.bind(ws);
      ws.send = ((data: string) => void Promise.resolve().then(() => send(data))) as never;
    });
    expect(wsInternalsProblem(deferred)).toMatch(
      /not written to its socket as ws-frames\.ts writes one/,
    );
  });

  it('refuses a ws whose bufferedAmount no longer counts the socket', () => {
    const uncounted = changedWs((ws) => {
      Object.defineProperty(ws, 'bufferedAmount', { get: () => 0 });
    });
    expect(wsInternalsProblem(uncounted)).toMatch(/`bufferedAmount` no longer counts/);
  });
});

describe('the relay with a changed ws (the shipped command)', () => {
  const tmp = useTempDir('relay-ws-');

  // The built relay carries the ws it was built with (dist-relay/), so an installed ws changed
  // after the build cannot reach it: the sources (`npm run relay:dev`, and the build made from
  // them) load the installed ws, and run the same check at start.
  it('does not start from the sources with a changed installed ws: says why and exits 1', async () => {
    const preload = fileURLToPath(new URL('./ws-changed.preload.ts', import.meta.url));
    const r = await runRelayWith(
      tmp.path,
      {},
      [],
      { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${preload}`.trim() },
      true,
    );
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^relay: cannot start: ws \d+\.\d+\.\d+ is not the ws the relay was built for: an open WebSocket no longer keeps its socket as `_socket`/m,
    );
    expect(r.out).not.toMatch(/relay listening/);
  });

  it('starts with the real ws (the check passes in the shipped command)', async () => {
    const r = await runRelayWith(tmp.path, {}, ['--check-config']);
    expect(r.err).not.toMatch(/is not the ws the relay was built for/);
    expect(r.code).toBe(0);
  });
});

describe('the ws pin', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const wsSpec = (file: string) => {
    const pkg = JSON.parse(readFileSync(root + file, 'utf8')) as Record<
      'dependencies' | 'devDependencies',
      Record<string, string> | undefined
    >;
    return pkg.dependencies?.ws ?? pkg.devDependencies?.ws;
  };

  it('is a minor range (~), the same for the app and the relay, and the installed ws is in it', () => {
    const spec = wsSpec('package.json');
    expect(spec).toMatch(/^~\d+\.\d+\.\d+$/);
    expect(wsSpec('src-relay/package.json')).toBe(spec);
    const installed = (
      createRequire(root + 'src-relay/cli.ts')('ws/package.json') as {
        version: string;
      }
    ).version;
    const [major, minor] = spec!.slice(1).split('.');
    expect(installed.startsWith(`${major}.${minor}.`)).toBe(true);
  });
});
