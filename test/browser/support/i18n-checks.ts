/**
 * What the localization matrix looks for in a rendered page (test/browser/i18n.test.ts):
 *
 * - Untranslated text. In the pseudo-locale every catalogue word is accented, so a plain ASCII
 *   letter on screen is a word that skipped the catalogue, unless it is data: text inside a bidi
 *   isolate (U+2068...U+2069, how t() wraps every value), untrusted text shown by InertText
 *   (<bdi>), a number (`.number`), what the user typed (input values), data marked
 *   `translate="no"` (settings inputs and their example placeholders), or text in another
 *   language on purpose (an element whose `lang` differs from the page's: the language names).
 *   In a real language, a text that is exactly an English catalogue message whose translation
 *   differs is untranslated.
 * - Clipping: text cut by its own box or an ancestor that hides overflow, text ending in an
 *   ellipsis, or anything pushed outside the window sideways (a mirrored layout gone wrong).
 *   Untrusted text may be ellipsized by design (InertText keeps the whole value in its title).
 *
 * Both run inside the page and return readable lines.
 */
import type { Page } from 'playwright-core';

// The slice of the DOM the in-page functions use (this file compiles without the DOM library).
interface Rect {
  left: number;
  right: number;
  bottom: number;
  width: number;
  height: number;
}
interface NodeLike {
  nodeType: number;
  textContent: string | null;
  parentElement: El | null;
}
interface El extends NodeLike {
  tagName: string;
  className: unknown;
  classList: { contains(name: string): boolean };
  childNodes: ArrayLike<NodeLike>;
  getAttribute(name: string): string | null;
  closest(selector: string): El | null;
  querySelectorAll(selector: string): ArrayLike<El>;
  getBoundingClientRect(): Rect;
  scrollWidth: number;
  clientWidth: number;
  scrollHeight: number;
  clientHeight: number;
}
interface Style {
  visibility: string;
  display: string;
  position: string;
  overflowX: string;
  overflowY: string;
  textOverflow: string;
}
interface PageGlobal {
  document: {
    documentElement: El & { lang: string; clientWidth: number };
    body: El;
    title: string;
    createTreeWalker(root: El, what: number): { nextNode(): NodeLike | null };
  };
  getComputedStyle(el: El): Style;
}

export interface ShownText {
  /** Where: a short CSS path of the element. */
  where: string;
  /** The text (or attribute value), with isolated values already removed. */
  text: string;
}

/** Visible text nodes and text-bearing attributes that are the page's own words (not data). */
export async function shownWords(page: Page): Promise<ShownText[]> {
  return page.evaluate(() => {
    const win = globalThis as unknown as PageGlobal;
    const doc = win.document;
    const pageLang = doc.documentElement.lang;
    const out: { where: string; text: string }[] = [];
    const pathOf = (el: El): string => {
      const parts: string[] = [];
      for (let e: El | null = el; e && e !== doc.body && parts.length < 4; e = e.parentElement) {
        const id = e.getAttribute('data-testid');
        parts.unshift(
          id
            ? `[data-testid=${id}]`
            : e.tagName.toLowerCase() +
                (e.className && typeof e.className === 'string'
                  ? `.${e.className.trim().split(/\s+/)[0]}`
                  : ''),
        );
      }
      return parts.join(' > ');
    };
    const isData = (el: El | null): boolean => {
      for (let e = el; e; e = e.parentElement) {
        if (
          e.tagName === 'BDI' ||
          e.classList.contains('number') ||
          e.classList.contains('inert-text') ||
          e.getAttribute('translate') === 'no'
        )
          return true;
        const lang = e.getAttribute('lang');
        if (lang && e !== doc.documentElement && lang !== pageLang) return true;
      }
      return false;
    };
    const visible = (el: El): boolean => {
      const style = win.getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none') return false;
      const rect = el.getBoundingClientRect();
      // Screen-reader-only text (clipped to 1px on purpose) is still words: keep it.
      return rect.width > 0 || rect.height > 0 || style.position === 'absolute';
    };
    // Remove isolated values (t() wraps each in U+2068 ... U+2069), innermost first.
    const withoutValues = (text: string): string => {
      let t = text;
      for (let i = 0; i < 5; i++) t = t.replace(/\u2068[^\u2068\u2069]*\u2069/g, '');
      return t;
    };
    const walker = doc.createTreeWalker(doc.body, 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || ['SCRIPT', 'STYLE', 'TEXTAREA'].includes(parent.tagName)) continue;
      if (isData(parent) || !visible(parent)) continue;
      const text = withoutValues(node.textContent ?? '').trim();
      if (text) out.push({ where: pathOf(parent), text });
    }
    for (const el of Array.from(doc.body.querySelectorAll('*'))) {
      if (isData(el)) continue;
      for (const name of ['aria-label', 'aria-description', 'title', 'placeholder', 'alt']) {
        const value = el.getAttribute(name);
        if (value && name === 'title' && el.closest('bdi, .inert-text')) continue;
        if (value) out.push({ where: `${pathOf(el)}@${name}`, text: withoutValues(value).trim() });
      }
    }
    out.push({ where: 'document.title', text: withoutValues(doc.title).trim() });
    return out.filter((o) => o.text !== '');
  });
}

