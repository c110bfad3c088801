/**
 * The runner's stdout: exactly one JSON object per line, nothing else (logs go to stderr). The
 * line shapes are a public interface, documented in README.md beside this file: add fields, never
 * rename or remove them. Keys and values a program reads (state, errcode, ids) are the same in
 * every language; the human words (a status's reason and remedy) follow the runner's language.
 */
import type { ConnectionStatus } from '../core/events/contracts.ts';
import type { Dismiss, Pop } from '../core/events/pipeline.ts';
import type { Fault } from '../../src-shared/process/last-resort.ts';
import type { Notice } from '../core/events/notices.ts';
import type { FeatureStatus } from '../core/events/features.ts';
import { displayText, previewText } from '../../src-shared/ui/text.ts';
import type { CallerIdentity, CallGroup } from '../core/contacts/directory.ts';
import type { CrmResult } from '../core/crm/lookup.ts';
import type { NameSource, NumberKind } from '../core/ports/views.ts';
import { jsonLine } from '../../src-shared/files/json-text.ts';
import { english, phrase, render, type Words } from '../../src-shared/i18n/phrase.ts';
import type { MessageId } from '../../src-shared/i18n/catalogue.ts';
import type { OwnCall } from '../core/events/own-dials.ts';
import type { CallControlResult } from '../core/ports/call-control.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import type { RelayIdentity } from '../../src-shared/relay/relay-protocol.ts';

export interface StatusLine {
  type: 'status';
  state: ConnectionStatus['state'];
  reason: string | null;
  remedy: string | null;
  errcode: number | null;
  /**
   * On `connected` behind a proxy that asked for a sign-in: the scheme and who
   * (`Negotiate as agent7@CORP.EXAMPLE`, `NTLM as CORP\\agent7`, `Basic as agent7`); never a secret.
   */
  proxy_auth?: string;
}

export interface PopLine {
  type: 'pop';
  call_id: string;
  from: string;
  /** True when the caller ID was longer than 256 characters and `from` is only its start. */
  from_truncated: boolean;
  to: string;
  /**
   * Added: the inbound line as the phone system reports it (Yeastar P-Series), null otherwise:
   * the inbound member's `to`, which is the number dialled (a DID) on most trunks but may be the
   * extension the PBX routed the call to (the guide's own example of *(30016) Incoming Call
   * Request* shows an extension there), else the trunk's name. Not a proof of which DID was dialled.
   */
  line: string | null;
  event_id: string;
  caller_name: string | null;
  /**
   * Where caller_name came from: the tenant's extension list (`directory`), the contacts file
   * (`contacts`), the PBX's company contacts (`pbx-contacts`, added), the CRM, or none.
   */
  name_source: NameSource;
  /** The caller's company (contacts file or the PBX's company contacts); null when not known. */
  caller_company: string | null;
  /** What the number is to the caller (contacts): mobile, work, home, main, other; or null. */
  number_kind: NumberKind | null;
  /**
   * Added: the queue or ring group the call came through (`queue`, `ring-group`) and its name on
   * the PBX (Yeastar P-Series, from the member's `call_path` and the PBX's lists); both null when
   * the phone system does not say, or names a group its lists do not know.
   */
  group_kind: CallGroup['kind'] | null;
  group_name: string | null;
  /**
   * Added: the extension that transferred the call to this ring, where the phone system says it
   * (Yeastar P-Series), and its name from the extension list; `from` stays the original caller.
   * Both null otherwise.
   */
  transferred_by: string | null;
  transferred_by_name: string | null;
  /**
   * Added: true when the phone system never reported who called (Yeastar P-Series: an outside
   * call on a trunk without Call Status Monitor), with `hint` saying so and the remedy in the
   * runner's language; false and null otherwise.
   */
  caller_unseen: boolean;
  hint: string | null;
  /**
   * Server time of the ring, ms since the epoch; where the phone system's reports carry no time
   * (Yeastar P-Series), the time the runner received it.
   */
  timestamp: number;
}

/**
 * What the CRM answered for a popped call (after its pop line). `status`: `found` (with the name,
 * company and record link as the CRM gave them, inert), `not-found`, `failed` (`reason`: timeout,
 * rate-limited, auth, forbidden, network, certificate, server, bad-answer, no-credentials) or `skipped`
 * (`reason`: not-a-number, paused, busy, refused). `name_source` says which name a card shows now:
 * the contacts file's stays (`contacts`), else the CRM's (`crm`).
 */
export interface EnrichedLine {
  type: 'enriched';
  call_id: string;
  provider: string;
  status: CrmResult['status'];
  reason: string | null;
  caller_name: string | null;
  caller_company: string | null;
  record_url: string | null;
  name_source: NameSource;
  cached: boolean;
}

