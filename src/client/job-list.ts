import { InvalidArgumentError } from 'commander';
import { WorkflowFailedError } from '@temporalio/client';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { PendingApproval, SessionSnapshot } from '../shared/session';
import { TERMINAL_REASONS } from '../shared/terminal';
import type { Terminal, TerminalReason } from '../shared/terminal';
import { snapshotQuery } from '../workflows/definitions';
import { withAgentApprovals } from './agent-approvals';
import {
  COST_KEY,
  MODEL_KEY,
  OUTCOME_KEY,
  RUNNING_OUTCOME,
  TURNS_KEY,
  WAITING_OUTCOME,
} from '../workflows/search-attributes';
import { isUnknownSearchAttribute, registerCommands } from './job-attributes';
import { terminalOf } from './job-terminal';
import { answerUnlessNoWorker, noWorkerPolls } from './worker-polls';
import { exitCodeFor } from './render';

/**
 * How a job ended as Temporal saw it, when it has no Terminal: terminated or cancelled from
 * outside, past its timeout, or a workflow that failed without one (`run` and `result` exit 5 for
 * all four). A job that did not complete also ends failed, but with its Terminal.
 */
const TEMPORAL_ENDINGS = {
  terminated: 'Terminated',
  timed_out: 'TimedOut',
  cancelled: 'Canceled',
  workflow_failed: 'Failed',
} as const;
type TemporalEnding = keyof typeof TEMPORAL_ENDINGS;

const STATUS_OUTCOME: Partial<Record<WorkflowExecutionInfo['status']['name'], TemporalEnding>> = {
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed_out',
  CANCELLED: 'cancelled',
  FAILED: 'workflow_failed',
};

/** The Terminal reasons `run` and `result` end with the exit status `code` for. */
const reasonsExiting = (code: number) =>
  TERMINAL_REASONS.filter((reason) => exitCodeFor({ reason }, 'detailed') === code);

/**
 * The groups `ls --outcome` takes besides single outcomes, one per `--exit-status detailed` status of
 * `run` and `result`: `failed` is 1, `aborted` 3, `outside` 5.
 */
const OUTCOME_GROUPS = {
  failed: { reasons: reasonsExiting(1), endings: [] as TemporalEnding[] },
  aborted: { reasons: reasonsExiting(3), endings: [] as TemporalEnding[] },
  outside: { reasons: [] as TerminalReason[], endings: Object.keys(TEMPORAL_ENDINGS) as TemporalEnding[] },
};
type OutcomeGroup = keyof typeof OUTCOME_GROUPS;

const SINGLE_OUTCOMES = [
  RUNNING_OUTCOME,
  WAITING_OUTCOME,
  ...TERMINAL_REASONS,
  ...(Object.keys(TEMPORAL_ENDINGS) as TemporalEnding[]),
];

/** Everything `ls --outcome` accepts. */
export const OUTCOME_FILTERS = [...SINGLE_OUTCOMES, ...(Object.keys(OUTCOME_GROUPS) as OutcomeGroup[])];
export type OutcomeFilter = (typeof OUTCOME_FILTERS)[number];

/** `--outcome`: one of {@link OUTCOME_FILTERS}, or a clear error listing them. */
export function parseOutcome(value: string): OutcomeFilter {
  const outcome = value.trim().toLowerCase();
  if (OUTCOME_FILTERS.includes(outcome)) return outcome;
  const group = (name: OutcomeGroup, what: string) =>
    `${name} (${[...OUTCOME_GROUPS[name].reasons, ...OUTCOME_GROUPS[name].endings].join(', ')}: ${what})`;
  throw new InvalidArgumentError(
    `"${value}" is not an outcome. Use one of: ${SINGLE_OUTCOMES.join(', ')}; or a group: ` +
      `${group('failed', 'exit status 1')}, ${group('aborted', 'exit status 3')}, ` +
      `${group('outside', 'ended from outside, exit status 5')}.`,
  );
}

const quoted = (values: readonly string[]) => values.map((value) => `'${value}'`).join(', ');

/** Jobs that ended with one of `reasons`: completed ones, and failed ones (any but `completed`, since they fail with their Terminal). */
function endedWith(reasons: readonly TerminalReason[]): string {
  return `(ExecutionStatus IN ('Completed', 'Failed') AND ${OUTCOME_KEY.name} IN (${quoted(reasons)}))`;
}

/** The outcomes a job's attribute has before it ends: a failed job with one of them ended without a Terminal. */
const OPEN_OUTCOMES = [RUNNING_OUTCOME, WAITING_OUTCOME];

