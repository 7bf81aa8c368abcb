// Lint for intent: typescript-eslint's recommended rules, type-only and sorted imports, no console in the service,
// and the folder layering of src/ (README, "Design notes").
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

/**
 * The folders (and top-level modules) of src/, bottom-up. A module may import its own folder and
 * any folder of a lower layer, never one of its own layer or above: no folder cycle can form.
 */
const LAYERS = [
  ['config', 'errors', 'json-pointer', 'version', 'background-job', 'fair-queue', 'in-flight'],
  ['grouped-calls'], // takes its groups from a fair-queue
  ['telemetry'],
  ['db', 'auth'],
  ['http'],
  ['audit', 'retention'],
  ['tools'], // its lexical index, src/tools/lexical/, sits inside: see `lexicalIndex` below
  ['embedding', 'authorize', 'settings', 'mcp-client', 'catalog'],
  ['discovery', 'learning', 'upstreams'],
  ['metrics', 'mcp', 'ui', 'bootstrap', 'services'],
  ['app'],
  ['server', 'eval'],
  ['cli'],
];
const MODULES = new Set(['config', 'errors', 'json-pointer', 'version', 'background-job', 'grouped-calls', 'fair-queue', 'in-flight', 'app', 'bootstrap', 'services', 'server']);
// Files, not elements: a top-level module is one file, and element patterns match folders only.
const category = (name) => (MODULES.has(name) ? `src/${name}.ts` : `src/${name}/**`);
const layering = {
  files: ['src/**/*.ts'],
  plugins: { boundaries },
  settings: {
    'import/resolver': { typescript: { project: './tsconfig.json' } },
    'boundaries/files': LAYERS.flat().map((name) => ({ category: name, pattern: category(name) })),
  },
  rules: {
    'boundaries/dependencies': [
      'error',
      {
        default: 'disallow',
        policies: LAYERS.flatMap((layer, i) =>
          layer.map((name) => ({
            from: { file: { categories: name } },
            allow: { to: { file: { categories: { anyOf: [name, ...LAYERS.slice(0, i).flat()] } } } },
          })),
        ),
      },
    ],
  },
};

/**
 * The lexical index (src/tools/lexical/: search texts, postings, the lexical leg, term counts, the
 * BM25F reference) is a layer inside tools: publishing (tools/service.ts) writes it and discovery
 * reads it, and of its own folder's neighbours it imports only the tool's model and the access rule
 * (which its posting and retrieval predicates use). The rest of tools may import it, never the
 * reverse, so tools and its index form no cycle.
 */
const LEXICAL_MAY_IMPORT = ['access', 'model'];
const lexicalIndex = {
  files: ['src/tools/lexical/**/*.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^\\.\\./(?!(?:${LEXICAL_MAY_IMPORT.join('|')})\\.js$)[^/]+\\.js$`,
            message: `the lexical index imports only ${LEXICAL_MAY_IMPORT.map((name) => `tools/${name}.ts`).join(' and ')} from tools (eslint.config.mjs, lexicalIndex)`,
          },
        ],
      },
    ],
  },
};

export default tseslint.config(
  { ignores: ['node_modules/', 'clients/typescript/dist/', 'bench-results/', 'eval-results/', 'test-results/', 'src/ui/public/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      // Packages first, then the project's own modules by path; one blank line between the groups.
      'simple-import-sort/imports': ['error', { groups: [['^\\u0000'], ['^node:'], ['^@?\\w'], ['^\\.']] }],
      'simple-import-sort/exports': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Scripts print on purpose and say so with a disable comment; the service logs through pino.
    files: ['src/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
  layering,
  lexicalIndex,
);
