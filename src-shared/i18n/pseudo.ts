/**
 * The pseudo-locale (en-XA): every English message with its letters accented and 40 % more
 * characters, inside [brackets]. Text that shows plain ASCII letters in a pseudo-locale screen was
 * not looked up in the catalogue; text cut at either bracket was clipped. Arguments, plural and
 * select keys, `#` and tags are left as they are: only the literal words change.
 */
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';

const ACCENTED: Readonly<Record<string, string>> = Object.fromEntries(
  [
    ...'aàbƀcçdđeéfƒgĝhĥiîjĵkķlĺmɱnñoöpþqǫrŕsštţuûvṽwŵxẋyýzž',
    ...'AÅBƁCÇDĐEÉFƑGĜHĤIÎJĴKĶLĹMṀNÑOÖPÞQǪRŔSŠTŢUÛVṼWŴXẊYÝZŽ',
  ]
    .join('')
    .match(/../gu)!
    .map((pair) => [...pair] as [string, string]),
);

/** The filler that makes a message 40 % longer: words of up to five dots, so lines can break. */
function filler(length: number): string {
  const count = Math.ceil(length * 0.4);
  let out = '';
  for (let i = 0; i < count; i++) out += i % 6 === 5 ? ' ' : '·';
  return out;
}

/** Accents every ASCII letter of a text (formatted dates and numbers too, in pseudo screens). */
export function accent(text: string): string {
  let out = '';
  for (const ch of text) out += ACCENTED[ch] ?? ch;
  return out;
}

function literalLength(elements: MessageFormatElement[]): number {
  let n = 0;
  for (const el of elements) {
    if (el.type === TYPE.literal) n += el.value.length;
    else if (el.type === TYPE.tag) n += literalLength(el.children);
    else if (el.type === TYPE.plural || el.type === TYPE.select) {
      const first = Object.values(el.options)[0];
      if (first) n += literalLength(first.value);
    }
  }
  return n;
}

function transform(elements: MessageFormatElement[]): MessageFormatElement[] {
  return elements.map((el): MessageFormatElement => {
    if (el.type === TYPE.literal) return { ...el, value: accent(el.value) };
    if (el.type === TYPE.tag) return { ...el, children: transform(el.children) };
    if (el.type === TYPE.plural || el.type === TYPE.select) {
      const options = Object.fromEntries(
        Object.entries(el.options).map(([key, option]) => [
          key,
          { ...option, value: transform(option.value) },
        ]),
      );
      return { ...el, options } as MessageFormatElement;
    }
    return el;
  });
}

/** The pseudo-locale form of an ICU message, as a parsed message (what createIntl accepts). */
export function pseudoMessage(message: string): MessageFormatElement[] {
  const ast = parse(message, { ignoreTag: true });
  const pad = filler(literalLength(ast));
  return [
    { type: TYPE.literal, value: '[' },
    ...transform(ast),
    { type: TYPE.literal, value: pad ? ` ${pad}]` : ']' },
  ];
}
