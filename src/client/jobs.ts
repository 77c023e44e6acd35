import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { SessionInput } from '../shared/session';
import type { Terminal } from '../shared/terminal';
import type { PendingApproval } from '../shared/session';
import { approvalSignal, DEFAULT_TASK_QUEUE, snapshotQuery } from '../workflows/definitions';
import type { agentSession } from '../workflows/agent-session';
import { EventPrinter } from './render';
import type { Output } from './render';

export type JobHandle = WorkflowHandle<typeof agentSession>;

export type StartOutcome =
  | { kind: 'started'; handle: JobHandle }
  | { kind: 'attached'; handle: JobHandle }
  | { kind: 'finished'; handle: JobHandle; status: string };

export function newJobId(now = new Date()): string {
  return `job-${now.toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
}

/**
 * Start a job, or attach to the running one with the same id, so a retried CI step never starts a
 * second job. An id whose job already finished is not reused: its result stands.
 */
export async function startOrAttach(
  client: Client,
  jobId: string,
  input: SessionInput,
  taskQueue = DEFAULT_TASK_QUEUE,
): Promise<StartOutcome> {
  try {
    const handle = await client.workflow.start<typeof agentSession>('agentSession', {
      workflowId: jobId,
      taskQueue,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'FAIL',
    });
    return { kind: 'started', handle };
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    const handle = client.workflow.getHandle<typeof agentSession>(jobId);
    const { status } = await handle.describe();
    return status.name === 'RUNNING' ? { kind: 'attached', handle } : { kind: 'finished', handle, status: status.name };
  }
}

/** What a person answered at the terminal; `skip` leaves the call to `approve`/`deny` elsewhere. */
export type ApprovalChoice = 'allow' | 'always' | 'deny' | 'skip';

/**
 * Asks a person about one pending call. `signal` fires when the call was answered elsewhere (or the
 * job ended), and the question must then be withdrawn.
 */
export type Approver = (pending: PendingApproval, signal: AbortSignal) => Promise<ApprovalChoice>;

export interface FollowOptions {
  pollMs?: number;
  /** Ask about pending approvals here (an interactive terminal); without it, print the commands. */
  approver?: Approver;
}

/**
 * Print a job's progress until it ends, then return its Terminal. Polls the snapshot query; a
 * job with no worker to answer gets one hint, not a hang in silence.
 */
export async function follow(handle: JobHandle, out: Output, options: FollowOptions = {}): Promise<Terminal> {
  const printer = new EventPrinter(out);
  let done: Terminal | undefined;
  let failure: unknown;
  const result = handle.result().then(
    (terminal) => (done = terminal),
    (error: unknown) => (failure = error ?? new Error('job failed')),
  );
  let warned = false;
  const announced = new Set<string>();
  let asking: { toolUseId: string; controller: AbortController } | undefined;
  while (done === undefined && failure === undefined) {
    try {
      const snapshot = await Promise.race([
        handle.query(snapshotQuery, printer.lastSeq),
        sleep(10_000).then(() => undefined),
      ]);
      if (snapshot) {
        printer.print(snapshot.events);
        const pendingIds = new Set(snapshot.pendingApprovals.map((pending) => pending.toolUseId));
        if (asking && !pendingIds.has(asking.toolUseId)) asking.controller.abort();
        for (const pending of snapshot.pendingApprovals) {
          if (announced.has(pending.toolUseId)) continue;
          announced.add(pending.toolUseId);
          out.write(approvalHint(handle.workflowId, pending));
        }
        const next = snapshot.pendingApprovals[0];
        if (options.approver && !asking && next)
          asking = ask(handle, next, options.approver, () => (asking = undefined));
      } else if (!warned) {
        warned = true;
        out.write('· no worker has answered for 10 s; is `durable-agent worker` running for this task queue?');
      }
    } catch {
      // A query can fail while the job moves between workers or continues as new; the next poll retries.
    }
    await Promise.race([result, sleep(options.pollMs ?? 300)]);
  }
  asking?.controller.abort();
  if (failure !== undefined) throw failure;
  try {
    printer.print((await handle.query(snapshotQuery, printer.lastSeq)).events);
  } catch {
    // The final events are a courtesy; the Terminal below is what counts.
  }
  return done as Terminal;
}

function approvalHint(jobId: string, pending: PendingApproval): string {
  return (
    `  ⏸ ${pending.toolName} needs approval (${pending.reason}). From any shell:\n` +
    `    durable-agent approve ${jobId}            # or --always to add ${pending.suggestedRule}\n` +
    `    durable-agent deny ${jobId} --reason "..."`
  );
}

/** Put one pending call to the approver and send its answer; withdrawn when answered elsewhere. */
function ask(
  handle: JobHandle,
  pending: PendingApproval,
  approver: Approver,
  onSettled: () => void,
): { toolUseId: string; controller: AbortController } {
  const controller = new AbortController();
  void approver(pending, controller.signal)
    .then(async (choice) => {
      if (controller.signal.aborted || choice === 'skip') return;
      await handle.signal(approvalSignal, {
        toolUseId: pending.toolUseId,
        decision: choice === 'deny' ? 'deny' : 'allow',
        always: choice === 'always',
        ...(choice === 'deny' ? { reason: 'denied at the terminal' } : {}),
      });
    })
    .catch(() => undefined)
    .finally(onSettled);
  return { toolUseId: pending.toolUseId, controller };
}
