/**
 * The shapes of what the app shows: calls on the popup, the history, the status, settings as the
 * renderer sees them and the answers of its actions. The core produces them; the IPC contract
 * (src-main/ipc/contract.ts) re-exports them, so the renderer compiles against the same types. Types,
 * plain constants and pure functions of them only, importing nothing that needs Node or the DOM: the renderer's DOM-only
 * build (tsconfig.web.json) includes this file.
 */
import type { ConnectionState } from '../events/contracts.ts';
import type { PhoneSystem, Settings } from '../settings/types.ts';
import type { NoticeFeature } from '../../../src-shared/wire/event-codes.ts';
import type { CallOutcome } from '../../../src-shared/ui/call-outcome.ts';
import type { Locale } from '../../../src-shared/i18n/locales.ts';
import type { NumberKind } from '../contacts/types.ts';
import type { Words } from '../../../src-shared/i18n/phrase.ts';
import type { MessageId } from '../../../src-shared/i18n/catalogue.ts';

export type { NumberKind } from '../contacts/types.ts';

/**
 * Where a call's caller name came from: the phone system's extension list (a colleague), the
 * user's contacts file, the PBX's company contacts (Yeastar P-Series), the CRM lookup, or nowhere
 * (unknown caller).
 */
export type NameSource = 'directory' | 'contacts' | 'pbx-contacts' | 'crm' | 'none';

/** The queue or ring group a call came through, by its name on the PBX (Yeastar P-Series). */
export interface CallGroupView {
  kind: 'queue' | 'ring-group';
  /** The PBX's name for it: inert text, at most 128 characters. */
  name: string;
}

export {
  CALL_OUTCOMES,
  outcomeLabel,
  outcomeMessageId,
  type CallOutcome,
} from '../../../src-shared/ui/call-outcome.ts';
export { knownState } from '../../../src-shared/ui/connection-state.ts';

/** The language the windows speak, as main decided it (Settings, policy or the OS). */
export interface LocaleView {
  locale: Locale;
}

/** Who called whom, as plain text to show; cards and history entries both have it. */
export interface CallText {
  /** The caller's number or extension as received (untrusted). */
  from: string;
  /** `from` formatted for reading. */
  fromDisplay: string;
  /** Name from the directory or contacts; null when unknown. */
  callerName: string | null;
  /** What they called: the user's extension or DID. */
  to: string;
  /** `to` formatted for reading. */
  toDisplay: string;
  /** The called line's name in the directory or contacts ("Sales line"); null when it has none. */
  toName: string | null;
}

/** What the popup's card and the history's entry both say of a call. */
export interface CallFacts extends CallText {
  /**
   * What the card or entry is about. The popup and the history render each kind with its own
   * view (src-renderer/popup/card-views.tsx, history/row-views.tsx); later kinds (voicemail, SMS,
   * a trunk warning) join PopupCard and HistoryItem as unions.
   */
  kind: 'call';
  callId: string;
  /** Wall-clock ms when the ring started. */
  startedAt: number;
  /** Wall-clock ms when it stopped ringing (answered, missed, ended); null while it rings. */
  endedAt: number | null;
  /** How the call turned out, for the user. */
  outcome: CallOutcome;
  /** The caller's company (contacts file or CRM); null when not known. */
  callerCompany: string | null;
  /** What the caller's number is to them (contacts file): mobile, work…; null when not known. */
  numberKind: NumberKind | null;
}

/** One ringing (or just-ended, while it lingers) call as the popup shows it. All text is plain. */
export interface CallCard extends CallFacts {
  /** The service's state word: 'ringing' while it rings; anything else while it lingers. */
  state: string;
  /** True when a CRM link can be opened for this call. */
  canOpenCrm: boolean;
  /** Where `callerName` came from ('none' while it is unknown). */
  nameSource: NameSource;
  /**
   * The CRM lookup of this caller: 'pending' while it runs (the card says so), then what came of
   * it; null when no lookup is made (none set up, or a colleague: the phone system names them).
   */
  crmLookup: CrmLookupState | null;
  /**
   * The queue or ring group the call came through ("Queue: Sales"), named from the PBX's lists;
   * null when the phone system does not say, or names one no list knows (never a raw number).
   */
  group: CallGroupView | null;
  /**
   * Who passed the call on to the user (a transfer, where the phone system says it): the
   * colleague's name from the extension list or contacts, else their number; absent otherwise.
   * `from` stays the original caller.
   */
  transferredBy?: string;
  /**
   * The phone system never reported who called (a Yeastar trunk without Call Status Monitor): the
   * card says so and how to fix it (popup.caller-unseen).
   */
  callerUnseen?: true;
  /**
   * The note card of a call the user answered (issue 39), while calls are logged: the agent's note
   * and outcome choice so far, the choices offered, when it logs by itself (wall-clock ms; null
   * while the user still talks) and whether this version is logged. Absent on other cards.
   */
  note?: CallNoteView;
}