export interface DismissLine {
  type: 'dismiss';
  call_id: string;
  state: string;
  to: string;
  event_id: string;
}

/**
 * A ring of a call the user dialled from Screenpop (`dial`, caller-first): never a pop, this line
 * instead ("Calling <number>…"); its end is a dismiss line as for any call.
 */
export interface CallingLine {
  type: 'calling';
  call_id: string;
  /** The number dialled, as sent to the phone system. */
  number: string;
}

/** `screenpop-headless dial <number>`: the call was placed (caller-first: the user's phone rings). */
export interface DialLine {
  type: 'dial';
  call_id: string | null;
  /** `runner`: through the sign-in of a runner already running; `own`: signed in for this dial. */
  via: 'runner' | 'own';
}

/** `dial` refused: the CallControl refusal's id and its words in the runner's language. */
export interface DialRefusedLine {
  type: 'dial-refused';
  refusal: string;
  reason: string | null;
  via: 'runner' | 'own';
}

/** Something unexpected went wrong inside the runner; it carried on and rebuilt its connection. */
export interface FaultLine {
  type: 'fault';
  /** Where it was caught: `timer`, `uncaughtException`, `unhandledRejection`. */
  origin: string;
  /** The error's name and first line, secrets scrubbed. */
  message: string;
  /** Faults since the runner started, this one included. */
  count: number;
}

/** Fields every notice line has. */
interface NoticeLineBase {
  event_id: string;
  /** Server time of the event, ms since the epoch. */
  timestamp: number;
}

export interface VoicemailLine extends NoticeLineBase {
  type: 'voicemail';
  voicemail_id: string;
  extension: string;
  from: string;
  from_truncated: boolean;
  /** The phone system's name for the caller, else the directory's; null when neither knows. */
  caller_name: string | null;
  duration_sec: number | null;
  /** False: older than an hour (a replay), history rather than a notification. */
  notify: boolean;
}

export interface SmsLine extends NoticeLineBase {
  type: 'sms';
  message_id: string;
  from: string;
  from_truncated: boolean;
  to: string;
  /** The text as received (at most 1,600 characters): untrusted, never render it as markup. */
  text: string;
  text_truncated: boolean;
  /** One line, at most 160 characters, without control, bidi or zero-width characters. */
  preview: string;
  notify: boolean;
}

export interface TrunkLine extends NoticeLineBase {
  type: 'trunk';
  trunk: string;
  status: string;
  registered: boolean;
  /** Trunks not registered now: while any is, calls from outside may not reach the user. */
  down: string[];
}

export interface PresenceLine extends NoticeLineBase {
  type: 'presence';
  extension: string;
  status: string;
  do_not_disturb: boolean;
}

/**
 * A feature the key may not receive (10003 for its code): off alone, with the remedy; or one the
 * phone system does not offer (`not-offered`, `code` null: nothing is subscribed for it).
 */
export interface FeatureLine {
  type: 'feature';
  feature: FeatureStatus['feature'];
  state: FeatureStatus['state'];
  code: number | null;
  reason: string | null;
  remedy: string | null;
}

export type NoticeLine = VoicemailLine | SmsLine | TrunkLine | PresenceLine;

/** Organisation mode: who the relay says this runner is, each time it says so. */
export interface SignedInLine {
  type: 'signed-in';
  user: string;
  via: RelayIdentity['via'];
  extensions: string[];
  dids: string[];
}

/** A call logged into the CRM (--crm-log, issue 39): once per call and revision. */
export interface LoggedLine {
  type: 'logged';
  call_id: string;
  crm: 'hubspot' | 'generic';
  crm_id: string;
  /** 'created', 'updated' (a later revision), 'found' (after an uncertain create). */
  how: 'created' | 'updated' | 'found';
  attempts: number;
}

export type OutputLine =
  | LoggedLine
  | StatusLine
  | PopLine
  | EnrichedLine
  | DismissLine
  | FaultLine
  | NoticeLine
  | FeatureLine
  | SignedInLine
  | CallingLine
  | DialLine
  | DialRefusedLine;

export function signedInLine(identity: RelayIdentity): SignedInLine {
  return {
    type: 'signed-in',
    user: identity.user,
    via: identity.via,
    extensions: [...identity.extensions],
    dids: [...identity.dids],
  };
}

/**
 * The runner's own words for a status phrase whose app words name what the runner does not have
 * (Settings, the tray's "Try again now"): `runner.status.<id>` stands in for `status.<id>`,
 * naming its flags and environment variables instead.
 */
