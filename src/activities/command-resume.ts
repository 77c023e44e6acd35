import type { JobSandbox } from '../shared/sandbox';
import type { ToolOutcome } from '../shared/tool-definition';
import type { CommandRecord, JournalEntry, ToolJournal } from './tool-journal';
import { formatResult, sandboxHints } from './tools/bash';
import {
  adoptCommand,
  commandStarted,
  groupAlive,
  readExitStatus,
  readFinished,
  sameHost,
  thisHost,
  type CommandGroup,
  type Finished,
} from './tools/command-run';

type StartedEntry = JournalEntry & { status: 'started' };

export interface ResumeCommandOptions {
  entry: StartedEntry & { command: CommandRecord };
  journal: ToolJournal;
  /** This attempt of the call. */
  attempt: number;
  signal: AbortSignal;
  heartbeat: (details?: unknown) => void;
  heartbeatMs: number;
  /** The job's sandbox policy, for the hints a failed sandboxed command gets. */
  policy: JobSandbox;
  /** Removes what is left of the placeholders a dead worker made for the command, once it ended. */
  releasePlaceholders?: (paths: readonly string[]) => Promise<void>;
  /** Puts an adopted group on this worker's record while it supervises it. */
  registerGroup?: (group: CommandGroup) => Promise<() => Promise<void>>;
}

/**
 * The answer for a Bash call whose earlier attempt started its command and died before it
 * reported, or undefined when the command provably never started (the call simply runs now). The command's own files say how it ended when it has; a group still running on this
 * host is adopted (waited for within its own timeout, then answered from its files), so the
 * transcript is the uninterrupted run's. Only what cannot be known is told as such: a group that
 * ended without an exit status, a machine that restarted, a group on another host, which this
 * attempt fences off (it records itself as the call's owner, so the first attempt's late result is
 * never journaled) and cannot stop.
 */
export async function resumeCommand(options: ResumeCommandOptions): Promise<ToolOutcome | undefined> {
  try {
    return await resume(options);
  } finally {
    // The command has ended (or runs on another host, which keeps its own): what its dead worker
    // made for its sandbox here goes, unless a command of this worker holds it now.
    const { command } = options.entry;
    if (command.placeholders?.length && sameHost(await thisHost(), command)) {
      await options.releasePlaceholders?.(command.placeholders).catch(() => undefined);
    }
  }
}

async function resume(options: ResumeCommandOptions): Promise<ToolOutcome | undefined> {
  const { entry, journal } = options;
  const record = entry.command;
  const files = journal.commandFiles(entry.toolUseId);
  const answer = (run: Finished) =>
    formatResult(run, record.timeoutMs, record.sandboxed ? sandboxHints(run, options.policy) : []);

  const status = await readExitStatus(files.exit);
  if (status !== undefined) return answer(await readFinished(files, status, false));

  const me = await thisHost();
  const owner = { ...me, attempt: options.attempt, workerPid: process.pid, since: new Date().toISOString() };
  const began = `started ${record.startedAt} by attempt ${record.attempt} on ${record.host}`;
  if (sameHost(me, record)) {
    if (!(await groupAlive(record))) {
      // It may have written its status and ended since the first look: its last process writes
      // the status before it exits, so a group seen gone has written whatever it will write.
      const late = await readExitStatus(files.exit);
      if (late !== undefined) return answer(await readFinished(files, late, false));
      // The worker died after recording the group, before the leader was told to go: run it now.
      if (!(await commandStarted(files))) return undefined;
      return cutOff(
        await readFinished(files, undefined, false),
        `its worker died (${began}) and its processes have ended without recording an exit status`,
      );
    }
    await journal.write({ ...entry, owner: { ...owner, how: 'adopted' } });
    const unregister = await options.registerGroup?.(record);
    const run = await adoptCommand({
      group: record,
      files,
      signal: options.signal,
      progressMs: options.heartbeatMs,
      progress: (outputBytes) => options.heartbeat({ tool: 'Bash', outputBytes, adopted: true }),
    }).finally(() => unregister?.().catch(() => undefined));
    if ('gone' in run) {
      if (!(await commandStarted(files))) return undefined;
      return cutOff(run.gone, `its worker died (${began}) and its processes ended without recording an exit status`);
    }
    return answer(run);
  }
  if (record.host === me.host && record.bootId !== me.bootId) {
    if (!(await commandStarted(files))) return undefined;
    return cutOff(await readFinished(files, undefined, false), `the machine restarted while it ran (${began})`);
  }
  await journal.write({ ...entry, owner: { ...owner, how: 'fenced' } });
  const sofar = await readFinished(files, undefined, false);
  return {
    isError: true,
    content: [
      `The Bash command was ${began}, whose worker stopped answering. It may still be running there, or have ` +
        'stopped part-way; whatever it does from now on is not reported, and it was not run again here.',
      ...(sofar.output ? ['Its output until this attempt took over:', sofar.output.replace(/[\r\n]+$/, '')] : []),
      'Check its effects before retrying it.',
    ].join('\n'),
  };
}

function cutOff(run: Finished, why: string): ToolOutcome {
  const output = run.output.replace(/[\r\n]+$/, '');
  return {
    isError: true,
    content: [
      `The Bash command was cut off part-way: ${why}.`,
      ...(output ? ['Its output until then:', output] : ['It printed nothing until then.']),
      'It was not run again automatically: check its effects before retrying it.',
    ].join('\n'),
  };
}
