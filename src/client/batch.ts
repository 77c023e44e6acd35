import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { defaultPayloadConverter, WorkflowNotFoundError } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { InvalidArgumentError } from 'commander';
import { PAID_AGAIN_MEMO, PRIOR_COST_MEMO, priorWorkOf, taskJobId } from '../shared/batch';
import type { BatchInput, BatchSnapshot, BatchTaskSpec, BatchTerminal } from '../shared/batch';
import { formatUsd } from '../shared/pricing';
import { MAX_INLINE_RESUME_CHARS } from '../shared/session';
import { batchSnapshotQuery } from '../workflows/batch-definitions';
import { abortSignal } from '../workflows/definitions';
import { COST_KEY, OUTCOME_KEY, RUNNING_OUTCOME, TURNS_KEY, WAITING_OUTCOME } from '../workflows/search-attributes';
import type { agentBatch } from '../workflows/batch';
import { temporalTargetFromEnv } from './config';
import { openContentStore } from './store-config';
import { exportTranscript } from './export';
import { terminalOf } from './job-terminal';
import { startWithSearchAttributes } from './job-attributes';

export type BatchHandle = WorkflowHandle<typeof agentBatch>;

/** The most tasks that travel in the batch's own input; more go to the content store (as large resumed conversations do). */
const MAX_INLINE_TASK_CHARS = MAX_INLINE_RESUME_CHARS;

/** What `batch` did: started the batch, found it running (a rerun while it runs), or started a rerun of an ended one. */
export type BatchStart = { kind: 'started' | 'attached' | 'rerun'; handle: BatchHandle };

/**
 * Start the batch, or attach to it when it is running (a client killed half-way runs the same
 * command again). A batch that ended is started again under the same id: its new run skips the
 * tasks the earlier run finished and continues the ones it left stopped.
 */
export async function startBatch(
  client: Client,
  batchId: string,
  tasks: BatchTaskSpec[],
  options: { concurrency: number; maxBudgetUsd?: number; taskQueue: string; tasksFile: string },
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
): Promise<BatchStart> {
  const existing = await client.workflow
    .getHandle<typeof agentBatch>(batchId)
    .describe()
    .then((description) => description.status.name)
    .catch((error: unknown) => {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    });
  if (existing !== undefined) await refuseOtherTasks(client, batchId, tasks, existing, env);
  if (existing === 'RUNNING') return { kind: 'attached', handle: client.workflow.getHandle(batchId) };
  const input: BatchInput = {
    tasks: await tasksSource(tasks, env, say),
    concurrency: options.concurrency,
    ...(options.maxBudgetUsd !== undefined ? { maxBudgetUsd: options.maxBudgetUsd } : {}),
    ...(existing !== undefined ? { rerun: true } : {}),
    // A batch that did not complete every task ends failed, with its Terminal.
    ...(existing === 'COMPLETED' || existing === 'FAILED' ? await earlierRunTook(client, batchId) : {}),
  };
  try {
    const handle = await startWithSearchAttributes(
      { workspace: path.dirname(path.resolve(options.tasksFile)), model: tasks[0]?.input.model ?? '' },
      client.options.namespace,
      (attributes) =>
        client.workflow.start<typeof agentBatch>('agentBatch', {
          workflowId: batchId,
          taskQueue: options.taskQueue,
          args: [input],
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          workflowIdConflictPolicy: 'FAIL',
          ...attributes,
        }),
      say,
    );
    return { kind: existing === undefined ? 'started' : 'rerun', handle };
  } catch (error) {
    // Started by another client between the look and the start: follow that one.
    if (error instanceof WorkflowExecutionAlreadyStartedError) {
      return { kind: 'attached', handle: client.workflow.getHandle(batchId) };
    }
    throw error;
  }
}

/**
 * How many tasks the previous run took up, from its Terminal: the rerun then knows a job missing
 * among them was deleted by retention, not never started.
 */
async function earlierRunTook(client: Client, batchId: string): Promise<Pick<BatchInput, 'earlierRunTook'>> {
  const terminal = await terminalOf<BatchTerminal>(client.workflow.getHandle(batchId)).catch(() => undefined);
  if (terminal && typeof terminal.reached === 'number') return { earlierRunTook: terminal.reached };
  return terminal && typeof terminal.tasks === 'number' && typeof terminal.notStarted === 'number'
    ? { earlierRunTook: terminal.tasks - terminal.notStarted }
    : {};
}

