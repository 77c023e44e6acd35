import type { SessionInput } from './session';
import type { Terminal, TerminalReason } from './terminal';

/**
 * One task of a batch: the job's input, and for a task that names a `repo` + `ref`, the worktree
 * its workspace is made from (the workflow fills `input.workspace` in once the worktree exists).
 */
export interface BatchTaskSpec {
  id: string;
  input: SessionInput;
  worktree?: { repo: string; ref: string };
}

/** Where the batch's tasks are: in its input (small batches, a remote cluster) or in the content store. */
export type BatchTasksSource = { inline: BatchTaskSpec[] } | { ref: string; count: number };

/** The input of an `agentBatch` workflow. */
export interface BatchInput {
  tasks: BatchTasksSource;
  /** At most this many tasks run at once. */
  concurrency: number;
  /** `--max-budget-usd` of the whole batch: no task starts once the batch has cost this, running ones stop at their next model call. */
  maxBudgetUsd?: number;
  /** An earlier run of this batch exists: what it spent is counted before anything starts. */
  rerun?: boolean;
  /**
   * How many tasks, from the first, the previous run of this batch took up (from its Terminal). A
   * task among them whose job is gone was deleted by the server's retention: it may have finished
   * and been paid for, so a rerun does not start it from scratch.
   */
  earlierRunTook?: number;
  /** A run continues as new past this many history events (default 10,000; tests set it low). */
  historyEventLimit?: number;
  /** Set only by continue-as-new. */
  carry?: BatchCarry;
}

/** A task whose job runs now. */
export interface RunningTask {
  id: string;
  /** What its job had cost at its last report (batch budgets only). */
  costUsd: number;
  /** Started by an earlier run of the batch (or before a continue-as-new): waited for by an activity. */
  adopted?: boolean;
  /** What the task's earlier jobs cost (a continued task): in the totals already, and in the job's memo. */
  priorCostUsd?: number;
  /** The turns and time of the task's earlier jobs (a continued task): likewise. */
  priorWork?: PriorWork;
}

/** The turns and time a task's earlier jobs took, which a continued task's job carries in its memo. */
export interface PriorWork {
  turns: number;
  durationMs: number;
}

/** What the batch knows of one task that ended. */
export interface TaskSummary {
  id: string;
  /** The Terminal's reason, or what became of a job that has none (`terminated`, `failed`, ...). */
  outcome: TerminalReason | 'terminated' | 'failed' | 'cancelled' | 'timed_out';
  turns: number;
  costUsd: number;
  durationMs: number;
  detail?: string;
  /** What model calls a crash cut off and that were made again cost (in `costUsd` already). */
  paidAgainUsd?: number;
}

/** Sums of the batch's ended tasks. */
export interface BatchTotals {
  /** Ended tasks by outcome (tasks an earlier run of the batch finished included). */
  outcomes: Record<string, number>;
  turns: number;
  costUsd: number;
  durationMs: number;
  /** Tasks an earlier run of the batch had finished: not run again. */
  skipped: number;
  /** Tasks an earlier run left stopped part-way, continued from their conversation. */
  continued: number;
  /** Jobs the batch's budget stopped part-way. */
  budgetStopped?: number;
  /** What calls cut off by a crash and made again cost (in `costUsd` already); absent when nothing was. */
  paidAgainUsd?: number;
}

/** Why the batch stopped starting tasks before it ran out of them. */
export interface BatchStop {
  reason: 'aborted' | 'budget_exhausted';
  detail: string;
  /** A budget stop: what the batch had spent when it stopped starting tasks. */
  spentUsd?: number;
}

/** The batch's state carried across continue-as-new: bounded by the concurrency, not the task count. */
export interface BatchCarry {
  /** Index of the next task to look at. */
  next: number;
  running: RunningTask[];
  totals: BatchTotals;
  startedAtMs: number;
  stop?: BatchStop;
  /** Tasks whose abort (or budget stop) was already sent. */
  stopSent: string[];
  /** A rerun that counted its earlier runs up front (`EARLIER_RUNS_UP_FRONT_PATCH`). */
  upFront?: boolean;
  /** Earlier runs' jobs it adopted up front whose task's turn has not come. */
  adoptedAhead?: string[];
  /** Finished tasks it counted up front whose turn has not come. */
  finishedAhead?: number;
}

/** The result of an `agentBatch` workflow: the totals, with the batch's own wall time. */
export interface BatchTerminal extends Pick<
  BatchTotals,
  'outcomes' | 'turns' | 'costUsd' | 'skipped' | 'continued' | 'paidAgainUsd'
