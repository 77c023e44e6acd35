import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { SessionInput } from '../shared/session';
import type { Terminal } from '../shared/terminal';
import { DEFAULT_TASK_QUEUE, snapshotQuery } from '../workflows/definitions';
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

/**
 * Print a job's progress until it ends, then return its Terminal. Polls the snapshot query; a
 * job with no worker to answer gets one hint, not a hang in silence.
 */
export async function follow(handle: JobHandle, out: Output, options: { pollMs?: number } = {}): Promise<Terminal> {
  const printer = new EventPrinter(out);
  let done: Terminal | undefined;
  let failure: unknown;
  const result = handle.result().then(
    (terminal) => (done = terminal),
    (error: unknown) => (failure = error ?? new Error('job failed')),
  );
  let warned = false;
  const announced = new Set<string>();
  while (done === undefined && failure === undefined) {
    try {
      const snapshot = await Promise.race([
        handle.query(snapshotQuery, printer.lastSeq),
        sleep(10_000).then(() => undefined),
      ]);
      if (snapshot) {
        printer.print(snapshot.events);
        for (const pending of snapshot.pendingApprovals ?? []) {
          if (announced.has(pending.toolUseId)) continue;
          announced.add(pending.toolUseId);
          const id = handle.workflowId;
          out.write(
            `  ⏸ ${pending.toolName} needs approval (${pending.reason}). From any shell:\n` +
              `    durable-agent approve ${id}            # or --always to add ${pending.suggestedRule}\n` +
              `    durable-agent deny ${id} --reason "..."`,
          );
        }
      } else if (!warned) {
        warned = true;
        out.write('· no worker has answered for 10 s; is `durable-agent worker` running for this task queue?');
      }
    } catch {
      // A query can fail while the job moves between workers or continues as new; the next poll retries.
    }
    await Promise.race([result, sleep(options.pollMs ?? 300)]);
  }
  if (failure !== undefined) throw failure;
  try {
    printer.print((await handle.query(snapshotQuery, printer.lastSeq)).events);
  } catch {
    // The final events are a courtesy; the Terminal below is what counts.
  }
  return done as Terminal;
}
