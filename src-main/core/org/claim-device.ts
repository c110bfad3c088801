/**
 * This computer's id among the user's computers when it claims a call's log at the relay
 * (`device` of `POST /v1/claim/<tenant>`, docs/relay-protocol.md 2.2; claimed-call-log.ts): one
 * per install, kept in a small JSON file in the app's data folder (the tray app's userData, the
 * runner's state folder), so a call this computer claimed before a restart is still its own after
 * it (a record that comes later, a voicemail after the missed call, updates the logged call).
 *
 * The one rule, for both composition roots: `load()` reads the file; a missing one is made with a
 * new id (crypto random, in CLAIM_DEVICE_PATTERN) written atomically; a damaged, foreign or
 * hostile one (not JSON, another shape, an id outside the pattern, a FIFO, a device, a folder, a
 * file over 1 KiB) is replaced by a new id, said in one log line; a folder that cannot be written
 * gives an id for this run only, said in one log line. `load()` never rejects. The id is no
 * secret (it only tells the user's own computers apart, and the relay answers with the user's
 * name alone), but it is not logged either: nothing needs it there.
 */
import { randomBytes } from 'node:crypto';
import { writeFileAtomic } from '../../../src-shared/files/atomic-file.ts';
import { readBoundedFile } from '../../../src-shared/files/bounded-file.ts';
import { parseJson } from '../../../src-shared/files/json-text.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { CLAIM_DEVICE_PATTERN } from '../../../src-shared/relay/relay-protocol.ts';

/** The file's name in the data folder. */
export const CLAIM_DEVICE_FILE = 'claim-device.json';
/** The file holds one short id: anything larger is not ours. */
const MAX_FILE_BYTES = 1024;
const VERSION = 1;

/** How the store reaches its file (tests give a temp folder, or a folder that refuses writes). */
export interface ClaimDeviceFiles {
  /** The file's text; rejects with ENOENT when there is none, or with why it cannot be read. */
  read(path: string): Promise<string>;
  /** Writes the text atomically (the old file or the new one, never a torn mix). */
  write(path: string, text: string): Promise<void>;
}

/** The real files: a bounded read of a regular file, the project's atomic write (folder made). */
export const NODE_CLAIM_DEVICE_FILES: ClaimDeviceFiles = {
  read: async (path) => (await readBoundedFile(path, MAX_FILE_BYTES)).toString('utf8'),
  write: (path, text) => writeFileAtomic(path, text, 0o600, { createFolder: true }),
};

/** A new id: 128 random bits as 22 characters of base64url (in CLAIM_DEVICE_PATTERN). */
export function newClaimDevice(): string {
  return randomBytes(16).toString('base64url');
}

export interface ClaimDeviceStoreDeps {
  /** The file (in the app's data folder: `<folder>/claim-device.json`). */
  path: string;
  logger: Logger;
  files?: ClaimDeviceFiles;
  newId?: () => string;
}

/** The id in a file's text, or why the text is not one. */
function idIn(text: string): { ok: true; id: string } | { ok: false; why: string } {
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, why: `not JSON${parsed.where}` };
  const value = parsed.value as { v?: unknown; device?: unknown } | null;
  if (!value || typeof value !== 'object' || value.v !== VERSION)
    return { ok: false, why: 'not a device id file' };
  if (typeof value.device !== 'string' || !CLAIM_DEVICE_PATTERN.test(value.device))
    return { ok: false, why: 'its id is not 8 to 64 letters, digits, _ or -' };
  return { ok: true, id: value.device };
}

export class ClaimDeviceStore {
  private readonly d: ClaimDeviceStoreDeps;
  private readonly files: ClaimDeviceFiles;
  private readonly logger: Logger;

  constructor(deps: ClaimDeviceStoreDeps) {
    this.d = deps;
    this.files = deps.files ?? NODE_CLAIM_DEVICE_FILES;
    this.logger = deps.logger.child({ component: 'claim-device' });
  }

  /** This install's id: the kept one, else a new one kept from now on (or for this run). */
  async load(): Promise<string> {
    let replacing: string | undefined;
    try {
      const found = idIn(await this.files.read(this.d.path));
      if (found.ok) return found.id;
      replacing = found.why;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException | null)?.code;
      if (code !== 'ENOENT') replacing = describeReadFault(error);
    }
    const id = this.fresh();
    try {
      await this.files.write(this.d.path, JSON.stringify({ v: VERSION, device: id }));
    } catch (error) {
      this.logger.warn(
        'the computer’s id for call claims cannot be kept; this run uses its own (calls claimed before a restart are then claimed again as another computer)',
        { error, ...(replacing !== undefined ? { why: replacing } : {}) },
      );
      return id;
    }
    if (replacing !== undefined)
      this.logger.warn('the computer’s id for call claims was unusable; a new one replaces it', {
        why: replacing,
      });
    else this.logger.info('the computer’s id for call claims is made and kept');
    return id;
  }

  private fresh(): string {
    const id = (this.d.newId ?? newClaimDevice)();
    // A broken generator must not send what the relay refuses (400): fall back to the real one.
    return CLAIM_DEVICE_PATTERN.test(id) ? id : newClaimDevice();
  }
}

/** Why the file could not be read, without its content: the error's code or name. */
function describeReadFault(error: unknown): string {
  const e = error as { code?: unknown; name?: unknown } | null;
  if (e && typeof e.code === 'string') return `unreadable (${e.code})`;
  if (e && typeof e.name === 'string') return `unreadable (${e.name})`;
  return 'unreadable';
}
