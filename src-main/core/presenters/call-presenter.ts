import type { CallCard, CallGroupView, CallOutcome } from '../ports/views.ts';
import {
  callOutcomeOf as outcomeOf,
  outcomeRank,
  type CallAnswer,
} from '../../../src-shared/ui/call-outcome.ts';
import type { Clock, TimerHandle } from '../../../src-shared/process/clock.ts';
import { Emitter } from '../../../src-shared/kit/emitter.ts';
import { MAX_CALL_FIELD_CHARS } from '../../../src-shared/wire/envelope.ts';
import type { Logger } from '../../../src-shared/process/log.ts';
import { buildCrmUrl, checkTemplate, type CrmValues } from '../links/crm-url.ts';
import { MAX_CALL_PATH_CHARS, type CallerDirectory } from '../contacts/directory.ts';
import type { HistoryStore } from '../history/history-store.ts';
import type {
  CallRecordEvent,
  ClipboardPort,
  DismissEvent,
  Notifier,
  PopEvent,
  PopupView,
  UrlOpener,
} from '../ports/ports.ts';
import { boundedText, displayText, messageText } from '../../../src-shared/ui/text.ts';
import type { CrmLookup, CrmResult } from '../crm/lookup.ts';
import { vetExternalUrl } from '../links/external-url.ts';
import type { CallLogRecord, CallLogSink } from '../ports/call-log.ts';
import { callLogRecord } from '../call-log/record.ts';
import { OutboundCallLog } from '../call-log/outbound.ts';
import { BoundedFifoMap } from '../../../src-shared/kit/bounded-map.ts';
import type { OwnCall } from '../events/own-dials.ts';
import {
  MAX_CALL_NOTE_CHARS,
  shouldLogCall,
  type CallLogCalls,
} from '../../../src-shared/rules/call-log-rule.ts';
import { recordState } from '../../../src-shared/phone-systems/yeastar-p-series.ts';

/**
 * Turns the engine's pops and dismisses into what the user sees: the stack of call cards in the
 * popup (newest first), a notification per new call, the CRM link, and the history record.
 * A card whose call stops ringing stays ("lingers") for popupLingerSec so the user can still read it
 * or open the CRM, then goes; the popup hides when no card is left. Under Do Not Disturb nothing
 * interrupts (no notification, popup or auto-opened CRM) but history still records every call.
 */
export interface PresenterSettings {
  doNotDisturb: boolean;
  sound: boolean;
  autoOpenCrm: boolean;
  crmUrlTemplate: string;
  crmAllowedSchemes: string[];
  popupLingerSec: number;
  /** Which calls are logged into the CRM (src-shared/rules/call-log-rule.ts); absent: none. */
  callLogCalls?: CallLogCalls;
  /** Seconds the note card stays after the call ends before it logs by itself. */
  callNoteSec?: number;
  /** The outcome choices the note card offers. */
  callLogChoices?: string[];
}

export interface CallPresenterOptions {
  clock: Clock;
  logger: Logger;
  directory: CallerDirectory;
  history: HistoryStore;
  notifier: Notifier;
  popup: PopupView;
  urlOpener: UrlOpener;
  clipboard: ClipboardPort;
  settings: () => PresenterSettings;
  /** Most cards shown at once; older ringing calls drop off the bottom of the stack. */
  maxCards?: number;
  /** A ring with no news for this long is dropped (a lost "stopped ringing" event). */
  maxRingMs?: number;
  /**
   * True when `to` is one of the user's own numbers (extensions, DIDs): an "answered" there was
   * answered by the user, anywhere else by a colleague. Without it only the numbers the call rang
   * on count as the user's.
   */
  isUserNumber?: (to: string) => boolean;
  /** A new call started ringing for the user: the administrator's actions (ring-actions.ts). */
  onRing?: (values: CrmValues, options: { openLinks: boolean }) => void;
  /** The CRM lookup in force (crm/build.ts), asked after each pop; null or absent: none. */
  crm?: () => CrmLookup | null;
  /**
   * Where finished calls are logged (the durable queue, issue 39); absent: nothing is logged and
   * no card takes a note.
   */
  callLog?: CallLogSink;
  /**
   * Whether Call back may be offered for a number (CallActions.canCallBack: the phone system
   * offers dialling and the number is dialable); absent: never.
   */
  canCallBack?: (number: string) => boolean;
}

