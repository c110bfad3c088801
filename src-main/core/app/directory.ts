import { readFile, stat } from 'node:fs/promises';
import { delay, type Clock, type TimerHandle } from '../../../src-shared/clock.ts';
import { Emitter } from '../../../src-shared/emitter.ts';
import { Generation } from '../generation.ts';
import type { Logger } from '../../../src-shared/log.ts';
import { MAX_CONTACTS_BYTES, parseContacts } from './contacts-file.ts';
import { formatNumber, normalizeNumber } from './phone.ts';
import { displayText } from './text.ts';

/**
 * Who is calling, by number: the tenant's extension list (extension/list, through the token
 * manager) and, optionally, the user's contacts file. The extension list is cached and refreshed in
 * the background on the injected clock; a failed refresh keeps the last good list and retries with
 * back-off. Lookups never wait on the network.
 */
export interface DirectoryEntry {
  number: string;
  callerIdName: string;
}

export interface CallerDirectory {
  lookup(number: string): string | null;
  format(number: string): string;
}

export interface DirectoryOptions {
  clock: Clock;
  logger: Logger;
  /** Fetches the whole extension list (all pages); bound to TokenManager.call + ServiceClient.listExtensions. */
  fetchExtensions: () => Promise<DirectoryEntry[]>;
  defaultRegion?: string;
  refreshMs?: number;
  retryMinMs?: number;
  retryMaxMs?: number;
  readText?: (path: string) => Promise<string>;
}

export const DIRECTORY_REFRESH_MS = 15 * 60_000;

async function readBoundedText(path: string): Promise<string> {
  const info = await stat(path);
  if (!info.isFile()) throw new Error('not a file');
  if (info.size > MAX_CONTACTS_BYTES) throw new Error(`larger than ${MAX_CONTACTS_BYTES} bytes`);
  return readFile(path, 'utf8');
}

export class Directory implements CallerDirectory {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly fetchExtensions: () => Promise<DirectoryEntry[]>;
  private readonly refreshMs: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  private readonly readText: (path: string) => Promise<string>;
  private region: string | undefined;
  private extensions = new Map<string, string>();
  private contacts = new Map<string, string>();
  private contactsRaw: { name: string; number: string }[] = [];
  private timer: TimerHandle | undefined;
  private failures = 0;
  private running = false;
  private inFlight: Promise<void> | null = null;
  /** The first refresh since start(), until it has landed (see firstLoad). */
  private firstRefresh: Promise<void> | null = null;
  /** Bumped by stop(): a fetch started before it (another connection's) is ignored when it lands. */
  private readonly generation = new Generation();
  private lastRefreshAt: number | null = null;
  private readonly changes: Emitter<[]>;

  constructor(options: DirectoryOptions) {
    this.clock = options.clock;
    this.logger = options.logger.child({ component: 'directory' });
    this.fetchExtensions = options.fetchExtensions;
    this.region = options.defaultRegion;
    this.refreshMs = options.refreshMs ?? DIRECTORY_REFRESH_MS;
    this.retryMinMs = options.retryMinMs ?? 30_000;
    this.retryMaxMs = options.retryMaxMs ?? this.refreshMs;
    this.readText = options.readText ?? readBoundedText;
    this.changes = new Emitter(this.logger, 'directory');
  }

  /** Fetches now and keeps refreshing until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    const first = this.refreshNow().finally(() => {
      if (this.firstRefresh === first) this.firstRefresh = null;
    });
    this.firstRefresh = first;
  }

  /**
   * Resolves once the first extension list since start() has landed (or failed), or after
   * `maxWaitMs`, whichever comes first: for a caller that would rather wait a moment for a name
   * than show a colleague's call without one (the headless runner's pop lines).
   */
  async firstLoad(maxWaitMs: number): Promise<void> {
    const pending = this.firstRefresh;
    if (!pending) return;
    const timeUp = new AbortController();
    await Promise.race([pending, delay(this.clock, maxWaitMs, timeUp.signal).catch(() => {})]);
    timeUp.abort();
  }

