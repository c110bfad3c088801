/**
 * The real ProgramRunner: child_process.spawn with an argument list and `shell: false`, so no
 * shell ever parses a caller's name. Output is discarded, the window hidden on Windows, and a
 * program still running after `timeoutMs` is stopped. Start failures and exit codes are logged
 * (the arguments are not: they hold caller details).
 */
import { spawn } from 'node:child_process';
import type { Logger } from '../../../src-shared/log.ts';
import type { ProgramRunner } from './ring-actions.ts';

export function spawnProgramRunner(logger: Logger, timeoutMs = 60_000): ProgramRunner {
  const log = logger.child({ component: 'ring-actions' });
  return {
    run(program, args) {
      const child = spawn(program, [...args], {
        shell: false,
        stdio: 'ignore',
        windowsHide: true,
        timeout: timeoutMs,
      });
      child.on('error', (err) =>
        log.warn('ring action: program could not start', { program, error: err }),
      );
      child.on('exit', (code, signal) => {
        if (code !== 0)
          log.warn('ring action: program ended with an error', { program, code, signal });
      });
    },
  };
}