/** A call the user answered and never heard the end of keeps its card at most this long. */
export const MAX_TALK_MS = 4 * 60 * 60_000;
/** CRM contact ids kept for the call log: a few hours of calls (a card lives at most MAX_TALK_MS). */
const MAX_CONTACTS = 2_000;
const CONTACT_TTL_MS = MAX_TALK_MS + 60 * 60_000;

/** States after which the call is no longer ringing anywhere. Others may concern one party only. */
const CALL_OVER = new Set(['answered', 'hold', 'ended']);
/** States that mean someone picked the call up. */
const ANSWERED = new Set(['answered', 'hold']);

type Answered = CallAnswer;

/** The better-informed of two answers: answered here beats answered elsewhere beats none. */
function betterAnswer(a: Answered, b: Answered): Answered {
  if (a === 'here' || b === 'here') return 'here';
  return a ?? b;
}

/**
 * The one key of a call everywhere (map, card, history, the id the popup sends back): the engine's
 * call_id made well-formed, at the engine's own length limit so distinct calls never share a key.
 */
function cardId(callId: string): string {
  return boundedText(callId, MAX_CALL_FIELD_CHARS);
}

interface LiveCall {
  card: CallCard;
  /** The user's numbers this call is ringing on right now. */
  ringingTo: Set<string>;
  /** Every number of the user's this call rang on. */
  rangTo: Set<string>;
  answered: Answered;
  timer: TimerHandle | undefined;
  /** The CRM's link to this caller's record, vetted; null when there is none. */
  recordUrl: string | null;
  /** The ringing member's `call_path` (Yeastar P-Series), to name its group once the lists load. */
  callPath: string | null;
  /** Wall-clock ms of the user's answer and of the hang-up after it. */
  answeredAt?: number;
  hungUpAt?: number;
  /** Seconds talked, from the phone system's record of the user's leg. */
  talkSec?: number;
  /** The agent's note and chosen outcome, and which version of them was logged (0: none yet). */
  log: { note: string; disposition: string | null; version: number; logged: number };
  /** The user closed its note card while still talking: the hang-up logs it at once. */
  closed?: boolean;
  /** Its ring notification became the missed-call notification, which stays after the card. */
  missedNotified?: boolean;
}

export class CallPresenter {
  private readonly o: CallPresenterOptions;
  private readonly logger: Logger;
  private readonly calls = new Map<string, LiveCall>();
  private readonly cardChanges: Emitter<[cards: CallCard[]]>;
  private readonly maxCards: number;
  private readonly maxRingMs: number;
  private popupVisible = false;
  /** The calls the user dialled, logged as OUTBOUND when their record comes (issue 39). */
  private readonly outbound: OutboundCallLog;
  /** The CRM contact the lookup found per call, for its log (kept after the card goes). */
  private readonly contacts = new BoundedFifoMap<string>(MAX_CONTACTS, CONTACT_TTL_MS);

  constructor(options: CallPresenterOptions) {
    this.o = options;
    this.logger = options.logger.child({ component: 'presenter' });
    this.outbound = new OutboundCallLog({
      clock: options.clock,
      sink: options.callLog,
      calls: () => options.settings().callLogCalls,
      isUserNumber: (n) => this.isUsers(n),
      onError: (error, callId) =>
        this.logger.error('call could not be queued for the CRM log', { callId, error }),
    });
    this.cardChanges = new Emitter(this.logger, 'cards');
    this.maxCards = options.maxCards ?? 5;
    this.maxRingMs = options.maxRingMs ?? 5 * 60_000;
  }