const RUNNER_SAYS: ReadonlyMap<MessageId, MessageId> = new Map<MessageId, MessageId>([
  ['status.fault.invalid-credentials.remedy', 'runner.status.fault.invalid-credentials.remedy'],
  ['status.fault.network.remedy', 'runner.status.fault.network.remedy'],
  ['status.fault.protocol.remedy', 'runner.status.fault.protocol.remedy'],
  ['status.fault.not-phone-system.remedy', 'runner.status.fault.not-phone-system.remedy'],
  ['status.fault.ys-credentials.remedy', 'runner.status.fault.ys-credentials.remedy'],
  ['status.fault.ys-api-off.remedy', 'runner.status.fault.ys-api-off.remedy'],
  ['status.fault.ys-ip-blocked.remedy', 'runner.status.fault.ys-ip-blocked.remedy'],
  ['status.fault.looks-like-yeastar.remedy', 'runner.status.fault.looks-like-yeastar.remedy'],
  ['status.fault.base-url-path.remedy', 'runner.status.fault.base-url-path.remedy'],
  ['status.fault.unreachable.remedy', 'runner.status.fault.unreachable.remedy'],
  ['status.fault.no-credentials.remedy', 'runner.status.fault.no-credentials.remedy'],
  ['status.fault.not-signed-in.remedy', 'runner.status.fault.not-signed-in.remedy'],
  ['status.fault.not-enrolled.remedy', 'runner.status.fault.not-enrolled.remedy'],
  ['status.fault.sign-in-expired.remedy', 'runner.status.fault.sign-in-expired.remedy'],
  ['status.fault.keychain-unreadable.remedy', 'runner.status.fault.keychain-unreadable.remedy'],
  ['status.fault.proxy-auth.remedy', 'runner.status.fault.proxy-auth.remedy'],
  ['status.fault.proxy-auth-refused.remedy', 'runner.status.fault.proxy-auth-refused.remedy'],
  ['status.fault.proxy-auth-ticket.remedy', 'runner.status.fault.proxy-auth-ticket.remedy'],
  [
    'status.fault.proxy-auth-unavailable.remedy',
    'runner.status.fault.proxy-auth-unavailable.remedy',
  ],
  ['status.fault.proxy-refused.remedy', 'runner.status.fault.proxy-refused.remedy'],
  ['status.fault.certificate-untrusted.remedy', 'runner.status.fault.certificate-untrusted.remedy'],
  ['status.fault.certificate-expired.remedy', 'runner.status.fault.certificate-expired.remedy'],
  ['status.fault.certificate-host.remedy', 'runner.status.fault.certificate-host.remedy'],
  ['status.relay-no-tenant-remedy', 'runner.status.relay-no-tenant-remedy'],
  ['status.relay-tenant-unknown-remedy', 'runner.status.relay-tenant-unknown-remedy'],
  // Organisation mode's sign-in in the app; should a runner status ever carry it, it names the flag.
  ['status.org.relay-unreachable-remedy', 'runner.status.org.relay-unreachable-remedy'],
  ['status.proxy-manual-unusable-remedy', 'runner.status.proxy-manual-unusable-remedy'],
  ['status.settings.lookup-credentials', 'runner.status.settings.lookup-credentials'],
  ['status.settings.log-url-credentials', 'runner.status.settings.log-url-credentials'],
  // `dial` without an extension: the runner's flag.
  ['status.call.no-extension', 'runner.status.call.no-extension'],
]);

export function inRunnerWords(words: Words): Words {
  return words.map(({ id, values }) => {
    const inner = values
      ? Object.fromEntries(
          Object.entries(values).map(([k, v]) => [k, typeof v === 'object' ? inRunnerWords(v) : v]),
        )
      : undefined;
    return phrase(RUNNER_SAYS.get(id) ?? id, inner);
  });
}

/**
 * The words of a status or feature line in the runner's language (`t`), English without one.
 * Keys, states and codes never change with the language.
 */
function said(
  text: string | undefined,
  words: Words | undefined,
  t: Translator | undefined,
): string | null {
  // No words (a feature not offered has no remedy) is no text, not an empty one.
  if (words && words.length === 0) return null;
  if (words) return t ? render(inRunnerWords(words), t) : english(inRunnerWords(words));
  return text ?? null;
}

export function callingLine(call: OwnCall): CallingLine {
  return { type: 'calling', call_id: call.callId, number: call.number };
}

/** The one line of `dial`: placed, or refused with the refusal's id and words. */
export function dialLine(
  result: CallControlResult,
  via: 'runner' | 'own',
  t?: Translator,
): DialLine | DialRefusedLine {
  if (result.ok) return { type: 'dial', call_id: result.callId ?? null, via };
  return {
    type: 'dial-refused',
    refusal: result.refusal,
    reason: said(result.message, result.words, t),
    via,
  };
}