/** What makes a task the same task in a rerun: its id, prompt and workspace (or repo and ref). */
function taskKey(task: BatchTaskSpec): string {
  return JSON.stringify([task.input.prompt, task.input.workspace, task.worktree ?? null]);
}

/**
 * A rerun goes on with the batch of the same id; a different task list under that id (another
 * file with the same name, lines moved so their default ids changed) would skip tasks it never
 * ran, or attach to a batch that runs other tasks. Refused, saying how to go on.
 */
async function refuseOtherTasks(
  client: Client,
  batchId: string,
  tasks: BatchTaskSpec[],
  status: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const earlier = await batchTasks(client, batchId, env);
  const before = new Map(earlier.map((task) => [task.id, taskKey(task)]));
  const ids = (list: BatchTaskSpec[]) => list.map((task) => task.id);
  const changed = ids(tasks.filter((task) => before.has(task.id) && before.get(task.id) !== taskKey(task)));
  const added = ids(tasks.filter((task) => !before.has(task.id)));
  const dropped = ids(earlier.filter((task) => !tasks.some((other) => other.id === task.id)));
  if (changed.length + added.length + dropped.length === 0) return;
  const some = (list: string[]) => list.slice(0, 3).join(', ') + (list.length > 3 ? ', ...' : '');
  const differences = [
    changed.length > 0 ? `${changed.length} with another prompt or workspace (${some(changed)})` : '',
    added.length > 0 ? `${added.length} it does not have (${some(added)})` : '',
    dropped.length > 0 ? `${dropped.length} of its tasks missing (${some(dropped)})` : '',
  ].filter((part) => part !== '');
  throw new InvalidArgumentError(
    `batch ${batchId} (${status.toLowerCase()}) was started with other tasks; this file has ` +
      `${differences.join('; ')}. Its jobs are ${batchId}/<task>, so a rerun must give the same tasks. ` +
      `Start a new batch with --batch-id <another id>, or rerun the file batch ${batchId} was started from.`,
  );
}

async function tasksSource(
  tasks: BatchTaskSpec[],
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
): Promise<BatchInput['tasks']> {
  const chars = JSON.stringify(tasks).length;
  if (chars <= MAX_INLINE_TASK_CHARS) return { inline: tasks };
  // The embedded server's workers use this machine's store; a cluster's must share it.
  const store = await openContentStore(env);
  const ref = await store.put(tasks);
  if (temporalTargetFromEnv(env)) {
    say(
      `· the tasks take ${Math.round(chars / 1024)} KiB, over the ${MAX_INLINE_TASK_CHARS / 1024} KiB that travel in ` +
        `the batch's input: they were written to ${store.location}, which the workers must share`,
    );
  }
  return { ref, count: tasks.length };
}

/** One task's line in `batch status` and `results.jsonl`. */
export interface TaskRow {
  task: string;
  job: string;
  outcome: string;
  turns: number | null;
  costUsd: number | null;
  durationMs: number | null;
  /** What calls a crash cut off and that were made again cost, in `costUsd` already (absent: none). */
  paidAgainUsd?: number;
}

/** The tasks of a batch as its latest run's input has them. */
export async function batchTasks(client: Client, batchId: string, env: NodeJS.ProcessEnv): Promise<BatchTaskSpec[]> {
  await requireBatch(client, batchId);
  const history = await client.workflow.getHandle(batchId).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new InvalidArgumentError(`batch ${batchId} has no input to read its tasks from`);
  const input = defaultPayloadConverter.fromPayload<BatchInput>(payload as Payload);
  if ('inline' in input.tasks) return input.tasks.inline;
  return (await openContentStore(env)).get<BatchTaskSpec[]>(input.tasks.ref);
}

