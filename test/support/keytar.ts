/**
 * Whether keytar (an optional dependency: it builds against libsecret) is installed and loads
 * here. Tests that need the real keychain binding skip with this reason where it does not, and
 * fail under CI=true, where .ci/run installs libsecret-1-dev first.
 */
import { createRequire } from 'node:module';

export function keytarMissing(): string | null {
  try {
    createRequire(import.meta.url)('keytar');
    return null;
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    return `keytar is not installed or does not load (${why}): apt-get install libsecret-1-dev, then npm ci`;
  }
}
