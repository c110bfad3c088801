// ESLint flat config: typescript-eslint's recommended rules for all TypeScript, React's rules of
// hooks for the renderer (it relies on the compiler for the rest of JSX), Prettier owning formatting.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';

/**
 * Electron at the edge: only src-main/electron/ (the composition root, windows, IPC handlers,
 * preload) imports it; everything else runs under Node and Vitest without it. Every block below
 * that sets no-restricted-imports repeats these two (a later block replaces the rule's options).
 */
const NO_ELECTRON = {
  name: 'electron',
  message:
    'The core must not import electron: only src-main/electron/ does; add an adapter there and take it as a dependency.',
};
const NO_ELECTRON_PATHS = {
  group: ['electron/*'],
  message:
    'The core must not import electron: only src-main/electron/ does; add an adapter there and take it as a dependency.',
};

/** An import pattern for a top-level source folder, from anywhere below the repository's root. */
const folder = (name) => [`**/${name}`, `**/${name}/**`];

/**
 * Product code (src-*) imports neither the tests nor the rigs they share with the benchmarks
 * (rigs/README.md): nothing shipped serves only tests. Every src-* block below repeats it.
 */
const NO_TEST_CODE = {
  group: [...folder('rigs'), ...folder('test')],
  message:
    'Product code does not import rigs/ or test/: a helper only tests use lives in rigs/ (rigs/README.md).',
};

/**
 * Every connection of the app goes through the one transport (src-shared/net/transport.ts:
 * proxy, CA file); the services take its `fetch` and `createSocket` in their constructors. Only
 * net/ may open a socket or a request itself. The relay's requests go through it too.
 */
const NO_WS = {
  name: 'ws',
  message:
    'Sockets go through the transport: take a CreateSocket (NetTransport.createSocket) in the constructor.',
};
/** What the core may not import besides electron (see the core's block below). */
const CORE_PATTERNS = [
  NO_ELECTRON_PATHS,
  NO_TEST_CODE,
  {
    group: folder('src-sim'),
    message:
      'The core must not import the simulator; take what you need as a port (see app/ports.ts DemoService) and wire it in the composition root.',
  },
  {
    group: ['**/ipc/*'],
    message:
      'The core must not import the IPC contract; the shapes of the UI data are core/ports/views.ts, which the contract re-exports.',
  },
];

