// The renderer build: three pages (popup, settings with onboarding, history) from src-renderer/
// into dist/renderer/, loaded by Electron from file:// (hence base './'). Every page carries a
// strict CSP meta tag, so the output must contain no inline script or style: the modulepreload
// polyfill (an inline-capable helper Electron does not need) is off and assets are never inlined.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('./src-renderer/', import.meta.url));

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
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
