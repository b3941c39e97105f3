// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'dist/', '.scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'bin/*.js', 'src/shared/*.js', 'scripts/*.js', 'scripts/container-test/*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // A switch over a union (a result type, a field kind, a SOAP version) names every member, so
      // adding a member is a lint error wherever it is not handled yet (issue 15 section 1).
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      'no-console': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    // Issue 22: HTTP is one wing. Only src/http/ and the composition roots speak Fastify; the
    // domain below takes plain values and answers domain errors, which src/http/ maps to HTTP.
    files: ['src/**/*.ts'],
    ignores: ['src/http/**', 'src/app.ts', 'src/main.ts', 'src/cluster.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [{ regex: '^(fastify|@fastify/.*)$', message: 'Fastify belongs to src/http/ (and the composition roots app.ts, main.ts, cluster.ts): put the route, hook or plugin there.' }],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The plain-JavaScript entry points (bin/, scripts/) run on Node.
    // (Not the browser scripts under src/: they name their own globals.)
    files: ['bin/**/*.js', 'scripts/**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', fetch: 'readonly', setTimeout: 'readonly' } },
  },
);
