// Lint for intent: typescript-eslint's recommended rules, type-only imports, no console in the service.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'clients/typescript/dist/', 'bench-results/', 'eval-results/', 'test-results/', 'src/ui/public/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Scripts print on purpose and say so with a disable comment; the service logs through pino.
    files: ['src/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
);
