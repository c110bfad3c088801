/**
 * A credential file, for a machine with no keychain (a headless server: no Secret Service, no
 * D-Bus session): the runner's `--credential-file PATH`. Without it such a machine keeps an
 * organisation enrolment in memory only, and every restart needs a new code.
 *
 * The file is JSON `{ "<account>": "<secret>" }`, written whole with writeFileAtomic (a temporary
 * file of mode 0600 in the same folder, fsync, rename), so a crash leaves the old or the new
 * file, never half of one. A file that others can read is refused, not used and not repaired:
 * its secrets may already have been read (POSIX only; Windows has no mode bits, the folder's ACL
 * protects it there). The folder must exist (a path a person typed: a missing folder is a typo).
 */
import { readFile, stat } from 'node:fs/promises';
import { writeFileAtomic } from '../../../src-shared/files/atomic-file.ts';
import type { CredentialStore } from './credential-store.ts';

/** A credential file is small; anything larger is not ours. */
const MAX_FILE_BYTES = 64 * 1024;

export class CredentialFileError extends Error {
  readonly path: string;
  readonly problem: 'readable-by-others' | 'not-a-credential-file';

  constructor(path: string, problem: CredentialFileError['problem'], detail: string) {
    super(`${path}: ${detail}`);
    this.name = 'CredentialFileError';
    this.path = path;
    this.problem = problem;
  }
}

export class FileCredentialStore implements CredentialStore {
  private readonly path: string;
  private readonly platform: NodeJS.Platform;

  constructor(path: string, platform: NodeJS.Platform = process.platform) {
    this.path = path;
    this.platform = platform;
  }

  /** Throws CredentialFileError when the file exists and others may read it or it is not ours. */
  async check(): Promise<void> {
    await this.read();
  }

  async getSecret(account: string): Promise<string | null> {
    return (await this.read())[account] ?? null;
  }

  async setSecret(account: string, secret: string): Promise<void> {
    if (!secret) throw new Error('An empty secret cannot be stored.');
    const entries = await this.read();
    entries[account] = secret;
    await this.write(entries);
  }

  async deleteSecret(account: string): Promise<boolean> {
    const entries = await this.read();
    if (!Object.hasOwn(entries, account)) return false;
    delete entries[account];
    await this.write(entries);
    return true;
  }

  private async read(): Promise<Record<string, string>> {
    let mode: number;
    let size: number;
    try {
      ({ mode, size } = await stat(this.path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    if (this.platform !== 'win32' && (mode & 0o077) !== 0)
      throw new CredentialFileError(
        this.path,
        'readable-by-others',
        `mode ${(mode & 0o777).toString(8)}: others may read it (chmod 600, or remove it and enrol again)`,
      );
    if (size > MAX_FILE_BYTES)
      throw new CredentialFileError(this.path, 'not-a-credential-file', 'too large');
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(this.path, 'utf8'));
    } catch {
      throw new CredentialFileError(this.path, 'not-a-credential-file', 'not JSON');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new CredentialFileError(this.path, 'not-a-credential-file', 'not a JSON object');
    const entries: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') entries[k] = v;
    return entries;
  }

  private write(entries: Record<string, string>): Promise<void> {
    return writeFileAtomic(this.path, JSON.stringify(entries, null, 2) + '\n', 0o600, {
      createFolder: false,
    });
  }
}