export function statusLine(s: ConnectionStatus, t?: Translator): StatusLine {
  return {
    type: 'status',
    state: s.state,
    reason: said(s.reason, s.words?.reason, t),
    remedy: said(s.remedy, s.words?.remedy, t),
    errcode: s.errcode ?? null,
  };
}

export function popLine(
  p: Pop,
  caller: CallerIdentity | null,
  extras: {
    /** The queue or ring group the call came through, named. */
    group?: CallGroup | null;
    /** The name of the extension that transferred the call (`p.transferredBy`), if known. */
    transferredByName?: string | null;
    /** The runner's language, for `hint`. */
    t?: Translator;
  } = {},
): PopLine {
  return {
    type: 'pop',
    call_id: p.callId,
    from: p.from,
    from_truncated: p.fromTruncated === true,
    to: p.to,
    line: p.line ?? null,
    event_id: p.eventId,
    caller_name: caller?.name ?? null,
    name_source: caller?.source ?? 'none',
    caller_company: caller?.company ?? null,
    number_kind: caller?.numberKind ?? null,
    group_kind: extras.group?.kind ?? null,
    group_name: extras.group?.name ?? null,
    transferred_by: p.transferredBy ?? null,
    transferred_by_name: p.transferredBy === undefined ? null : (extras.transferredByName ?? null),
    caller_unseen: p.callerUnseen === true,
    hint: p.callerUnseen ? said(undefined, [phrase('popup.caller-unseen')], extras.t) : null,
    timestamp: p.timestamp,
  };
}

export function enrichedLine(
  p: Pop,
  known: CallerIdentity | null,
  result: CrmResult,
  provider: string,
): EnrichedLine {
  const found = result.status === 'found' ? result : null;
  return {
    type: 'enriched',
    call_id: p.callId,
    provider,
    status: result.status,
    reason:
      result.status === 'failed' ? result.kind : result.status === 'skipped' ? result.reason : null,
    caller_name: found?.name ?? null,
    caller_company: found?.company ?? null,
    record_url: found?.recordUrl ?? null,
    name_source: known ? known.source : found ? 'crm' : 'none',
    cached: result.status === 'found' || result.status === 'not-found' ? result.cached : false,
  };
}

export function dismissLine(d: Dismiss): DismissLine {
  return { type: 'dismiss', call_id: d.callId, state: d.state, to: d.to, event_id: d.eventId };
}

/** A name meant for people, cleaned as a pop's caller name is (displayText); null when nothing is left. */
function shownText(text: string | null): string | null {
  const shown = displayText(text);
  return shown === '' ? null : shown;
}

/**
 * Names and states meant for people (a caller's name, a trunk's, a presence) are cleaned of
 * controls and bidi marks like a pop's caller name; numbers and ids keep what was sent (jsonLine
 * escapes whatever they hold).
 */
export function noticeLine(n: Notice, directoryName: string | null): NoticeLine {
  const base = { event_id: n.eventId, timestamp: n.timestamp };
  switch (n.type) {
    case 'voicemail':
      return {
        type: 'voicemail',
        voicemail_id: n.voicemailId,
        extension: n.extension,
        from: n.from,
        from_truncated: n.fromTruncated === true,
        caller_name: shownText(n.callerName) ?? directoryName,
        duration_sec: n.durationSec,
        notify: n.notify,
        ...base,
      };
    case 'sms':
      return {
        type: 'sms',
        message_id: n.messageId,
        from: n.from,
        from_truncated: n.fromTruncated === true,
        to: n.to,
        text: n.text,
        text_truncated: n.textTruncated === true,
        preview: previewText(n.text),
        notify: n.notify,
        ...base,
      };
    case 'trunk':
      return {
        type: 'trunk',
        trunk: displayText(n.trunk),
        status: displayText(n.status),
        registered: n.registered,
        down: n.down.map((trunk) => displayText(trunk)),
        ...base,
      };
    case 'presence':
      return {
        type: 'presence',
        extension: n.extension,
        status: displayText(n.status),
        do_not_disturb: n.status === 'do_not_disturb',
        ...base,
      };
  }
}

export function featureLine(f: FeatureStatus, t?: Translator): FeatureLine {
  return {
    type: 'feature',
    feature: f.feature,
    state: f.state,
    code: f.code,
    reason: said(f.reason, f.words?.reason, t),
    remedy: said(f.remedy, f.words?.remedy, t),
  };
}

export function faultLine(f: Fault): FaultLine {
  return { type: 'fault', origin: f.origin, message: f.message, count: f.count };
}

/**
 * One stdout line: every control, line-breaking and bidi character of caller data escaped, in every
 * field (jsonLine), so that nothing a caller sends can split, reorder or colour a line.
 */
export function formatLine(line: OutputLine): string {
  return jsonLine(line);
}
