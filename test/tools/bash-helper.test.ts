/**
 * A Bash command's group leader starts from the worker's command helper (`startLeader` in
 * `src/worker/spawner.ts`), not from the worker: a start forks the process that makes it, and the
 * worker grows with the jobs it holds. What the leader tells the worker (its exit status, its end)
 * comes through the helper, and a helper that dies while the command runs costs the command nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { commandFiles, runCommand, type CommandGroup } from '../../src/activities/tools/command-run';
import { spawnerPid, stopSpawner, useSpawnerHelper } from '../../src/worker/spawner';
import { tempDir } from '../support/harness';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function parentOf(pid: number): number {
  return Number(/^PPid:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

function run(script: string, onGroup: (group: CommandGroup) => void = () => {}, timeoutMs = 30_000) {
  const dir = tempDir('bash-helper');
  return runCommand({
    file: 'bash',
    args: ['-c', script],
    env,
    cwd: dir,
    files: commandFiles(path.join(dir, 'command')),
    timeoutMs,
    signal: new AbortController().signal,
    record: async (group) => onGroup(group),
    progress: () => {},
    progressMs: 1000,
  });
}

afterAll(() => stopSpawner());

/** Until the worker has seen `helper` die. */
async function helperGone(helper: number): Promise<void> {
  for (let i = 0; i < 250 && spawnerPid() === helper; i++) await new Promise((resolve) => setTimeout(resolve, 20));
}

test("the leader's parent is the helper, and the command's output and exit status come back", async () => {
  let parent: number | undefined;
  const result = await run('echo hello; exit 3', (group) => {
    parent = parentOf(group.pgid);
  });
  expect(result).toMatchObject({ exitCode: 3, output: 'hello\n', timedOut: false });
  expect(spawnerPid()).toBeDefined();
  expect(parent).toBe(spawnerPid());
  expect(parent).not.toBe(process.pid);
});

test('a helper SIGKILLed while the command runs: the command runs on, and its result is still reported', async () => {
  let pgid: number | undefined;
  // Once the marker is there, the leader has its "go" and the command runs.
  const marker = path.join(tempDir('bash-helper-marker'), 'running');
  const result = run(`: > ${marker}; sleep 1; echo "done after $((1 + 1))"`, (group) => {
    pgid = group.pgid;
  });
  for (let i = 0; i < 250 && !fs.existsSync(marker); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  const helper = spawnerPid();
  expect(helper).toBeDefined();
  expect(parentOf(pgid!)).toBe(helper);
  process.kill(helper!, 'SIGKILL');
  await expect(result).resolves.toMatchObject({ exitCode: 0, output: 'done after 2\n', timedOut: false });
  // The next command gets a new helper.
  await expect(run('echo again')).resolves.toMatchObject({ exitCode: 0, output: 'again\n' });
  expect(spawnerPid()).not.toBe(helper);
});

test('a timeout still kills the whole group started by the helper', async () => {
  const started = Date.now();
  const result = await run('sleep 30 & sleep 30; echo never', () => {}, 500);
  expect(result).toMatchObject({ timedOut: true });
  expect(result).not.toMatchObject({ output: expect.stringContaining('never') });
  expect(Date.now() - started).toBeLessThan(10_000);
});

test('a workspace that is not there is a start error, said as such', async () => {
  const dir = tempDir('bash-helper-missing');
  const result = await runCommand({
    file: 'bash',
    args: ['-c', 'echo hi'],
    env,
    cwd: path.join(dir, 'gone'),
    files: commandFiles(path.join(dir, 'command')),
    timeoutMs: 5_000,
    signal: new AbortController().signal,
    progress: () => {},
    progressMs: 1000,
  });
  expect(result).toMatchObject({ spawnError: expect.objectContaining({ message: expect.stringContaining('ENOENT') }) });
});

test('a NUL byte in the command is a start error from the helper and from the worker alike, never a crash', async () => {
  for (const helper of [true, false]) {
    useSpawnerHelper(helper);
    try {
      await expect(run('echo a\0b')).resolves.toMatchObject({
        spawnError: expect.objectContaining({ message: expect.stringContaining('null bytes') }),
      });
    } finally {
      useSpawnerHelper(true);
    }
  }
});

test('a helper that stops answering: the timeout still ends the command on time', async () => {
  let pgid: number | undefined;
  const started = Date.now();
  const result = run('sleep 30', (group) => (pgid = group.pgid), 1_000);
  for (let i = 0; i < 100 && pgid === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  const helper = spawnerPid()!;
  process.kill(helper, 'SIGSTOP');
  try {
    await expect(result).resolves.toMatchObject({ timedOut: true });
    // At the 1 s timeout, not after the 30 s sleep (seconds of margin for a loaded machine).
    expect(Date.now() - started).toBeLessThan(15_000);
  } finally {
    process.kill(helper, 'SIGKILL');
    await helperGone(helper);
  }
});

test('a helper that never says the leader started: after the grace the command starts from the worker', async () => {
  await run('true'); // a helper that is up
  const helper = spawnerPid();
  if (helper === undefined) throw new Error('no helper runs');
  process.kill(helper, 'SIGSTOP');
  try {
    let parent: number | undefined;
    const result = await run('echo from the worker', (group) => (parent = parentOf(group.pgid)));
    expect(result).toMatchObject({ exitCode: 0, output: 'from the worker\n' });
    expect(parent).toBe(process.pid);
  } finally {
    process.kill(helper, 'SIGKILL');
  }
}, 30_000);
