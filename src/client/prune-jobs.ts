import {
  QueryNotRegisteredError,
  WorkflowNotFoundError,
  defaultPayloadConverter,
  isGrpcCancelledError,
  isGrpcDeadlineError,
  isGrpcServiceError,
} from '@temporalio/client';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { journalFolderName } from '../activities/workspace-gc';
import type { SessionInput } from '../shared/session';
import type { ContentRef } from '../shared/transcript';
import { storeRootsQuery } from '../workflows/definitions';

const REF_IN_TEXT = /sha256:[0-9a-f]{64}/g;
/** History reads and queries in flight at once. */
const CONCURRENCY = 8;

/** What the jobs Temporal still holds say must stay. */
export interface JobReferences {
  /** Where the mark starts: open jobs' references, and those of jobs closed after the cutoff. */
  roots: Set<ContentRef>;
  /** What each open job itself reported through `storeRoots`: all of it must be in the store. */
  reported: Array<{ jobId: string; refs: ContentRef[] }>;
  /** Journal folders that stay whole (open jobs, and jobs closed after the cutoff). */
  keepJournals: Set<string>;
  /** Workspaces of every job Temporal still holds, open or closed. */
  workspaces: Set<string>;
  openJobs: number;
  /** Runs that closed after the cutoff; their transcripts stay. */
  recentlyClosed: number;
}

/** Prune will not delete anything: what it would need to know to do so safely, it could not learn. */
export class PruneRefusedError extends Error {
  override readonly name = 'PruneRefusedError';
}

/**
 * Ask Temporal what must stay. Every open job answers the `storeRoots` query (a job that cannot
 * answer makes prune refuse: guessing could delete what it needs); its current run's history
 * adds what the workflow holds between State updates (results of the turn's finished tools while
 * another waits for approval, the system prompt). Jobs closed after the cutoff keep the references
 * of their last event (the Terminal's transcript head), so a transcript stays for `age` after its
 * job ended, not `age` after it was written.
 */
export async function jobReferences(
  client: Client,
  options: { cutoffMs: number; queryTimeoutMs: number },
): Promise<JobReferences> {
  const refs: JobReferences = {
    roots: new Set(),
    reported: [],
    keepJournals: new Set(),
    workspaces: new Set(),
    openJobs: 0,
    recentlyClosed: 0,
  };
  const open = await list(client, `WorkflowType = 'agentSession' AND ExecutionStatus = 'Running'`);
  const refusals: string[] = [];
  await eachLimited(open, async (job) => {
    const handle = client.workflow.getHandle(job.workflowId);
    let answer: ContentRef[];
    const deadline = Date.now() + options.queryTimeoutMs;
    try {
      // A deadline, not a race: an abandoned query would go on retrying after the connection closed.
      answer = await client.withDeadline(deadline, () => handle.query(storeRootsQuery));
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return; // gone since the listing: nothing to keep
      refusals.push(whyNoAnswer(job, error, { timeoutMs: options.queryTimeoutMs, timedOut: Date.now() >= deadline }));
      return;
    }
    refs.openJobs += 1;
    refs.reported.push({ jobId: job.workflowId, refs: answer });
    for (const ref of answer) refs.roots.add(ref);
    const events = (await handle.fetchHistory()).events ?? [];
    collectRefs(events, refs.roots);
    const start = startFacts(job, events[0]);
    if (start.workspace) refs.workspaces.add(start.workspace);
    refs.keepJournals.add(journalFolderName(start.sessionKey));
  });
  if (refusals.length > 0) {
    throw new PruneRefusedError(
      `prune refused, nothing was deleted: not every open job said what it still needs.\n` +
        refusals.map((line) => `  - ${line}`).join('\n'),
    );
  }

  // A batch's task list may be in the store (a large batch): kept while the batch runs, and for
  // `age` after it closed (its status and export read it), as a job's transcript is.
  const batches = await list(client, `WorkflowType = 'agentBatch' AND ExecutionStatus != 'ContinuedAsNew'`);
  await eachLimited(batches, async (batch) => {
    if (batch.status.name !== 'RUNNING' && (!batch.closeTime || batch.closeTime.getTime() < options.cutoffMs)) return;
    collectRefs(await firstEvent(client, batch), refs.roots);
  });

  const closed = await list(client, `WorkflowType = 'agentSession' AND ExecutionStatus != 'Running'`);
  await eachLimited(closed, async (job) => {
    const start = startFacts(job, await firstEvent(client, job));
    if (start.workspace) refs.workspaces.add(start.workspace);
    if (!job.closeTime || job.closeTime.getTime() < options.cutoffMs) return;
    refs.recentlyClosed += 1;
    refs.keepJournals.add(journalFolderName(start.sessionKey));
    // A Terminal (or the State handed to the next run) is in the last event; a run that failed
    // without one left its references along its history.
    const ended = job.status.name === 'COMPLETED' || job.status.name === 'CONTINUED_AS_NEW';
    collectRefs(
      ended
        ? await lastEvent(client, job)
        : (await client.workflow.getHandle(job.workflowId, job.runId).fetchHistory()).events,
      refs.roots,
    );
  });
  return refs;
}