export interface CallNoteView {
  /** Plain text, at most MAX_CALL_NOTE_CHARS (src-shared/rules/call-log-rule.ts). */
  text: string;
  /** One of `choices`, or null for none. */
  disposition: string | null;
  choices: string[];
  closesAt: number | null;
  logged: boolean;
}

/** What came of a call's CRM lookup, as the card shows it. */
export type CrmLookupState = 'pending' | 'found' | 'not-found' | 'failed';

/**
 * An attended transfer under way (core/calls/consultations.ts, held by main so that a reloaded
 * popup still offers Complete transfer and Cancel transfer): the call (the card's id), whom the
 * user consults (`target`, the extension or number dialled; `targetName`, the phone system's name
 * for that extension, or null), and since when (this computer's clock, ms).
 */
export interface ConsultationView {
  callId: string;
  target: string;
  targetName: string | null;
  since: number;
}

/** Everything the popup can show; each kind has its own view. */
export type PopupCard = CallCard;

/** One call in the history (plain text, as recorded when it rang). */
export interface HistoryEntry extends CallFacts {
  /** A missed call stays unseen until the user opens the history. */
  seen: boolean;
  /** Seconds the user talked, where the phone system's record of the call says (Yeastar). */
  talkSec?: number;
  /**
   * The agent's note and chosen outcome from the note card (issue 39): plain text, at most
   * MAX_CALL_NOTE_CHARS; kept here and in the CRM log's queue until logged, nowhere else.
   */
  note?: string;
  disposition?: string;
}

/** What a voicemail or a text message has in common with a call in the history. */
interface MessageFacts extends CallText {
  /** The item's id in the history: `voicemail:<voicemail_id>` / `sms:<message_id>`. */
  callId: string;
  /** When it arrived (wall-clock ms). */
  startedAt: number;
  /** Unseen until the user opens the history. */
  seen: boolean;
}

/**
 * A voicemail left for one of the user's extensions (docs/wire-protocol.md section 6). `to` is the
 * user's extension; `callerName` is the phone system's name for the caller, else the directory's.
 */
export interface VoicemailEntry extends MessageFacts {
  kind: 'voicemail';
  durationSec: number | null;
}

/** A text message to one of the user's numbers. */
export interface SmsEntry extends MessageFacts {
  kind: 'sms';
  /**
   * The message as inert text: at most 1,600 characters, line breaks kept, control, bidi-override
   * and zero-width characters removed. Shown only as text, never as markup; links stay text.
   */
  text: string;
  /** True when the service sent more than 1,600 characters and `text` is the start. */
  textTruncated: boolean;
}

/** Everything the history lists; each kind has its own row view. */
export type HistoryItem = HistoryEntry | VoicemailEntry | SmsEntry;
export type HistoryKind = HistoryItem['kind'];

/** What came of "Export CSV…": the renderer learns the file's name, never its folder. */
export type ExportResult =
  | { status: 'saved'; fileName: string; count: number }
  | { status: 'cancelled' }
  | { status: 'failed'; message: string };

/** What came of "Choose file…" for the contacts file: the path the user picked, and what is in it. */
export type ContactsFilePick =
  | { status: 'picked'; path: string; contacts: number }
  | { status: 'cancelled' }
  | { status: 'failed'; path: string; message: string };

export interface StatusView {
  state: ConnectionState;
  reason?: string;
  remedy?: string;
  paused: boolean;
  doNotDisturb: boolean;
  missedCount: number;
  demo: boolean;
  /**
   * Present while a trunk of the phone system is not registered: calls from outside may not reach
   * the user. Shown in the tray and above the popup's calls until it recovers.
   */
  trunkWarning?: { trunks: string[]; message: string };
  /**
   * While connected through a proxy that asked for a sign-in: its scheme (Negotiate, NTLM, Basic)
   * and who, when known (`agent7@CORP.EXAMPLE`, `CORP\\agent7`); never a secret.
   */
  proxyAuth?: { scheme: string; user?: string };
  /** The user's own presence as the phone system last said it (30009); absent until known. */
  presence?: { status: string; label: string; doNotDisturb: boolean };
  /** Features off because the key lacks their scope (10003), each with its remedy. */
  featureProblems?: Array<{ feature: string; reason: string; remedy: string }>;
  /**
   * What keeps Screenpop from working fully on this computer (desktop-health.ts: the popup, the
   * notifications, the keychain, the tray, the window system, the sandbox), each with its remedy.
   */
  desktopProblems?: Array<{ id: string; reason: string; remedy: string }>;
  /**
   * Present once an unexpected error was caught by the last resort (the app carried on and rebuilt
   * its connection): how many so far, and when the last one was (wall-clock ms). Details are in the log.
   */
  fault?: { count: number; at: number };
  /**
   * Organisation mode: who is signed in, as the relay says (`user` null until it has said), and
   * whether the user must sign in again (or enrol again) before calls come back.
   */
  organisation?: {
    user: string | null;
    via: 'oidc' | 'device' | null;
    extensions: string[];
    signInNeeded: boolean;
  };
  /**
   * The call log's queue (issue 39), in words: how many calls wait and for how long, a stop that
   * needs the user (with its remedy), the CRM's daily quota pause. Never a number, a note or a call id.
   */
  callLog?: { waiting?: string; problem?: { reason: string; remedy: string }; paused?: string };
}

