import { readFile, rename } from 'node:fs/promises';
import {
  CALL_OUTCOMES,
  type CallOutcome,
  type HistoryEntry,
  type HistoryItem,
  type SmsEntry,
  type VoicemailEntry,
} from '../ports/views.ts';
import { writeFileAtomic } from '../../../src-shared/files/atomic-file.ts';
import { parseJson } from '../../../src-shared/files/json-text.ts';
import type { Clock } from '../../../src-shared/process/clock.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { boundedText, displayText, messageText } from '../../../src-shared/ui/text.ts';
import { NUMBER_KINDS, type NumberKind } from '../contacts/types.ts';
import { LatestWriter } from '../../../src-shared/kit/one-at-a-time.ts';
import { outcomeRank } from '../../../src-shared/ui/call-outcome.ts';
import {
  MAX_CALL_LOG_CHOICE_CHARS,
  MAX_CALL_NOTE_CHARS,
} from '../../../src-shared/rules/call-log-rule.ts';

/**
 * The call history: every call that rang for the user, with its time, caller and how it ended,
 * and the voicemails and text messages left for the user (one item per voicemail_id / message_id).
 * Kept in memory, newest first, capped at `limit`, and persisted as one JSON file written atomically
 * (writes are coalesced: at most one in flight, one more queued; src-shared/kit/one-at-a-time.ts). A file that does not parse is
 * kept aside as `<name>.corrupt-<time>` and the history starts empty, with a warning logged.
 * A file that exists but cannot be read (locked, no permission), or a corrupt one that cannot be
 * moved aside, is never saved over: the history lives in memory only until the next start.
 */
export interface HistoryStoreOptions {
  path: string;
  clock: Clock;
  logger: Logger;
  limit: number;
  write?: (path: string, data: string) => Promise<void>;
  read?: (path: string) => Promise<string>;
  moveAside?: (from: string, to: string) => Promise<void>;
}

interface HistoryFile {
  version: 1;
  entries: HistoryItem[];
}

export const MAX_HISTORY_LIMIT = 10_000;

/** A voicemail or text message as recorded (the seen flag comes later). */
export type HistoryNotice = Omit<VoicemailEntry, 'seen'> | Omit<SmsEntry, 'seen'>;

/** What a ring records; the outcome, end and seen flag come later. */
export type HistoryRing = Pick<
  HistoryEntry,
  'callId' | 'from' | 'fromDisplay' | 'callerName' | 'to' | 'toDisplay' | 'toName' | 'startedAt'
> &
  Partial<Pick<HistoryEntry, 'callerCompany' | 'numberKind'>>;

function clampLimit(n: number): number {
  return Number.isFinite(n) ? Math.min(MAX_HISTORY_LIMIT, Math.max(1, Math.floor(n))) : 500;
}

/** Fields every kind has, read from the file; null when they are not there. */
function readCommon(e: Record<string, unknown>) {
  if (
    typeof e.callId !== 'string' ||
    e.callId === '' ||
    typeof e.from !== 'string' ||
    typeof e.to !== 'string' ||
    typeof e.startedAt !== 'number' ||
    !Number.isFinite(e.startedAt)
  )
    return null;
  const to = boundedText(e.to);
  return {
    callId: boundedText(e.callId, 160),
    from: boundedText(e.from),
    fromDisplay: displayText(e.fromDisplay),
    callerName: typeof e.callerName === 'string' ? displayText(e.callerName) || null : null,
    to,
    toDisplay: typeof e.toDisplay === 'string' ? displayText(e.toDisplay) : displayText(to),
    toName: typeof e.toName === 'string' ? displayText(e.toName) || null : null,
    startedAt: e.startedAt,
    seen: e.seen === true,
  };
}

/** One item from the file, or null when it is not one (files are untrusted input too). */
function readItem(v: unknown): HistoryItem | null {
  if (!v || typeof v !== 'object') return null;
  const e = v as Record<string, unknown>;
  if (e.kind === 'voicemail') {
    const common = readCommon(e);
    const sec = e.durationSec;
    return common
      ? {
          kind: 'voicemail',
          ...common,
          durationSec:
            typeof sec === 'number' && Number.isFinite(sec) && sec >= 0 ? Math.round(sec) : null,
        }
      : null;
  }
  if (e.kind === 'sms') {
    const common = readCommon(e);
    return common
      ? {
          kind: 'sms',
          ...common,
          text: messageText(e.text),
          textTruncated: e.textTruncated === true,
        }
      : null;
  }
  // Files written before kinds existed hold calls only.
  if (e.kind !== undefined && e.kind !== 'call') return null;
  return readEntry(e);
}

