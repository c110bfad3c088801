/**
 * `npm run build` writes the repository's dist/ (as npm start and npm run dist do). Test files run
 * in parallel processes, so the tests that build there take this lock first: a folder created
 * atomically, holding the owner's pid so that a lock left by a killed run is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleepReal } from '../../rigs/wait.ts';

const LOCK = fileURLToPath(new URL('../../.tmp/build.lock', import.meta.url));

function ownerAlive(): boolean {
  try {
    const pid = Number(readFileSync(`${LOCK}/pid`, 'utf8'));
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but is not ours to signal.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function withBuildLock<T>(body: () => Promise<T>, timeoutMs = 180_000): Promise<T> {
  mkdirSync(dirname(LOCK), { recursive: true });
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(`${LOCK}/pid`, String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const waited = Date.now() - started;
      // An owner that is gone (a killed run) leaves the lock behind: take it over. A lock without
      // its pid file yet is being taken right now, hence the 2 s before judging.
      if (waited > 2_000 && !ownerAlive()) {
        rmSync(LOCK, { recursive: true, force: true });
        continue;
      }
      if (waited > timeoutMs) throw new Error(`timed out waiting for ${LOCK}`, { cause: err });
      await sleepReal(100);
    }
  }
  try {
    return await body();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
