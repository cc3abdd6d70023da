// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The layer table of ARCHITECTURE.md, as import bans. Each entry lists the layers a folder must
 * NOT import; `typeOnly` layers may be imported with `import type` only.
 * @type {Record<string, { banned: string[]; typeOnly?: string[]; allow?: string[] }>}
 */
const layers = {
  core: {
    banned: ['daml-lf', 'ledger', 'rules', 'schedule', 'store', 'runtime', 'sandbox', 'cli'],
  },
  // Daml packages: read from bytes (DAR, DALF), signatures and the catalogue. No I/O.
  'daml-lf': { banned: ['ledger', 'rules', 'schedule', 'store', 'runtime', 'sandbox', 'cli'] },
  ledger: { banned: ['daml-lf', 'rules', 'schedule', 'store', 'runtime', 'sandbox', 'cli'] },
  rules: { banned: ['schedule', 'store', 'runtime', 'sandbox', 'cli'], typeOnly: ['ledger'] },
  schedule: { banned: ['daml-lf', 'ledger', 'store', 'runtime', 'sandbox', 'cli'] },
  store: { banned: ['daml-lf', 'ledger', 'rules', 'schedule', 'runtime', 'sandbox', 'cli'] },
  runtime: { banned: ['sandbox', 'cli'] },
  // The sandbox may use the rule language's CEL helpers (src/rules/cel/), nothing else of rules.
  sandbox: {
    banned: ['schedule', 'store', 'runtime', 'cli'],
    typeOnly: ['ledger'],
    allow: ['rules/cel'],
  },
};

const layerBlocks = Object.entries(layers).map(
  ([layer, { banned, typeOnly = [], allow = [] }]) => ({
    files: [`src/${layer}/**/*.ts`],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: banned.map((l) => `**/${l}/**`),
              message: `src/${layer} may not import this layer (see ARCHITECTURE.md, "Layers").`,
            },
            ...(typeOnly.length > 0 || layer === 'sandbox'
              ? [
                  {
                    group: [
                      ...typeOnly.map((l) => `**/${l}/**`),
                      ...(layer === 'sandbox'
                        ? ['**/rules/**', ...allow.flatMap((a) => [`!**/${a}/`, `!**/${a}/**`])]
                        : []),
                    ],
                    allowTypeImports: true,
                    message: `src/${layer} may only use \`import type\` from this layer.`,
                  },
                ]
              : []),
          ],
        },
      ],
    },
  }),
);

/** Syntax banned everywhere; blocks that add selectors must repeat these (a later rule replaces). */
const baseSyntaxBans = [
  { selector: 'TSEnumDeclaration', message: 'Use a string union instead of enum.' },
  { selector: 'TSModuleDeclaration[kind="namespace"]', message: 'No namespaces.' },
  { selector: 'ExportDefaultDeclaration', message: 'Named exports only.' },
];

/**
 * HTTP status and gRPC code checks outside src/ledger: the ledger's errors are classified next
 * to `classify` (src/ledger/classify.ts: isAuthRejection, isTokenRejected, ...), and the ops
 * client names its own checks (isStatus, isNotFound, expectStatus), so no number is compared
 * by hand where it means something.
 */
const statusMessage =
  'Compare HTTP statuses and gRPC codes through a named check: src/ledger/classify.ts for ledger errors, the ops client (isStatus, isNotFound, expectStatus) for ops answers.';
const EQUALITY = 'operator=/^[!=]==?$/';
const statusCheckBans = [
  ...['left', 'right'].map((side) => ({
    selector: `BinaryExpression[${EQUALITY}][${side}.type='MemberExpression'][${side}.property.name='status'][${side === 'left' ? 'right' : 'left'}.raw=/^[0-9]/]`,
    message: statusMessage,
  })),
  ...['left', 'right'].flatMap((side) =>
    [`[${side}.property.name='grpcCodeValue']`, `[${side}.name='grpcCodeValue']`].map((m) => ({
      selector: `BinaryExpression[${EQUALITY}]${m}`,
      message: statusMessage,
    })),
  ),
];

const wireMessage =
  'Participant JSON enters src/ledger only through parseWireJson (src/ledger/wire/parse-wire-json.ts), ' +
  'which drops the nulls Canton writes for absent optionals; see docs/ledger-client.md, "null and missing".';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-typecheck/**',
      'node_modules/**',
      'coverage/**',
      'src/ledger/wire/openapi-3.5.ts',
      'src/daml-lf/generated/**',
      'src/**/generated/*-validator.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'bin/*.js', 'scripts/*.mjs'] },
      },
    },
    rules: {
      'no-restricted-syntax': ['error', ...baseSyntaxBans],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/only-throw-error': 'error',
    },
  },
  // process.*, console and argv belong to src/cli only.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: {
      'no-console': 'error',
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'Only src/cli may touch process.*; inject what you need.' },
      ],
    },
  },
  // The rule language is pure: no clock reads, no timers, no I/O.
  {
    files: ['src/rules/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Rules are pure: take `now` as input.' },
        { object: 'performance', property: 'now', message: 'Rules are pure.' },
      ],
      'no-restricted-globals': [
        'error',
        'process',
        'setTimeout',
        'setInterval',
        'setImmediate',
        'fetch',
      ],
    },
  },
  ...layerBlocks,
  // Wire JSON is `unknown` until the decoder has seen it: no other parse, no body.json() shortcut.
  // The auth providers read token files and OAuth2 answers, which are not Ledger API JSON.
  {
    files: ['src/ledger/**/*.ts'],
    ignores: ['src/ledger/wire/parse-wire-json.ts', 'src/ledger/auth/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'JSON', property: 'parse', message: wireMessage },
      ],
      'no-restricted-syntax': [
        'error',
        ...baseSyntaxBans,
        {
          selector: "CallExpression[callee.type='MemberExpression'][callee.property.name='json']",
          message: wireMessage,
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/ledger/**'],
    rules: { 'no-restricted-syntax': ['error', ...baseSyntaxBans, ...statusCheckBans] },
  },
  {
    files: ['src/rules/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            'fs',
            'node:fs',
            'node:fs/promises',
            'node:net',
            'node:http',
            'node:timers',
            'undici',
            'ws',
          ].map((name) => ({ name, message: 'Rules are pure: no I/O.' })),
          patterns: [
            {
              group: layers.rules.banned.map((l) => `**/${l}/**`),
              message: 'src/rules may not import this layer (see ARCHITECTURE.md, "Layers").',
            },
            {
              group: ['**/ledger/**'],
              allowTypeImports: true,
              message: 'src/rules may only use `import type` from src/ledger.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: globals.node,
    },
  },
  // The console page (console/) builds its DOM from text only: nothing may parse HTML, so a
  // ledger value can never become markup (docs/console.md, "Security").
  {
    files: ['console/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...baseSyntaxBans,
        {
          selector: 'MemberExpression[property.name=/^(innerHTML|outerHTML|srcdoc)$/]',
          message: 'Build DOM with h() and text (console/src/dom.ts), never from HTML.',
        },
        {
          selector:
            'CallExpression[callee.property.name=/^(insertAdjacentHTML|write|writeln|createContextualFragment|setHTMLUnsafe|parseFromString)$/]',
          message: 'Build DOM with h() and text (console/src/dom.ts), never from HTML.',
        },
        {
          selector: "CallExpression[callee.name='eval'], NewExpression[callee.name='Function']",
          message: 'No code from strings (the CSP forbids it too).',
        },
      ],
    },
  },
  {
    files: ['eslint.config.js', 'vitest.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  prettier,
);