/** One call from the file, or null when it is not one. */
function readEntry(e: Record<string, unknown>): HistoryEntry | null {
  if (!CALL_OUTCOMES.includes(e.outcome as CallOutcome)) return null;
  // Files written before toDisplay/toName existed show `to` as it was received (readCommon).
  const common = readCommon(e);
  if (!common) return null;
  return {
    kind: 'call',
    ...common,
    callId: boundedText(e.callId, 128),
    endedAt: typeof e.endedAt === 'number' && Number.isFinite(e.endedAt) ? e.endedAt : null,
    // Files written before the talk time existed (or calls without a record) have none.
    ...(typeof e.talkSec === 'number' && Number.isInteger(e.talkSec) && e.talkSec >= 0
      ? { talkSec: e.talkSec }
      : {}),
    outcome: e.outcome as CallOutcome,
    // The agent's note (issue 39): plain text again, bounded, as the note card keeps it.
    ...(typeof e.note === 'string' && e.note !== ''
      ? { note: messageText(e.note, MAX_CALL_NOTE_CHARS) }
      : {}),
    ...(typeof e.disposition === 'string' && e.disposition !== ''
      ? { disposition: displayText(e.disposition, MAX_CALL_LOG_CHOICE_CHARS) }
      : {}),
    // Files written before these existed have neither.
    callerCompany:
      typeof e.callerCompany === 'string' ? displayText(e.callerCompany) || null : null,
    numberKind: NUMBER_KINDS.includes(e.numberKind as NumberKind)
      ? (e.numberKind as NumberKind)
      : null,
  };
}

export class HistoryStore {
  private readonly path: string;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly write: (path: string, data: string) => Promise<void>;
  private readonly read: (path: string) => Promise<string>;
  private readonly moveAside: (from: string, to: string) => Promise<void>;
  private limit: number;
  private entries: HistoryItem[] = [];
  private readonly changes: Emitter<[entries: HistoryItem[]]>;
  private readonly writer: LatestWriter;
  /** False when saving would overwrite a file whose calls we could not read. */
  private persist = true;

  constructor(options: HistoryStoreOptions) {
    this.path = options.path;
    this.clock = options.clock;
    this.logger = options.logger.child({ component: 'history' });
    this.changes = new Emitter(this.logger, 'history');
    this.limit = clampLimit(options.limit);
    this.write = options.write ?? ((p, d) => writeFileAtomic(p, d));
    this.read = options.read ?? ((p) => readFile(p, 'utf8'));
    this.moveAside = options.moveAside ?? rename;
    this.writer = new LatestWriter(
      () => {
        const file: HistoryFile = { version: 1, entries: this.entries };
        return this.write(this.path, JSON.stringify(file));
      },
      this.logger,
      'history could not be saved',
    );
  }

  /** Reads the file; a missing file is an empty history, a corrupt one is moved aside. */
  async load(): Promise<void> {
    let text: string;
    try {
      text = await this.read(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.persist = false;
        this.logger.error('history file could not be read; keeping this session in memory only', {
          error: err,
        });
      }
      this.entries = [];
      return;
    }
    // The file holds callers' numbers and names: a parse error is reported by where it is,
    // never with V8's quote of the text around it.
    const json = parseJson(text);
    const parsed = json.ok ? (json.value as Partial<HistoryFile> | null) : null;
    if (parsed && typeof parsed === 'object' && Array.isArray(parsed.entries)) {
      const entries = parsed.entries.map(readItem).filter((e): e is HistoryItem => e !== null);
      // A call still "ringing" in the file rang when the app last ran: it is over now.
      for (const e of entries)
        if (e.kind === 'call' && e.outcome === 'ringing') e.outcome = 'ended';
      entries.sort((a, b) => b.startedAt - a.startedAt);
      this.entries = entries.slice(0, this.limit);
    } else {
      const backup = `${this.path}.corrupt-${this.clock.now()}`;
      this.logger.warn('history file is corrupt; kept aside and starting empty', {
        problem: json.ok ? 'not a history file' : `not valid JSON${json.where}`,
        backup,
      });
      await this.moveAside(this.path, backup).catch((e: unknown) => {
        this.persist = false;
        this.logger.error(
          'could not move the corrupt history aside; keeping this session in memory only',
          { error: e },
        );
      });
      this.entries = [];
    }
    this.emit();
  }

  list(): HistoryItem[] {
    return this.entries.map((e) => ({ ...e }));
  }

  /** The newest `n` calls (the tray's recent calls), without copying the whole history. */
  recent(n: number): HistoryEntry[] {
    const calls: HistoryEntry[] = [];
    for (const e of this.entries) {
      if (calls.length >= n) break;
      if (e.kind === 'call') calls.push({ ...e });
    }
    return calls;
  }

  /** A call by its id (undefined for a voicemail or message: see item()). */
  get(callId: string): HistoryEntry | undefined {
    const e = this.call(callId);
    return e && { ...e };
  }

  /** An item of any kind by its id. */
  item(callId: string): HistoryItem | undefined {
    const e = this.entries.find((x) => x.callId === callId);
    return e && { ...e };
  }

  /** Missed calls the user has not seen yet. */
  missedCount(): number {
    return this.entries.filter((e) => e.kind === 'call' && e.outcome === 'missed' && !e.seen)
      .length;
  }

