'use strict';
// Reads a jest --json report and prints the counts and the ten slowest test files (run it from the
// project's root: file names are given relative to it):
//   node .ci/jest-summary.js REPORT [LABEL]
// With `--durations FILE` it also writes every file's seconds there, for test/support/sequencer.js:
//   node .ci/jest-summary.js REPORT --durations test/support/durations.json
const fs = require('node:fs');
const path = require('node:path');

const args = process.argv.slice(2);
const durationsAt = args.indexOf('--durations');
const durationsFile = durationsAt === -1 ? undefined : args.splice(durationsAt, 2)[1];
const [file, label = 'jest'] = args;
const report = JSON.parse(fs.readFileSync(file, 'utf8'));
const skipped = (report.numPendingTests || 0) + (report.numTodoTests || 0);
console.log(`${label}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
const files = report.testResults
  .map((result) => ({
    name: path.relative(process.cwd(), result.name),
    seconds: (result.endTime - result.startTime) / 1000,
  }))
  .filter((entry) => Number.isFinite(entry.seconds))
  .sort((a, b) => b.seconds - a.seconds);
const ends = report.testResults.map((result) => result.endTime).filter(Number.isFinite);
const wall = ends.length > 0 ? (Math.max(...ends) - report.startTime) / 1000 : 0;
const total = files.reduce((sum, entry) => sum + entry.seconds, 0);
console.log(
  `${label}: ${files.length} files in ${wall.toFixed(0)} s (${total.toFixed(0)} s of file time); the ten slowest:`,
);
for (const entry of files.slice(0, 10)) console.log(`  ${entry.seconds.toFixed(1).padStart(7)} s  ${entry.name}`);
if (durationsFile) {
  const byName = Object.fromEntries(
    [...files].sort((a, b) => a.name.localeCompare(b.name)).map((entry) => [entry.name, Math.round(entry.seconds)]),
  );
  fs.writeFileSync(durationsFile, `${JSON.stringify(byName, null, 2)}\n`);
}
