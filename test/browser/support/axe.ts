/**
 * Runs axe-core (the accessibility rules engine) in a page and returns its violations as readable
 * lines. The script is evaluated through the DevTools protocol, which the page's CSP does not
 * govern, so the page under test keeps its production policy.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
let source: Promise<string> | undefined;

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[];
}

export async function axeViolations(page: Page): Promise<string[]> {
  source ??= readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(await source);
  const result = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] })`,
  )) as AxeResult;
  return result.violations.map(
    (v) =>
      `${v.id} (${v.impact ?? 'n/a'}): ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`,
  );
}