/** Refuse an id that names a job (or anything else) rather than a batch; the batch's status. */
async function requireBatch(client: Client, id: string): Promise<string> {
  const { type, status } = await client.workflow
    .getHandle(id)
    .describe()
    .catch((error: unknown) => {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      throw new InvalidArgumentError(
        `no batch "${id}" here: a batch's id is its --batch-id, or its tasks file's name without .jsonl ` +
          "(`durable-agent ls` lists jobs, a batch's as <batch>/<task>; a batch closed longer ago than the retention is gone).",
      );
    });
  if (type !== 'agentBatch') {
    throw new InvalidArgumentError(
      `${id} is a job, not a batch: see it with \`durable-agent status ${id}\` (a batch's jobs are <batch>/<task>).`,
    );
  }
  return status.name;
}

/** The batch's Terminal when it has ended, its live view while it runs. */
export async function batchState(
  client: Client,
  id: string,
): Promise<
  | { ended: true; terminal: BatchTerminal }
  | { ended: false; snapshot: BatchSnapshot | undefined; status: string; taskQueue?: string }
> {
  await requireBatch(client, id);
  const handle: BatchHandle = client.workflow.getHandle(id);
  const description = await handle.describe();
  const status = description.status.name;
  if (status === 'COMPLETED') return { ended: true, terminal: await handle.result() };
  if (status === 'FAILED') {
    // A batch with a task that did not complete, aborted or out of budget, fails with its Terminal.
    const terminal = await terminalOf<BatchTerminal>(handle).catch(() => undefined);
    if (terminal) return { ended: true, terminal };
  }
  if (status !== 'RUNNING') return { ended: false, snapshot: undefined, status };
  // A deadline on the call itself: with no worker, a query waits as long as the server lets it.
  const snapshot = await client
    .withDeadline(Date.now() + NO_WORKER_MS, () => handle.query(batchSnapshotQuery))
    .catch(() => undefined);
  return { ended: false, snapshot, status, taskQueue: description.taskQueue };
}

/** How long a batch's query may go unanswered before the user is told no worker runs it. */
export const NO_WORKER_MS = 15_000;

/** What to tell a user whose batch no worker answers for: where its tasks wait, and what to start. */
export function noWorkerAdvice(batchId: string, taskQueue: string): string {
  return (
    `no worker has answered batch ${batchId} for ${NO_WORKER_MS / 1000} s, so its tasks wait: start one for task queue ` +
    `${taskQueue} with \`durable-agent worker --task-queue ${taskQueue}\` (on the embedded server, running ` +
    `\`durable-agent batch\` again starts its background worker)`
  );
}

/**
 * Every task's row: its job's outcome, turns, cost and duration. Jobs are listed from Temporal's
 * visibility (outcome, turns and cost are the job's search attributes); a closed job whose
 * attributes are missing (a namespace without them) is asked for its Terminal.
 */
export async function taskRows(client: Client, batchId: string, tasks: BatchTaskSpec[]): Promise<TaskRow[]> {
  return (await taskRuns(client, batchId, tasks)).map(({ runId: _runId, ...row }) => row);
}