  /** Cards as the popup shows them: newest first, at most maxCards. */
  cards(): CallCard[] {
    return [...this.calls.values()]
      .filter((c) => !c.closed)
      .map((c) => c.card)
      .sort((a, b) => b.startedAt - a.startedAt)
      .slice(0, this.maxCards)
      .map((c) => ({ ...c }));
  }

  onCardsChange(listener: (cards: CallCard[]) => void): () => void {
    return this.cardChanges.on(listener);
  }

  handlePop(pop: PopEvent): void {
    const callId = cardId(pop.callId);
    const to = boundedText(pop.to);
    const existing = this.calls.get(callId);
    if (existing) {
      // Another of the user's numbers rings for the same call, or a duplicate: one card per call.
      existing.ringingTo.add(to);
      existing.rangTo.add(to);
      if (existing.card.state !== 'ringing') {
        existing.card.state = 'ringing';
        existing.card.outcome = 'ringing';
        existing.card.endedAt = null;
        this.clearTimer(existing);
      }
      this.armRingTimeout(existing);
      this.changed();
      return;
    }
    const settings = this.o.settings();
    const from = boundedText(pop.from);
    const caller = this.o.directory.identify(from);
    const card: CallCard = {
      kind: 'call',
      callId,
      from,
      fromDisplay: this.o.directory.format(from),
      callerName: caller?.name ?? null,
      callerCompany: caller?.company ?? null,
      numberKind: caller?.numberKind ?? null,
      nameSource: caller?.source ?? 'none',
      to,
      toDisplay: this.o.directory.format(to),
      toName: this.o.directory.lookup(to),
      // This computer's clock, when the ring arrived: the user reads "rang 5 s ago" against it, and
      // the server's timestamp may be in another clock's frame (skew).
      startedAt:
        Number.isFinite(pop.receivedAt) && pop.receivedAt > 0 ? pop.receivedAt : this.o.clock.now(),
      endedAt: null,
      state: 'ringing',
      outcome: 'ringing',
      canOpenCrm: checkTemplate(settings.crmUrlTemplate, settings.crmAllowedSchemes).ok,
      crmLookup: null,
      group: null,
    };
    const callPath = pop.callPath ? boundedText(pop.callPath, MAX_CALL_PATH_CHARS) : null;
    card.group = this.groupOf(callPath);
    if (pop.transferredBy !== undefined) {
      const by = boundedText(pop.transferredBy);
      card.transferredBy = this.o.directory.lookup(by) ?? this.o.directory.format(by);
    }
    if (pop.callerUnseen) card.callerUnseen = true;
    const call: LiveCall = {
      card,
      ringingTo: new Set([to]),
      rangTo: new Set([to]),
      answered: null,
      timer: undefined,
      recordUrl: null,
      callPath,
      log: { note: '', disposition: null, version: 1, logged: 0 },
    };
    // A colleague is named by the phone system's own list: the CRM never renames them.
    const crm = card.nameSource === 'directory' ? null : (this.o.crm?.() ?? null);
    if (crm) card.crmLookup = 'pending';
    this.calls.set(callId, call);
    this.armRingTimeout(call);
    this.o.history.recordRing(card);
    this.logger.info('call ringing', {
      callId: card.callId,
      source: pop.source,
      known: card.callerName !== null,
    });
    if (!settings.doNotDisturb) {
      this.safely('notification', () =>
        this.o.notifier.show({ ...card }, { silent: !settings.sound }),
      );
      if (settings.autoOpenCrm && card.canOpenCrm) void this.openCrm(card.callId);
    }
    if (this.o.onRing)
      this.safely('ring actions', () =>
        this.o.onRing?.(crmValuesOf(card), { openLinks: !settings.doNotDisturb }),
      );
    this.changed(!settings.doNotDisturb);
    // After the card is out: the lookup fills it in when (and if) the CRM answers.
    if (crm) void crm.lookup(from).then((result) => this.enrich(callId, result));
  }

