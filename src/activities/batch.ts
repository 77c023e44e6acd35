import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import {
  addSummary,
  BATCH_ID_PATTERN,
  emptyTotals,
  PRIOR_COST_MEMO,
  priorWorkOf,
  summaryOf,
  TASK_ID_PATTERN,
  taskFinished,
  taskJobId,
} from '../shared/batch';
import type { BatchTaskSpec, EarlierRunsPage, PriorTaskRun, PriorWork, TaskSummary } from '../shared/batch';
import type { Terminal } from '../shared/terminal';
import { terminalInFailure } from '../shared/terminal-failure';
import { runCommand as run } from '../worker/spawner';
import { mapLimited } from './map-limited';
import type { ContentStore } from './store/content-store';

/** The batch's tasks `from` to `from + count` (a page), from the content store. */
export async function loadBatchTasks(
  store: ContentStore,
  input: { ref: string; from: number; count: number },
): Promise<BatchTaskSpec[]> {
  const tasks = await store.get<BatchTaskSpec[]>(input.ref);
  return tasks.slice(input.from, input.from + input.count);
}

/** How Temporal says a closed job ended, as a task outcome. */
const CLOSED_OUTCOMES: Record<string, TaskSummary['outcome']> = {
  TERMINATED: 'terminated',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TIMED_OUT: 'timed_out',
};

/**
 * How many of a batch's jobs the batch activities look up at once. A rerun looks up every task
 * (a describe, and for a finished job its result); one by one, a batch of 10,000 spent minutes on
 * round trips before it started anything.
 */
const LOOKUPS_AT_ONCE = 8;

/** What an earlier run of the batch left of one task: nothing, a running job, or an ended one. */
async function priorRun(client: Client, batchId: string, id: string): Promise<PriorTaskRun> {
  const handle = client.workflow.getHandle(taskJobId(batchId, id));
  let description: Awaited<ReturnType<typeof handle.describe>>;
  try {
    description = await handle.describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { id, state: 'none' };
    throw error;
  }
  const status = description.status.name;
  if (status === 'RUNNING') return { id, state: 'running' };
  // A continued task's job carries what its earlier jobs cost and took: the task's are the sums.
  const prior = Number(description.memo?.[PRIOR_COST_MEMO] ?? 0) || 0;
  return ended(client, batchId, id, status, prior, priorWorkOf(description.memo));
}

async function ended(
  client: Client,
  batchId: string,
  id: string,
  status: string,
  priorCostUsd: number,
  priorWork: PriorWork,
): Promise<PriorTaskRun> {
  const handle = client.workflow.getHandle(taskJobId(batchId, id));
  const terminal = status === 'COMPLETED' || status === 'FAILED' ? await terminalOf(handle) : undefined;
  if (terminal) {
    const summary = shortDetail(summaryOf(id, terminal));
    return {
      id,
      state: 'ended',
      summary: {
        ...summary,
        costUsd: summary.costUsd + priorCostUsd,
        turns: summary.turns + priorWork.turns,
        durationMs: summary.durationMs + priorWork.durationMs,
      },
      ...(terminal.transcriptHead
        ? { transcript: { head: terminal.transcriptHead, messageCount: terminal.messageCount } }
        : {}),
    };
  }
  const outcome = CLOSED_OUTCOMES[status] ?? 'failed';
  return {
    id,
    state: 'ended',
    summary: {
      id,
      outcome,
      turns: priorWork.turns,
      costUsd: priorCostUsd,
      durationMs: priorWork.durationMs,
      detail: `its job was ${status.toLowerCase()}`,
    },
  };
}

/**
 * A closed job's Terminal: its result, or for a job that did not complete, the one its failure
 * carries. A job failed without one (a real failure of the workflow) has none.
 */
async function terminalOf(handle: { result(): Promise<unknown> }): Promise<Terminal | undefined> {
  try {
    return (await handle.result()) as Terminal;
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    return terminalInFailure<Terminal>(error.cause);
  }
}

/** A summary's detail is cut to this many characters where it goes into the batch's history. */
const DETAIL_MAX = 500;

function shortDetail(summary: TaskSummary): TaskSummary {
  const detail = summary.detail;
  return detail && detail.length > DETAIL_MAX ? { ...summary, detail: `${detail.slice(0, DETAIL_MAX - 1)}…` } : summary;
}

/** For each task id, what an earlier run of the batch left of it (a rerun skips, adopts or continues). */
export async function priorTaskRuns(input: { batchId: string; ids: string[] }): Promise<PriorTaskRun[]> {
  return priorRuns(input.batchId, input.ids);
}

/** `priorRun` for each id, LOOKUPS_AT_ONCE at a time, in the ids' order; heartbeats the count done. */
async function priorRuns(batchId: string, ids: readonly string[]): Promise<PriorTaskRun[]> {
  const context = Context.current();
  let done = 0;
  return mapLimited(ids, LOOKUPS_AT_ONCE, async (id) => {
    const prior = await priorRun(context.client, batchId, id);
    context.heartbeat(++done);
    return prior;
  });
}

/**
 * What the batch's earlier runs left of a page of its tasks, summed: what their ended jobs cost,
 * the finished tasks (not run again) and the jobs still running. A rerun reads this for every task
 * before it starts anything; sums rather than the tasks themselves keep its history small for a
 * batch of thousands.
 */
