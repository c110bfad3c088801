// ESLint flat config: typescript-eslint's recommended rules for all TypeScript, React-free (the
// renderer relies on the compiler's JSX checks), with Prettier owning formatting.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

const NO_ELECTRON = {
  name: 'electron',
  message: 'The core must not import electron; add an adapter in src-main/electron/.',
};

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'release/', 'test-results/', 'coverage/', '.tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': 'off',
    },
  },
  {
    // The core decides; it must stay free of Electron so it runs under Node and Vitest.
    files: [
      'src-main/core/**/*.ts',
      'src-main/headless/**/*.ts',
      'src-sim/**/*.ts',
      'src-relay/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [NO_ELECTRON],
        },
      ],
    },
  },
  {
    // The core is also free of the simulator: the demo and the tests bring it in from outside
    // (src-sim/demo.ts, started by the composition root and the headless runner).
    files: ['src-main/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [NO_ELECTRON],
          patterns: [
            {
              group: ['**/src-sim', '**/src-sim/**'],
              message:
                'The core must not import the simulator; take what you need as a port (see app/ports.ts DemoService) and wire it in the composition root.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src-renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
  },
  prettier,
);