  /**
   * A CRM answer for a call. Priority: a name the card already has (the contacts file's) stays;
   * the CRM gives the name only to an unknown caller, the company when the card has none, and the
   * link to the record. The history learns it even when the card is already gone.
   */
  private enrich(callId: string, result: CrmResult): void {
    const call = this.calls.get(callId);
    if (result.status === 'found') {
      this.o.history.recordCaller(callId, { name: result.name, company: result.company });
      if (result.contactId) this.contacts.set(callId, result.contactId, this.o.clock.now());
      if (!call) return;
      const card = call.card;
      if (!card.callerName) {
        card.callerName = result.name;
        card.nameSource = 'crm';
      }
      card.callerCompany ??= result.company;
      call.recordUrl = result.recordUrl;
      if (result.recordUrl) card.canOpenCrm = true;
    }
    if (!call) return;
    call.card.crmLookup =
      result.status === 'found' || result.status === 'not-found' ? result.status : 'failed';
    this.changed();
  }

  /**
   * A call's record once it ended: History learns the talk time of the user's own leg, and the
   * outcome what the record says of it (Yeastar's VOICEMAIL after the ring's end: voicemail, not
   * missed; its ANSWERED when the answer report was lost; its BUSY: declined), through the one
   * rule (callOutcomeOf).
   */
  handleRecord(record: CallRecordEvent): void {
    this.outbound.record(record);
    const callId = cardId(record.callId);
    const to = boundedText(record.to);
    if (record.talkSec !== undefined) this.o.history.recordTalk(callId, to, record.talkSec);
    const call = this.calls.get(callId);
    if (!(call ? call.rangTo.has(to) : this.isUsers(to))) return;
    if (call && record.talkSec !== undefined) call.talkSec = record.talkSec;
    const state = recordState(record.status);
    if (state === 'ended') return; // a plain "no answer": the ring's own end already said it
    const answered: Answered = state === 'answered' ? 'here' : null;
    if (!call) {
      this.o.history.recordOutcome(callId, outcomeOf(answered, state));
      // The card is gone and the call was logged as missed: the record (voicemail left after the
      // ring, long after the card) updates the same call in the log.
      if (answered === null) this.logFromHistory(callId);
      return;
    }
    call.answered = betterAnswer(call.answered, answered);
    if (call.card.state !== 'ringing') this.recordOutcome(call, state);
  }

  /** A ring of a call the user dialled (never a card): logged as OUTBOUND when its record comes. */
  handleOwnCall(call: OwnCall): void {
    this.outbound.own(call);
  }

  /**
   * The user's answered call ended where it was answered (pipeline.onHangup): the call's end. The
   * note card stays callNoteSec more, then logs the call.
   */
  handleHangup(hangup: DismissEvent): void {
    const call = this.calls.get(cardId(hangup.callId));
    if (!call || call.answered !== 'here' || call.hungUpAt !== undefined) return;
    call.hungUpAt = this.o.clock.now();
    call.card.state = displayText(hangup.state, 32) || 'ended';
    if (call.closed) this.finish(call);
    else if (call.card.note) this.closeNoteLater(call);
    this.changed();
  }

