/**
 * A settings problem said with the field it is about: the field's label in the Settings window
 * (`settings.field.<name>.label`) when it has one, else the setting's name as the file writes it;
 * a list entry (`extensions[2]`) also says which entry. Used where a problem is not shown beside its
 * field: the Settings window's general error, Test connection, the tray.
 */
import { isMessageId } from './catalogue.ts';
import { phrase, type PhraseValue, type Words } from './phrase.ts';

/** The words naming a setting: its label, or its name. */
export function settingLabel(field: string): PhraseValue {
  const name = field.replace(/\[\d+\]$/, '');
  const id = `settings.field.${name}.label`;
  return isMessageId(id) ? [phrase(id)] : name;
}

/** `problem` with the setting it is about: "Your extensions, entry 2: is not an extension …". */
export function withSetting(field: string, problem: Words): Words {
  const entry = /\[(\d+)\]$/.exec(field);
  return entry
    ? [
        phrase('status.settings.entry-problem', {
          field: settingLabel(field),
          number: String(Number(entry[1]) + 1),
          problem,
        }),
      ]
    : [phrase('status.settings.field-problem', { field: settingLabel(field), problem })];
}
