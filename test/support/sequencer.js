'use strict';
/**
 * The order test files start in. With several jest workers the run lasts at least as long as its
 * slowest file, so the slow ones must start first. Jest orders by the durations it cached on this
 * machine; on a fresh machine (CI's clean clone) it has none and falls back to file size, which
 * put the chaos test (a small file, two minutes) last. `durations.json` holds each file's seconds
 * from a recent run (`node .ci/jest-summary.js REPORT --durations test/support/durations.json`),
 * used where jest has none of its own. A file in neither starts first: it may be slow.
 */
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const durations = require('./durations.json');

const root = path.join(__dirname, '..', '..');

class DurationSequencer extends Sequencer {
  time(test) {
    const cached = super.time(test);
    if (cached !== undefined) return cached;
    const seconds = durations[path.relative(root, test.path)];
    return seconds === undefined ? undefined : seconds * 1000;
  }
}

module.exports = DurationSequencer;