function temporalEnded(endings: readonly TemporalEnding[]): string {
  const statuses = endings.filter((ending) => ending !== 'workflow_failed').map((ending) => TEMPORAL_ENDINGS[ending]);
  const parts = [
    ...(statuses.length ? [`ExecutionStatus IN (${quoted(statuses)})`] : []),
    ...(endings.includes('workflow_failed')
      ? [
          `(ExecutionStatus = 'Failed' AND (${OUTCOME_KEY.name} IS NULL OR ` +
            `${OUTCOME_KEY.name} IN (${quoted(OPEN_OUTCOMES)})))`,
        ]
      : []),
  ];
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(' OR ')})`;
}

/** Only the latest run of a job: a run that continued as new is not an ending. */
const JOBS_QUERY = `WorkflowType = 'agentSession' AND ExecutionStatus != 'ContinuedAsNew'`;

/** The visibility query for the jobs `ls --outcome` shows. */
export function outcomeQuery(outcome?: OutcomeFilter): string {
  if (!outcome) return JOBS_QUERY;
  let filter: string;
  // A job waiting for approval is running too.
  if (outcome === RUNNING_OUTCOME) filter = `ExecutionStatus = 'Running'`;
  else if (outcome === WAITING_OUTCOME)
    filter = `ExecutionStatus = 'Running' AND ${OUTCOME_KEY.name} = '${WAITING_OUTCOME}'`;
  else if (outcome in OUTCOME_GROUPS) {
    const { reasons, endings } = OUTCOME_GROUPS[outcome as OutcomeGroup];
    const parts = [
      ...(reasons.length ? [endedWith(reasons)] : []),
      ...(endings.length ? [temporalEnded(endings)] : []),
    ];
    filter = parts.length === 1 ? (parts[0] as string) : `(${parts.join(' OR ')})`;
  } else if (outcome in TEMPORAL_ENDINGS) filter = temporalEnded([outcome as TemporalEnding]);
  else filter = endedWith([outcome as TerminalReason]);
  return `${JOBS_QUERY} AND ${filter}`;
}

/** A listed job, from its search attributes, its Terminal or its live snapshot. */
interface JobRow {
  id: string;
  outcome: string;
  turns?: number;
  costUsd?: number;
  model?: string;
  startTime: Date;
  /** What a running job is doing, or why a value is missing. */
  note?: string;
  waiting: PendingApproval[];
  /** A subagent's job: the job whose Agent call started it. */
  parent?: string;
}

/** How long `ls` waits for a worker to answer a job's snapshot query or for a closed job's result. */
const ANSWER_MS = 3_000;

/** Bounded by a deadline, and never left pending (a late rejection after the connection closed would be unhandled). */
async function within<T>(client: Client, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await client.withDeadline(Date.now() + ANSWER_MS, fn);
  } catch {
    return undefined;
  }
}

async function rowOf(
  client: Client,
  info: WorkflowExecutionInfo,
  noWorker: (taskQueue: string) => Promise<boolean>,
): Promise<JobRow> {
  const attributes = info.typedSearchAttributes;
  const row: JobRow = {
    id: info.workflowId,
    outcome: RUNNING_OUTCOME,
    startTime: info.startTime,
    waiting: [],
    ...optional('parent', info.parentExecution?.workflowId),
    ...optional('model', attributes.get(MODEL_KEY)),
    ...optional('turns', attributes.get(TURNS_KEY)),
    ...optional('costUsd', attributes.get(COST_KEY)),
  };
  const status = info.status.name;
  if (status === 'RUNNING') {
    const handle = client.workflow.getHandle(info.workflowId);
    // Not waited for when the server says no worker polls the job's queue.
    const answer = await answerUnlessNoWorker(
      client,
      info.taskQueue,
      () => handle.query(snapshotQuery, Number.MAX_SAFE_INTEGER),
      ANSWER_MS,
      noWorker(info.taskQueue),
    ).catch(() => undefined);
    const snapshot = answer && 'answer' in answer ? answer.answer : undefined;
    if (!snapshot) return { ...row, note: '(no worker answered; approvals unknown)' };
    return {
      ...row,
      turns: snapshot.turnCount,
      model: snapshot.model,
      ...optional('costUsd', costOf(snapshot)),
      note: snapshot.phase,
      waiting: (await withAgentApprovals(client.workflow, snapshot)).pendingApprovals,
    };
  }
  const recorded = attributes.get(OUTCOME_KEY);
  const endedWithReason = recorded !== undefined && !OPEN_OUTCOMES.includes(recorded) ? recorded : undefined;
  const ending = STATUS_OUTCOME[status];
  // A job that did not complete failed with its Terminal, whose reason its attribute has; a failed
  // one whose attribute is still open failed without a Terminal (it publishes before it fails).
  if (ending && (status !== 'FAILED' || (recorded !== undefined && !endedWithReason)))
    return { ...row, outcome: ending };
  if (endedWithReason) return { ...row, outcome: endedWithReason };
  // A job started before the attributes existed, or on a namespace without them: its Terminal says
  // (a failed job's is in its failure; one failed without a Terminal was ended by a real failure).
  const handle = client.workflow.getHandle(info.workflowId, info.runId);
  let failure: unknown;
  const terminal = await within(client, () =>
    terminalOf(handle).catch((error: unknown) => {
      failure = error;
      return undefined;
    }),
  );
  if (!terminal?.reason && status === 'FAILED' && failure instanceof WorkflowFailedError) {
    return { ...row, outcome: 'workflow_failed' };
  }
  if (!terminal?.reason) return { ...row, outcome: 'ended', note: '(its result could not be read)' };
  return {
    ...row,
    outcome: terminal.reason,
    turns: terminal.turnCount,
    model: terminal.model,
    ...optional('costUsd', costOf(terminal)),
  };
}

function optional<K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } {
  return (value === undefined || value === null ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The cost a Terminal or snapshot carries, when this version and the prices know it. */
function costOf(source: Terminal | SessionSnapshot): number | undefined {
  const cost = (source as { totalCostUsd?: number | null }).totalCostUsd;
  return typeof cost === 'number' && Number.isFinite(cost) ? cost : undefined;
}

function formatCost(usd: number | undefined): string {
  if (usd === undefined) return '-';
  return usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** Time since `then`, in its largest whole unit: `45s`, `12m`, `3h`, `2d`. */
export function formatAgo(then: Date, now = new Date()): string {
  const seconds = Math.max(0, Math.floor((now.getTime() - then.getTime()) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

const COLUMNS = { id: 32, outcome: 19, turns: 5, cost: 9, model: 20, age: 5 } as const;

function formatRow(row: JobRow, now: Date): string {
  const cells = [
    row.id.padEnd(COLUMNS.id),
    row.outcome.padEnd(COLUMNS.outcome),
    (row.turns === undefined ? '-' : String(row.turns)).padStart(COLUMNS.turns),
    formatCost(row.costUsd).padStart(COLUMNS.cost),
    (row.model ?? '-').padEnd(COLUMNS.model),
    formatAgo(row.startTime, now).padStart(COLUMNS.age),
  ];
  let line = cells.join('  ');
  if (row.note) line += `  ${row.note}`;
  if (row.parent) line += `  (agent of ${row.parent})`;
  for (const p of row.waiting)
    line += `\n    waiting for approval: ${p.toolName} ${p.input} [${p.toolUseId}]${p.agent ? ` (agent "${p.agent.label}")` : ''}`;
  return line.trimEnd();
}

const HEADER = [
  'JOB'.padEnd(COLUMNS.id),
  'OUTCOME'.padEnd(COLUMNS.outcome),
  'TURNS',
  '     COST',
  'MODEL'.padEnd(COLUMNS.model),
  '  AGE',
]
  .join('  ')
  .trimEnd();

/**
 * The most recent jobs, newest first, one line each: outcome (the Terminal's reason, `running`, or
 * how Temporal ended it), turns, cost, model and time since it started; a running job adds its
 * phase and what it waits to have approved.
 */
export async function listJobs(client: Client, limit: number, outcome?: OutcomeFilter): Promise<string[]> {
  const infos: WorkflowExecutionInfo[] = [];
  try {
    for await (const info of client.workflow.list({ query: outcomeQuery(outcome), pageSize: Math.min(limit, 1000) })) {
      infos.push(info);
      if (infos.length >= limit) break;
    }
  } catch (error) {
    if (outcome && isUnknownSearchAttribute(error)) {
      const namespace = client.options.namespace;
      throw new Error(
        `namespace ${namespace} has no durable-agent search attributes, so jobs cannot be filtered by outcome ` +
          `(plain \`ls\` still lists them); register them once with:\n  ${registerCommands(namespace).join('\n  ')}`,
        { cause: error },
      );
    }
    throw error;
  }
  if (infos.length === 0) return [outcome ? `no ${outcome} jobs` : 'no jobs yet'];
  // One look at each task queue's pollers, for all the running jobs on it.
  const polls = new Map<string, Promise<boolean>>();
  const noWorker = (taskQueue: string) => {
    if (!polls.has(taskQueue)) polls.set(taskQueue, noWorkerPolls(client, taskQueue));
    return polls.get(taskQueue) as Promise<boolean>;
  };
  let rows = await Promise.all(infos.map((info) => rowOf(client, info, noWorker)));
  // A failed job started without the attributes (an older client) matches the query for jobs failed
  // without a Terminal; its row read the Terminal its failure carries, and it is not one of them.
  if (outcome === 'workflow_failed' || outcome === 'outside') {
    rows = rows.filter((row) => !(TERMINAL_REASONS as readonly string[]).includes(row.outcome));
  }
  if (rows.length === 0) return [outcome ? `no ${outcome} jobs` : 'no jobs yet'];
  const now = new Date();
  return [HEADER, ...underParents(rows).map((row) => formatRow(row, now))];
}

/**
 * Subagents' jobs right after the job that started them (they started later, so newest-first put
 * them before it); one whose parent is not listed keeps its place.
 */
function underParents(rows: JobRow[]): JobRow[] {
  const listed = new Set(rows.map((row) => row.id));
  const children = new Map<string, JobRow[]>();
  for (const row of rows)
    if (row.parent && listed.has(row.parent)) children.set(row.parent, [...(children.get(row.parent) ?? []), row]);
  const ordered: JobRow[] = [];
  const add = (row: JobRow) => {
    ordered.push(row);
    // Oldest first under a parent: the order its Agent calls came in.
    for (const child of [...(children.get(row.id) ?? [])].reverse()) add(child);
  };
  for (const row of rows) if (!(row.parent && listed.has(row.parent))) add(row);
  return ordered;
}
