/**
 * resumeCommand's look at a group a dead worker left, at the moment the group ends: the command
 * writes its exit status and ends between the retry's first look at the status and its look at the
 * group. Seen in the chaos and durability tests as a completed command reported "cut off".
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { resumeCommand } from '../../src/activities/command-resume';
import { ToolJournal, type CommandRecord, type JournalEntry } from '../../src/activities/tool-journal';
import * as commandRun from '../../src/activities/tools/command-run';
import { DEFAULT_JOB_SANDBOX } from '../../src/shared/sandbox';
import { makeWorkspace, tempDir } from '../support/harness';

/** The pid of a process that has ended: a group that is gone. */
function endedPid(): number {
  const run = spawnSync('sh', ['-c', 'echo $$']);
  return Number(run.stdout.toString().trim());
}

async function startedEntry(
  journal: ToolJournal,
  id: string,
): Promise<JournalEntry & { status: 'started'; command: CommandRecord }> {
  const entry = {
    status: 'started' as const,
    toolUseId: id,
    name: 'Bash',
    startedAt: new Date().toISOString(),
    attempt: 1,
    command: {
      ...(await commandRun.thisHost()),
      pgid: endedPid(),
      // No process now running has this start time: the group reads as gone even if the pid is reused.
      leaderStart: '0',
      startedAt: new Date().toISOString(),
      timeoutMs: 120_000,
      attempt: 1,
      workerPid: 999_999_999,
      sandboxed: false,
    },
  };
  await journal.write(entry);
  return entry;
}

/** Attempt 2 of the call, as the retry after the worker's death runs it. */
function retry(journal: ToolJournal, entry: Awaited<ReturnType<typeof startedEntry>>) {
  return resumeCommand({
    entry,
    journal,
    attempt: 2,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    heartbeatMs: 1_000,
    policy: DEFAULT_JOB_SANDBOX,
  });
}

describe('a retry looking at a group that ends as it looks', () => {
  afterEach(() => jest.restoreAllMocks());

  test('a status written between its look at the status and its look at the group is the answer', async () => {
    const journal = await ToolJournal.open(tempDir('resume-store'), makeWorkspace({}), 'job-1/run-1');
    const entry = await startedEntry(journal, 'toolu_race');
    const files = journal.commandFiles(entry.toolUseId);
    fs.writeFileSync(files.output, 'done\n');
    fs.writeFileSync(files.rest, '0\n');
    fs.writeFileSync(files.exit, '0\n');
    // The first look finds no status yet (the command still ran); every later look reads the file.
    const real = commandRun.readExitStatus;
    jest
      .spyOn(commandRun, 'readExitStatus')
      .mockImplementationOnce(async () => undefined)
      .mockImplementation(real);
    const outcome = await retry(journal, entry);
    expect(outcome).toBeDefined();
    expect(outcome!.isError).toBeFalsy();
    expect(JSON.stringify(outcome!.content)).toContain('done');
    expect(JSON.stringify(outcome!.content)).not.toContain('cut off');
  });

  test('a group gone with its output but no status is still told as cut off', async () => {
    const journal = await ToolJournal.open(tempDir('resume-store'), makeWorkspace({}), 'job-1/run-1');
    const entry = await startedEntry(journal, 'toolu_gone');
    fs.writeFileSync(journal.commandFiles(entry.toolUseId).output, 'half\n');
    const outcome = await retry(journal, entry);
    expect(outcome?.isError).toBe(true);
    expect(JSON.stringify(outcome!.content)).toContain('cut off part-way');
    expect(JSON.stringify(outcome!.content)).toContain('half');
  });
});