  /**
   * The agent's note and outcome from the card (checked again here: the IPC handler checked the
   * sender and the shapes). Enter after the call ended logs it now (once; a change and Enter again
   * updates the same call in the CRM); while the user still talks it is kept and logged at the end.
   * False when the call has no note card (any more) or the values do not fit.
   */
  saveNote(callId: string, note: string, disposition: string | null, submit: boolean): boolean {
    const call = this.calls.get(callId);
    const card = call?.card;
    if (!call || !card?.note) return false;
    if (typeof note !== 'string' || note.length > MAX_CALL_NOTE_CHARS) return false;
    if (disposition !== null && !card.note.choices.includes(disposition)) return false;
    const text = noteText(note);
    if (text !== call.log.note || disposition !== call.log.disposition) {
      call.log = { ...call.log, note: text, disposition, version: call.log.version + 1 };
      card.note = { ...card.note, text, disposition, logged: false };
      this.o.history.recordNote(callId, text, disposition);
    }
    if (submit && call.hungUpAt !== undefined) this.logCall(call);
    this.changed();
    return true;
  }

  handleDismiss(dismiss: DismissEvent): void {
    const callId = cardId(dismiss.callId);
    const state = displayText(dismiss.state, 32) || 'ended';
    const to = boundedText(dismiss.to);
    const call = this.calls.get(callId);
    if (!call) {
      // The user closed the card while it rang: the history still learns how the call ended.
      const answered = ANSWERED.has(state) ? (this.isUsers(to) ? 'here' : 'elsewhere') : null;
      const outcome = outcomeOf(answered, state);
      this.o.history.recordOutcome(callId, outcome);
      // Not answered here (no note to wait for): logged as it ended, from what History kept.
      if (outcome !== 'answered') this.logFromHistory(callId);
      return;
    }
    if (ANSWERED.has(state)) {
      call.answered = betterAnswer(
        call.answered,
        call.rangTo.has(to) || this.isUsers(to) ? 'here' : 'elsewhere',
      );
      if (call.answered === 'here') call.answeredAt ??= this.o.clock.now();
    }
    if (call.card.state !== 'ringing') {
      // Already lingering: an "answered" then "ended" only improves the record.
      this.recordOutcome(call, state);
      return;
    }
    const wasOurs = call.ringingTo.delete(to);
    if (!CALL_OVER.has(state) && wasOurs && call.ringingTo.size > 0) {
      this.changed();
      return; // still ringing on another of the user's numbers
    }
    call.card.state = state;
    call.card.endedAt = this.o.clock.now();
    this.recordOutcome(call, state);
    if (call.card.outcome === 'missed') this.notifyMissed(call);
    if (call.answered === 'here' && this.logs('answered')) this.openNote(call);
    else this.linger(call);
    this.changed();
  }

  /**
   * The call stopped ringing unanswered: its ring notification becomes "Missed call from ...",
   * with Call back where the phone system offers dialling (the History item's id is the call's).
   * No sound: the ring was heard. Under Do Not Disturb nothing is shown (History has the call).
   */
  private notifyMissed(call: LiveCall): void {
    if (this.o.settings().doNotDisturb) return;
    const card = call.card;
    let callBack = false;
    try {
      callBack = this.o.canCallBack?.(card.from) ?? false;
    } catch (err) {
      this.logger.warn('call back could not be offered', { error: err });
    }
    call.missedNotified = true;
    this.safely('missed-call notification', () =>
      this.o.notifier.showMissed({ ...card }, { silent: true, callBack }),
    );
  }

  /** Does the call-log setting (and a sink) log a call of this outcome? */
  private logs(outcome: CallOutcome): boolean {
    const which = this.o.settings().callLogCalls;
    return this.o.callLog !== undefined && which !== undefined && shouldLogCall(which, outcome);
  }

  /** The card of a call the user answered takes a note until the call ends and a while after. */
  private openNote(call: LiveCall): void {
    const s = this.o.settings();
    call.card.note = {
      text: call.log.note,
      disposition: call.log.disposition,
      choices: [...(s.callLogChoices ?? [])],
      closesAt: null,
      logged: false,
    };
    // A hang-up never heard of still ends the card (and logs the call) after MAX_TALK_MS.
    this.clearTimer(call);
    call.timer = this.o.clock.setTimeout(() => {
      call.timer = undefined;
      call.hungUpAt ??= this.o.clock.now();
      this.finish(call);
    }, MAX_TALK_MS);
  }

