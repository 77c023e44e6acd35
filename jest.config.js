const os = require('node:os');

/** @type {import('jest').Config} */
module.exports = {
  // Test files run side by side. They mostly wait (on dev servers, timers, child processes), so
  // more files than cores run at once: JEST_WORKERS_PER_CORE below, measured on 2 cores
  // (docs/development.md, The test suite), at most 8: each file starts dev servers, workers and
  // sandboxes of its own, and a container's CPU quota does not show in availableParallelism(). `--maxWorkers` or `--runInBand`
  // on the command line still win.
  maxWorkers: Math.min(
    8,
    Math.max(2, Math.round(os.availableParallelism() * Number(process.env.JEST_WORKERS_PER_CORE ?? 2.5))),
  ),
  testSequencer: '<rootDir>/test/support/sequencer.js',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The cluster tests build and start a real Temporal cluster: `npm run test:cluster` (jest.cluster.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/cluster/'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  setupFiles: ['<rootDir>/test/support/quiet-runtime.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/stop-spawner.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 120000,
};
