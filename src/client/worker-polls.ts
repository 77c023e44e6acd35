import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { terminalOf } from './job-terminal';
import type { Terminal } from '../shared/terminal';
import {
  MODEL_KEY,
  OUTCOME_KEY,
  TURNS_KEY,
  COST_KEY,
  RUNNING_OUTCOME,
  WAITING_OUTCOME,
} from '../workflows/search-attributes';
import { formatTerminal } from './render';
import type { PendingActivity } from './live-follower';

/**
 * A worker polls a task queue with long polls of up to a minute; the server stamps its poller when
 * a poll starts and again when it ends. An idle worker's stamp is therefore at most about a minute
 * old, and one older than this means no worker has polled since: it is gone, not idle.
 */
export const NO_POLL_MS = 70_000;

/**
 * How long a query still gets after the server said nobody polls: a worker that polls only
 * another partition of the queue answers well within it.
 */
const NO_POLL_GRACE_MS = 1_000;

/**
 * Whether no worker has polled `taskQueue` for workflow tasks (which is what answers a query)
 * within {@link NO_POLL_MS}. False when the server cannot say: the caller then waits as before.
 */
export async function noWorkerPolls(client: Client, taskQueue: string, now = () => Date.now()): Promise<boolean> {
  const response = await client.workflowService
    .describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    })
    .catch(() => undefined);
  if (!response) return false;
  const polls = (response.pollers ?? [])
    .map((poller) => optionalTsToMs(poller.lastAccessTime))
    .filter((ms): ms is number => ms !== undefined);
  return polls.every((ms) => now() - ms > NO_POLL_MS);
}

/**
 * What `ask` (a query, which only a worker answers) returns within `waitMs`, or `noWorker` as
 * soon as the server says no worker polls `taskQueue`; the query is then cancelled, so nothing
 * keeps the process waiting for it. The DescribeTaskQueue call goes out beside the query, so a
 * job whose worker is there answers as fast as without it. `polled`: {@link noWorkerPolls} of the
 * queue, when one look serves several jobs.
 */
export async function answerUnlessNoWorker<T>(
  client: Client,
  taskQueue: string,
  ask: () => Promise<T>,
  waitMs: number,
  polled: Promise<boolean> = noWorkerPolls(client, taskQueue),
): Promise<{ answer: T } | { noWorker: true }> {
  const cancel = new AbortController();
  const answered = client
    .withAbortSignal(cancel.signal, () => client.withDeadline(Date.now() + waitMs, ask))
    .then((value) => ({ answer: value }));
  answered.catch(() => undefined);
  let grace: NodeJS.Timeout | undefined;
  const nobody = polled.then(async (none) => {
    // Too late to matter (the query answered first): no timer left to hold the process open.
    if (!none || cancel.signal.aborted) return new Promise<never>(() => undefined);
    await new Promise((resolve) => (grace = setTimeout(resolve, NO_POLL_GRACE_MS)));
    return { noWorker: true as const };
  });
  try {
    return await Promise.race([answered, nobody]);
  } finally {
    if (grace) clearTimeout(grace);
    cancel.abort();
  }
}

/** What `status` knows of a job without a worker: the server's description, search attributes and, once ended, its Terminal. */
export interface KnownWithoutWorker {
  status: string;
  taskQueue: string;
  startTime: string;
  closeTime?: string;
  outcome?: string;
  turns?: number;
  costUsd?: number;
  model?: string;
  /** Activities scheduled or running when the worker went (running ones wait for their timeout). */
  pending: Array<{ activity: string; state: string; attempt: number }>;
  terminal?: Terminal;
}

export async function knownWithoutWorker(
  client: Client,
  id: string,
  description: WorkflowExecutionDescription,
  pending: PendingActivity[],
): Promise<KnownWithoutWorker> {
  const attributes = description.typedSearchAttributes;
  const outcome = attributes.get(OUTCOME_KEY);
  const turns = attributes.get(TURNS_KEY);
  const costUsd = attributes.get(COST_KEY);
  const model = attributes.get(MODEL_KEY);
  // An ended job's result is in its history: the server hands it out without a worker.
  // A job that did not complete fails, its Terminal in the failure (`terminalOf` reads either).
  const terminal =
    description.status.name === 'COMPLETED' || description.status.name === 'FAILED'
      ? await terminalOf<Terminal>(client.workflow.getHandle(id, description.runId)).catch(() => undefined)
      : undefined;
  return {
    status: description.status.name,
    taskQueue: description.taskQueue,
    startTime: description.startTime.toISOString(),
    ...(description.closeTime ? { closeTime: description.closeTime.toISOString() } : {}),
    ...(outcome !== undefined ? { outcome } : {}),
    ...(turns !== undefined ? { turns } : {}),
    ...(typeof costUsd === 'number' ? { costUsd } : {}),
    ...(model !== undefined ? { model } : {}),
    pending: pending.map((activity) => ({
      activity: activity.activityType,
      state: activity.state,
      attempt: activity.attempt,
    })),
    ...(terminal?.reason ? { terminal } : {}),
  };
}

/** The lines `status` prints from {@link knownWithoutWorker}. */
export function formatKnownWithoutWorker(id: string, known: KnownWithoutWorker): string {
  const phase = known.terminal ? 'finished' : known.status === 'RUNNING' ? 'running' : known.status.toLowerCase();
  const lines = [`job ${id}: ${phase} (what the server knows; its live state needs a worker)`];
  const facts = [
    known.turns !== undefined && !known.terminal ? `turn ${known.turns}` : undefined,
    known.model ? `model ${known.model}` : undefined,
    `started ${known.startTime}`,
  ].filter((fact) => fact !== undefined);
  lines.push(`  ${facts.join(' · ')}`);
  // A job ended from outside keeps the outcome it had while it ran (`waiting_for_approval`): not an ending.
  const stale = known.status !== 'RUNNING' && known.outcome === WAITING_OUTCOME;
  if (!known.terminal && known.outcome !== undefined && known.outcome !== RUNNING_OUTCOME && !stale) {
    lines.push(`  outcome: ${known.outcome}`);
  }
  for (const call of known.pending) {
    lines.push(
      `  ${call.state === 'started' ? 'running' : 'waiting to start'}: ${call.activity} (attempt ${call.attempt})`,
    );
  }
  if (known.terminal) lines.push(`  ${formatTerminal(known.terminal).replace('\n', '\n  ')}`);
  return lines.join('\n');
}