  private closeNoteLater(call: LiveCall): void {
    const ms = Math.max(0, this.o.settings().callNoteSec ?? 0) * 1000;
    if (call.card.note) call.card.note = { ...call.card.note, closesAt: this.o.clock.now() + ms };
    this.clearTimer(call);
    call.timer = this.o.clock.setTimeout(() => {
      call.timer = undefined;
      this.finish(call);
    }, ms);
  }

  /** The card goes; the call is logged first if the rule says so and this version is not yet. */
  private finish(call: LiveCall): void {
    if (this.logs(call.card.outcome)) this.logCall(call);
    this.remove(call);
  }

  /** Hands the call to the log (once per version of the note: the same callId updates it). */
  private logCall(call: LiveCall): void {
    const sink = this.o.callLog;
    if (!sink || call.log.logged === call.log.version || !this.logs(call.card.outcome)) return;
    call.log.logged = call.log.version;
    if (call.card.note) call.card.note = { ...call.card.note, logged: true };
    const record = this.logRecord(call);
    void sink.log(record).catch((error: unknown) => {
      this.logger.error('call could not be queued for the CRM log', {
        callId: record.callId,
        error,
      });
    });
  }

  /**
   * A call whose card is gone (closed while it rang, or a record that came after it), logged from
   * its History entry. Never an answered call: that one is logged from its card, with its note.
   */
  private logFromHistory(callId: string): void {
    const entry = this.o.history.get(callId);
    const sink = this.o.callLog;
    if (!entry || !sink || entry.outcome === 'answered' || !this.logs(entry.outcome)) return;
    void sink
      .log(
        callLogRecord({
          callId,
          direction: 'inbound',
          from: entry.from,
          to: entry.to,
          startedAt: entry.startedAt,
          endedAt: entry.endedAt ?? this.o.clock.now(),
          talkSec: entry.talkSec,
          outcome: entry.outcome,
          note: entry.note,
          disposition: entry.disposition,
          contactId: this.contacts.get(callId, this.o.clock.now()),
        }),
      )
      .catch((error: unknown) => {
        this.logger.error('call could not be queued for the CRM log', { callId, error });
      });
  }

  private logRecord(call: LiveCall): CallLogRecord {
    const card = call.card;
    return callLogRecord({
      callId: card.callId,
      direction: 'inbound',
      from: card.from,
      to: card.to,
      startedAt: card.startedAt,
      answeredAt: call.answeredAt,
      endedAt: call.hungUpAt ?? card.endedAt ?? this.o.clock.now(),
      talkSec: call.talkSec,
      outcome: card.outcome,
      note: call.log.note,
      disposition: call.log.disposition,
      contactId: this.contacts.get(card.callId, this.o.clock.now()),
    });
  }

  /**
   * The user closed a card. A call that is over is logged as it stands (closing is "done"). A note
   * card closed while the user still talks is kept out of sight until the hang-up, which then logs
   * the call at once (the popup no longer shows it); a ringing card just goes.
   */
  dismiss(callId: string): void {
    const call = this.calls.get(callId);
    if (!call) return;
    if (call.card.note && call.hungUpAt === undefined) {
      call.closed = true;
      this.safely('notification close', () => this.o.notifier.close(call.card.callId));
      this.changed();
      return;
    }
    if (call.card.state !== 'ringing') this.finish(call);
    else this.remove(call);
  }

  /** Shows the popup with the current cards (a notification or tray click). */
  showPopup(): void {
    const cards = this.cards();
    if (cards.length === 0) return;
    this.popupVisible = true;
    this.safely('popup', () => this.o.popup.show(cards));
  }

  /** The user closed the popup: it stays hidden until the next call (the cards live on in the tray). */
  hidePopup(): void {
    if (!this.popupVisible) return;
    this.popupVisible = false;
    this.safely('popup', () => this.o.popup.hide());
  }

