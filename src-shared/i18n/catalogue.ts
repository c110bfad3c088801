/**
 * Every word Screenpop shows, per language: src-shared/i18n/catalogues/<locale>/<namespace>.json.
 * A namespace is the part of the product the words belong to (one owner each, so translators and
 * developers touch small files): common (outcomes, durations, shared words), popup, history,
 * settings, status (connection status, faults and remedies, Test connection, settings problems,
 * notices: the core's words), desktop (tray, notifications, dialogs) and runner (the headless
 * runner's human-readable lines; its JSON keys stay English).
 *
 * An entry is { "message": ICU MessageFormat text, "description": context for translators (English
 * catalogue), "review": why a native speaker should review it (translations) }. English is the
 * source: its keys are the message ids (`namespace.key`), typed as MessageId, so a t() call with an
 * unknown id does not compile; test/i18n/catalogue.test.ts checks that every catalogue has exactly
 * the English keys with the same arguments, and that every message parses.
 */
import enCommon from './catalogues/en/common.json' with { type: 'json' };
import enPopup from './catalogues/en/popup.json' with { type: 'json' };
import enHistory from './catalogues/en/history.json' with { type: 'json' };
import enSettings from './catalogues/en/settings.json' with { type: 'json' };
import enStatus from './catalogues/en/status.json' with { type: 'json' };
import enDesktop from './catalogues/en/desktop.json' with { type: 'json' };
import enRunner from './catalogues/en/runner.json' with { type: 'json' };
import deCommon from './catalogues/de/common.json' with { type: 'json' };
import dePopup from './catalogues/de/popup.json' with { type: 'json' };
import deHistory from './catalogues/de/history.json' with { type: 'json' };
import deSettings from './catalogues/de/settings.json' with { type: 'json' };
import deStatus from './catalogues/de/status.json' with { type: 'json' };
import deDesktop from './catalogues/de/desktop.json' with { type: 'json' };
import deRunner from './catalogues/de/runner.json' with { type: 'json' };
import frCommon from './catalogues/fr/common.json' with { type: 'json' };
import frPopup from './catalogues/fr/popup.json' with { type: 'json' };
import frHistory from './catalogues/fr/history.json' with { type: 'json' };
import frSettings from './catalogues/fr/settings.json' with { type: 'json' };
import frStatus from './catalogues/fr/status.json' with { type: 'json' };
import frDesktop from './catalogues/fr/desktop.json' with { type: 'json' };
import frRunner from './catalogues/fr/runner.json' with { type: 'json' };
import esCommon from './catalogues/es/common.json' with { type: 'json' };
import esPopup from './catalogues/es/popup.json' with { type: 'json' };
import esHistory from './catalogues/es/history.json' with { type: 'json' };
import esSettings from './catalogues/es/settings.json' with { type: 'json' };
import esStatus from './catalogues/es/status.json' with { type: 'json' };
import esDesktop from './catalogues/es/desktop.json' with { type: 'json' };
import esRunner from './catalogues/es/runner.json' with { type: 'json' };
import arCommon from './catalogues/ar/common.json' with { type: 'json' };
import arPopup from './catalogues/ar/popup.json' with { type: 'json' };
import arHistory from './catalogues/ar/history.json' with { type: 'json' };
import arSettings from './catalogues/ar/settings.json' with { type: 'json' };
import arStatus from './catalogues/ar/status.json' with { type: 'json' };
import arDesktop from './catalogues/ar/desktop.json' with { type: 'json' };
import arRunner from './catalogues/ar/runner.json' with { type: 'json' };

export interface CatalogueEntry {
  message: string;
  /** For translators: where the words appear and what the arguments are (English catalogue). */
  description?: string;
  /** Present when the translation wants a native speaker's review, and why. */
  review?: string;
}

export const NAMESPACES = [
  'common',
  'popup',
  'history',
  'settings',
  'status',
  'desktop',
  'runner',
] as const;
export type Namespace = (typeof NAMESPACES)[number];

const SOURCE = {
  common: enCommon,
  popup: enPopup,
  history: enHistory,
  settings: enSettings,
  status: enStatus,
  desktop: enDesktop,
  runner: enRunner,
};
type Source = typeof SOURCE;

/** Every message id: `<namespace>.<key>` of the English catalogue. */
export type MessageId = { [N in keyof Source]: `${N}.${keyof Source[N] & string}` }[keyof Source];

type Catalogue = Record<Namespace, Record<string, CatalogueEntry>>;

/** The English catalogue: the source of every message id, and every language's fallback. */
export const ENGLISH_CATALOGUE: Catalogue = SOURCE;

/**
 * The catalogues of the shipped languages, by locale and namespace, as written. The translator
 * takes the languages other than English through translations.ts, which the headless runner's
 * build swaps for files read when a language is first asked for.
 */
export const CATALOGUES: Readonly<Record<'en' | 'de' | 'fr' | 'es' | 'ar', Catalogue>> = {
  en: SOURCE,
  de: {
    common: deCommon,
    popup: dePopup,
    history: deHistory,
    settings: deSettings,
    status: deStatus,
    desktop: deDesktop,
    runner: deRunner,
  },
  fr: {
    common: frCommon,
    popup: frPopup,
    history: frHistory,
    settings: frSettings,
    status: frStatus,
    desktop: frDesktop,
    runner: frRunner,
  },
  es: {
    common: esCommon,
    popup: esPopup,
    history: esHistory,
    settings: esSettings,
    status: esStatus,
    desktop: esDesktop,
    runner: esRunner,
  },
  ar: {
    common: arCommon,
    popup: arPopup,
    history: arHistory,
    settings: arSettings,
    status: arStatus,
    desktop: arDesktop,
    runner: arRunner,
  },
};

/** Whether `id` is a message of the catalogue (for ids built from a name, e.g. a field's label). */
export function isMessageId(id: string): id is MessageId {
  const dot = id.indexOf('.');
  const namespace = id.slice(0, dot) as Namespace;
  return (
    dot > 0 &&
    Object.hasOwn(SOURCE, namespace) &&
    Object.hasOwn(SOURCE[namespace], id.slice(dot + 1))
  );
}

/** A catalogue as one map from message id to message text. */
export function flatMessages(catalogue: Catalogue): Map<string, string> {
  const out = new Map<string, string>();
  for (const namespace of NAMESPACES) {
    for (const [key, entry] of Object.entries(catalogue[namespace])) {
      out.set(`${namespace}.${key}`, entry.message);
    }
  }
  return out;
}
