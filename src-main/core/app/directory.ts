import { readFile, stat } from 'node:fs/promises';
import { delay, type Clock, type TimerHandle } from '../../../src-shared/clock.ts';
import { Emitter } from '../../../src-shared/emitter.ts';
import { Generation } from '../../../src-shared/generation.ts';
import type { Logger } from '../../../src-shared/log.ts';
import { MAX_CONTACTS_BYTES, readContacts } from '../contacts/contacts-file.ts';
import type { Contact, ContactsProblem, NumberKind } from '../contacts/types.ts';
import { formatNumber, numberKey } from './phone.ts';
import { displayText } from '../../../src-shared/text.ts';

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

/** Who a number is, as the directory knows it. */
export interface CallerIdentity {
  name: string;
  source: 'directory' | 'contacts';
  /** The contact's organisation (contacts file only); null when not known. */
  company: string | null;
  /** What this number is to the contact (contacts file only): mobile, work… */
  numberKind: NumberKind | null;
}

/** Names and formats numbers (the notices need no more). */
export interface NameDirectory {
  lookup(number: string): string | null;
  format(number: string): string;
}

/** What the call presenter asks: who a number is, with where the name came from. */
export interface CallerDirectory extends NameDirectory {
  identify(number: string): CallerIdentity | null;
}

/** What came of reading a contacts file: how many numbers it names, or why none. */
export type ContactsFileResult =
  { ok: true; count: number } | { ok: false; problem: ContactsProblem | { kind: 'unreadable' } };

export interface DirectoryOptions {
  clock: Clock;
  logger: Logger;
  /** Fetches the whole extension list (all pages); bound to TokenManager.call + ServiceClient.listExtensions. */
  fetchExtensions: () => Promise<DirectoryEntry[]>;
  defaultRegion?: string;
  refreshMs?: number;
  retryMinMs?: number;
  retryMaxMs?: number;
  readFile?: (path: string) => Promise<Uint8Array>;
}

export const DIRECTORY_REFRESH_MS = 15 * 60_000;

async function readBoundedFile(path: string): Promise<Uint8Array> {
  const info = await stat(path);
  if (!info.isFile()) throw new Error('not a file');
  if (info.size > MAX_CONTACTS_BYTES) throw new Error(`larger than ${MAX_CONTACTS_BYTES} bytes`);
  return readFile(path);
}

interface ContactEntry {
  name: string;
  company: string | null;
  numberKind: NumberKind;
}

export class Directory implements CallerDirectory {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly fetchExtensions: () => Promise<DirectoryEntry[]>;
  private readonly refreshMs: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  private readonly readFile: (path: string) => Promise<Uint8Array>;
  private region: string | undefined;
  private extensions = new Map<string, string>();
  private contacts = new Map<string, ContactEntry>();
  private contactsRaw: Contact[] = [];
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
    this.readFile = options.readFile ?? readBoundedFile;
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
          const key = numberKey(e.number, this.region);
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
  async loadContactsFile(path: string): Promise<ContactsFileResult> {
    if (!path) {
      this.contactsRaw = [];
      this.indexContacts();
      return { ok: true, count: 0 };
    }
    const read = await this.readContactsFile(path);
    this.contactsRaw = read.ok ? read.contacts : [];
    this.indexContacts();
    if (!read.ok) {
      // The problem's kind only: the columns may be a headerless file's first row (people's data).
      this.logger.warn('contacts file gave no contacts', { problem: read.problem.kind });
      return read;
    }
    this.logger.info('contacts file loaded', {
      layout: read.layout,
      contacts: read.contacts.length,
      numbers: this.contacts.size,
      skipped: read.skipped,
    });
    return { ok: true, count: this.contacts.size };
  }

  /**
   * Reads and parses a contacts file without using it (the settings' file picker says what is in
   * a file before the user saves it): how many numbers it names, or why none.
   */
  async inspectContactsFile(path: string): Promise<ContactsFileResult> {
    const read = await this.readContactsFile(path);
    if (!read.ok) return read;
    return { ok: true, count: this.index(read.contacts).size };
  }

  private async readContactsFile(
    path: string,
  ): Promise<
    | { ok: true; contacts: Contact[]; layout: string; skipped: number }
    | { ok: false; problem: ContactsProblem | { kind: 'unreadable' } }
  > {
    let bytes: Uint8Array;
    try {
      bytes = await this.readFile(path);
    } catch (err) {
      this.logger.warn('contacts file could not be read', { error: err });
      return { ok: false, problem: { kind: 'unreadable' } };
    }
    const reading = readContacts(bytes);
    if (reading.problem || reading.contacts.length === 0)
      return { ok: false, problem: reading.problem ?? { kind: 'empty' } };
    return {
      ok: true,
      contacts: reading.contacts,
      layout: reading.layout,
      skipped: reading.skipped,
    };
  }

  /** The caller's name: the extension list first (it is the tenant's truth), then contacts. */
  lookup(number: string): string | null {
    return this.identify(number)?.name ?? null;
  }

  /**
   * Who `number` is: a colleague on the tenant's extension list first (the phone system's own
   * name for its extension is never overridden), then the contacts file with the contact's company
   * and what this number is to them (mobile, work…).
   */
  identify(number: string): CallerIdentity | null {
    const key = numberKey(number, this.region);
    if (!key) return null;
    const colleague = this.extensions.get(key);
    if (colleague) return { name: colleague, source: 'directory', company: null, numberKind: null };
    const contact = this.contacts.get(key);
    if (!contact) return null;
    return {
      name: contact.name,
      source: 'contacts',
      company: contact.company,
      numberKind: contact.numberKind,
    };
  }

  format(number: string): string {
    return formatNumber(number, this.region);
  }

  /** Contacts by number; when two contacts share a number, the first in the file keeps it. */
  private index(contacts: readonly Contact[]): Map<string, ContactEntry> {
    const next = new Map<string, ContactEntry>();
    for (const c of contacts) {
      const name = displayText(c.name);
      if (!name) continue;
      const company = displayText(c.company) || null;
      for (const n of c.numbers) {
        const key = numberKey(n.number, this.region);
        if (key && !next.has(key)) next.set(key, { name, company, numberKind: n.kind });
      }
    }
    return next;
  }

  private indexContacts(): void {
    this.contacts = this.index(this.contactsRaw);
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