  /** Voicemails and messages the user has not seen yet. */
  unseenNoticeCount(): number {
    return this.entries.filter((e) => e.kind !== 'call' && !e.seen).length;
  }

  /**
   * A voicemail or message arrived. Once per id: a second delivery changes nothing (false). It goes
   * in by its time, so a replayed old one lands where it belongs, not on top.
   */
  recordNotice(notice: HistoryNotice): boolean {
    if (this.entries.some((e) => e.callId === notice.callId)) return false;
    const item = { ...notice, seen: false } as HistoryItem;
    const at = this.entries.findIndex((e) => e.startedAt <= item.startedAt);
    if (at === -1) this.entries.push(item);
    else this.entries.splice(at, 0, item);
    if (this.entries.length > this.limit) this.entries.length = this.limit;
    this.changed();
    return true;
  }

  setLimit(limit: number): void {
    const next = clampLimit(limit);
    if (next === this.limit) return;
    this.limit = next;
    if (this.entries.length > next) {
      this.entries = this.entries.slice(0, next);
      this.changed();
    }
  }

  /**
   * The CRM named a call's caller: the name when the entry has none (a name from the contacts file
   * or the phone system stays), the company when it has none.
   */
  recordCaller(callId: string, caller: { name: string; company: string | null }): void {
    const entry = this.call(callId);
    if (!entry) return;
    let changed = false;
    if (!entry.callerName && caller.name) {
      entry.callerName = caller.name;
      changed = true;
    }
    if (!entry.callerCompany && caller.company) {
      entry.callerCompany = caller.company;
      changed = true;
    }
    if (changed) this.changed();
  }

  /**
   * How long the user talked on a call, from the phone system's record of it (one call may have
   * several records, one per leg): taken only from the record of the number that rang here.
   */
  recordTalk(callId: string, to: string, talkSec: number): void {
    const entry = this.call(callId);
    if (!entry || entry.to !== to || !Number.isInteger(talkSec) || talkSec < 0) return;
    if (entry.talkSec === talkSec) return;
    entry.talkSec = talkSec;
    this.changed();
  }

  /** The agent's note and outcome for a call (the note card; plain text already, bounded here). */
  recordNote(callId: string, note: string, disposition: string | null): void {
    const entry = this.call(callId);
    if (!entry) return;
    const text = messageText(note, MAX_CALL_NOTE_CHARS);
    const choice = disposition ? displayText(disposition, MAX_CALL_LOG_CHOICE_CHARS) : '';
    if ((entry.note ?? '') === text && (entry.disposition ?? '') === choice) return;
    if (text) entry.note = text;
    else delete entry.note;
    if (choice) entry.disposition = choice;
    else delete entry.disposition;
    this.changed();
  }

  /** A call started ringing (a second ring for the same call only fills in a name found later). */
  recordRing(ring: HistoryRing): void {
    const existing = this.call(ring.callId);
    if (existing) {
      if (!existing.callerName && ring.callerName) {
        existing.callerName = ring.callerName;
        existing.callerCompany = ring.callerCompany ?? null;
        existing.numberKind = ring.numberKind ?? null;
        this.changed();
      }
      return;
    }
    this.entries.unshift({
      kind: 'call',
      callId: ring.callId,
      from: ring.from,
      fromDisplay: ring.fromDisplay,
      callerName: ring.callerName,
      callerCompany: ring.callerCompany ?? null,
      numberKind: ring.numberKind ?? null,
      to: ring.to,
      toDisplay: ring.toDisplay,
      toName: ring.toName,
      startedAt: ring.startedAt,
      endedAt: null,
      outcome: 'ringing',
      seen: false,
    });
    if (this.entries.length > this.limit) this.entries.length = this.limit;
    this.changed();
  }

  /** The call stopped ringing: answered (here or elsewhere), missed, or ended some other way. */
  recordOutcome(
    callId: string,
    outcome: Exclude<CallOutcome, 'ringing'>,
    at = this.clock.now(),
  ): void {
    const e = this.call(callId);
    if (!e) return;
    const next = outcomeRank(e.outcome) > outcomeRank(outcome) ? e.outcome : outcome;
    if (e.outcome === next && e.endedAt !== null) return;
    e.outcome = next;
    e.endedAt = at;
    this.changed();
  }

  markAllSeen(): void {
    let any = false;
    for (const e of this.entries)
      if (!e.seen) {
        e.seen = true;
        any = true;
      }
    if (any) this.changed();
  }

  onChange(listener: (entries: HistoryItem[]) => void): () => void {
    return this.changes.on(listener);
  }

  /** Resolves when everything changed so far is on disk. */
  flush(): Promise<void> {
    return this.writer.idle();
  }

  private call(callId: string): HistoryEntry | undefined {
    const e = this.entries.find((x) => x.callId === callId);
    return e?.kind === 'call' ? e : undefined;
  }

  private changed(): void {
    this.emit();
    if (!this.persist) return;
    void this.writer.write();
  }

  private emit(): void {
    this.changes.emit(this.list());
  }
}