export async function earlierRunsPage(
  store: ContentStore,
  input: { batchId: string; tasks: { ref: string } | { ids: string[] }; from: number; count: number },
): Promise<EarlierRunsPage> {
  const ids =
    'ids' in input.tasks
      ? input.tasks.ids
      : (await loadBatchTasks(store, { ref: input.tasks.ref, from: input.from, count: input.count })).map(
          (spec) => spec.id,
        );
  const page: Required<EarlierRunsPage> = {
    spentUsd: 0,
    spentWork: { turns: 0, durationMs: 0 },
    finished: emptyTotals(),
    running: [],
  };
  for (const prior of await priorRuns(input.batchId, ids)) {
    const id = prior.id;
    if (prior.state === 'running') page.running.push(id);
    if (prior.state !== 'ended') continue;
    if (!taskFinished(prior.summary)) {
      page.spentUsd += prior.summary.costUsd;
      page.spentWork.turns += prior.summary.turns;
      page.spentWork.durationMs += prior.summary.durationMs;
    } else page.finished = { ...addSummary(page.finished, prior.summary), skipped: page.finished.skipped + 1 };
  }
  return page;
}

/** How often `awaitTaskRuns` looks at the jobs it waits for. */
const AWAIT_LOOK_MS = 2_000;
/**
 * `awaitTaskRuns` returns empty-handed after this long, so the batch can look again: at jobs it
 * adopted since, and whether to continue as new.
 */
const AWAIT_MAX_MS = 60_000;

/**
 * Wait until at least one of the given tasks' jobs (started by an earlier run of the batch, so the
 * batch cannot await them as its children) has ended, and say how each ended one did.
 */
export async function awaitTaskRuns(input: { batchId: string; ids: string[] }): Promise<PriorTaskRun[]> {
  const context = Context.current();
  const deadline = Date.now() + AWAIT_MAX_MS;
  for (;;) {
    const ended = (await priorRuns(input.batchId, input.ids)).filter((prior) => prior.state !== 'running');
    if (ended.length > 0 || Date.now() >= deadline) return ended;
    context.heartbeat();
    await context.sleep(AWAIT_LOOK_MS);
  }
}

/**
 * Make a task's workspace: a fresh clone of `repo` checked out at `ref`, detached, under
 * `<root>/<batch>/<task>`. A clone rather than `git worktree add`: a worktree's git data lives in
 * the source repository, outside the workspace, where the sandbox does not let Bash reach; a local
 * clone hardlinks the objects, so it is about as cheap. A clone left by an earlier attempt or run
 * is kept as it is (the task may have worked in it).
 */
export async function prepareWorktree(
  root: string,
  input: { batchId: string; taskId: string; repo: string; ref: string },
): Promise<{ workspace: string }> {
  if (!BATCH_ID_PATTERN.test(input.batchId) || !TASK_ID_PATTERN.test(input.taskId)) {
    throw ApplicationFailure.create({
      message: `batch ${input.batchId} task ${input.taskId}: ids must be letters, digits, ".", "_" and "-"`,
      type: 'worktree_failed',
      nonRetryable: true,
    });
  }
  if (input.ref.startsWith('-')) {
    throw ApplicationFailure.create({
      message: `task ${input.taskId}: "ref" ${input.ref} starts with "-": give a branch, tag or commit`,
      type: 'worktree_failed',
      nonRetryable: true,
    });
  }
  const workspace = path.join(root, input.batchId, input.taskId);
  const done = path.join(workspace, '.git', 'durable-agent-ready');
  if (await exists(done)) return { workspace: await fs.realpath(workspace) };
  await fs.rm(workspace, { recursive: true, force: true });
  await fs.mkdir(path.dirname(workspace), { recursive: true });
  try {
    await run('git', ['clone', '--quiet', '--no-checkout', input.repo, workspace], { timeout: 10 * 60_000 });
  } catch (error) {
    await fs.rm(workspace, { recursive: true, force: true });
    const stderr = (String((error as { stderr?: string }).stderr ?? '').trim() || (error as Error).message).trim();
    throw ApplicationFailure.create({
      message: `could not clone ${input.repo} for task ${input.taskId}: ${stderr}`,
      type: 'worktree_failed',
      nonRetryable: /not found|does not exist|not a git repository/i.test(stderr),
    });
  }
  // A branch of the source repository is a remote branch of the clone; a tag or commit is itself.
  const commit = await firstCommit(workspace, [input.ref, `origin/${input.ref}`]);
  if (commit === undefined) {
    await fs.rm(workspace, { recursive: true, force: true });
    throw ApplicationFailure.create({
      message: `task ${input.taskId}: ${input.repo} has no branch, tag or commit "${input.ref}"`,
      type: 'worktree_failed',
      nonRetryable: true,
    });
  }
  await run('git', ['-C', workspace, 'checkout', '--quiet', '--detach', commit], { timeout: 10 * 60_000 });
  await fs.writeFile(done, `${input.ref}\n`);
  return { workspace: await fs.realpath(workspace) };
}

async function firstCommit(repo: string, candidates: string[]): Promise<string | undefined> {
  for (const candidate of candidates) {
    const found = await run('git', ['-C', repo, 'rev-parse', '--verify', '--quiet', `${candidate}^{commit}`]).then(
      ({ stdout }) => stdout.trim(),
      () => undefined,
    );
    if (found) return found;
  }
  return undefined;
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