> {
  reason: 'completed' | 'aborted' | 'budget_exhausted';
  detail?: string;
  tasks: number;
  /** Tasks never started (the batch was aborted or its budget spent first). */
  notStarted: number;
  /**
   * How many tasks, from the first, this run or an earlier one took up (started, adopted, skipped):
   * the next rerun's `earlierRunTook`. Absent in older Terminals, where it is `tasks - notStarted`.
   */
  reached?: number;
  /** The batch's wall time, from its first start to its end (not the tasks' sum). */
  durationMs: number;
  maxBudgetUsd?: number;
  /**
   * A batch its budget stopped: what it had spent then. `costUsd` is more by what the calls already
   * running cost as they finished. Absent in older Terminals.
   */
  stoppedAtUsd?: number;
}

/** What `batch status` asks a running batch. */
export interface BatchSnapshot {
  tasks: number;
  /** Tasks looked at so far: started, adopted, skipped or not started. */
  next: number;
  /** Tasks not looked at yet that an earlier run finished or still runs (a rerun counts them up front). */
  ahead?: number;
  running: RunningTask[];
  totals: BatchTotals;
  concurrency: number;
  maxBudgetUsd?: number;
  stop?: BatchStop;
  /** What the batch has cost: ended tasks plus the running ones' last reports. */
  spentUsd: number;
}

/** What a child job carries so it can report to its batch. */
export interface BatchMembership {
  batchId: string;
  taskId: string;
  /** The batch has a budget: report the job's cost before each model call. */
  reportCost: boolean;
  /** The task's workspace could not be made (its clone failed): the job ends `setup_failed` with this. */
  setupError?: string;
  /** The queue of the host whose worker made the task's clone (`hostTaskQueue`): the job's tools go there. */
  workspaceHost?: string;
}

/** A task id: letters, digits, `.`, `_` and `-`, so `<batch>/<task>` stays a readable job id. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** A batch id: the same characters, so `<batch>/<task>` is a readable job id and a safe folder name. */
export const BATCH_ID_PATTERN = TASK_ID_PATTERN;

/** The job id of a batch's task: deterministic, so a rerun finds what an earlier run did. */
export function taskJobId(batchId: string, taskId: string): string {
  return `${batchId}/${taskId}`;
}

/** At most this many tasks run at once: Temporal allows a workflow about 2,000 pending children. */
export const MAX_CONCURRENCY = 1_000;

/** The job memo field with what a task's earlier jobs cost (a continued task's). */
export const PRIOR_COST_MEMO = 'batchPriorCostUsd';

/**
 * The job memo field with the turns and time of a task's earlier jobs (a continued task's), so a
 * task's row counts all its jobs, as its cost does. Jobs started before it have none: zero.
 */
export const PRIOR_WORK_MEMO = 'batchPriorWork';

/** A job's `PRIOR_WORK_MEMO`, read defensively (a memo is anybody's to write). */
export function priorWorkOf(memo: Record<string, unknown> | undefined): PriorWork {
  const value = memo?.[PRIOR_WORK_MEMO] as Partial<PriorWork> | undefined;
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0);
  return { turns: count(value?.turns), durationMs: count(value?.durationMs) };
}

/** How the Terminal of a job that a batch's budget stopped begins its detail. */
export const BATCH_BUDGET_DETAIL = 'the batch has spent its budget';

/**
 * Outcomes a rerun of the batch does not run again: the task ended on its own terms (its answer,
 * its turn or budget limit, a hook, the model's refusal). Aborted jobs, jobs the batch's budget
 * stopped, model errors and failed setups are continued (or started again if they never talked).
 */
const FINISHED_OUTCOMES: ReadonlySet<string> = new Set<TerminalReason>([
  'completed',
  'max_turns',
  'stop_hook_prevented',
  'prompt_too_long',
  'blocking_limit',
  'max_output_tokens',
  'refusal',
  'budget_exhausted',
]);

/**
 * Jobs ended from outside (terminated, cancelled, timed out, failed): they have no Terminal, so
 * no conversation to go on from, and may have done part of their work. A rerun leaves them as
 * they are rather than start them over; whoever ended them can run the task again by hand.
 */
const ENDED_FROM_OUTSIDE: ReadonlySet<string> = new Set(['terminated', 'cancelled', 'timed_out', 'failed']);

/** True when a rerun leaves this task as it is. */
export function taskFinished(summary: Pick<TaskSummary, 'outcome' | 'detail'>): boolean {
  if (summary.outcome === 'budget_exhausted') return !stoppedByBatchBudget(summary);
  return FINISHED_OUTCOMES.has(summary.outcome) || ENDED_FROM_OUTSIDE.has(summary.outcome);
}

