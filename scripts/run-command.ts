/** Runs a command with the terminal attached and returns its exit code (signals count as failure). */
import { spawn } from 'node:child_process';

export function runAttached(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; forwardSignals?: boolean },
): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: 'inherit',
      // npm is npm.cmd on Windows, which only a shell can start.
      shell: process.platform === 'win32' && command === 'npm',
    });
    const forward = (signal: NodeJS.Signals) => () => {
      if (!child.killed) child.kill(signal);
    };
    const handlers = options.forwardSignals
      ? (['SIGINT', 'SIGTERM'] as const).map((signal) => {
          const handler = forward(signal);
          process.on(signal, handler);
          return () => process.off(signal, handler);
        })
      : [];
    child.on('error', (err) => {
      process.stderr.write(`could not run ${command}: ${err.message}\n`);
      resolve(127);
    });
    child.on('close', (code, signal) => {
      for (const off of handlers) off();
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/**
 * Runs a command with its stdout on the terminal and its stderr kept, for a step whose failure
 * the caller explains in its own words (Electron's download prints a bare "TypeError: fetch
 * failed" and its stack).
 */
export function runQuietErrors(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['inherit', 'inherit', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-16 * 1024);
    });
    child.on('error', (err) => resolve({ code: 127, stderr: err.message }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), stderr }));
  });
}
