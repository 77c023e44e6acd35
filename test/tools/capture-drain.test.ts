/**
 * When a Bash command exits, the end of its output may still be in the capture pipe: the first
 * part is copied a byte at a time, which on a loaded machine takes seconds for a full pipe. The
 * worker waited a fixed 500 ms and then read what was on disk, so a command that printed a lot
 * lost the end of its output under load (seen in CI: 13,259 characters of 20,000 kept). It now
 * waits while the capture still copies, and stops waiting only when the capture has ended, has
 * stalled (a background job holding the pipe open and printing nothing), or has copied more
 * than the pipe could have held when the command ended.
 */
import fs from 'node:fs';
import path from 'node:path';
import { commandFiles, waitForCaptureEnd } from '../../src/activities/tools/command-run';
import { tempDir } from '../support/harness';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Append `chunk` to `file` every `everyMs` for `times` times, as a slow capture would. */
async function growSlowly(file: string, chunk: string, everyMs: number, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    await sleep(everyMs);
    fs.appendFileSync(file, chunk);
  }
}

function files() {
  const files = commandFiles(path.join(tempDir('capture'), 'cmd'));
  fs.writeFileSync(files.output, 'first part\n');
  return files;
}

test('waits while the capture is still copying, past the 500 ms grace, until it ends', async () => {
  const f = files();
  const limits = { graceMs: 500, maxMs: 30_000 };
  // Copying for 2 s in small steps, each well inside the grace time: all of it is waited for.
  const copying = growSlowly(f.output, 'x'.repeat(100), 200, 10).then(() => fs.writeFileSync(f.rest, ''));
  const started = Date.now();
  await waitForCaptureEnd(f, () => false, limits);
  await copying;
  expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
  expect(fs.readFileSync(f.output, 'utf8')).toBe(`first part\n${'x'.repeat(1_000)}`);
});

test('returns at once when the capture has already ended', async () => {
  const f = files();
  fs.writeFileSync(f.rest, '0\n');
  const started = Date.now();
  await waitForCaptureEnd(f);
  expect(Date.now() - started).toBeLessThan(400);
});

test('stops after the grace time when nothing more comes (a background job holds the pipe)', async () => {
  const f = files();
  const started = Date.now();
  await waitForCaptureEnd(f, () => false, { graceMs: 300, maxMs: 30_000 });
  const waited = Date.now() - started;
  expect(waited).toBeGreaterThanOrEqual(300);
  expect(waited).toBeLessThan(3_000);
});

test('stops once more has come than a pipe holds: the rest was printed after the command ended', async () => {
  const f = files();
  const limits = { graceMs: 1_000, maxMs: 30_000 };
  // A background job printing 16 KB every 100 ms, forever as far as the wait can tell.
  let printing = true;
  const job = (async () => {
    while (printing) {
      await sleep(100);
      fs.appendFileSync(f.output, 'y'.repeat(16 * 1024));
    }
  })();
  const started = Date.now();
  try {
    await waitForCaptureEnd(f, () => false, limits);
  } finally {
    printing = false;
    await job;
  }
  // About 5 steps of 16 KB pass 68 KB: well before the 30 s limit.
  expect(Date.now() - started).toBeLessThan(10_000);
});

test('stops when the run has ended some other way', async () => {
  const f = files();
  let stopped = false;
  setTimeout(() => (stopped = true), 100);
  const started = Date.now();
  await waitForCaptureEnd(f, () => stopped, { graceMs: 10_000, maxMs: 30_000 });
  expect(Date.now() - started).toBeLessThan(2_000);
});