/** `taskRows`, each with the run of its job it was read from (none for a task not started). */
async function taskRuns(
  client: Client,
  batchId: string,
  tasks: BatchTaskSpec[],
): Promise<Array<TaskRow & { runId?: string }>> {
  // A rerun's job is a new run under the same id: the newest run of each id is the task's.
  const jobs = new Map<string, TaskRow & { startedAt: number; runId: string }>();
  const query = `WorkflowId STARTS_WITH "${batchId.replace(/"/g, '\\"')}/" AND ExecutionStatus != 'ContinuedAsNew'`;
  const byJob = new Map(tasks.map((task) => [taskJobId(batchId, task.id), task.id]));
  for await (const info of client.workflow.list({ query, pageSize: 1000 })) {
    const task = byJob.get(info.workflowId);
    if (task === undefined) continue;
    const known = jobs.get(task);
    if (known && known.startedAt >= info.startTime.getTime()) continue;
    const attributes = info.typedSearchAttributes;
    const running = info.status.name === 'RUNNING';
    let outcome: string = running ? 'running' : (attributes.get(OUTCOME_KEY) ?? info.status.name.toLowerCase());
    let turns: number | null = running ? null : (attributes.get(TURNS_KEY) ?? null);
    let costUsd: number | null = running ? null : (attributes.get(COST_KEY) ?? null);
    // A job that did not complete failed with its Terminal; one failed without it reads as `failed`.
    const closed = info.status.name === 'COMPLETED' || info.status.name === 'FAILED';
    if (closed && (turns === null || outcome === 'running')) {
      const terminal = await terminalOf(client.workflow.getHandle(info.workflowId, info.runId)).catch(() => undefined);
      if (terminal) {
        outcome = terminal.reason;
        turns = terminal.turnCount;
        costUsd = typeof terminal.totalCostUsd === 'number' ? terminal.totalCostUsd : null;
      }
    }
    // Ended from outside, or failed without a Terminal: its attribute still says what it was doing.
    if (!running && !closedWithTerminal(info.status.name, outcome)) outcome = info.status.name.toLowerCase();
    // A continued task's job carries what its earlier jobs cost and took: the task's row has the
    // sums, as the batch's Terminal does.
    const priorCostUsd = Number(info.memo?.[PRIOR_COST_MEMO] ?? 0) || 0;
    const prior = priorWorkOf(info.memo);
    if (costUsd !== null) costUsd += priorCostUsd;
    if (turns !== null) turns += prior.turns;
    const durationMs = info.closeTime ? info.closeTime.getTime() - info.startTime.getTime() + prior.durationMs : null;
    const paidAgainUsd = Number(info.memo?.[PAID_AGAIN_MEMO] ?? 0) || 0;
    jobs.set(task, {
      task,
      job: info.workflowId,
      outcome,
      turns,
      costUsd,
      durationMs,
      ...(paidAgainUsd > 0 ? { paidAgainUsd } : {}),
      startedAt: info.startTime.getTime(),
      runId: info.runId,
    });
  }
  return tasks.map(
    (task) =>
      rowOf(jobs.get(task.id)) ?? {
        task: task.id,
        job: taskJobId(batchId, task.id),
        outcome: 'not started',
        turns: null,
        costUsd: null,
        durationMs: null,
      },
  );
}

/** A closed job's outcome is its Terminal's reason unless it was ended without one. */
function closedWithTerminal(status: string, outcome: string): boolean {
  return status === 'COMPLETED' || (outcome !== RUNNING_OUTCOME && outcome !== WAITING_OUTCOME && outcome !== 'failed');
}

function rowOf(
  found: (TaskRow & { startedAt: number; runId: string }) | undefined,
): (TaskRow & { runId: string }) | undefined {
  if (!found) return undefined;
  const { startedAt: _startedAt, ...row } = found;
  return row;
}

