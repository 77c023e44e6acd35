const base = require('./jest.config');

/**
 * `npm run test:cluster`: the tests against a real Temporal cluster (PostgreSQL, temporal-server)
 * and a real S3 store, which plain `npm test` leaves out.
 * @type {import('jest').Config}
 */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/cluster'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 300000,
};
