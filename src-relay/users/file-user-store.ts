import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { writeFileAtomic } from '../../src-shared/files/atomic-file.ts';
import type { Clock, TimerHandle } from '../../src-shared/process/clock.ts';
import { Emitter } from '../../src-shared/kit/emitter.ts';
import { parseJson } from '../../src-shared/files/json-text.ts';
import { silentLogger, type Logger } from '../../src-shared/process/log.ts';
import { withFileLock } from './file-lock.ts';
import type {
  DeviceRecord,
  NewUser,
  RedeemResult,
  UserChange,
  UserRecord,
  UserStore,
} from './types.ts';
import { UserState } from './user-state.ts';

export interface FileUserStoreOptions {
  file: string;
  clock: Clock;
  logger?: Logger;
  /** How often the file is checked for changes made by another process (ms), besides fs.watch. */
  pollMs?: number;
}

/**
 * Users in one JSON file (mode 0600), for a relay with the memory event store. Every change is a
 * read-change-write under a lock file (file-lock.ts), written atomically, so the running relay
 * (redeeming codes) and the `relay users` command (adding, revoking) never lose each other's
 * writes and a crash leaves the old file or the new one. The relay notices a change made by the
 * command at once (fs.watch on the folder, and a stat every `pollMs` where watching is not
 * reliable, e.g. a network file system) and re-checks that user's open sessions.
 */
export class FileUserStore implements UserStore {
  readonly kind = 'file' as const;
  private readonly options: FileUserStoreOptions;
  private readonly logger: Logger;
  private state = new UserState();
  /** What the loaded state was read from (inode, size, mtime): a change means reload. */
  private loadedFrom = '';
  private readonly changes: Emitter<[UserChange]>;
  private watcher: FSWatcher | undefined;
  private pollTimer: TimerHandle | undefined;
  private reloading: Promise<void> | undefined;
  private closed = false;

  constructor(options: FileUserStoreOptions) {
    this.options = options;
    this.logger = (options.logger ?? silentLogger).child({ component: 'users' });
    this.changes = new Emitter(this.logger, 'users-change');
  }

  async open(): Promise<void> {
    await this.load();
  }

  /** Starts following changes made by other processes (the running relay does; the command does not). */
  follow(): void {
    try {
      this.watcher = watch(dirname(this.options.file), (_type, name) => {
        if (name === null || name === basename(this.options.file)) void this.refresh();
      });
      this.watcher.on('error', () => {});
    } catch (err) {
      this.logger.warn('users file not watched; checking it by time only', {
        error: err,
      });
    }
    const poll = () => {
      if (this.closed) return;
      void this.refresh();
      this.pollTimer = this.options.clock.setTimeout(poll, this.options.pollMs ?? 2_000);
    };
    this.pollTimer = this.options.clock.setTimeout(poll, this.options.pollMs ?? 2_000);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    this.options.clock.clearTimeout(this.pollTimer);
    await this.reloading;
  }

  async addUser(user: NewUser, now: number): Promise<UserRecord> {
    return this.mutate((s) => s.addUser(user, now));
  }

  async issueCode(tenant: string, name: string, hash: string, ttlMs: number, now: number) {
    await this.mutate((s) => s.issueCode(tenant, name, hash, ttlMs, now));
  }

  async redeem(
    tenant: string,
    codeHash: string,
    credentialHash: string,
    label: string,
    now: number,
  ): Promise<RedeemResult> {
    // Wrong codes are most of what arrives here (anyone may post one): they are looked up in
    // memory, after one stat to see whether the command issued a code since, and never take the
    // lock or rewrite the file.
    await this.refresh();
    if (this.state.codes.get(codeHash)?.tenant !== tenant) return { ok: false, reason: 'unknown' };
    return this.mutate((s) => s.redeem(tenant, codeHash, credentialHash, label, now));
  }

  async revoke(tenant: string, name: string, now: number): Promise<boolean> {
    return this.mutate((s) => s.revoke(tenant, name, now));
  }

  async revokeAddress(tenant: string, email: string, now: number): Promise<string[]> {
    return this.mutate((s) => s.revokeAddress(tenant, email, now));
  }

  async list(tenant?: string): Promise<{ user: UserRecord; devices: DeviceRecord[] }[]> {
    await this.refresh();
    return this.state.list(tenant);
  }

  async findUser(tenant: string, name: string): Promise<UserRecord | null> {
    const hit = this.state.user(tenant, name);
    if (hit) return hit;
    await this.refresh();
    return this.state.user(tenant, name);
  }

  async findByEmail(tenant: string, email: string): Promise<UserRecord | null> {
    const hit = this.state.byEmail(tenant, email);
    if (hit) return hit;
    await this.refresh();
    return this.state.byEmail(tenant, email);
  }

  async findDevice(
    tenant: string,
    credentialHash: string,
  ): Promise<{ user: UserRecord; device: DeviceRecord } | null> {
    // A miss may be a device enrolled a moment ago through another process: look at the file.
    const hit = this.state.device(tenant, credentialHash);
    if (hit) return hit;
    await this.refresh();
    return this.state.device(tenant, credentialHash);
  }

  onChange(listener: (change: UserChange) => void): () => void {
    return this.changes.on(listener);
  }

  /** Read, change and (when changed) write the file under the lock; the change is then this process's state. */
  private async mutate<T>(change: (s: UserState) => T): Promise<T> {
    return withFileLock(this.options.file, async () => {
      const { state, signature } = await this.read();
      const before = JSON.stringify(state.toJSON(), null, 1);
      const result = change(state);
      state.prune(this.options.clock.now());
      const after = JSON.stringify(state.toJSON(), null, 1);
      // Written only when something changed (a code spent by another instance meanwhile: not).
      if (after === before) this.adopt(state, signature);
      else {
        await writeFileAtomic(this.options.file, after + '\n');
        this.adopt(state, await this.signature());
      }
      return result;
    });
  }

  /** Reloads when the file changed since it was read (cheap when it did not: one stat). */
  private refresh(): Promise<void> {
    this.reloading ??= (async () => {
      try {
        if ((await this.signature()) !== this.loadedFrom) await this.load();
      } catch (err) {
        // A file being replaced, or one an administrator broke: keep what was loaded, say so.
        this.logger.warn('users file not reloaded; keeping the users loaded before', {
          error: err,
        });
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  private async load(): Promise<void> {
    const { state, signature } = await this.read();
    this.adopt(state, signature);
  }

  private adopt(state: UserState, signature: string): void {
    const before = this.state;
    this.state = state;
    this.loadedFrom = signature;
    for (const change of UserState.changes(before, state)) this.changes.emit(change);
  }

  private async read(): Promise<{ state: UserState; signature: string }> {
    const signature = await this.signature();
    let text: string;
    try {
      text = await readFile(this.options.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        return { state: new UserState(), signature };
      throw new Error(`users file ${this.options.file} cannot be read: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const parsed = parseJson(text);
    if (!parsed.ok) throw new Error(`users file ${this.options.file} is not JSON${parsed.where}`);
    try {
      return { state: UserState.fromJSON(parsed.value), signature };
    } catch (err) {
      throw new Error(`users file ${this.options.file}: ${(err as Error).message}`, { cause: err });
    }
  }

  private async signature(): Promise<string> {
    return stat(this.options.file).then(
      (s) => `${s.ino}:${s.size}:${s.mtimeMs}`,
      () => 'absent',
    );
  }
}
