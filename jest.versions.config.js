const base = require('./jest.config');

/**
 * `npm run test:versions`: the tests that cover what changes from one Node version to another, for
 * the supported versions that do not run the whole suite (docs/development.md, Supported Node versions). Every
 * run, this one too, bundles the workflow code under the Node it runs on (global-setup.ts).
 * @type {import('jest').Config}
 */
module.exports = {
  ...base,
  testMatch: [
    // Native modules: the Temporal core bridge (N-API) in a worker, a client and a dev server.
    '<rootDir>/test/agent-session.test.ts',
    // The workflow bundle and V8's sandbox: every recorded history replayed through it.
    '<rootDir>/test/replay.test.ts',
    // Starting processes: the command helper (fork, IPC, process groups), Bash and hooks through it.
    '<rootDir>/test/spawner.test.ts',
    '<rootDir>/test/tools/bash.test.ts',
    '<rootDir>/test/hooks/run-hooks.test.ts',
    // The sandbox: bubblewrap's arguments, the file descriptors it passes, credentials over a pipe.
    '<rootDir>/test/sandbox/bwrap.test.ts',
    '<rootDir>/test/sandbox/run-tool.test.ts',
    '<rootDir>/test/sandbox/secret-handoff.test.ts',
    '<rootDir>/test/workflow-sandbox.test.ts',
    // fetch (undici ships with Node): the real SDK streaming from the model server, its errors.
    '<rootDir>/test/model-server.test.ts',
    '<rootDir>/test/model-errors.test.ts',
    '<rootDir>/test/call-model-stop-reasons.test.ts',
    // File APIs: reads, atomic writes, the journal, ripgrep.
    '<rootDir>/test/tools/read.test.ts',
    '<rootDir>/test/tools/write-edit.test.ts',
    '<rootDir>/test/tools/grep.test.ts',
    '<rootDir>/test/durable-file.test.ts',
    '<rootDir>/test/tools/journal-durability.test.ts',
    // The AWS SDK's HTTP client against a real S3 server.
    '<rootDir>/test/s3-content-store.test.ts',
    // The CLI as users run it: the embedded server and a detached worker; a worker SIGKILLed.
    '<rootDir>/test/cli-headless.test.ts',
    '<rootDir>/test/durability.test.ts',
  ],
};
