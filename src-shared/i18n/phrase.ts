/**
 * Words decided in the core, said later in whatever language is in force: a Phrase is a message
 * id and its values (a value may itself be phrases, for a sentence that quotes another). Sources
 * and services that run without knowing the user's language (the event sources, the token manager)
 * describe a status as phrases; the edge that shows it (the app's status view, the tray, the
 * runner's human lines) renders them with its translator. Logs, diagnostics and the runner's JSON
 * keep the English rendering, the same words support reads today.
 */
import type { MessageId } from './catalogue.ts';
import { PLAIN_ENGLISH } from './locale-state.ts';
import type { Translator } from './translator.ts';

export type PhraseValue = string | number | Words;
export interface Phrase {
  id: MessageId;
  values?: Readonly<Record<string, PhraseValue>>;
}
/** Sentences, said one after the other. */
export type Words = readonly Phrase[];

/** A phrase (the values of the catalogue's message `id`). */
export function phrase(id: MessageId, values?: Readonly<Record<string, PhraseValue>>): Phrase {
  return values && Object.keys(values).length > 0 ? { id, values } : { id };
}

/** The words in `t`'s language, sentences joined by a space. */
export function render(words: Words, t: Translator): string {
  return words
    .map(({ id, values }) => {
      if (!values) return t.t(id);
      const flat: Record<string, string | number> = {};
      for (const [key, value] of Object.entries(values))
        flat[key] = typeof value === 'object' ? render(value, t) : value;
      return t.t(id, flat);
    })
    .join(' ');
}

/** The words in English (logs, JSON, the text fields kept for programs). */
export function english(words: Words): string {
  return render(words, PLAIN_ENGLISH.current());
}
