import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { workspaceHome } from '../../src/activities/store/workspace-home';
import { journalFolderName, type JournalEntry } from '../../src/activities/tool-journal';
import { thisHost } from '../../src/activities/tools/command-run';
import { killProcessGroup } from '../../src/activities/tools/process-group';
import { makeWorkspace, tempDir, waitFor } from '../support/harness';
import { isAlive } from '../support/jobs';
import { runToolAttempt } from '../support/tool-activity';
import { TS_NODE_ARGS } from '../support/ts-run';

const SESSION = 'job-1/run-1';
const ROOT = path.join(__dirname, '..', '..');

type Call = Parameters<typeof runToolAttempt>[0];

async function entryFile(storeDir: string, workspace: string, id: string): Promise<string> {
  return path.join(await workspaceHome(storeDir, workspace), 'journal', journalFolderName(SESSION), `${id}.json`);
}

async function readEntry(call: Call): Promise<(JournalEntry & { status: 'started' }) | undefined> {
  const text = await fs.promises
    .readFile(await entryFile(call.storeDir, call.workspace, call.id), 'utf8')
    .catch(() => '');
  const entry = text ? (JSON.parse(text) as JournalEntry) : undefined;
  return entry?.status === 'started' ? entry : undefined;
}

/** Attempt 1 of `call` in a process of its own, as a worker would run it, SIGKILLed once its command runs. */
async function attemptKilledWhileRunning(call: Call): Promise<{ pgid: number }> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...TS_NODE_ARGS, path.join(ROOT, 'test', 'support', 'run-tool-cli.ts'), JSON.stringify([call])],
    { cwd: ROOT, stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const entry = await waitFor(
      async () => {
        const found = await readEntry(call);
        return found?.command ? found : undefined;
      },
      30_000,
      'the journal to record the command',
    );
    // Let the command get going, then the "worker" dies.
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { pgid: entry.command!.pgid };
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

describe('a Bash call whose worker died while its command ran', () => {
  let storeDir: string;
  beforeEach(() => {
    storeDir = tempDir('adoption-store');
  });

  test('the retry on the same host adopts the still-running group and answers as the uninterrupted call would', async () => {
    const command = 'echo first; sleep 2; echo step >> effects.log; echo second >&2; exit 3';
    const control = makeWorkspace({});
    const uninterrupted = await runToolAttempt({
      storeDir: tempDir('adoption-control'),
      workspace: control,
      id: 'toolu_a',
      name: 'Bash',
      input: { command },
    });

    const workspace = makeWorkspace({});
    const call: Call = { storeDir, workspace, id: 'toolu_a', name: 'Bash', input: { command } };
    const { pgid } = await attemptKilledWhileRunning(call);
    // The group outlived its worker: without a supervisor it would run on unseen.
    expect(isAlive(pgid)).toBe(true);

    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.block).toEqual(uninterrupted.block);
    expect(retry.block.content).toBe('Exit code 3\nfirst\nsecond');
    expect(fs.readFileSync(path.join(workspace, 'effects.log'), 'utf8')).toBe('step\n');
    expect(retry.heartbeats).toContainEqual(expect.objectContaining({ tool: 'Bash', adopted: true }));
  });

  test('an adopted group is held to the call’s own timeout, counted from when it started', async () => {
    const workspace = makeWorkspace({});
    const call: Call = {
      storeDir,
      workspace,
      id: 'toolu_t',
      name: 'Bash',
      input: { command: 'echo waiting; sleep 60; echo never >> effects.log', timeout: 3000 },
    };
    const { pgid } = await attemptKilledWhileRunning(call);
    const started = Date.now();
    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.block.content).toBe('Exit code 137\nCommand timed out after 3s\nwaiting');
    // At the first attempt's deadline, not after the 60 s sleep (seconds of margin for a loaded machine).
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(isAlive(pgid)).toBe(false);
  });

  test('a group that ended without an exit status (killed with its worker) is told as cut off, with its output, and not run again', async () => {
    const workspace = makeWorkspace({});
    const call: Call = {
      storeDir,
      workspace,
      id: 'toolu_k',
      name: 'Bash',
      input: { command: 'echo begun >> effects.log; echo begun; sleep 30; echo never >> effects.log' },
    };
    const { pgid } = await attemptKilledWhileRunning(call);
    killProcessGroup(pgid);
    await waitFor(async () => (isAlive(pgid) ? undefined : true), 5000, 'the group to end');
    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.result.isError).toBe(true);
    expect(retry.block.content).toContain('The Bash command was cut off part-way: its worker died');
    expect(retry.block.content).toContain('Its output until then:\nbegun');
    expect(fs.readFileSync(path.join(workspace, 'effects.log'), 'utf8')).toBe('begun\n');
  });

  test('a call whose attempt died before its group was recorded never started its command: the retry runs it', async () => {
    const workspace = makeWorkspace({});
    const call: Call = {
      storeDir,
      workspace,
      id: 'toolu_n',
      name: 'Bash',
      input: { command: 'echo ran >> effects.log; echo ok' },
    };
    const file = await entryFile(storeDir, workspace, call.id);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const entry: JournalEntry = {
      status: 'started',
      toolUseId: call.id,
      name: 'Bash',
      startedAt: new Date().toISOString(),
      attempt: 1,
      command: null,
    };
    fs.writeFileSync(file, JSON.stringify(entry));
    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.block.content).toBe('ok');
    expect(fs.readFileSync(path.join(workspace, 'effects.log'), 'utf8')).toBe('ran\n');
  });

  test('a worker killed after recording the group, before the leader was told to go: the retry runs the command', async () => {
    const workspace = makeWorkspace({});
    const call: Call = {
      storeDir,
      workspace,
      id: 'toolu_g',
      name: 'Bash',
      input: { command: 'echo ran >> effects.log; echo ok' },
    };
    // A leader that never got "go" exits at once (its stdin is the dead worker's pipe), no output file made.
    const leader = spawn('sh', ['-c', 'exit 125']);
    const pgid = leader.pid!;
    await new Promise((resolve) => leader.once('exit', resolve));
    const file = await entryFile(storeDir, workspace, call.id);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const entry: JournalEntry = {
      status: 'started',
      toolUseId: call.id,
      name: 'Bash',
      startedAt: new Date().toISOString(),
      attempt: 1,
      command: {
        ...(await thisHost()),
        pgid,
        startedAt: new Date().toISOString(),
        timeoutMs: 120_000,
        attempt: 1,
        workerPid: 999_999,
        sandboxed: false,
      },
    };
    fs.writeFileSync(file, JSON.stringify(entry));
    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.block.content).toBe('ok');
    expect(fs.readFileSync(path.join(workspace, 'effects.log'), 'utf8')).toBe('ran\n');
  });

  test('a retry that finds the group on another host fences it off: the first attempt’s late result is refused, never journaled', async () => {
    const workspace = makeWorkspace({});
    const call: Call = {
      storeDir,
      workspace,
      id: 'toolu_f',
      name: 'Bash',
      input: { command: 'echo early; sleep 2; echo late >> effects.log' },
    };
    // Attempt 1 runs on, cut off from the server; the journal is shared, and says it runs elsewhere.
    const first = runToolAttempt(call).then(
      () => 'completed',
      (error: Error) => error.message,
    );
    const entry = await waitFor(async () => ((await readEntry(call))?.command ? readEntry(call) : undefined));
    const file = await entryFile(storeDir, workspace, call.id);
    // The command's first line has reached its output file (on a loaded machine the group is
    // journaled well before its shell has run a line).
    const output = file.replace(/\.json$/, '.out');
    await waitFor(
      async () => (fs.readFileSync(output, 'utf8').includes('early\n') ? true : undefined),
      30_000,
      'early',
    );
    fs.writeFileSync(file, JSON.stringify({ ...entry, command: { ...entry.command, host: 'another-host' } }));

    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.result.isError).toBe(true);
    expect(retry.block.content).toContain('by attempt 1 on another-host, whose worker stopped answering');
    expect(retry.block.content).toContain('It may still be running there');
    expect(retry.block.content).toContain('Its output until this attempt took over:\nearly');

    // Attempt 2 answered first: the journal holds its answer, and attempt 1's is refused.
    expect(await first).toContain('attempt 1 of tool call toolu_f was superseded');
    const journaled = JSON.parse(fs.readFileSync(file, 'utf8')) as JournalEntry;
    expect(journaled).toMatchObject({ status: 'completed', block: retry.block });
    expect(fs.readFileSync(path.join(workspace, 'effects.log'), 'utf8')).toBe('late\n');
  });

  test('a finished call leaves no command files beside its journal entry', async () => {
    const workspace = makeWorkspace({});
    const call: Call = { storeDir, workspace, id: 'toolu_c', name: 'Bash', input: { command: 'echo x > made.txt' } };
    await runToolAttempt(call);
    const folder = path.dirname(await entryFile(storeDir, workspace, call.id));
    expect(fs.readdirSync(folder)).toEqual(['toolu_c.json']);
  });
});
