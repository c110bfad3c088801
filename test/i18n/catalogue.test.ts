/**
 * The catalogue check: every language has exactly the English keys, every message parses as ICU
 * MessageFormat and uses the same arguments (and plural/select arguments as the same kind) as the
 * English one, so a translation can neither lose a value nor ask for one that is never given; and
 * every English key is used by the code (a key nobody shows is a translation nobody needs).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { CATALOGUES, flatMessages, NAMESPACES } from '../../src-shared/i18n/catalogue.ts';
import { LOCALES } from '../../src-shared/i18n/locales.ts';

const root = join(import.meta.dirname, '..', '..');
const english = flatMessages(CATALOGUES.en);

/** Argument name -> its kind ('argument', 'plural', 'select', 'number', ...), over the whole tree. */
function argumentsOf(elements: MessageFormatElement[], out = new Map<string, string>()) {
  for (const el of elements) {
    if (el.type === TYPE.literal || el.type === TYPE.pound) continue;
    if (el.type === TYPE.tag) {
      out.set(`<${el.value}>`, 'tag');
      argumentsOf(el.children, out);
      continue;
    }
    // {n}, {n, number} and {n, plural, ...} all take a value (a language may need a plural where
    // English does not: "2 verpasst" / "2 manqués"); select, date and time take other things.
    const kind =
      el.type === TYPE.argument || el.type === TYPE.number || el.type === TYPE.plural
        ? 'value'
        : TYPE[el.type];
    out.set(el.value, kind);
    if (el.type === TYPE.plural || el.type === TYPE.select) {
      for (const option of Object.values(el.options)) argumentsOf(option.value, out);
    }
  }
  return out;
}

describe('catalogues', () => {
  it('English has words, and every entry has a message', () => {
    expect(english.size).toBeGreaterThan(0);
    for (const locale of LOCALES) {
      for (const namespace of NAMESPACES) {
        for (const [key, entry] of Object.entries(CATALOGUES[locale][namespace])) {
          expect(typeof entry.message, `${locale} ${namespace}.${key}`).toBe('string');
          expect(entry.message.trim(), `${locale} ${namespace}.${key}`).not.toBe('');
        }
      }
    }
  });

  for (const locale of LOCALES.filter((l) => l !== 'en')) {
    it(`${locale} has exactly the English keys`, () => {
      const messages = flatMessages(CATALOGUES[locale]);
      const missing = [...english.keys()].filter((id) => !messages.has(id));
      const extra = [...messages.keys()].filter((id) => !english.has(id));
      expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    });

    it(`${locale} messages parse and take the English arguments`, () => {
      const problems: string[] = [];
      for (const [id, message] of flatMessages(CATALOGUES[locale])) {
        const source = english.get(id);
        if (source === undefined) continue;
        try {
          const want = Object.fromEntries(argumentsOf(parse(source, { ignoreTag: true })));
          const got = Object.fromEntries(argumentsOf(parse(message, { ignoreTag: true })));
          if (
            JSON.stringify(Object.entries(want).sort()) !==
            JSON.stringify(Object.entries(got).sort())
          )
            problems.push(`${id}: ${JSON.stringify(got)} instead of ${JSON.stringify(want)}`);
        } catch (error) {
          problems.push(`${id}: ${(error as Error).message}`);
        }
      }
      expect(problems).toEqual([]);
    });
  }

  // Issue 21: the proxy field's help sent agents to "(see README, For administrators)": a file they
  // never see, its title left English in every language and broken by bidi in Arabic. The words
  // on the screens say what to do; the runner's help (for administrators at a terminal) may name
  // its README.
  it('no message on a screen sends the user to the README', () => {
    const pointing: string[] = [];
    for (const locale of LOCALES) {
      for (const namespace of NAMESPACES.filter((n) => n !== 'runner')) {
        for (const [key, entry] of Object.entries(CATALOGUES[locale][namespace])) {
          if (/README|For administrators/i.test(entry.message))
            pointing.push(`${locale} ${namespace}.${key}`);
        }
      }
    }
    expect(pointing).toEqual([]);
  });

  it('every English message parses', () => {
    const broken = [...english].filter(([, message]) => {
      try {
        parse(message, { ignoreTag: true });
        return false;
      } catch {
        return true;
      }
    });
    expect(broken).toEqual([]);
  });

  it('every English key is used by the code', () => {
    const sources: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (/\.tsx?$/.test(name)) sources.push(readFileSync(path, 'utf8'));
      }
    };
    for (const dir of ['src-main', 'src-renderer', 'src-shared', 'src-sim']) walk(join(root, dir));
    const code = sources.join('\n');
    // An id is used when it is written out ('popup.dismiss'), or built by a template literal
    // whose fixed parts match it (`settings.section.${id}.title`).
    const templates = [...code.matchAll(/`([^`]*\$\{[^`]*)`/g)].map(
      (m) =>
        new RegExp(
          `^${(m[1] ?? '')
            .split(/\$\{[^}]*\}/)
            .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
            .join('[\\w-]+')}$`,
        ),
    );
    const unused = [...english.keys()].filter((id) => {
      if (code.includes(`'${id}'`) || code.includes(`"${id}"`) || code.includes(`\`${id}\``))
        return false;
      return !templates.some((pattern) => pattern.test(id));
    });
    expect(unused).toEqual([]);
  });
});
