/**
 * `durable-agent tail <id>`: what a job did so far, then what it does, live, until it ends. Only
 * watches: interrupting it (Ctrl-C) leaves the job running, and tailing again starts from the
 * beginning of what the job still keeps.
 */
import { WorkflowFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Terminal } from '../shared/terminal';
import { FollowStopped, follow } from './jobs';
import type { JobHandle } from './jobs';
import { endedOutsideExitCode, exitCodeFor, formatTerminal } from './render';
import type { ExitStatusScheme, Output } from './render';

/** Exit status of a `tail` interrupted by Ctrl-C, as a shell reports a command ended by SIGINT. */
export const TAIL_INTERRUPTED_EXIT = 130;

export interface TailOptions {
  /** Stops tailing (Ctrl-C); the job runs on. */
  signal: AbortSignal;
  /** Where the "keeps running" note goes (stderr, so stdout holds only the job's view). */
  notes: Output;
  pollMs?: number;
  /** See `FollowOptions.noWorker`. */
  noWorker?: (afterMs: number) => Promise<string | undefined>;
  /** `--exit-status`; default `simple`. */
  exitStatus?: ExitStatusScheme;
}

/**
 * Follow job `id` from its first kept event to its Terminal and return the exit status: the job's
 * (as `result` has it), or {@link TAIL_INTERRUPTED_EXIT} when stopped. An unknown id throws the
 * client's `WorkflowNotFoundError`, which the CLI explains.
 */
export async function tailJob(client: Client, id: string, out: Output, options: TailOptions): Promise<number> {
  const handle: JobHandle = client.workflow.getHandle(id);
  const description = await handle.describe(); // an unknown id fails here, before anything is printed
  const running = description.status.name === 'RUNNING';
  options.notes.write(
    running
      ? `tailing job ${id}; Ctrl-C stops watching, not the job`
      : `job ${id} has ended (${description.status.name}); what it did:`,
  );
  let terminal: Terminal;
  try {
    terminal = await follow(handle, out, {
      signal: options.signal,
      ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
      ...(options.noWorker ? { noWorker: options.noWorker } : {}),
    });
  } catch (error) {
    if (error instanceof WorkflowFailedError) {
      const why = error.cause?.message || error.message;
      options.notes.write(
        `job ${id} ended from outside (${why}); it has no Terminal (see its history: temporal workflow show -w ${id})`,
      );
      return endedOutsideExitCode(options.exitStatus ?? 'simple');
    }
    if (!(error instanceof FollowStopped)) throw error;
    options.notes.write(`stopped tailing; job ${id} keeps running (durable-agent tail ${id} to watch again)`);
    return TAIL_INTERRUPTED_EXIT;
  }
  out.write(`\n${formatTerminal(terminal)}`);
  return exitCodeFor(terminal, options.exitStatus ?? 'simple');
}
