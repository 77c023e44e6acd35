/**
 * The task queues a job's work goes to. Pure, so the workflow (which schedules) and the worker
 * (which polls) derive the same names.
 */

/** What a model queue's name adds to its job's task queue. */
export const MODEL_TASK_QUEUE_SUFFIX = '@model';

/**
 * The task queue of a job's model calls (`callModel`, `compactConversation`): `<taskQueue>@model`,
 * e.g. `durable-agent@model`. Model calls wait on the network for the whole reply, tools use the
 * CPU and child processes; on their own queue they get their own slot count on every worker and a
 * rate the server enforces across all workers of the queue (`maxTaskQueueActivitiesPerSecond`).
 */
export function modelTaskQueue(taskQueue: string): string {
  return `${taskQueue}${MODEL_TASK_QUEUE_SUFFIX}`;
}

/** What a host queue's name adds to its job's task queue, before the host's id. */
export const HOST_TASK_QUEUE_INFIX = '@host:';

/**
 * The task queue of one host (Temporal's worker-specific task queue pattern):
 * `<taskQueue>@host:<hostId>`. Every worker also polls the queue of its own host; a job sends its
 * tool calls, hooks and workspace reads to the queue of the host that holds its workspace.
 */
export function hostTaskQueue(taskQueue: string, hostId: string): string {
  return `${taskQueue}${HOST_TASK_QUEUE_INFIX}${hostId}`;
}

/** The job's task queue and the host id a host queue names, or undefined for any other queue. */
export function parseHostTaskQueue(queue: string): { taskQueue: string; hostId: string } | undefined {
  const at = queue.lastIndexOf(HOST_TASK_QUEUE_INFIX);
  const hostId = at < 0 ? '' : queue.slice(at + HOST_TASK_QUEUE_INFIX.length);
  return hostId ? { taskQueue: queue.slice(0, at), hostId } : undefined;
}
