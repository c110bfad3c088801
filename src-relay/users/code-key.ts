/**
 * The key enrolment codes are stored under (config.ts `users.codeKeyFile` / `users.codeKeyEnv`):
 * read once, by the relay at start and by the `relay users` command, from a file or an environment
 * variable, never from the JSON config, the users file or Redis. A copy of the users file or of
 * Redis then holds each pending code as HMAC-SHA-256 under a key it does not contain: nothing to
 * search offline (docs/threat-model.md, "A leaked enrolment code"). Failures are StartupErrors
 * naming the setting and what to do; nothing here quotes a value.
 */
import { readFileSync } from 'node:fs';
import type { RelayConfig } from '../config.ts';
import { fileStartupError, StartupError } from '../startup-errors.ts';

/** At least this many characters: `openssl rand -base64 32` writes 44. */
export const MIN_CODE_KEY_CHARS = 32;

type UsersConfig = RelayConfig['users'];

/** Where the key comes from, in words (no value); null when the config names no key. */
export function codeKeySource(users: UsersConfig): string | null {
  if (users.codeKeyFile !== undefined) return `users.codeKeyFile ${users.codeKeyFile}`;
  if (users.codeKeyEnv !== undefined)
    return `the environment variable ${users.codeKeyEnv} (users.codeKeyEnv)`;
  return null;
}

/**
 * The key, or null when the config names none (codes are then stored as their plain SHA-256, as
 * before the key existed; --check-config warns). Throws a StartupError when the named file or
 * variable is missing, empty or too short.
 */
export function readCodeKey(users: UsersConfig, env: NodeJS.ProcessEnv): string | null {
  const source = codeKeySource(users);
  if (source === null) return null;
  let value: string;
  if (users.codeKeyFile !== undefined) {
    try {
      value = readFileSync(users.codeKeyFile, 'utf8');
    } catch (err) {
      throw fileStartupError('users.codeKeyFile', users.codeKeyFile, err);
    }
  } else value = env[users.codeKeyEnv!] ?? '';
  value = value.replace(/\r?\n$/, '');
  if (value.trim().length < MIN_CODE_KEY_CHARS)
    throw new StartupError(
      `users: the key for enrolment codes is ${value.trim() === '' ? 'missing' : 'too short'}: ${source} ${value.trim() === '' ? (users.codeKeyFile !== undefined ? 'is empty' : 'is not set') : `has fewer than ${MIN_CODE_KEY_CHARS} characters`}. Put a random key there (openssl rand -base64 32), the same for the relay and the "relay users" command, and keep it out of the users file's and Redis's backups.`,
    );
  return value;
}
