/**
 * ripgrep (Grep and Glob) starts from the worker's command helper (`spawnPiped` in
 * `src/worker/spawner.ts`), its output piped back through it: a start from the worker forks the
 * worker, whose size grows with the jobs it holds. A search changes nothing, so one whose helper
 * dies under it runs again from the worker.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runRipgrep } from '../../src/activities/tools/ripgrep';
import { spawnerPid, stopSpawner } from '../../src/worker/spawner';
import { tempDir } from '../support/harness';

afterAll(() => stopSpawner());

/** A stand-in for rg: a script that runs `body`. */
function fakeRg(body: string): { rg: string; cwd: string } {
  const cwd = tempDir('grep-helper');
  const rg = path.join(cwd, 'rg');
  fs.writeFileSync(rg, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return { rg, cwd };
}

test("rg's parent is the helper; its output, stderr and exit code come back whole", async () => {
  const { rg, cwd } = fakeRg('echo "parent $PPID"; head -c 300000 /dev/zero | tr "\\0" x; echo; echo oops >&2; exit 1');
  const run = await runRipgrep(rg, [], { cwd, signal: new AbortController().signal });
  const [first, big] = run.stdout.split('\n');
  expect(spawnerPid()).toBeDefined();
  expect(first).toBe(`parent ${spawnerPid()}`);
  expect(big).toHaveLength(300_000);
  expect(run).toMatchObject({ stderr: 'oops\n', exitCode: 1, truncated: false });
});

test('output past the cap stops rg and keeps whole lines', async () => {
  const { rg, cwd } = fakeRg('while :; do echo "a line of output"; done');
  const run = await runRipgrep(rg, [], { cwd, signal: new AbortController().signal, maxOutputBytes: 100_000 });
  expect(run.truncated).toBe(true);
  expect(run.stdout.endsWith('a line of output\n')).toBe(true);
});

test('an abort stops rg and rejects with an AbortError', async () => {
  const { rg, cwd } = fakeRg('exec sleep 30');
  const controller = new AbortController();
  const running = runRipgrep(rg, [], { cwd, signal: controller.signal });
  setTimeout(() => controller.abort(), 200);
  const started = Date.now();
  await expect(running).rejects.toMatchObject({ name: 'AbortError' });
  // Well before the 30 s rg would take, with seconds of margin for a loaded machine.
  expect(Date.now() - started).toBeLessThan(10_000);
});

test('a helper SIGKILLed under a search: the search runs again from the worker and answers', async () => {
  const { rg, cwd } = fakeRg('sleep 1; echo "found by $PPID"');
  const running = runRipgrep(rg, [], { cwd, signal: new AbortController().signal });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const helper = spawnerPid();
  expect(helper).toBeDefined();
  process.kill(helper!, 'SIGKILL');
  await expect(running).resolves.toMatchObject({ stdout: `found by ${process.pid}\n`, exitCode: 0 });
});

test('a program that is not there fails as spawn does', async () => {
  const cwd = tempDir('grep-helper-missing');
  await expect(
    runRipgrep(path.join(cwd, 'no-rg'), [], { cwd, signal: new AbortController().signal }),
  ).rejects.toMatchObject({ code: 'ENOENT' });
});

test("a flood of output is relayed at the worker's pace: the helper's memory stays small", async () => {
  const peak = (pid: number) =>
    Number(/^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  // A helper that is up, and its peak so far.
  const quiet = fakeRg('echo warm');
  await runRipgrep(quiet.rg, [], { cwd: quiet.cwd, signal: new AbortController().signal });
  const before = peak(spawnerPid()!);
  const { rg, cwd } = fakeRg('exec head -c 100000000 /dev/zero');
  const run = await runRipgrep(rg, [], { cwd, signal: new AbortController().signal, maxOutputBytes: 200_000_000 });
  expect(run).toMatchObject({ truncated: false, exitCode: 0 });
  expect(run.stdout).toHaveLength(100_000_000);
  const helper = spawnerPid();
  expect(helper).toBeDefined();
  // What the flood added to the helper's peak resident memory (its peak before includes ts-node's
  // start-up here): 7 to 14 MiB on Node 20 and 24, against 87 to 98 MiB when it read all it could
  // and queued it for the worker.
  expect(peak(helper!) - before).toBeLessThan(50);
});