/** Settings as the renderer sees them: never the secret, only whether the keychain holds one. */
export interface SettingsView {
  settings: Settings;
  hasSecret: boolean;
  /** Whether the keychain holds the CRM lookup's token or password (never the value). */
  hasCrmSecret?: boolean;
  /** Whether the keychain holds the call log's signing secret (generic connector; never the value). */
  hasCrmLogSecret?: boolean;
  /** True until the user has completed onboarding (no base URL / key / extension yet). */
  needsOnboarding: boolean;
  /**
   * Present when an organisation's policy manages this computer: who manages it and which settings
   * it locked (shown read-only, "Locked by <by>"). Saving leaves locked settings as they are.
   */
  managed?: { by: string; locked: Array<keyof Settings> };
  /**
   * Organisation mode: the sign-in this computer keeps for the relay and tenant of the settings
   * (never the credential itself); null when there is none. Absent in API-key mode.
   */
  organisation?: { signedIn: { via: 'oidc' | 'device'; email: string | null } | null };
  /**
   * The notice features each phone system has no event for (src-shared/wire: its dialect's
   * featureCodes), shown as not offered; absent: every feature is offered.
   */
  notOffered?: Partial<Record<PhoneSystem, NoticeFeature[]>>;
}

/** Where "Sign in with your organisation" and "Enrol" sign in: the form's relay and tenant. */
export interface OrgRelayPatch {
  relayUrl: string;
  relayTenant: string;
}

/** What came of Sign in, Enrol or Sign out: the new settings, or what went wrong and what to do. */
export type OrgSignInResult =
  | { ok: true; view: SettingsView }
  | {
      ok: false;
      /** The form's field at fault (the relay address or tenant), when one is. */
      field?: string;
      message: string;
      remedy?: string;
      /** The person cancelled (or started another sign-in): nothing went wrong. */
      cancelled?: boolean;
    };

export interface SettingsPatch {
  settings: Partial<Settings>;
  /** A new API secret to store in the keychain; omitted or undefined keeps the stored one. */
  secret?: string;
  /** A new token (or user:password) for the CRM lookup, for the keychain; omitted keeps it. */
  crmSecret?: string;
  /** A new signing secret for the generic connector's call log, for the keychain; omitted keeps it. */
  crmLogSecret?: string;
}

/** What "Test lookup" found, in plain words for Settings. */
export interface CrmTestResult {
  ok: boolean;
  /** What happened: who the CRM named, that it knows no one by the number, or what failed. */
  message: string;
  /** What to do about a failure. */
  remedy?: string;
  /** What the CRM answered (inert text), when it named someone. */
  found?: { name: string; company: string | null; recordUrl: string | null };
  /** How long the CRM took, ms. */
  ms?: number;
}

/**
 * A refused save names the field and says why as catalogue phrases (the window says them in its
 * language, beside the field); `message` is their English, for logs.
 */
export type SaveResult =
  { ok: true; view: SettingsView } | { ok: false; field: string; words: Words; message: string };

export interface TestConnectionResult {
  ok: boolean;
  /** Plain words: what happened. */
  message: string;
  /** The errcode's remedy, when it failed. */
  remedy?: string;
  errcode?: number;
  /** For 10004: this computer's address as the service sees it, to add to the allowlist. */
  ipToAllow?: string;
  /**
   * How to say `ipToAllow` (`{ip}`) where the phone system keeps its allowlist elsewhere than the
   * admin console's API key (its wire's `ipToAllowMessage`); `settings.test.ip` when absent.
   */
  ipToAllowMessage?: MessageId;
  /** The caller_id_name of the user's extension, when found. */
  extensionName?: string;
  extensionCount?: number;
  /** Set-up checks of the phone system, in plain words (Yeastar: one application per desktop...). */
  checks?: string[];
}

/** The CRM link filled with a sample call, or why it cannot be (phrases, and their English). */
export type CrmPreview = { ok: true; url: string } | { ok: false; words: Words; message: string };
