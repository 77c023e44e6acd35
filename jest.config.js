/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  setupFiles: ['<rootDir>/test/support/quiet-runtime.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testTimeout: 120000,
};
