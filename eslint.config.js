// Lint for the whole repository: type-aware promise rules everywhere, and an import guard that keeps
// workflow code deterministic (no Node built-ins, no activity implementations), as Temporal's samples do.

import { builtinModules } from 'node:module';
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

// `assert` is the one built-in the workflow sandbox provides (samples-typescript allows it too).
const allowedBuiltins = new Set(['assert']);
const bannedBuiltins = builtinModules.filter((name) => !name.startsWith('_') && !allowedBuiltins.has(name));

export default tseslint.config(
  {
    // Generated, vendored or foreign code: bundles, dependencies, benchmark payloads, test fixtures, the cluster
    // images' staged build context (scripts/cluster.sh), and AssemblyScript (compiled by asc, not tsc).
    ignores: [
      'node_modules/',
      '**/*.bundle.js',
      'benchmarks/',
      'test/fixtures/',
      'runtime/',
      '.benchrouter/',
      'cluster/.bin/',
      'perf/.generated-*/',
      'analysis/wasm/kernels.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A promise nobody awaits loses its error and, in a workflow, its ordering; fire-and-forget says `void`.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests read untyped JSON off the wire and assert its shape; source code stays free of `any`.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox and is bundled on its own: only types may
    // come from Node, the activities or the worker-side SDK packages.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...bannedBuiltins
              .flatMap((name) => [name, `node:${name}`])
              .map((name) => ({ name, message: 'workflow code is deterministic: do Node I/O in an activity.', allowTypeImports: true })),
            ...['@temporalio/activity', '@temporalio/worker', '@temporalio/client'].map((name) => ({
              name,
              message: 'workflow code imports only @temporalio/workflow and @temporalio/common at run time.',
              allowTypeImports: true,
            })),
          ],
          patterns: [
            {
              group: ['**/activities', '**/activities/**'],
              message: 'import activities as types only and call them through proxyActivities.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    // The attempt runner follows a task through its host's task engine (activities/engines/engine.ts) and
    // speaks to no engine itself: not to Docker, nor to any engine's own folder.
    files: ['activities/run-task-container.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'dockerode', message: 'the attempt runner speaks to its task engine, not to Docker.' }],
          patterns: [
            {
              group: [
                '**/engines/*/**',
                '**/docker-*.js',
                '**/dind-*.js',
                '**/oom-events.js',
                '**/container-log.js',
                '**/netns-pool.js',
                '**/task-network.js',
                '**/task-firewall.js',
              ],
              message: "the attempt runner speaks to its task engine (engines/engine.ts), not to Docker or an engine's own modules.",
            },
          ],
        },
      ],
    },
  },
  {
    // Plain JavaScript (this file) is not in the TypeScript project.
    files: ['**/*.js'],
    languageOptions: { globals: { console: 'readonly', process: 'readonly' } },
  },
  prettier,
);