/** Pseudo-locale: page words that still have plain ASCII letters (skipped the catalogue). */
export async function unaccented(page: Page): Promise<string[]> {
  return (await shownWords(page))
    .filter((w) => /[A-Za-z]/.test(w.text))
    .map((w) => `${w.where}: "${w.text}"`);
}

/** A real language: page words that are an English message whose translation differs. */
export async function englishLeftovers(
  page: Page,
  english: ReadonlyMap<string, string>,
  translated: ReadonlyMap<string, string>,
): Promise<string[]> {
  // Only messages without arguments can be matched whole; those with arguments are covered by
  // the pseudo-locale run.
  // (A word the language writes the same way elsewhere, "SMS", is not a leftover.)
  const own = new Set([...translated.values()].map((text) => text.trim()));
  const untranslated = new Set<string>();
  for (const [id, text] of english) {
    if (text.includes('{')) continue;
    if (translated.get(id) !== text && !own.has(text.trim())) untranslated.add(text.trim());
  }
  return (await shownWords(page))
    .filter((w) => untranslated.has(w.text))
    .map((w) => `${w.where}: "${w.text}"`);
}

/** Text that is cut: by its box, an ancestor hiding overflow, an ellipsis, or the window's edge. */
export async function clippedText(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const win = globalThis as unknown as PageGlobal;
    const doc = win.document;
    const found: string[] = [];
    const isData = (el: El): boolean => el.closest('bdi, .inert-text') !== null;
    const hides = (style: Style): boolean =>
      ['hidden', 'clip'].includes(style.overflowX) || ['hidden', 'clip'].includes(style.overflowY);
    const describe = (el: El): string =>
      `${el.tagName.toLowerCase()}${el.getAttribute('data-testid') ? `[data-testid=${el.getAttribute('data-testid')}]` : el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/)[0]}` : ''} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
    const width = doc.documentElement.clientWidth;
    for (const el of Array.from(doc.body.querySelectorAll('*'))) {
      const hasText = Array.from(el.childNodes).some(
        (n) => n.nodeType === 3 && (n.textContent ?? '').trim() !== '',
      );
      if (!hasText || isData(el)) continue;
      const style = win.getComputedStyle(el);
      if (style.display === 'none' || style.visibility === 'hidden') continue;
      const rect = el.getBoundingClientRect();
      if (rect.width === 0 && rect.height === 0) continue;
      // Screen-reader-only text is clipped on purpose (1 x 1 px, position absolute).
      if (style.position === 'absolute' && rect.width <= 1 && rect.height <= 1) continue;
      if (
        el.scrollWidth > el.clientWidth + 1 &&
        (hides(style) || style.textOverflow === 'ellipsis')
      )
        found.push(`${describe(el)}: ${el.scrollWidth}px of text in ${el.clientWidth}px`);
      if (el.scrollHeight > el.clientHeight + 1 && hides(style))
        found.push(`${describe(el)}: ${el.scrollHeight}px high in ${el.clientHeight}px`);
      // A row that scrolls sideways on purpose (the settings' section links at 400 px) shows
      // what is beyond the window when scrolled: only the row itself must stay inside it.
      const scroller = (() => {
        for (let a = el.parentElement; a; a = a.parentElement)
          if (['auto', 'scroll'].includes(win.getComputedStyle(a).overflowX)) return a;
        return null;
      })();
      const inside = (r: { left: number; right: number }) => r.right <= width + 1 && r.left >= -1;
      if (!inside(rect) && !(scroller && inside(scroller.getBoundingClientRect())))
        found.push(
          `${describe(el)}: outside the window (${Math.round(rect.left)}..${Math.round(rect.right)} of ${width}px)`,
        );
      for (let a = el.parentElement; a && a !== doc.body; a = a.parentElement) {
        const aStyle = win.getComputedStyle(a);
        if (!hides(aStyle)) continue;
        const box = a.getBoundingClientRect();
        if (rect.right > box.right + 1 || rect.left < box.left - 1 || rect.bottom > box.bottom + 1)
          found.push(`${describe(el)}: cut by ${describe(a).split(' ')[0]}`);
        break;
      }
    }
    return found;
  });
}
