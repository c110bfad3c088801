/**
 * What main said about a refused save (SaveResult: the field and the problem as catalogue phrases),
 * in this window's language: beside its field as a sentence ("Entry 2: …" for a list entry), or,
 * for a setting the form does not show (one from the file or a policy), with the setting's label
 * or name, in the save bar.
 */
import { render, phrase, type Words } from '../../src-shared/i18n/phrase.ts';
import { withSetting } from '../../src-shared/i18n/setting-words.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';

/** The words a refusal of `field` shows; `beside` when the form shows it next to the field. */
export function refusalText(field: string, words: Words, beside: boolean, t: Translator): string {
  if (!beside) return sentence(render(withSetting(field, words), t), t);
  const entry = /\[(\d+)\]$/.exec(field);
  const said = entry
    ? [phrase('settings.error.entry', { number: String(Number(entry[1]) + 1), problem: words })]
    : words;
  return sentence(render(said, t), t);
}

/** The problem words begin in lower case (they follow a name in logs); shown alone, a capital. */
function sentence(text: string, t: Translator): string {
  const first = text.codePointAt(0);
  if (first === undefined) return text;
  const head = String.fromCodePoint(first);
  return head.toLocaleUpperCase(t.intlLocale) + text.slice(head.length);
}
