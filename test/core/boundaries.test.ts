/**
 * The dependency rules of DEVELOPERS.md, as ESLint enforces them (eslint.config.js): the core
 * imports neither Electron nor the simulator; the composition root and the runner may.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function restricted(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports')
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

  it('the composition root and the headless runner may start the simulator (the demo)', async () => {
    expect(
      await restricted('src-main/electron/example.ts', SIM.replace('../../../', '../../')),
    ).toEqual([]);
    expect(
      await restricted('src-main/headless/example.ts', SIM.replace('../../../', '../../')),
    ).toEqual([]);
    expect(await restricted('src-main/headless/example.ts', ELECTRON)).not.toEqual([]);
  });
});
