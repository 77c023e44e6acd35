// ESLint flat config (CommonJS project). `npm run lint` runs `eslint src test bench`.
//
// - TypeScript (src/, test/, bench/): @eslint/js recommended + typescript-eslint recommended, with type-aware
//   linting (projectService) so that @typescript-eslint/no-floating-promises can run.
// - src/workflows/**: workflow code runs inside Temporal's deterministic sandbox and is replayed from history,
//   so it must not import Node built-ins, the Anthropic SDK, the Temporal activity/worker/client packages or
//   activity implementations. Type-only imports are allowed: they are erased at compile time.
'use strict';

const { builtinModules } = require('node:module');
const { defineConfig, globalIgnores } = require('eslint/config');
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');

const WORKFLOW_DETERMINISM =
  'Workflow code must be deterministic: it is replayed from event history inside the Temporal workflow sandbox, ' +
  'so it cannot do I/O or use non-deterministic APIs. Put side effects in an activity (src/activities) and call it ' +
  "via proxyActivities from '@temporalio/workflow'; only `import type` is allowed here.";

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Every Node built-in, in both the bare (`fs`) and the prefixed (`node:fs`) form.
const bareBuiltins = [...new Set(builtinModules.map((m) => m.replace(/^node:/, '')))].sort();
const nodeBuiltinPaths = bareBuiltins
  .flatMap((name) => [name, `node:${name}`])
  .map((name) => ({
    name,
    message: `'${name}' is a Node built-in. ${WORKFLOW_DETERMINISM}`,
    allowTypeImports: true,
  }));

const forbiddenPackagePaths = [
  '@anthropic-ai/sdk',
  '@temporalio/activity',
  '@temporalio/worker',
  '@temporalio/client',
].map((name) => ({
  name,
  message: `'${name}' must not be imported from workflow code. ${WORKFLOW_DETERMINISM}`,
  allowTypeImports: true,
}));

const workflowRestrictedImports = {
  paths: [...nodeBuiltinPaths, ...forbiddenPackagePaths],
  patterns: [
    {
      // node:-only modules that `builtinModules` may not list (node:test, node:sea, node:sqlite, ...).
      regex: `^node:(?!(?:${bareBuiltins.map(escapeRegExp).join('|')})$)`,
      message: `Node built-ins cannot be imported from workflow code. ${WORKFLOW_DETERMINISM}`,
      allowTypeImports: true,
    },
    {
      regex: '^(?:@anthropic-ai/sdk|@temporalio/(?:activity|worker|client))/',
      message: `Subpaths of the Anthropic SDK and of @temporalio/{activity,worker,client} must not be imported from workflow code. ${WORKFLOW_DETERMINISM}`,
      allowTypeImports: true,
    },
    {
      // '../activities', '../activities/run-tool', '../../src/activities/x', 'src/activities', ...
      regex: '^(?:\\.{1,2}/(?:.*/)?|(?:.*/)?src/)activities(?:/.*)?$',
      message: `Activity implementations must not be imported from workflow code (use \`import type\` and proxyActivities). ${WORKFLOW_DETERMINISM}`,
      allowTypeImports: true,
    },
  ],
};

// Globals of a CommonJS Node script, for the few plain .js files (this config, bin/).
const nodeCommonJsGlobals = Object.fromEntries(
  [
    'require',
    'module',
    'exports',
    '__dirname',
    '__filename',
    'process',
    'console',
    'Buffer',
    'URL',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'clearImmediate',
    'queueMicrotask',
    'structuredClone',
  ].map((name) => [name, 'readonly']),
);

module.exports = defineConfig([
  globalIgnores(['dist/', 'node_modules/', '.tools/', 'coverage/', '.durable-agent/']),

  {
    files: ['**/*.js', '**/*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'commonjs', ecmaVersion: 2022, globals: nodeCommonJsGlobals },
  },

  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: __dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },

  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', workflowRestrictedImports],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression',
          message: `Dynamic import() is not allowed in workflow code. ${WORKFLOW_DETERMINISM}`,
        },
      ],
    },
  },
]);
