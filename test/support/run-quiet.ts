/** Runs a command to completion with its output captured (for a failure message), not printed. */
import { spawn } from 'node:child_process';

/**
 * The environment a user's shell would give the command: this one without what Vitest adds
 * (NODE_ENV=test would make Vite bundle React's development build; VITEST* changes tools' ways).
 */
export function userEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => key !== 'NODE_ENV' && !key.startsWith('VITEST')),
  );
}

export function runQuiet(
  command: string,
  args: readonly string[],
  cwd: string,
  /** Variables to add to the user's environment. */
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...userEnv(), ...extraEnv },
      shell: process.platform === 'win32',
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', (err) => resolve({ code: null, output: `${output}${err.message}` }));
    child.on('close', (code) => resolve({ code, output }));
  });
}
