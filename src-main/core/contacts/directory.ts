import { readFile, stat } from 'node:fs/promises';
import { delay, type Clock, type TimerHandle } from '../../../src-shared/process/clock.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import { Generation } from '../../../src-shared/kit/generation.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { MAX_CONTACTS_BYTES, readContacts } from './contacts-file.ts';
import type { Contact, ContactsProblem, NumberKind } from './types.ts';
import { formatNumber, numberKey } from '../numbers/phone-number.ts';
import { boundedText, displayText } from '../../../src-shared/ui/text.ts';
import type { PbxContact, PbxGroup } from '../../../src-shared/api/pbx-lists.ts';
import { findColleagues, type Colleague } from './colleagues.ts';

/**
 * Who is calling, by number: the tenant's extension list (extension/list, through the token
 * manager), optionally the user's contacts file, and on a Yeastar P-Series PBX its company
 * contacts; and which queue or ring group a call came through (the PBX's queue and ring group
 * lists). The lists are cached and refreshed in the background on the injected clock, all in one
 * refresh: a failed extension list keeps the last good one and retries with back-off; a failed
 * PBX list keeps its last good one until the next refresh. Lookups never wait on the network, and
 * never on indexing: a list is indexed in slices of a few ms (INDEX_SLICE_MS) that give the event
 * loop back in between, into a new index that replaces the old one whole when it is done, so a
 * ring during a refresh is handled at once with the last index (none on the very first load: the
 * card pops without a name, and onChange fills it in when the index is ready).
 */
export interface DirectoryEntry {
  number: string;
  callerIdName: string;
}

/** Who a number is, as the directory knows it. */
export interface CallerIdentity {
  name: string;
  /** The extension list, the user's contacts file, or the PBX's company contacts. */
  source: 'directory' | 'contacts' | 'pbx-contacts';
  /** The contact's organisation (contacts only); null when not known. */
  company: string | null;
  /** What this number is to the contact (contacts only): mobile, work… */
  numberKind: NumberKind | null;
}

/** The queue or ring group a call came through, by its name on the PBX. */
export interface CallGroup {
  kind: PbxGroup['kind'];
  name: string;
}

/** Longest `call_path` read (a path of a few group numbers is far shorter). */
export const MAX_CALL_PATH_CHARS = 256;

/** Names and formats numbers (the notices need no more). */
export interface NameDirectory {
  lookup(number: string): string | null;
  format(number: string): string;
}

/** What the call presenter asks: who a number is, with where the name came from. */
export interface CallerDirectory extends NameDirectory {
  identify(number: string): CallerIdentity | null;
  /** The queue or ring group a call's `call_path` names, when the PBX's lists know it. */
  groupOf?(callPath: string): CallGroup | null;
}

/** What came of reading a contacts file: how many numbers it names, or why none. */
export type ContactsFileResult =
  { ok: true; count: number } | { ok: false; problem: ContactsProblem | { kind: 'unreadable' } };

export interface DirectoryOptions {
  clock: Clock;
  logger: Logger;
  /** Fetches the whole extension list (all pages); bound to TokenManager.call + ServiceClient.listExtensions. */
  fetchExtensions: () => Promise<DirectoryEntry[]>;
  /**
   * The PBX's queues and ring groups (Yeastar P-Series; bound to TokenManager.call +
   * ServiceClient.listGroups): absent where the phone system has none.
   */
  fetchGroups?: () => Promise<PbxGroup[]>;
  /** The PBX's company contacts (Yeastar P-Series): absent where none, or not wanted. */
  fetchPbxContacts?: () => Promise<PbxContact[]>;
  defaultRegion?: string;
  refreshMs?: number;
  retryMinMs?: number;
  retryMaxMs?: number;
  readFile?: (path: string) => Promise<Uint8Array>;
}

export const DIRECTORY_REFRESH_MS = 15 * 60_000;

/**
 * Most ms of indexing (on the clock's monotonic time) before the event loop is given back: a
 * ring that arrives meanwhile waits at most about this long (20,000 company contacts blocked it
 * for 220-250 ms in one stretch before; `npm run bench:directory`).
 */
export const INDEX_SLICE_MS = 8;
/**
 * Most numbers (or entries without one) indexed in one slice, whatever the clock says: a fake
 * clock does not move within a slice.
 */
export const INDEX_SLICE_ENTRIES = 2_000;

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

/** What an index is built from: one key and value per number, `null` for an entry without one. */
type IndexInput<V> = Iterable<readonly [key: string, value: V] | null>;