const TRANSPORT_FILES = ['src-main/core/net/**/*.ts'];
const NO_DIRECT_NETWORK = {
  'no-restricted-globals': [
    'error',
    {
      name: 'fetch',
      message:
        'Requests go through the transport: take a fetch (NetTransport.fetch) in the constructor.',
    },
    {
      name: 'WebSocket',
      message:
        'Sockets go through the transport: take a CreateSocket (NetTransport.createSocket) in the constructor.',
    },
  ],
  'no-restricted-properties': [
    'error',
    {
      object: 'globalThis',
      property: 'fetch',
      message:
        'Requests go through the transport: take a fetch (NetTransport.fetch) in the constructor.',
    },
  ],
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'dist-headless/',
      'dist-relay/',
      'release/',
      'test-results/',
      'coverage/',
      '.tmp/',
    ],
  },
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
    // Electron only in src-main/electron/ (see NO_ELECTRON); the blocks below narrow further.
    files: ['src-*/**/*.{ts,tsx}', 'bench/**/*.ts', 'assets/**/*.ts'],
    ignores: ['src-main/electron/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [NO_ELECTRON], patterns: [NO_ELECTRON_PATHS, NO_TEST_CODE] },
      ],
    },
  },
  {
    // The composition root imports electron, but no more than the rest of the product the tests.
    files: ['src-main/electron/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [NO_TEST_CODE] }],
    },
  },
  {
    // Benchmarks, scripts and the rigs they share with the tests (rigs/README.md) import no test
    // file: what both need lives in rigs/.
    files: ['bench/**/*.ts', 'scripts/**/*.ts', 'rigs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [NO_ELECTRON],
          patterns: [
            NO_ELECTRON_PATHS,
            {
              group: folder('test'),
              message:
                'Benchmarks, scripts and rigs do not import test/: move what both need to rigs/ (rigs/README.md).',
            },
          ],
        },
      ],
    },
  },
  {
    // The core decides; it must stay free of Electron so it runs under Node and Vitest.
    files: ['src-main/core/**/*.ts', 'src-main/headless/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [NO_ELECTRON, NO_WS],
          patterns: [NO_ELECTRON_PATHS, NO_TEST_CODE],
        },
      ],
    },
  },
  {
    // No way out of the app but the transport (net/): see NO_WS and NO_DIRECT_NETWORK.
    files: ['src-main/**/*.ts'],
    ignores: TRANSPORT_FILES,
    rules: NO_DIRECT_NETWORK,
  },
  {
    // The relay's connections out go through the same transport (src-relay/outbound.ts: the
    // environment's proxy, the config's CA file). It serves its own WebSockets with `ws`, so that
    // import stays allowed; Node's global fetch and WebSocket are not.
    files: ['src-relay/**/*.ts'],
    rules: NO_DIRECT_NETWORK,
  },
  {
    // The core is also free of the simulator: the demo and the tests bring it in from outside
    // (src-sim/demo.ts, started by the composition root and the headless runner). And of the IPC
    // contract: the shapes of the UI's data are the core's (app/views.ts), the contract carries them.
    files: ['src-main/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [NO_ELECTRON, NO_WS],
          patterns: CORE_PATTERNS,
        },
      ],
    },
  },
  {
    // The transport itself is where sockets and requests are made.
    files: TRANSPORT_FILES,
    rules: {
      'no-restricted-imports': ['error', { paths: [NO_ELECTRON], patterns: CORE_PATTERNS }],
    },
  },
  {
    // The relay and the simulator are the far sides of the app's wires: they share with it only
    // what src-shared/ holds, never the app's own code.
    files: ['src-sim/**/*.ts', 'src-relay/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [NO_ELECTRON],
          patterns: [
            NO_ELECTRON_PATHS,
            NO_TEST_CODE,
            {
              group: folder('src-main'),
              message:
                'The relay and the simulator must not import the app (src-main/); move what both need to src-shared/.',
            },
          ],
        },
      ],
    },
  },
  {
    // What the app, the relay and the simulator share depends on none of them (src-shared/README.md).
    files: ['src-shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [NO_ELECTRON],
          patterns: [
            NO_ELECTRON_PATHS,
            NO_TEST_CODE,
            {
              group: [...folder('src-main'), ...folder('src-relay'), ...folder('src-sim')],
              message:
                'src-shared/ imports nothing from src-main/, src-relay/ or src-sim/: it is what they share.',
            },
          ],
        },
      ],
    },
  },
  {
    // A caught error is logged under one key, `error`, as the Error itself: the log's own
    // serialisation (src-shared/process/log.ts) keeps its code, cause chain and stack, each scrubbed.
    files: ['src-*/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'CallExpression[callee.property.name=/^(debug|info|warn|error|write)$/] > ObjectExpression > Property[key.name="err"]',
          message: 'Log a caught error as { error } (the Error itself), not under `err`.',
        },
        {
          selector:
            'CallExpression[callee.property.name=/^(debug|info|warn|error|write)$/] > ObjectExpression > Property[key.name="error"] > MemberExpression[property.name="message"], CallExpression[callee.property.name=/^(debug|info|warn|error|write)$/] > ObjectExpression > Property[key.name="error"] > ConditionalExpression > MemberExpression[property.name="message"]',
          message:
            'Log the Error itself ({ error }), not its message: the log keeps its code, cause and stack, scrubbed.',
        },
      ],
    },
  },
  {
    files: ['src-renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      // The renderer compiles against main's types (the IPC contract, the settings' shapes) but
      // runs none of main's code: a pure helper both sides need lives in src-shared/.
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [NO_ELECTRON],
          patterns: [
            NO_ELECTRON_PATHS,
            NO_TEST_CODE,
            {
              group: folder('src-main'),
              allowTypeImports: true,
              message:
                'The renderer imports only types from src-main/ (import type); move a pure helper it needs to src-shared/.',
            },
          ],
        },
      ],
    },
  },
  {
    // React's rules of hooks (called unconditionally, at the top of components and hooks) and
    // complete effect dependencies: a stale closure in an effect is a bug the compiler cannot see.
    files: ['src-renderer/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    // Every word a window shows comes from the catalogue (src-shared/i18n): no letters written as
    // JSX text or in a text-bearing attribute; the pseudo-locale browser test catches the rest
    // (words built in plain TypeScript).
    files: ['src-renderer/**/*.tsx'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'JSXText[value=/[A-Za-z]/]',
          message: 'Words shown to the user come from the catalogue: use t() (src-shared/i18n).',
        },
        {
          selector:
            'JSXAttribute[name.name=/^(aria-label|aria-description|aria-roledescription|title|placeholder|alt|label)$/] > Literal[value=/[A-Za-z]/]',
          message: 'Words shown to the user come from the catalogue: use t() (src-shared/i18n).',
        },
      ],
    },
  },
  prettier,
);