/** The table `batch status` prints. */
export function formatRows(rows: TaskRow[]): string {
  const header = ['task', 'outcome', 'turns', 'cost', 'duration'];
  const cells = rows.map((row) => [
    row.task,
    row.outcome,
    row.turns === null ? '-' : String(row.turns),
    row.costUsd === null ? '-' : `${formatUsd(row.costUsd)}${row.paidAgainUsd ? '*' : ''}`,
    row.durationMs === null ? '-' : formatDuration(row.durationMs),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((cell) => cell[column]!.length)));
  const line = (cell: string[]) =>
    cell
      .map((value, column) => (column >= 2 ? value.padStart(widths[column]!) : value.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...cells.map(line)].join('\n');
}

/** The footnote to the `*` {@link formatRows} marks costs with; undefined when none is marked. */
export function paidAgainNote(rows: TaskRow[]): string | undefined {
  const paidAgain = rows.filter((row) => row.paidAgainUsd);
  if (paidAgain.length === 0) return undefined;
  return (
    `* includes calls a crash cut off, made again and billed twice: ` +
    paidAgain.map((row) => `${row.task} ${formatUsd(row.paidAgainUsd ?? 0)}`).join(', ')
  );
}

export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** The words on a budget stop's two figures: what was spent at the stop, and what came after it. */
function afterTheStop(t: BatchTerminal): string[] {
  if (t.stoppedAtUsd === undefined) return [];
  const after = t.costUsd - t.stoppedAtUsd;
  return [
    `  the budget stopped the batch when ${formatUsd(t.stoppedAtUsd)} was spent` +
      (after > 0 ? `; the calls already running then cost ${formatUsd(after)} more as they finished` : ''),
  ];
}

/** The batch's summary line(s): its Terminal, or where it stands while it runs. */
export function formatBatchSummary(batchId: string, state: Awaited<ReturnType<typeof batchState>>): string {
  if (state.ended) {
    const t = state.terminal;
    const outcomes = Object.entries(t.outcomes)
      .map(([outcome, count]) => `${outcome} ${count}`)
      .join(', ');
    return [
      `batch ${batchId} ${t.reason}${t.detail ? ` (${t.detail})` : ''}`,
      `  tasks ${t.tasks}: ${outcomes || 'none ended'}${t.notStarted ? `; not started ${t.notStarted}` : ''}` +
        `${t.skipped ? `; finished by an earlier run ${t.skipped}` : ''}${t.continued ? `; continued ${t.continued}` : ''}`,
      `  turns ${t.turns} · cost ${formatUsd(t.costUsd)} in all` +
        `${t.maxBudgetUsd !== undefined ? `, against a budget of ${formatUsd(t.maxBudgetUsd)}` : ''} · ${formatDuration(t.durationMs)}`,
      ...afterTheStop(t),
      ...(t.paidAgainUsd
        ? [`  of which ${formatUsd(t.paidAgainUsd)} paid again for calls a crash cut off (made again, billed twice)`]
        : []),
    ].join('\n');
  }
  if (!state.snapshot) {
    return state.status === 'RUNNING' && state.taskQueue
      ? `batch ${batchId} is running, but ${noWorkerAdvice(batchId, state.taskQueue)}`
      : `batch ${batchId} is ${state.status.toLowerCase()}`;
  }
  const s = state.snapshot;
  const endedCount = Object.values(s.totals.outcomes).reduce((sum, count) => sum + count, 0);
  return (
    `batch ${batchId} running: ${endedCount}/${s.tasks} ended, ${s.running.length} running, ${s.tasks - s.next - (s.ahead ?? 0)} waiting` +
    ` · spent ${formatUsd(s.spentUsd)}${s.maxBudgetUsd !== undefined ? ` of the ${formatUsd(s.maxBudgetUsd)} budget` : ''}` +
    `${s.stop ? ` · stopping: ${s.stop.detail}` : ''}`
  );
}

/**
 * Follow a batch until it ends, a line each time a task ends; then its Terminal. When no worker
 * answers for `NO_WORKER_MS`, `noAnswer` is asked what to say (and may start one); once one
 * answers again, the user hears that too.
 */
export async function followBatch(
  handle: BatchHandle,
  say: (line: string) => void,
  options: { pollMs?: number; warn?: (line: string) => void; noAnswer?: (taskQueue: string) => Promise<string> } = {},
): Promise<BatchTerminal> {
  const pollMs = options.pollMs ?? 1_000;
  let last = '';
  let lastAnswer = Date.now();
  let silent = false;
  const result = terminalOf<BatchTerminal>(handle);
  let done = false;
  // Settled either way; `finally` would make a second promise whose rejection nothing handles.
  const settled = () => {
    done = true;
  };
  result.then(settled, settled);
  while (!done) {
    const snapshot = await handle.client
      .withDeadline(Date.now() + NO_WORKER_MS, () => handle.query(batchSnapshotQuery))
      .catch(() => undefined);
    if (snapshot) {
      lastAnswer = Date.now();
      if (silent) (options.warn ?? say)(`· a worker answers batch ${handle.workflowId} again`);
      silent = false;
      const line = formatBatchSummary(handle.workflowId, { ended: false, snapshot, status: 'RUNNING' });
      if (line !== last) say(line);
      last = line;
    } else if (!done && !silent && Date.now() - lastAnswer >= NO_WORKER_MS) {
      silent = true;
      const taskQueue = await handle
        .describe()
        .then((description) => description.taskQueue)
        .catch(() => '(unknown)');
      const advice = noWorkerAdvice(handle.workflowId, taskQueue);
      (options.warn ?? say)(`· ${options.noAnswer ? await options.noAnswer(taskQueue).catch(() => advice) : advice}`);
    }
    await Promise.race([sleep(pollMs), result.catch(() => undefined)]);
  }
  return result;
}

/** `batch abort`: the batch stops starting tasks and aborts the running ones. */
export async function abortBatch(client: Client, batchId: string, reason: string | undefined): Promise<void> {
  const status = await requireBatch(client, batchId);
  if (status !== 'RUNNING') {
    throw new InvalidArgumentError(`batch ${batchId} already ended (${status.toLowerCase()}); nothing to abort.`);
  }
  await client.workflow.getHandle(batchId).signal(abortSignal, reason);
}

/** A task's line in `results.jsonl`: its row, with its job's answer and what its Terminal said of its end. */
export interface ExportRow extends TaskRow {
  /** The job's final text; null when it has none (it ended without answering, or has no Terminal). */
  answer: string | null;
  /** The Terminal's detail (why it stopped, what failed); null when it gave none. */
  detail: string | null;
}

/**
 * `batch export`: every task's transcript as `transcripts/<task>.jsonl` and `results.jsonl` (one
 * row per task, with its answer) in `dir`. Tasks without a transcript (not started, still running,
 * ended before talking) get their row only.
 */
export async function exportBatch(
  client: Client,
  batchId: string,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ transcripts: number; rows: ExportRow[]; skipped: string[] }> {
  const tasks = await batchTasks(client, batchId, env);
  const runs = await taskRuns(client, batchId, tasks);
  const rows: ExportRow[] = runs.map(({ runId: _runId, ...row }) => ({ ...row, answer: null, detail: null }));
  prepareExportFolder(dir, batchId);
  let transcripts = 0;
  const skipped: string[] = [];
  for (const [index, row] of rows.entries()) {
    const runId = runs[index]?.runId;
    if (row.outcome === 'running' || row.outcome === 'not started' || runId === undefined) {
      skipped.push(`${row.task} (${row.outcome})`);
      continue;
    }
    // The run the row was read from, which has ended: a newer run under the id (a rerun that
    // continues the task) is not waited for, and answer and transcript both come from the run
    // the row's outcome and cost do. Only a run that ended by itself (completed, or failed with
    // its Terminal) has one.
    const terminal = await terminalOf(client.workflow.getHandle(row.job, runId)).catch(() => undefined);
    row.answer = terminal?.finalText || null;
    row.detail = terminal?.detail || null;
    try {
      const { text } = await exportTranscript(client, row.job, env, runId);
      fs.writeFileSync(path.join(dir, 'transcripts', `${row.task}.jsonl`), text);
      transcripts += 1;
    } catch (error) {
      skipped.push(`${row.task} (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  fs.writeFileSync(path.join(dir, 'results.jsonl'), rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
  return { transcripts, rows, skipped };
}

/**
 * The export's folder, made if missing: a new or empty one, or an earlier export of this batch
 * (written over, task by task). Anything else is refused, so no file of somebody's is overwritten
 * and no other batch's transcripts end up mixed in.
 */
function prepareExportFolder(dir: string, batchId: string): void {
  const choose = `name a new or empty folder with --output (the default is ./${batchId}-export)`;
  const info = fs.statSync(dir, { throwIfNoEntry: false });
  if (info && !info.isDirectory())
    throw new InvalidArgumentError(`--output ${dir} is a file, not a folder: ${choose}.`);
  if (info && fs.readdirSync(dir).length > 0 && !isExportOf(dir, batchId)) {
    throw new InvalidArgumentError(
      `--output ${dir} already holds files that are not an export of batch ${batchId}, which would be overwritten ` +
        `or mixed in: ${choose}.`,
    );
  }
  // One level at a time: a recursive mkdir can loop forever under /proc.
  const missing: string[] = [];
  for (let at = path.resolve(dir, 'transcripts'); !fs.existsSync(at); at = path.dirname(at)) missing.unshift(at);
  for (const folder of missing) {
    try {
      fs.mkdirSync(folder);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      const why =
        code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? 'no permission to write there'
          : code === 'ENOTDIR'
            ? 'a part of that path is a file'
            : code === 'ENOENT'
              ? 'that place cannot hold folders'
              : (error as Error).message;
      throw new InvalidArgumentError(`could not make the export folder ${folder} (${why}): ${choose}.`);
    }
  }
}

/** An earlier `batch export` of this batch: its results.jsonl names this batch's jobs. */
function isExportOf(dir: string, batchId: string): boolean {
  try {
    const first = fs.readFileSync(path.join(dir, 'results.jsonl'), 'utf8').split('\n')[0] ?? '';
    const row = JSON.parse(first) as Partial<TaskRow>;
    return typeof row.job === 'string' && row.job.startsWith(`${batchId}/`);
  } catch {
    return false;
  }
}