/** The extension list's numbers and names. */
function* extensionKeys(
  list: readonly DirectoryEntry[],
  region: string | undefined,
): IndexInput<string> {
  for (const e of list) {
    const key = numberKey(e.number, region);
    const name = displayText(e.callerIdName);
    yield key && name ? [key, name] : null;
  }
}

/** Contacts' numbers, each with its contact (a contact without a name gives none). */
function* contactKeys(
  contacts: readonly (Contact | PbxContact)[],
  region: string | undefined,
): IndexInput<ContactEntry> {
  for (const c of contacts) {
    const name = displayText(c.name);
    yield null;
    if (!name) continue;
    const company = displayText(c.company) || null;
    for (const n of c.numbers) {
      const key = numberKey(n.number, region);
      yield key ? [key, { name, company, numberKind: n.kind }] : null;
    }
  }
}

/** Which build of each index is the latest: an older one still running is dropped. */
type IndexName = 'extensions' | 'contacts' | 'pbxContacts';

/** How many numbers a contacts file names, as read. */
function numbersIn(read: { contacts: readonly Contact[] }): number {
  let count = 0;
  for (const c of read.contacts) count += c.numbers.length;
  return count;
}

export class Directory implements CallerDirectory {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly fetchExtensions: () => Promise<DirectoryEntry[]>;
  private readonly fetchGroups: (() => Promise<PbxGroup[]>) | undefined;
  private readonly fetchPbxContacts: (() => Promise<PbxContact[]>) | undefined;
  private readonly refreshMs: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  private readonly readFile: (path: string) => Promise<Uint8Array>;
  private region: string | undefined;
  private extensions = new Map<string, string>();
  private contacts = new Map<string, ContactEntry>();
  private contactsRaw: Contact[] = [];
  /** Queues and ring groups by number. */
  private groups = new Map<string, CallGroup>();
  private pbxContacts = new Map<string, ContactEntry>();
  private pbxContactsRaw: readonly PbxContact[] = [];
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
  /** The latest build of each index (bumped when one starts, or when the index is dropped). */
  private readonly builds: Record<IndexName, number> = {
    extensions: 0,
    contacts: 0,
    pbxContacts: 0,
  };
  /** Counts loadContactsFile calls: a file chosen since the one being read wins. */
  private contactsLoads = 0;
  /** The contacts file's index while it is being built (see firstLoad). */
  private contactsIndexing: Promise<unknown> | null = null;

