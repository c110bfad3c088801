/**
 * The dependency rules of DEVELOPERS.md, as ESLint enforces them (eslint.config.js): the core
 * imports neither Electron nor the simulator; the composition root and the runner may. The relay
 * and the simulator import nothing from the app; src-shared/ imports from none of the three.
 * No product file (src-*) imports the rigs or the tests.
 * Every connection of the app goes through the transport (src-shared/net/, built in src-main/core/net/),
 * and so does every connection the relay makes. Benchmarks, scripts and rigs import no test file.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function restricted(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return (result?.messages ?? [])
    .filter(
      (m) =>
        m.ruleId === 'no-restricted-imports' ||
        m.ruleId === '@typescript-eslint/no-restricted-imports',
    )
    .map((m) => m.message);
}

const SIM = "import { startDemo } from '../../../src-sim/demo.ts';\nvoid startDemo;\n";
const ELECTRON = "import { app } from 'electron';\nvoid app;\n";

describe('import boundaries', () => {
  it('the core imports nothing from src-sim, nor electron', async () => {
    expect(await restricted('src-main/core/app/example.ts', SIM)).toEqual([
      expect.stringContaining('The core must not import the simulator'),
    ]);
    expect(await restricted('src-main/core/app/example.ts', ELECTRON)).toEqual([
      expect.stringContaining('The core must not import electron'),
    ]);
  });

  it('electron is imported only in src-main/electron/: anywhere else a planted import fails', async () => {
    const SUBPATH = "import { ipcRenderer } from 'electron/renderer';\nvoid ipcRenderer;\n";
    const TYPES =
      "import type { BrowserWindow } from 'electron';\nexport type W = BrowserWindow;\n";
    for (const file of [
      'src-main/ipc/example.ts',
      'src-main/core/events/example.ts',
      'src-main/core/net/example.ts',
      'src-main/headless/example.ts',
      'src-renderer/settings/example.tsx',
      'src-renderer/shared/example.ts',
      'src-shared/example.ts',
      'src-relay/example.ts',
      'src-sim/example.ts',
      'bench/example.ts',
    ])
      for (const source of [ELECTRON, SUBPATH, TYPES])
        expect(await restricted(file, source), `${file}: ${source}`).toEqual([
          expect.stringContaining('only src-main/electron/ does'),
        ]);
    for (const source of [ELECTRON, SUBPATH, TYPES])
      expect(await restricted('src-main/electron/example.ts', source)).toEqual([]);
  });

  it('the renderer imports only types from src-main/; pure helpers come from src-shared/', async () => {
    const VALUE =
      "import { knownState } from '../../src-main/core/ports/views.ts';\nvoid knownState;\n";
    const INLINE_VALUE =
      "import { type StatusView, knownState } from '../../src-main/core/ports/views.ts';\nexport const k: (s: StatusView) => unknown = (s) => knownState(s.state);\n";
    const TYPE_ONLY =
      "import type { StatusView } from '../../src-main/ipc/contract.ts';\nexport type S = StatusView;\n";
    const SHARED =
      "import { knownState } from '../../src-shared/ui/connection-state.ts';\nvoid knownState;\n";
    for (const file of ['src-renderer/settings/example.tsx', 'src-renderer/shared/example.ts']) {
      for (const source of [VALUE, INLINE_VALUE])
        expect(await restricted(file, source), source).toEqual([
          expect.stringContaining('The renderer imports only types from src-main/'),
        ]);
      expect(await restricted(file, TYPE_ONLY)).toEqual([]);
      expect(await restricted(file, SHARED)).toEqual([]);
    }
  });

  it("React's rules of hooks hold in the renderer: a conditional hook and a stale effect fail", async () => {
    const hooks = async (source: string) => {
      const [result] = await eslint.lintText(source, {
        filePath: 'src-renderer/settings/example.tsx',
      });
      return (result?.messages ?? []).map((m) => m.ruleId);
    };
    const CONDITIONAL =
      "import { useState } from 'react';\nexport function A({ on }: { on: boolean }) {\n  if (on) useState(0);\n  return null;\n}\n";
    const STALE =
      "import { useEffect } from 'react';\nexport function B({ id }: { id: string }) {\n  useEffect(() => {\n    document.title = id;\n  }, []);\n  return null;\n}\n";
    const RIGHT =
      "import { useEffect } from 'react';\nexport function C({ id }: { id: string }) {\n  useEffect(() => {\n    document.title = id;\n  }, [id]);\n  return null;\n}\n";
    expect(await hooks(CONDITIONAL)).toContain('react-hooks/rules-of-hooks');
    expect(await hooks(STALE)).toContain('react-hooks/exhaustive-deps');
    expect(await hooks(RIGHT)).toEqual([]);
  });

  it('the core imports its UI shapes from app/views.ts, never the IPC contract', async () => {
    const CONTRACT =
      "import type { CallCard } from '../../ipc/contract.ts';\nexport type X = CallCard;\n";
    expect(await restricted('src-main/core/app/example.ts', CONTRACT)).toEqual([
      expect.stringContaining('The core must not import the IPC contract'),
    ]);
    expect(
      await restricted(
        'src-main/core/app/example.ts',
        CONTRACT.replace('../../ipc/contract.ts', './views.ts'),
      ),
    ).toEqual([]);
  });

  it('the composition root and the headless runner may start the simulator (the demo)', async () => {
    expect(
      await restricted('src-main/electron/example.ts', SIM.replace('../../../', '../../')),
    ).toEqual([]);
    expect(
      await restricted('src-main/headless/example.ts', SIM.replace('../../../', '../../')),
    ).toEqual([]);
    expect(await restricted('src-main/headless/example.ts', ELECTRON)).not.toEqual([]);
  });

  it('benchmarks, scripts and rigs import the shared rigs (rigs/), never a test file', async () => {
    const TEST = "import { harness } from '../test/app/example.ts';\nvoid harness;\n";
    const RIG = "import { FakeClock } from '../rigs/fake-clock.ts';\nvoid FakeClock;\n";
    for (const file of ['bench/example.ts', 'scripts/example.ts', 'rigs/example.ts']) {
      expect(await restricted(file, TEST), file).toEqual([
        expect.stringContaining('do not import test/'),
      ]);
      expect(await restricted(file, RIG), file).toEqual([]);
      expect(await restricted(file, ELECTRON), file).not.toEqual([]);
    }
  });

  it('product code imports neither the rigs nor the tests: nothing shipped serves only tests', async () => {
    const RIG = "import { memoryLogger } from '../rigs/memory-logger.ts';\nvoid memoryLogger;\n";
    const TEST = "import { harness } from '../test/app/example.ts';\nvoid harness;\n";
    for (const file of [
      'src-main/core/app/example.ts',
      'src-main/core/net/example.ts',
      'src-main/electron/example.ts',
      'src-main/headless/example.ts',
      'src-main/ipc/example.ts',
      'src-renderer/settings/example.tsx',
      'src-shared/example.ts',
      'src-relay/example.ts',
      'src-sim/example.ts',
    ])
      for (const source of [RIG, TEST])
        expect(await restricted(file, source), `${file}: ${source}`).toEqual([
          expect.stringContaining('Product code does not import rigs/ or test/'),
        ]);
  });

  it('the relay and the simulator import src-shared/, never the app', async () => {
    const APP = "import { Engine } from '../src-main/core/engine.ts';\nvoid Engine;\n";
    const SHARED = "import { systemClock } from '../src-shared/clock.ts';\nvoid systemClock;\n";
    for (const file of ['src-relay/example.ts', 'src-sim/example.ts']) {
      expect(await restricted(file, APP)).toEqual([
        expect.stringContaining('must not import the app (src-main/)'),
      ]);
      expect(await restricted(file, SHARED)).toEqual([]);
      expect(await restricted(file, ELECTRON)).not.toEqual([]);
    }
  });

  it('src-shared/ imports nothing from the app, the relay, the simulator nor electron', async () => {
    for (const source of [
      "import { Engine } from '../src-main/core/engine.ts';\nvoid Engine;\n",
      "import { startRelay } from '../src-relay/server.ts';\nvoid startRelay;\n",
      "import { startSimulator } from '../src-sim/simulator.ts';\nvoid startSimulator;\n",
    ])
      expect(await restricted('src-shared/example.ts', source)).toEqual([
        expect.stringContaining('src-shared/ imports nothing from'),
      ]);
    expect(await restricted('src-shared/example.ts', ELECTRON)).not.toEqual([]);
    expect(
      await restricted(
        'src-shared/example.ts',
        "import { Emitter } from './emitter.ts';\nvoid Emitter;\n",
      ),
    ).toEqual([]);
  });

  it('only net/ opens connections: elsewhere in src-main, fetch, WebSocket and ws are refused', async () => {
    const lint = async (filePath: string, source: string) => {
      const [result] = await eslint.lintText(source, { filePath });
      return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
    };
    const GLOBAL_FETCH = "export const get = () => fetch('https://example.com');\n";
    const THIS_FETCH = 'export const f = globalThis.fetch;\n';
    const SOCKET = "export const s = () => new WebSocket('wss://example.com');\n";
    const WS = "import WebSocket from 'ws';\nexport const s = WebSocket;\n";
    for (const file of [
      'src-main/core/events/example.ts',
      'src-main/core/relay-client/example.ts',
      'src-main/headless/example.ts',
    ]) {
      expect(await lint(file, GLOBAL_FETCH)).toEqual([
        expect.stringMatching(/^no-restricted-globals: .*transport/),
      ]);
      expect(await lint(file, THIS_FETCH)).toEqual([
        expect.stringMatching(/^no-restricted-properties: .*transport/),
      ]);
      expect(await lint(file, SOCKET)).toEqual([
        expect.stringMatching(/^no-restricted-globals: .*transport/),
      ]);
      expect(await lint(file, WS)).toEqual([
        expect.stringMatching(/^no-restricted-imports: .*transport/),
      ]);
    }
    for (const source of [GLOBAL_FETCH, THIS_FETCH, SOCKET, WS])
      expect(await lint('src-main/core/net/example.ts', source)).toEqual([]);
  });

  it("the relay's requests go through the transport too: fetch and WebSocket are refused in src-relay", async () => {
    const lint = async (filePath: string, source: string) => {
      const [result] = await eslint.lintText(source, { filePath });
      return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
    };
    for (const file of ['src-relay/auth.ts', 'src-relay/gateway/example.ts']) {
      expect(await lint(file, "export const get = () => fetch('https://example.com');\n")).toEqual([
        expect.stringMatching(/^no-restricted-globals: .*transport/),
      ]);
      expect(await lint(file, 'export const f = globalThis.fetch;\n')).toEqual([
        expect.stringMatching(/^no-restricted-properties: .*transport/),
      ]);
      expect(
        await lint(file, "export const s = () => new WebSocket('wss://example.com');\n"),
      ).toEqual([expect.stringMatching(/^no-restricted-globals: .*transport/)]);
    }
    // Its own WebSocket server is `ws`'s.
    expect(
      await lint(
        'src-relay/example.ts',
        "import { WebSocketServer } from 'ws';\nexport const S = WebSocketServer;\n",
      ),
    ).toEqual([]);
  });
});