  crmValues(callId: string): CrmValues | null {
    const card = this.calls.get(callId)?.card;
    return card ? crmValuesOf(card) : null;
  }

  async openCrm(callId: string): Promise<{ ok: boolean; message?: string }> {
    const call = this.calls.get(callId);
    if (!call) return { ok: false, message: 'That call is no longer shown.' };
    // The CRM's own record when the lookup found one, else the CRM link's search.
    if (call.recordUrl) return this.openUrl(call.recordUrl);
    return this.openCrmWith(crmValuesOf(call.card));
  }

  /** Opens a link the CRM gave, through the same gate as every other. */
  private async openUrl(url: string): Promise<{ ok: boolean; message?: string }> {
    const vetted = vetExternalUrl(url, this.o.settings().crmAllowedSchemes);
    if (!vetted.ok) return vetted;
    try {
      await this.o.urlOpener.open(vetted.url);
      return { ok: true };
    } catch (err) {
      this.logger.warn('CRM record could not be opened', { error: err });
      return { ok: false, message: 'The CRM link could not be opened.' };
    }
  }

  /** Builds the CRM link for a call's values with the settings in force, and opens it. */
  async openCrmWith(values: CrmValues): Promise<{ ok: boolean; message?: string }> {
    const s = this.o.settings();
    const built = buildCrmUrl(s.crmUrlTemplate, values, s.crmAllowedSchemes);
    if (!built.ok) {
      this.logger.warn('CRM link refused', { reason: built.message });
      return built;
    }
    try {
      await this.o.urlOpener.open(built.url);
      return { ok: true };
    } catch (err) {
      this.logger.warn('CRM link could not be opened', { error: err });
      return { ok: false, message: 'The CRM link could not be opened.' };
    }
  }

  /**
   * The queue or ring group a `call_path` names, from the directory's lists; null when it names
   * none they know, or when the lookup fails (a card never waits on, nor breaks for, a group).
   */
  private groupOf(callPath: string | null): CallGroupView | null {
    if (!callPath || !this.o.directory.groupOf) return null;
    try {
      return this.o.directory.groupOf(callPath);
    } catch (error) {
      this.logger.warn('the call group could not be named', { error });
      return null;
    }
  }

  /**
   * Whether the user's answered call `callId` still goes on here: answered by the user, not hung
   * up, not gone (an attended transfer of it can still be completed: core/calls/consultations.ts).
   */
  inCall(callId: string): boolean {
    const call = this.calls.get(callId);
    return call !== undefined && call.answered === 'here' && call.hungUpAt === undefined;
  }

  /** The caller's number of a call on the popup (Call back, issue 38), or undefined. */
  callerNumber(callId: string): string | undefined {
    return this.calls.get(callId)?.card.from;
  }

  copyNumber(callId: string): boolean {
    const card = this.calls.get(callId)?.card;
    if (!card) return false;
    this.o.clipboard.writeText(card.from);
    return true;
  }

  /**
   * The directory changed (e.g. it loaded after a ring at start-up): fill in names, and the queue
   * or ring group, still missing.
   */
  refreshNames(): void {
    let changed = false;
    for (const c of this.calls.values()) {
      if (!c.card.group && c.callPath) {
        c.card.group = this.groupOf(c.callPath);
        if (c.card.group) changed = true;
      }
      if (c.card.callerName) continue;
      const caller = this.o.directory.identify(c.card.from);
      if (caller) {
        c.card.callerName = caller.name;
        c.card.callerCompany = caller.company;
        c.card.numberKind = caller.numberKind;
        c.card.nameSource = caller.source;
        this.o.history.recordRing(c.card);
        changed = true;
      }
    }
    if (changed) this.changed();
  }