  constructor(options: DirectoryOptions) {
    this.clock = options.clock;
    this.logger = options.logger.child({ component: 'directory' });
    this.fetchExtensions = options.fetchExtensions;
    this.fetchGroups = options.fetchGroups;
    this.fetchPbxContacts = options.fetchPbxContacts;
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
   * Resolves once the first lists since start() have landed and been indexed (or failed), and the
   * contacts file's index being built is ready, or after `maxWaitMs`, whichever comes first: for a
   * caller that would rather wait a moment for a name than show a colleague's call without one
   * (the headless runner's pop lines). The event loop is not held meanwhile.
   */
  async firstLoad(maxWaitMs: number): Promise<void> {
    const pending = [this.firstRefresh, this.contactsIndexing].filter((p) => p !== null);
    if (pending.length === 0) return;
    const timeUp = new AbortController();
    await Promise.race([
      Promise.all(pending),
      delay(this.clock, maxWaitMs, timeUp.signal).catch(() => {}),
    ]);
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

  /**
   * Drops the extension list and the PBX's lists (the app now talks to another service, whose
   * lists are not known yet).
   */
  forgetExtensions(): void {
    if (this.extensions.size === 0 && this.groups.size === 0 && this.pbxContacts.size === 0) return;
    this.extensions = new Map();
    this.groups = new Map();
    this.pbxContactsRaw = [];
    this.pbxContacts = new Map();
    this.emit();
  }

  get extensionCount(): number {
    return this.extensions.size;
  }

  get contactCount(): number {
    return this.contacts.size;
  }

  /** Queues and ring groups known by number. */
  get groupCount(): number {
    return this.groups.size;
  }

  /** Numbers the PBX's company contacts name. */
  get pbxContactCount(): number {
    return this.pbxContacts.size;
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
    // Until the new indexes are ready, the numbers are looked up in the old ones.
    void this.indexContacts();
    void this.indexPbxContacts();
  }

  /** One refresh now (coalesced with one already running); schedules the next one. */
  refreshNow(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const current = this.generation.ticket();
    const extensions = this.fetchExtensions()
      .then((list) => {
        if (!current()) return;
        // An extension listed twice: the last entry names it.
        return this.buildIndex(
          'extensions',
          extensionKeys(list, this.region),
          'last',
          current,
          (next) => {
            this.extensions = next;
            this.failures = 0;
            this.lastRefreshAt = this.clock.now();
            this.logger.info('extension list refreshed', { extensions: next.size });
            this.emit();
            this.schedule(this.refreshMs);
          },
        );
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
      });
    const fetching = Promise.all([
      extensions,
      this.refreshGroups(current),
      this.refreshPbxContacts(current),
    ])
      .then(() => {})
      .finally(() => {
        if (this.inFlight === fetching) this.inFlight = null;
      });
    this.inFlight = fetching;
    return fetching;
  }

  /**
   * The PBX's queues and ring groups, by number. A failure (a PBX without the list, an application
   * without the permission) keeps the last good list until the next refresh: it never holds up
   * the extension list, and never a pop (a card then shows no group).
   */
  private async refreshGroups(current: () => boolean): Promise<void> {
    if (!this.fetchGroups) return;
    try {
      const list = await this.fetchGroups();
      if (!current()) return;
      const next = new Map<string, CallGroup>();
      for (const g of list) {
        const name = displayText(g.name);
        // A queue and a ring group never share a number on one PBX; if a list said so, the first wins.
        if (g.number && name && !next.has(g.number)) next.set(g.number, { kind: g.kind, name });
      }
      this.groups = next;
      this.logger.info('queue and ring group lists refreshed', { groups: next.size });
      this.emit();
    } catch (err) {
      if (!current()) return;
      this.logger.warn('queue and ring group lists refresh failed; keeping the last lists', {
        error: err,
      });
    }
  }

  /** The PBX's company contacts; a failure keeps the last good list until the next refresh. */
  private async refreshPbxContacts(current: () => boolean): Promise<void> {
    if (!this.fetchPbxContacts) return;
    try {
      const list = await this.fetchPbxContacts();
      if (!current()) return;
      this.pbxContactsRaw = list;
      const landed = await this.indexPbxContacts(current);
      if (landed)
        this.logger.info('company contacts refreshed', {
          contacts: list.length,
          numbers: this.pbxContacts.size,
        });
    } catch (err) {
      if (!current()) return;
      this.logger.warn('company contacts refresh failed; keeping the last list', { error: err });
    }
  }

  /**
   * The queue or ring group a call came through. `call_path` names the IVRs, queues and ring
   * groups the call passed by their numbers (docs/phone-systems/yeastar-p-series.md section 9);
   * with several, the last known queue or ring group is the one that rang this member. Read
   * tolerantly: any run of characters other than letters, digits, `*`, `#` and `+` separates two
   * numbers. A number no list knows (an IVR, a group added since the last refresh) names nothing.
   */
  groupOf(callPath: string): CallGroup | null {
    if (this.groups.size === 0) return null;
    const hops = boundedText(callPath, MAX_CALL_PATH_CHARS).split(/[^0-9A-Za-z*#+]+/);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i];
      const group = hop ? this.groups.get(hop) : undefined;
      if (group) return { ...group };
    }
    return null;
  }

  /**
   * Loads (or, with '', clears) the contacts file. A bad file is logged and leaves no contacts.
   * Resolves once the file is read, with what it gave (`count`: the numbers it names); its index
   * is built after, in slices, and replaces the last one when ready (onChange; firstLoad waits for
   * it), so a caller may connect meanwhile: a large file never holds up the first ring.
   */
  async loadContactsFile(path: string): Promise<ContactsFileResult> {
    const load = ++this.contactsLoads;
    if (!path) {
      this.contactsRaw = [];
      await this.indexContacts();
      return { ok: true, count: 0 };
    }
    const read = await this.readContactsFile(path);
    // Another file was chosen while this one was read: that one is used.
    if (load !== this.contactsLoads) return read.ok ? { ok: true, count: numbersIn(read) } : read;
    this.contactsRaw = read.ok ? read.contacts : [];
    const indexing = this.indexContacts();
    if (!read.ok) {
      // The problem's kind only: the columns may be a headerless file's first row (people's data).
      this.logger.warn('contacts file gave no contacts', { problem: read.problem.kind });
      return read;
    }
    this.logger.info('contacts file loaded', {
      layout: read.layout,
      contacts: read.contacts.length,
      skipped: read.skipped,
    });
    void indexing.then((landed) => {
      if (landed) this.logger.info('contacts file indexed', { numbers: this.contacts.size });
    });
    return { ok: true, count: numbersIn(read) };
  }

  /**
   * Reads and parses a contacts file without using it (the settings' file picker says what is in
   * a file before the user saves it): how many numbers it names, or why none.
   */
  async inspectContactsFile(path: string): Promise<ContactsFileResult> {
    const read = await this.readContactsFile(path);
    if (!read.ok) return read;
    let count = 0;
    await this.buildIndex(
      null,
      contactKeys(read.contacts, this.region),
      'first',
      () => true,
      (index) => (count = index.size),
    );
    return { ok: true, count };
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

  /** Colleagues on the extension list by name or extension (Transfer's picker; colleagues.ts). */
  colleagues(query: string, own: readonly string[]): Colleague[] {
    return findColleagues(this.extensions, query, own);
  }

  /**
   * The caller's name: the extension list first (it is the tenant's truth), then the user's
   * contacts file, then the PBX's company contacts.
   */
  lookup(number: string): string | null {
    return this.identify(number)?.name ?? null;
  }

  /**
   * Who `number` is: a colleague on the tenant's extension list first (the phone system's own
   * name for its extension is never overridden), then the user's own contacts file (the user
   * chose it: it wins over the organisation's list), then the PBX's company contacts; a contact
   * with its company and what this number is to them (mobile, work…).
   */
  identify(number: string): CallerIdentity | null {
    const key = numberKey(number, this.region);
    if (!key) return null;
    const colleague = this.extensions.get(key);
    if (colleague) return { name: colleague, source: 'directory', company: null, numberKind: null };
    const own = this.contacts.get(key);
    const contact = own ?? this.pbxContacts.get(key);
    if (!contact) return null;
    return {
      name: contact.name,
      source: own ? 'contacts' : 'pbx-contacts',
      company: contact.company,
      numberKind: contact.numberKind,
    };
  }

  format(number: string): string {
    return formatNumber(number, this.region);
  }

  /**
   * Builds an index from `input` in slices: at most INDEX_SLICE_MS of work (or
   * INDEX_SLICE_ENTRIES entries) at a time, then the event loop is given back (a timer on the
   * clock) before the next slice. `land` receives the finished index, unless a later build of the
   * same index has started or `current` says no since (then it resolves false). A build that fits
   * in one slice lands before this returns. With two values for one key, `keep` says which wins.
   */
  private async buildIndex<V>(
    name: IndexName | null,
    input: IndexInput<V>,
    keep: 'first' | 'last',
    current: () => boolean,
    land: (index: Map<string, V>) => void,
  ): Promise<boolean> {
    const build = name ? ++this.builds[name] : 0;
    const latest = () => (name === null || build === this.builds[name]) && current();
    const next = new Map<string, V>();
    let sliceStart = this.clock.monotonic();
    let entries = 0;
    for (const entry of input) {
      if (entry && (keep === 'last' || !next.has(entry[0]))) next.set(entry[0], entry[1]);
      if (
        ++entries >= INDEX_SLICE_ENTRIES ||
        this.clock.monotonic() - sliceStart >= INDEX_SLICE_MS
      ) {
        await delay(this.clock, 0);
        if (!latest()) return false;
        sliceStart = this.clock.monotonic();
        entries = 0;
      }
    }
    if (!latest()) return false;
    land(next);
    return true;
  }

  /** The contacts file by number; when two contacts share a number, the first in the file keeps it. */
  private indexContacts(): Promise<boolean> {
    const indexing = this.buildIndex(
      'contacts',
      contactKeys(this.contactsRaw, this.region),
      'first',
      () => true,
      (next) => {
        this.contacts = next;
        this.emit();
      },
    ).finally(() => {
      if (this.contactsIndexing === indexing) this.contactsIndexing = null;
    });
    this.contactsIndexing = indexing;
    return indexing;
  }

  /** The PBX's company contacts by number (the first contact with a number keeps it). */
  private async indexPbxContacts(current: () => boolean = () => true): Promise<boolean> {
    if (this.pbxContactsRaw.length === 0 && this.pbxContacts.size === 0) return true;
    return this.buildIndex(
      'pbxContacts',
      contactKeys(this.pbxContactsRaw, this.region),
      'first',
      current,
      (next) => {
        this.pbxContacts = next;
        this.emit();
      },
    );
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
