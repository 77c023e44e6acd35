import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { parseHostTaskQueue } from '../shared/task-queues';

/** The activities a job sends to the host that holds its workspace (`sessionActivities`' `onHost`). */
const HOST_ACTIVITIES = new Set(['runTool', 'runHooks', 'buildSystemPrompt', 'loadSettings', 'loadPermissionSettings']);
/**
 * How long a call for the host may wait unstarted before the job counts as parked. A host whose
 * worker is up and has a free slot starts a call within a second; a retry's own backoff is short.
 */
export const PARKED_AFTER_MS = 10_000;

/** The workspace host of a running job, as `status` reports it. */
export interface WorkspaceHost {
  id: string;
  /** The host's own queue, `<job's task queue>@host:<id>`. */
  taskQueue: string;
  /** The job's task queue, which a worker for the host is started with. */
  jobTaskQueue: string;
  /** The newest poll of the host's queue the server remembers (it forgets pollers after 5 minutes). */
  lastPolledAt?: string;
  /** Set when a call for the host has waited unstarted past {@link PARKED_AFTER_MS}. */
  parked?: { activity: string; waitingSince: string };
}

/**
 * Whether the job waits for its workspace's host: a tool call, hook or workspace read scheduled
 * on the host's queue and not taken up. The job is not stuck for good: Temporal keeps the call
 * until a worker of that host polls again, and the job then goes on where it stopped.
 */
export async function describeWorkspaceHost(
  client: Client,
  hostQueue: string,
  description: WorkflowExecutionDescription,
  now = Date.now(),
): Promise<WorkspaceHost> {
  const parsed = parseHostTaskQueue(hostQueue);
  const host: WorkspaceHost = {
    id: parsed?.hostId ?? hostQueue,
    taskQueue: hostQueue,
    jobTaskQueue: parsed?.taskQueue ?? description.taskQueue,
  };
  const waiting = (description.raw.pendingActivities ?? [])
    .filter(
      (info) =>
        HOST_ACTIVITIES.has(info.activityType?.name ?? '') &&
        info.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED,
    )
    .map((info) => ({ activity: info.activityType?.name ?? '', since: optionalTsToMs(info.scheduledTime) }))
    .filter((call): call is { activity: string; since: number } => call.since !== undefined)
    .sort((a, b) => a.since - b.since)[0];
  if (waiting && now - waiting.since >= PARKED_AFTER_MS) {
    host.parked = { activity: waiting.activity, waitingSince: new Date(waiting.since).toISOString() };
  }
  const response = await client.workflowService
    .describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: hostQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    })
    .catch(() => undefined); // what the job itself says is worth showing without it
  const polls = (response?.pollers ?? [])
    .map((poller) => optionalTsToMs(poller.lastAccessTime))
    .filter((ms): ms is number => ms !== undefined);
  if (polls.length > 0) host.lastPolledAt = new Date(Math.max(...polls)).toISOString();
  return host;
}

/** The status lines of a workspace host: one when all is well, what to do when the job is parked. */
export function formatWorkspaceHost(host: WorkspaceHost, now = Date.now()): string[] {
  const polled = host.lastPolledAt
    ? `its worker last polled ${ago(now - Date.parse(host.lastPolledAt))} ago`
    : 'no worker has polled its queue in the last 5 minutes';
  if (!host.parked) return [`  workspace host: ${host.id}`];
  return [
    `  parked: waiting for the workspace host ${host.id} — a ${host.parked.activity} call has waited ` +
      `${ago(now - Date.parse(host.parked.waitingSince))} for it, and ${polled} (gone, or every tool slot busy).`,
    `    Nothing is lost: the job goes on where it stopped once a worker on that machine runs again ` +
      `(\`durable-agent worker\` with DURABLE_AGENT_HOST_ID=${host.id}, --task-queue ${host.jobTaskQueue}).`,
  ];
}

function ago(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 120 ? `${minutes} min` : `${Math.round(minutes / 60)} h`;
}
