import { readFile, rm } from 'node:fs/promises';
import { WorkflowClient, type Client } from '@temporalio/client';
import { GroupRegistry, type GroupRecord } from '../activities/store/group-registry';
import type { JournalEntry } from '../activities/tool-journal';
import { groupAlive, killCommand, sameHost, thisHost } from '../activities/tools/command-run';
import { isProcessAlive } from '../client/free-port';

/** What one look at the registry did, for the worker's log. */
export interface OrphanAction {
  record: GroupRecord;
  action: 'killed' | 'waiting';
  why: string;
}

/**
 * Look after the process groups that workers on this host left behind when they died: a group
 * whose call a retry may still adopt (journaled, its activity still pending, within its own
 * timeout) is left for it; every other one can no longer be supervised and is killed: an
 * unjournaled (read-only) call, which its retry simply runs again; a call another host fenced off
 * or that finished meanwhile; a call whose job moved on or ended; one past its timeout. Groups
 * that ended are taken off the record.
 */
export async function superviseOrphanGroups(
  storeRoot: string,
  client?: Client,
  releasePlaceholders?: (paths: readonly string[]) => Promise<void>,
): Promise<OrphanAction[]> {
  const me = await thisHost();
  const actions: OrphanAction[] = [];
  for (const { file, record } of await new GroupRegistry(storeRoot).list()) {
    if (!sameHost(me, record) || record.workerPid === process.pid || isProcessAlive(record.workerPid)) continue;
    if (!(await groupAlive(record))) {
      if (record.placeholders?.length) await releasePlaceholders?.(record.placeholders).catch(() => undefined);
      await rm(file, { force: true });
      continue;
    }
    const why = await whyUnsupervisable(record, client);
    if (why === undefined) {
      actions.push({ record, action: 'waiting', why: 'a retry of its call may still adopt it' });
      continue;
    }
    await killCommand(record);
    if (record.placeholders?.length) await releasePlaceholders?.(record.placeholders).catch(() => undefined);
    await rm(file, { force: true });
    actions.push({ record, action: 'killed', why });
  }
  return actions;
}

/** Why nobody will supervise the group again, or undefined while a retry may still adopt it. */
async function whyUnsupervisable(record: GroupRecord, client: Client | undefined): Promise<string | undefined> {
  if (!record.journalEntry) return 'its call is read-only and runs again from the start';
  if (Date.now() >= Date.parse(record.startedAt) + record.timeoutMs) return 'it ran past its own timeout';
  const entry = await readFile(record.journalEntry, 'utf8')
    .then((text) => JSON.parse(text) as JournalEntry)
    .catch(() => undefined);
  if (entry?.status === 'completed') return 'its call was answered meanwhile';
  if (entry?.status === 'started' && entry.owner?.how === 'fenced')
    return `attempt ${entry.owner.attempt} on ${entry.owner.host} took its call over`;
  if (client && record.workflowId && record.activityId) {
    // Asked in the job's own namespace: a worker of another one on this host would not find the
    // job in its own, and take that for an ended job.
    const jobs =
      record.namespace && record.namespace !== client.options.namespace
        ? new WorkflowClient({ connection: client.connection, namespace: record.namespace })
        : client.workflow;
    const pending = await activityPending(jobs, record.workflowId, record.runId, record.activityId);
    if (pending === false) return 'its job no longer waits for the call';
  }
  return undefined;
}

/** Whether the job still waits for the activity; undefined when the server cannot say now. */
async function activityPending(
  jobs: WorkflowClient,
  workflowId: string,
  runId: string | undefined,
  activityId: string,
): Promise<boolean | undefined> {
  try {
    const description = await jobs.getHandle(workflowId, runId).describe();
    if (description.status.name !== 'RUNNING') return false;
    return (description.raw.pendingActivities ?? []).some((activity) => activity.activityId === activityId);
  } catch (error) {
    return (error as Error).name === 'WorkflowNotFoundError' ? false : undefined;
  }
}