/** Why an open job gave prune no answer, and what to do (exported for tests). */
export function whyNoAnswer(
  job: WorkflowExecutionInfo,
  error: unknown,
  { timeoutMs, timedOut }: { timeoutMs: number; timedOut: boolean },
): string {
  const id = job.workflowId;
  if (error instanceof QueryNotRegisteredError) {
    return (
      `job ${id} runs on a worker older than prune (it does not answer the storeRoots query). Restart the ` +
      `workers of task queue ${job.taskQueue} on this version (for the embedded server: \`durable-agent stop\`; ` +
      'the next command starts a new one), then run prune again.'
    );
  }
  // The deadline shows as DEADLINE_EXCEEDED or, now and then, as CANCELLED once it has passed; a
  // server that has seen no poller on the queue for a while says so (FAILED_PRECONDITION).
  if (isGrpcDeadlineError(error) || (timedOut && isGrpcCancelledError(error)) || noPollerSeen(error)) {
    return (
      `job ${id} did not answer within ${Math.round(timeoutMs / 1000)} s: no worker seems to poll its task queue ` +
      `${job.taskQueue}. Start one (\`durable-agent worker --task-queue ${job.taskQueue}\`) and run prune again; ` +
      `a job no worker will run again can be ended with \`temporal workflow terminate --workflow-id ${id}\`.`
    );
  }
  return `job ${id} could not be asked what it needs: ${describe(error)}`;
}

/** gRPC's FAILED_PRECONDITION (the client re-exports no status table). */
const grpcFailedPrecondition = 9;

function noPollerSeen(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (isGrpcServiceError(cause) && cause.code === grpcFailedPrecondition && /no poller/i.test(cause.message)) {
      return true;
    }
  }
  return false;
}

/** The client's message and the server's under it ("Failed to query Workflow" alone says nothing). */
function describe(error: unknown): string {
  const messages: string[] = [];
  for (let cause = error; cause instanceof Error; cause = cause.cause) messages.push(cause.message);
  return messages.length > 0 ? messages.join(': ') : String(error);
}

/** The workspace and session key a run was started with (the key names its journal folder). */
function startFacts(job: WorkflowExecutionInfo, event: unknown): { workspace?: string; sessionKey: string } {
  const attributes = (event as { workflowExecutionStartedEventAttributes?: StartedAttributes } | undefined)
    ?.workflowExecutionStartedEventAttributes;
  const payload = attributes?.input?.payloads?.[0];
  let workspace: string | undefined;
  try {
    const input = payload ? defaultPayloadConverter.fromPayload<Partial<SessionInput>>(payload as Payload) : undefined;
    workspace = typeof input?.workspace === 'string' ? input.workspace : undefined;
  } catch {
    // An input this version cannot read names no workspace; its journal is left alone.
  }
  const firstRunId = attributes?.firstExecutionRunId || job.runId;
  return { ...(workspace ? { workspace } : {}), sessionKey: `${job.workflowId}/${firstRunId}` };
}

interface StartedAttributes {
  firstExecutionRunId?: string | null;
  input?: { payloads?: unknown[] | null } | null;
}

async function firstEvent(client: Client, job: WorkflowExecutionInfo): Promise<unknown> {
  const response = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: job.workflowId, runId: job.runId },
    maximumPageSize: 1,
  });
  return response.history?.events?.[0];
}

async function lastEvent(client: Client, job: WorkflowExecutionInfo): Promise<unknown> {
  const response = await client.workflowService.getWorkflowExecutionHistoryReverse({
    namespace: client.options.namespace,
    execution: { workflowId: job.workflowId, runId: job.runId },
    maximumPageSize: 1,
  });
  return response.history?.events?.[0];
}

/**
 * Every content ref in a piece of history, wherever it sits: payloads are JSON text (this project
 * uses no payload codec), so a ref is found in the bytes without knowing which activity wrote it.
 */
export function collectRefs(value: unknown, into: Set<ContentRef>): void {
  if (typeof value === 'string') {
    for (const match of value.matchAll(REF_IN_TEXT)) into.add(match[0]);
  } else if (value instanceof Uint8Array) {
    collectRefs(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'), into);
  } else if (Array.isArray(value)) {
    for (const item of value) collectRefs(item, into);
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) collectRefs(item, into);
  }
}

async function list(client: Client, query: string): Promise<WorkflowExecutionInfo[]> {
  const jobs: WorkflowExecutionInfo[] = [];
  for await (const job of client.workflow.list({ query })) jobs.push(job);
  return jobs;
}

async function eachLimited<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, lane));
}
