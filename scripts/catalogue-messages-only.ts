/**
 * An esbuild plugin for the bundles that ship (the app's main process, the headless runner): the
 * catalogue files keep only their messages. Translators' descriptions and review marks stay in the
 * sources; nothing reads them at run time, and they were a third of each catalogue's bytes.
 */
import type { Plugin } from 'esbuild';
import { readFileSync } from 'node:fs';

/** The catalogue file's text as `{ id: { message } }`. */
export function messagesOfCatalogue(text: string): string {
  const entries = JSON.parse(text) as Record<string, { message: string }>;
  return JSON.stringify(
    Object.fromEntries(Object.entries(entries).map(([id, e]) => [id, { message: e.message }])),
  );
}

export const CATALOGUE_FILES = /[\\/]i18n[\\/]catalogues[\\/].+\.json$/;

export const catalogueMessagesOnly: Plugin = {
  name: 'catalogue-messages-only',
  setup(b) {
    b.onLoad({ filter: CATALOGUE_FILES }, (args) => ({
      contents: messagesOfCatalogue(readFileSync(args.path, 'utf8')),
      loader: 'json',
    }));
  },
};
