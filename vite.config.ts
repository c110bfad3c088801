// The renderer build: four pages (popup, settings with onboarding, history, the dial box) from src-renderer/
// into dist/renderer/, loaded by Electron from app://screenpop/ (relative paths, hence base './').
// Every page carries a strict CSP meta tag, so the output must contain no inline script or style:
// the modulepreload polyfill (an inline-capable helper Electron does not need) is off and assets
// are never inlined.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { contentSecurityPolicy } from './src-shared/ui/content-security-policy.ts';
import { CATALOGUE_FILES, messagesOfCatalogue } from './scripts/catalogue-messages-only.ts';

const root = fileURLToPath(new URL('./src-renderer/', import.meta.url));

/**
 * Writes the CSP meta tag into every page from the one policy main also sends as a header, first
 * in <head> so it holds before anything else loads. Under the dev server the policy lets the page
 * reach that server (hot reload); the build gets connect-src 'none'.
 */
function cspMetaTag(): Plugin {
  return {
    name: 'screenpop-csp-meta',
    transformIndexHtml: {
      order: 'pre',
      handler(_html, ctx) {
        const devUrl = ctx.server?.resolvedUrls?.local[0];
        const devOrigin = devUrl ? new URL(devUrl).origin : null;
        return [
          {
            tag: 'meta',
            attrs: {
              'http-equiv': 'Content-Security-Policy',
              content: contentSecurityPolicy(devOrigin, 'meta'),
            },
            injectTo: 'head-prepend',
          },
        ];
      },
    },
  };
}

/**
 * The windows' catalogues keep only their messages, as the main bundle's do
 * (scripts/catalogue-messages-only.ts): translators' notes are not read at run time.
 */
function catalogueMessages(): Plugin {
  return {
    name: 'screenpop-catalogue-messages',
    enforce: 'pre',
    load(id) {
      const file = id.split('?')[0] ?? id;
      return CATALOGUE_FILES.test(file) ? messagesOfCatalogue(readFileSync(file, 'utf8')) : null;
    },
  };
}

export default defineConfig({
  root,
  base: './',
  plugins: [cspMetaTag(), catalogueMessages(), react()],
  build: {
    outDir: fileURLToPath(new URL('./dist/renderer/', import.meta.url)),
    emptyOutDir: true,
    target: 'chrome140',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    rolldownOptions: {
      input: {
        popup: `${root}popup.html`,
        settings: `${root}settings.html`,
        history: `${root}history.html`,
        dial: `${root}dial.html`,
      },
      // Chunks named for what they hold: React, and the renderer's shared code and theme.
      output: {
        codeSplitting: {
          groups: [
            { name: 'react', test: /node_modules[\\/]/ },
            { name: 'shared', test: /src-renderer[\\/]shared[\\/]/ },
          ],
        },
      },
    },
  },
});
