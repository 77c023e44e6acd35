'use strict';
/**
 * Runs the project's TypeScript in the processes the tests start (the CLI, workers, the command
 * helper): `node -r test/support/ts-register.js src/client/cli.ts ...`.
 *
 * It does what `ts-node/register/transpile-only` did for them, TypeScript's `transpileModule` with
 * the project's compiler options, through the cache of `ts-cache.js`. Loading the compiler and
 * transpiling the CLI's modules took about 3 s of CPU in every process started, and a test file
 * may start dozens; with the cache warm a process never loads the compiler, and starts in about
 * 0.6 s, as the built CLI does.
 */
const path = require('node:path');
const { transpile } = require('./ts-cache');

if (!require.extensions['.ts']) {
  // Maps are inline, so a stack trace names the TypeScript line.
  process.setSourceMapsEnabled(true);
  require.extensions['.ts'] = function loadTypeScript(module, filename) {
    if (filename.includes(`${path.sep}node_modules${path.sep}`)) {
      throw new Error(`${filename}: TypeScript under node_modules is not compiled by ${__filename}`);
    }
    module._compile(transpile(filename), filename);
  };
}