  /** Settings changed: recompute whether cards can open the CRM. */
  refreshSettings(): void {
    const s = this.o.settings();
    const can = checkTemplate(s.crmUrlTemplate, s.crmAllowedSchemes).ok;
    for (const c of this.calls.values()) c.card.canOpenCrm = can || c.recordUrl !== null;
    if (this.calls.size > 0) this.changed();
  }

  /**
   * Paused or reconfigured: every card goes; ringing calls are recorded as ended, calls that are
   * over (or answered, whose hang-up will not be heard now) are logged with what they have.
   */
  clear(): void {
    for (const call of [...this.calls.values()]) {
      if (call.card.state === 'ringing')
        this.o.history.recordOutcome(call.card.callId, outcomeOf(call.answered, 'cleared'));
      else {
        // A call that is over (or whose end this connection will not hear) is logged as it is.
        if (call.card.note) call.hungUpAt ??= this.o.clock.now();
        this.logCall(call);
      }
      this.remove(call, false);
    }
    this.changed();
  }

  private recordOutcome(call: LiveCall, state: string): void {
    const outcome = outcomeOf(call.answered, state);
    // A lingering card keeps its first word unless a later report tells more (an answer, the
    // voicemail record after the ring's end); "missed" never follows.
    if (outcomeRank(outcome) > outcomeRank(call.card.outcome)) call.card.outcome = outcome;
    this.o.history.recordOutcome(call.card.callId, outcome);
  }

  private isUsers(to: string): boolean {
    return this.o.isUserNumber?.(to) ?? false;
  }

  private linger(call: LiveCall): void {
    this.clearTimer(call);
    const ms = Math.max(0, this.o.settings().popupLingerSec) * 1000;
    call.timer = this.o.clock.setTimeout(() => {
      call.timer = undefined;
      this.finish(call);
    }, ms);
  }

  private armRingTimeout(call: LiveCall): void {
    this.clearTimer(call);
    call.timer = this.o.clock.setTimeout(() => {
      call.timer = undefined;
      this.logger.warn('ring timed out without a stop event', { callId: call.card.callId });
      call.card.state = 'ended';
      this.o.history.recordOutcome(call.card.callId, outcomeOf(call.answered, 'timed-out'));
      this.remove(call);
    }, this.maxRingMs);
  }

  private remove(call: LiveCall, notify = true): void {
    this.clearTimer(call);
    this.calls.delete(call.card.callId);
    // A missed call's notification stays in the notification centre until the user acts on it.
    if (!call.missedNotified)
      this.safely('notification close', () => this.o.notifier.close(call.card.callId));
    if (notify) this.changed();
  }

  private clearTimer(call: LiveCall): void {
    this.o.clock.clearTimeout(call.timer);
    call.timer = undefined;
  }

  /** Pushes the cards to listeners and the popup; `reveal` shows a hidden popup. */
  private changed(reveal = false): void {
    const cards = this.cards();
    this.cardChanges.emit(cards);
    if (cards.length === 0) {
      if (this.popupVisible) {
        this.popupVisible = false;
        this.safely('popup', () => this.o.popup.hide());
      }
      return;
    }
    if (reveal || this.popupVisible) {
      this.popupVisible = true;
      this.safely('popup', () => this.o.popup.show(cards));
    }
  }

  private safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error(`${what} failed`, { error: err });
    }
  }
}

/** The values a CRM link template is filled with, for a call on a card or in the history. */
export function crmValuesOf(call: {
  from: string;
  to: string;
  callId: string;
  callerName: string | null;
}): CrmValues {
  return { from: call.from, to: call.to, call_id: call.callId, caller_name: call.callerName ?? '' };
}

/**
 * The agent's note as it is kept and logged: plain text, well-formed, without control, bidi or
 * zero-width characters but with its line breaks, at most MAX_CALL_NOTE_CHARS.
 */
export function noteText(note: string): string {
  return messageText(note, MAX_CALL_NOTE_CHARS).trim();
}