/** The job ended because its batch had spent its budget. */
export function stoppedByBatchBudget(summary: Pick<TaskSummary, 'outcome' | 'detail'>): boolean {
  return summary.outcome === 'budget_exhausted' && summary.detail?.startsWith(BATCH_BUDGET_DETAIL) === true;
}

/** A task's summary from its job's Terminal. */
export function summaryOf(id: string, terminal: Terminal): TaskSummary {
  return {
    id,
    outcome: terminal.reason,
    turns: terminal.turnCount,
    costUsd: typeof terminal.totalCostUsd === 'number' ? terminal.totalCostUsd : 0,
    durationMs: terminal.durationMs ?? 0,
    ...(terminal.detail ? { detail: terminal.detail } : {}),
    ...(paidAgainUsd(terminal) ? { paidAgainUsd: paidAgainUsd(terminal) } : {}),
  };
}

/** What a job paid again for calls a crash cut off; 0 when nothing (or its price is unknown). */
export function paidAgainUsd(terminal: Pick<Terminal, 'paidAgain'>): number {
  const cost = terminal.paidAgain?.costUSD;
  return typeof cost === 'number' && Number.isFinite(cost) && cost > 0 ? cost : 0;
}

/** The job memo key for {@link paidAgainUsd}: a batch's task table reads it from the job list. */
export const PAID_AGAIN_MEMO = 'paidAgainUsd';

const plusPaidAgain = (totals: BatchTotals, usd: number | undefined) =>
  usd ? { paidAgainUsd: (totals.paidAgainUsd ?? 0) + usd } : {};

export function emptyTotals(): BatchTotals {
  return { outcomes: {}, turns: 0, costUsd: 0, durationMs: 0, skipped: 0, continued: 0 };
}

/** The totals with one more ended task. */
export function addSummary(totals: BatchTotals, summary: TaskSummary): BatchTotals {
  return {
    ...totals,
    outcomes: { ...totals.outcomes, [summary.outcome]: (totals.outcomes[summary.outcome] ?? 0) + 1 },
    turns: totals.turns + summary.turns,
    costUsd: totals.costUsd + summary.costUsd,
    durationMs: totals.durationMs + summary.durationMs,
    ...plusPaidAgain(totals, summary.paidAgainUsd),
  };
}

/** Two sets of totals added up (outcomes, turns, cost, duration, skipped; `b`'s other counts are dropped). */
export function addTotals(a: BatchTotals, b: BatchTotals): BatchTotals {
  const outcomes = { ...a.outcomes };
  for (const [outcome, count] of Object.entries(b.outcomes)) outcomes[outcome] = (outcomes[outcome] ?? 0) + count;
  return {
    ...a,
    outcomes,
    turns: a.turns + b.turns,
    costUsd: a.costUsd + b.costUsd,
    durationMs: a.durationMs + b.durationMs,
    skipped: a.skipped + b.skipped,
    ...plusPaidAgain(a, b.paidAgainUsd),
  };
}

/** What the batch's earlier runs left of a page of its tasks (`earlierRunsPage`). */
export interface EarlierRunsPage {
  /** What the ended jobs of the tasks that are not finished cost (they are continued). */
  spentUsd: number;
  /** Their turns and time (absent from pages recorded before it was counted). */
  spentWork?: PriorWork;
  /** The finished tasks, summed with their cost: a rerun skips them. */
  finished: BatchTotals;
  /** Tasks whose job is still running. */
  running: string[];
}

/** How an earlier run left a task, as the batch's `priorTaskRuns` activity finds it. */
export type PriorTaskRun =
  | { id: string; state: 'none' }
  | { id: string; state: 'running' }
  | {
      id: string;
      state: 'ended';
      summary: TaskSummary;
      /** Its conversation so far, to continue from (absent when it never talked to the model). */
      transcript?: { head: string; messageCount: number };
    };

/**
 * The exit code of a batch: 0 when it ran every task and each one completed; 1 when some task
 * ended otherwise; 3 when the batch was aborted, 4 when its budget ran out (as `run`'s codes).
 */
export function batchExitCode(terminal: BatchTerminal): number {
  if (terminal.reason === 'aborted') return 3;
  if (terminal.reason === 'budget_exhausted') return 4;
  const others = Object.entries(terminal.outcomes).filter(([outcome]) => outcome !== 'completed');
  return others.length === 0 ? 0 : 1;
}