  stop(): void {
    this.running = false;
    this.generation.bump();
    this.inFlight = null;
    this.firstRefresh = null;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Drops the extension list (the app now talks to another service, whose list is not known yet). */
  forgetExtensions(): void {
    if (this.extensions.size === 0) return;
    this.extensions = new Map();
    this.emit();
  }

  get extensionCount(): number {
    return this.extensions.size;
  }

  get contactCount(): number {
    return this.contacts.size;
  }

  /** Wall-clock ms of the last successful extension refresh, or null. */
  get refreshedAt(): number | null {
    return this.lastRefreshAt;
  }

  onChange(listener: () => void): () => void {
    return this.changes.on(listener);
  }

  setDefaultRegion(region: string): void {
    if (region === this.region) return;
    this.region = region;
    this.indexContacts();
  }

  /** One refresh now (coalesced with one already running); schedules the next one. */
  refreshNow(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const current = this.generation.ticket();
    const fetching = this.fetchExtensions()
      .then((list) => {
        if (!current()) return;
        const next = new Map<string, string>();
        for (const e of list) {
          const key = normalizeNumber(e.number, this.region);
          const name = displayText(e.callerIdName);
          if (key && name) next.set(key, name);
        }
        this.extensions = next;
        this.failures = 0;
        this.lastRefreshAt = this.clock.now();
        this.logger.info('extension list refreshed', { extensions: next.size });
        this.emit();
        this.schedule(this.refreshMs);
      })
      .catch((err: unknown) => {
        if (!current()) return;
        this.failures++;
        const wait = Math.min(this.retryMaxMs, this.retryMinMs * 2 ** (this.failures - 1));
        this.logger.warn('extension list refresh failed; keeping the last list', {
          error: err,
          retryInMs: wait,
        });
        this.schedule(wait);
      })
      .finally(() => {
        if (this.inFlight === fetching) this.inFlight = null;
      });
    this.inFlight = fetching;
    return fetching;
  }

  /** Loads (or, with '', clears) the contacts file. A bad file is logged and leaves no contacts. */
  async loadContactsFile(path: string): Promise<{ ok: boolean; count: number; message?: string }> {
    if (!path) {
      this.contactsRaw = [];
      this.indexContacts();
      return { ok: true, count: 0 };
    }
    try {
      this.contactsRaw = parseContacts(await this.readText(path));
      this.indexContacts();
      this.logger.info('contacts file loaded', { contacts: this.contacts.size });
      return { ok: true, count: this.contacts.size };
    } catch (err) {
      this.contactsRaw = [];
      this.indexContacts();
      this.logger.warn('contacts file could not be read', { error: err });
      return { ok: false, count: 0, message: 'The contacts file could not be read.' };
    }
  }

  /**
   * Reads and parses a contacts file without using it (the settings' file picker says what is in
   * a file before the user saves it).
   */
  async inspectContactsFile(
    path: string,
  ): Promise<{ ok: boolean; count: number; message?: string }> {
    try {
      const count = parseContacts(await this.readText(path)).length;
      return count > 0
        ? { ok: true, count }
        : {
            ok: false,
            count: 0,
            message:
              'No contacts found in this file. Use a CSV file with a name column and a phone column, or a vCard (.vcf) file.',
          };
    } catch (err) {
      this.logger.warn('contacts file could not be read', { error: err });
      return {
        ok: false,
        count: 0,
        message: `The file could not be read (at most ${MAX_CONTACTS_BYTES / 1024 / 1024} MB, CSV or vCard).`,
      };
    }
  }

  /** The caller's name: the extension list first (it is the tenant's truth), then contacts. */
  lookup(number: string): string | null {
    const key = normalizeNumber(number, this.region);
    if (!key) return null;
    return this.extensions.get(key) ?? this.contacts.get(key) ?? null;
  }

  format(number: string): string {
    return formatNumber(number, this.region);
  }

  private indexContacts(): void {
    const next = new Map<string, string>();
    for (const c of this.contactsRaw) {
      const key = normalizeNumber(c.number, this.region);
      const name = displayText(c.name);
      if (key && name && !next.has(key)) next.set(key, name);
    }
    this.contacts = next;
    this.emit();
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      void this.refreshNow();
    }, ms);
  }

  private emit(): void {
    this.changes.emit();
  }
}
