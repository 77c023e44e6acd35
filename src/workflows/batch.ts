import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { createActivities } from '../activities';
import {
  addSummary,
  addTotals,
  BATCH_BUDGET_DETAIL,
  batchExitCode,
  emptyTotals,
  MAX_CONCURRENCY,
  PRIOR_COST_MEMO,
  PRIOR_WORK_MEMO,
  stoppedByBatchBudget,
  summaryOf,
  taskFinished,
  taskJobId,
} from '../shared/batch';
import type {
  BatchInput,
  BatchSnapshot,
  BatchStop,
  BatchTaskSpec,
  BatchTerminal,
  BatchTotals,
  PriorTaskRun,
  PriorWork,
  RunningTask,
  TaskSummary,
} from '../shared/batch';
import { formatUsd } from '../shared/pricing';
import type { SessionInput } from '../shared/session';
import { abortPayload, parsePayload, taskCostPayload } from '../shared/signal-payloads';
import type { Terminal } from '../shared/terminal';
import { TASKS_NOT_COMPLETED, terminalFailure, terminalInFailure } from '../shared/terminal-failure';
import { batchSnapshotQuery, taskCostSignal } from './batch-definitions';
import { abortSignal, batchBudgetSpentSignal } from './definitions';
import { OUTCOME_KEY, startSearchAttributes } from './search-attributes';

type Activities = ReturnType<typeof createActivities>;

/** Tasks read (and checked against earlier runs) at a time. */
const PAGE_SIZE = 100;

/** A run of the batch continues as new past this many history events (or when the server suggests it). */
const HISTORY_EVENT_LIMIT = 10_000;

/** What a task that continues a conversation an earlier run left stopped part-way is told. */
const CONTINUE_PROMPT = 'You were stopped part-way through this task. Go on with it from where you left off.';

const storeActivities = proxyActivities<Pick<Activities, 'loadBatchTasks' | 'priorTaskRuns' | 'earlierRunsPage'>>({
  startToCloseTimeout: 5 * 60_000,
  heartbeatTimeout: 60_000,
  retry: { initialInterval: 1_000, maximumInterval: 30_000 },
});

const waitActivities = proxyActivities<Pick<Activities, 'awaitTaskRuns'>>({
  startToCloseTimeout: 15 * 60_000,
  heartbeatTimeout: 30_000,
  retry: { initialInterval: 1_000, maximumInterval: 30_000 },
});

const worktreeActivities = proxyActivities<Pick<Activities, 'prepareWorktree'>>({
  startToCloseTimeout: 20 * 60_000,
  retry: { initialInterval: 2_000, maximumInterval: 60_000, maximumAttempts: 5 },
});

/**
 * A batch of agent jobs: one child `agentSession` per task, at most `concurrency` at once, with
 * the deterministic job id `<batch>/<task>`. A rerun of a batch (same id) skips the tasks an
 * earlier run finished, waits for the ones still running and continues the ones stopped part-way
 * from their conversation. A batch budget stops starting tasks once spent and stops the running
 * ones at their next model call. The state carried across continue-as-new is bounded by the
 * concurrency, so a batch of any size keeps its history bounded.
 */
export async function agentBatch(input: BatchInput): Promise<BatchTerminal> {
  const terminal = await runBatch(input);
  if (batchExitCode(terminal) !== 0 && patched(BATCH_FAILED_STATUS_PATCH)) {
    throw terminalFailure(terminal, terminal.reason === 'completed' ? TASKS_NOT_COMPLETED : terminal.reason);
  }
  return terminal;
}

/**
 * Guards ending a batch that was aborted, ran out of budget or has a task that did not complete as
 * a failed workflow (its Terminal in the failure's details), as its jobs end. Batches recorded
 * before it returned every Terminal; their histories replay that way.
 */
export const BATCH_FAILED_STATUS_PATCH = 'batch-failed-status';

/** Guards reading a failed child's Terminal from its failure (see `childFinished`). */
const CHILD_TERMINAL_IN_FAILURE_PATCH = 'batch-child-terminal-in-failure';

async function runBatch(input: BatchInput): Promise<BatchTerminal> {
  const batchId = workflowInfo().workflowId;
  const total = 'inline' in input.tasks ? input.tasks.inline.length : input.tasks.count;
  const concurrency = Math.max(1, Math.min(input.concurrency, MAX_CONCURRENCY));
  const carry = input.carry;
  let next = carry?.next ?? 0;
  const firstLook = next;
  let totals: BatchTotals = carry?.totals ?? emptyTotals();
  const startedAtMs = carry?.startedAtMs ?? Date.now();
  let stop: BatchStop | undefined = carry?.stop;
  const stopSent = new Set(carry?.stopSent ?? []);
  // Jobs an earlier run started cannot be awaited as children: an activity watches them.
  const running = new Map<string, RunningTask>(
    (carry?.running ?? []).map((task) => [task.id, { ...task, adopted: true }]),
  );
  // A rerun counts every task's earlier run up front (`EARLIER_RUNS_UP_FRONT_PATCH`): what it
  // counted there is not counted again when the task's turn comes.
  let upFront = carry?.upFront ?? false;
  /** Earlier runs' jobs adopted up front, until their task's turn. */
  const adoptedAhead = new Set(carry?.adoptedAhead ?? []);
  /** Finished tasks counted up front whose turn has not come. */
  let finishedAhead = carry?.finishedAhead ?? 0;
  const ended: TaskSummary[] = [];
  const earlyCosts = new Map<string, number>();
  /** Register a task as running (the cost a report already gave included). */
  const register = (id: string, adopted = false, priorCostUsd = 0, priorWork?: PriorWork): void => {
    running.set(id, {
      id,
      costUsd: earlyCosts.get(id) ?? 0,
      ...(adopted ? { adopted } : {}),
      ...(priorCostUsd > 0 ? { priorCostUsd } : {}),
      ...(priorWork ? { priorWork } : {}),
    });
    earlyCosts.delete(id);
  };
  let watching = false;
  let page: { from: number; specs: BatchTaskSpec[]; priors: Map<string, PriorTaskRun> } | undefined;

  const spentUsd = () => [...running.values()].reduce((sum, task) => sum + task.costUsd, totals.costUsd);
  /** Tasks not reached yet that an earlier run took care of: not waiting to start. */
  const ahead = () => finishedAhead + adoptedAhead.size;
  const snapshot = (): BatchSnapshot => ({
    tasks: total,
    next,
    ...(upFront ? { ahead: ahead() } : {}),
    running: [...running.values()],
    totals,
    concurrency,
    ...(input.maxBudgetUsd !== undefined ? { maxBudgetUsd: input.maxBudgetUsd } : {}),
    ...(stop ? { stop } : {}),
    spentUsd: spentUsd(),
  });

  // Defined before the handlers: a signal that came with the run's first workflow task (a job's
  // report as the batch continues as new or is rerun) is handled as `setHandler` installs them.
  const budgetSpent = (): boolean => {
    const budget = input.maxBudgetUsd;
    if (stop || budget === undefined || spentUsd() < budget) return false;
    stop = {
      reason: 'budget_exhausted',
      detail: `${BATCH_BUDGET_DETAIL}: ${formatUsd(spentUsd())} of ${formatUsd(budget)} (--max-budget-usd ${budget})`,
      spentUsd: spentUsd(),
    };
    return true;
  };

  // Any client can signal a batch: a bad payload is ignored, never thrown (that would wedge it).
  setHandler(abortSignal, (...args: unknown[]) => {
    const parsed = parsePayload('abort', abortPayload, args, 'no argument or a reason string');
    if (stop?.reason === 'aborted') return;
    stop = { reason: 'aborted', detail: (parsed.ok ? parsed.value : undefined) || 'aborted by request' };
    // A budget stop already sent is superseded: every running job gets the abort too.
    stopSent.clear();
  });
  setHandler(taskCostSignal, (...args: unknown[]) => {
    const parsed = parsePayload('taskCost', taskCostPayload, args, '{"taskId":"...","costUsd":0.12}');
    if (!parsed.ok) return;
    const { taskId, costUsd } = parsed.value;
    const task = running.get(taskId);
    // A report can come in before the child's start has: it is kept for when the task is registered.
    if (!task) earlyCosts.set(taskId, Math.max(costUsd, earlyCosts.get(taskId) ?? 0));
    else if (costUsd > task.costUsd) task.costUsd = costUsd;
    // A job that still reports after its budget stop was sent lost it (it continued as new
    // meanwhile, say): it is sent again.
    if (stop?.reason === 'budget_exhausted' && stopSent.has(taskId)) stopSent.delete(taskId);
    budgetSpent();
  });
  setHandler(batchSnapshotQuery, snapshot);

  /** Tell every running job of the stop once: abort it, or end it at its next model call. */
  const sendStops = async (): Promise<void> => {
    if (!stop) return;
    const reason = stop;
    const unsent = [...running.keys()].filter((id) => !stopSent.has(id));
    for (const id of unsent) stopSent.add(id);
    await Promise.all(
      unsent.map((id) => {
        const job = getExternalWorkflowHandle(taskJobId(batchId, id));
        const sent =
          reason.reason === 'aborted'
            ? job.signal(abortSignal, `batch ${batchId} aborted: ${reason.detail}`)
            : job.signal(batchBudgetSpentSignal, `${formatUsd(spentUsd())} of ${formatUsd(input.maxBudgetUsd ?? 0)}`);
        // A job that ended meanwhile cannot be signalled; its end is already on its way.
        return sent.catch(() => undefined);
      }),
    );
  };

  const loadPage = async (from: number) => {
    const specs =
      'inline' in input.tasks
        ? input.tasks.inline.slice(from, from + PAGE_SIZE)
        : await storeActivities.loadBatchTasks({ ref: input.tasks.ref, from, count: PAGE_SIZE });
    const priors = await storeActivities.priorTaskRuns({ batchId, ids: specs.map((spec) => spec.id) });
    return { from, specs, priors: new Map(priors.map((prior) => [prior.id, prior])) };
  };

  const taskAt = async (index: number): Promise<{ spec: BatchTaskSpec; prior: PriorTaskRun | undefined }> => {
    if (!page || index < page.from || index >= page.from + page.specs.length) {
      page = await loadPage(index - (index % PAGE_SIZE));
    }
    const spec = page.specs[index - page.from];
    if (!spec) throw ApplicationFailure.nonRetryable(`batch ${batchId} has no task ${index + 1} of ${total}`);
    return { spec, prior: page.priors.get(spec.id) };
  };

  const childFinished = (id: string, result: Promise<Terminal>): void => {
    result.then(
      (terminal) => ended.push(summaryOf(id, terminal)),
      (error: unknown) => {
        // A job that did not complete fails with its Terminal: it ended as any job ends. Guarded: a
        // batch that met such a child before it could read one (a rolling upgrade) counted it as
        // failed, and must replay so.
        const terminal = error instanceof ChildWorkflowFailure ? terminalInFailure<Terminal>(error.cause) : undefined;
        ended.push(
          terminal && patched(CHILD_TERMINAL_IN_FAILURE_PATCH) ? summaryOf(id, terminal) : failedSummary(id, error),
        );
      },
    );
  };

  /**
   * Start the task's job; false when the batch stopped meanwhile (while its clone was made).
   * `priorCostUsd` is what its earlier jobs cost: its own budget is what is left of it, and the
   * job's memo keeps the sum for the next rerun, as it keeps their turns and time (`priorWork`).
   */
  const startJob = async (
    spec: BatchTaskSpec,
    resumeFrom?: SessionInput['resumeFrom'],
    priorCostUsd = 0,
    priorWork?: PriorWork,
  ): Promise<boolean> => {
    const membership = { batchId, taskId: spec.id, reportCost: input.maxBudgetUsd !== undefined };
    const ownBudget = spec.input.maxBudgetUsd;
    let sessionInput: SessionInput = {
      ...spec.input,
      batch: membership,
      ...(resumeFrom ? { resumeFrom, prompt: CONTINUE_PROMPT } : {}),
      ...(ownBudget !== undefined && priorCostUsd > 0 ? { maxBudgetUsd: Math.max(0, ownBudget - priorCostUsd) } : {}),
    };
    if (spec.worktree) {
      try {
        const made = await worktreeActivities.prepareWorktree({ batchId, taskId: spec.id, ...spec.worktree });
        sessionInput = {
          ...sessionInput,
          workspace: made.workspace,
          ...(made.hostQueue ? { batch: { ...membership, workspaceHost: made.hostQueue } } : {}),
        };
      } catch (error) {
        // The job still starts, and ends setup_failed saying why: status, export and reruns see it as any task.
        sessionInput = {
          ...sessionInput,
          workspace: spec.worktree.repo,
          batch: { ...membership, setupError: failureText(error) },
        };
      }
      if (stop) return false;
    }
    const withAttributes = workflowInfo().typedSearchAttributes.get(OUTCOME_KEY) !== undefined;
    const work = priorWork && patched(PRIOR_WORK_PATCH) ? priorWork : undefined;
    const memo = {
      ...(priorCostUsd > 0 ? { [PRIOR_COST_MEMO]: priorCostUsd } : {}),
      ...(work ? { [PRIOR_WORK_MEMO]: work } : {}),
    };
    try {
      const child = await startChild('agentSession', {
        workflowId: taskJobId(batchId, spec.id),
        args: [sessionInput],
        // The jobs outlive a run of the batch (continue-as-new, an abort of the batch alone).
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        ...(Object.keys(memo).length > 0 ? { memo } : {}),
        ...(withAttributes ? { typedSearchAttributes: startSearchAttributes(sessionInput) } : {}),
      });
      register(spec.id, false, priorCostUsd, work);
      childFinished(spec.id, child.result() as Promise<Terminal>);
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      // Started meanwhile by someone else (`run --job-id <batch>/<task>`): wait for it as it is.
      register(spec.id, true);
    }
    return true;
  };

  /**
   * Start, adopt, skip or continue the task, as an earlier run left it; false when it was not
   * started after all (the batch's budget or an abort stopped it first).
   */
  const takeTask = async (index: number, spec: BatchTaskSpec, prior: PriorTaskRun | undefined): Promise<boolean> => {
    if (upFront) {
      // Adopted up front: it is running or has ended, and either way counted.
      if (adoptedAhead.delete(spec.id)) return true;
      if (prior?.state === 'ended' && taskFinished(prior.summary)) {
        finishedAhead = Math.max(0, finishedAhead - 1);
        return true;
      }
    }
    if (prior?.state === 'none' && input.earlierRunTook !== undefined && index < input.earlierRunTook) {
      totals = addSummary(totals, lostToRetention(spec.id));
      return true;
    }
    if (prior?.state === 'running') {
      register(spec.id, true);
      return true;
    }
    // What earlier jobs cost is already in the totals (`countEarlierRuns`).
    if (prior?.state === 'ended' && taskFinished(prior.summary)) {
      totals = { ...addSummary(totals, { ...prior.summary, costUsd: 0 }), skipped: totals.skipped + 1 };
      return true;
    }
    if (prior?.state === 'ended') {
      if (budgetSpent()) return false;
      const resumeFrom = prior.transcript
        ? { source: `job ${taskJobId(batchId, spec.id)} (${prior.summary.outcome})`, transcript: prior.transcript }
        : undefined;
      const { turns, durationMs } = prior.summary;
      if (!(await startJob(spec, resumeFrom, prior.summary.costUsd, { turns, durationMs }))) return false;
      // A task that never talked (its setup failed) starts again from its prompt: nothing is continued.
      if (resumeFrom) totals = { ...totals, continued: totals.continued + 1 };
      return true;
    }
    return startJob(spec);
  };

  /** Watch the jobs an earlier run started, one activity at a time, until one of them ends. */
  const watchAdopted = (): void => {
    const ids = [...running.values()].filter((task) => task.adopted).map((task) => task.id);
    if (watching || ids.length === 0) return;
    watching = true;
    void waitActivities.awaitTaskRuns({ batchId, ids }).then(
      (runs) => {
        watching = false;
        for (const run of runs) {
          // The job's sums include its earlier jobs' (its memo), which the totals already have.
          const task = running.get(run.id);
          if (run.state === 'ended') ended.push(withoutEarlier(run.summary, task));
          else if (run.state === 'none') ended.push(vanished(run.id));
        }
      },
      () => {
        watching = false;
      },
    );
  };

  const historyFull = () => {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength > (input.historyEventLimit ?? HISTORY_EVENT_LIMIT);
  };

  /**
   * A rerun counts what the batch's earlier runs left before it starts anything, a page of sums at
   * a time: its budget covers the whole batch (every task's ended job, with what that task's earlier
   * jobs cost); the finished tasks are in its totals even when its budget or an abort stops it before
   * their turn; and every job still running is adopted at once, so its reports count and a stop
   * reaches it.
   */
  const countEarlierRunsUpFront = async (): Promise<void> => {
    for (let from = 0; from < total; from += PAGE_SIZE) {
      const tasks =
        'inline' in input.tasks
          ? { ids: input.tasks.inline.slice(from, from + PAGE_SIZE).map((spec) => spec.id) }
          : { ref: input.tasks.ref };
      const earlier = await storeActivities.earlierRunsPage({ batchId, tasks, from, count: PAGE_SIZE });
      totals = addTotals(totals, earlier.finished);
      totals = {
        ...totals,
        costUsd: totals.costUsd + earlier.spentUsd,
        turns: totals.turns + (earlier.spentWork?.turns ?? 0),
        durationMs: totals.durationMs + (earlier.spentWork?.durationMs ?? 0),
      };
      finishedAhead += earlier.finished.skipped;
      for (const id of earlier.running) {
        register(id, true);
        adoptedAhead.add(id);
      }
    }
  };

  /** Before `EARLIER_RUNS_UP_FRONT_PATCH`: only what the earlier runs' ended jobs cost. */
  const countEarlierRuns = async (): Promise<void> => {
    let spent = 0;
    for (let from = 0; from < total; from += PAGE_SIZE) {
      const loaded = await loadPage(from);
      for (const prior of loaded.priors.values()) if (prior.state === 'ended') spent += prior.summary.costUsd;
      if (from === 0) page = loaded;
    }
    totals = { ...totals, costUsd: totals.costUsd + spent };
  };
  if (!carry && input.rerun) {
    upFront = patched(EARLIER_RUNS_UP_FRONT_PATCH);
    await (upFront ? countEarlierRunsUpFront() : countEarlierRuns());
  }

  for (;;) {
    budgetSpent();
    await sendStops();
    // A run whose history is full continues as new before it looks at more tasks (a rerun skipping
    // thousands of finished ones would otherwise load every page in one run); each run looks at one
    // at least, so a low limit cannot make it continue as new for ever.
    while (!stop && running.size < concurrency && next < total && !(upFront && next > firstLook && historyFull())) {
      const { spec, prior } = await taskAt(next);
      next += 1;
      // Not started after all: it counts as not started.
      if (!(await takeTask(next - 1, spec, prior))) next -= 1;
      budgetSpent();
    }
    if (running.size === 0 && (stop || next >= total)) break;
    await sendStops();
    watchAdopted();
    await condition(
      () =>
        ended.length > 0 ||
        // A new stop, or a job the stop must be sent to again.
        (stop !== undefined && [...running.keys()].some((id) => !stopSent.has(id))) ||
        (!watching && [...running.values()].some((task) => task.adopted)) ||
        historyFull(),
    );
    for (const ending of ended.splice(0)) {
      const known = running.get(ending.id);
      if (!known || !running.delete(ending.id)) continue;
      const summary = withReportedCost(ending, known.costUsd);
      totals = addSummary(totals, summary);
      if (stoppedByBatchBudget(summary)) totals = { ...totals, budgetStopped: (totals.budgetStopped ?? 0) + 1 };
    }
    if (historyFull()) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof agentBatch>({
        ...input,
        carry: {
          next,
          running: [...running.values()].map((task) => ({ ...task, adopted: true })),
          totals,
          startedAtMs,
          ...(stop ? { stop } : {}),
          stopSent: [...stopSent],
          ...(upFront ? { upFront, adoptedAhead: [...adoptedAhead], finishedAhead } : {}),
        },
      });
    }
  }

  // A budget spent by the last calls of the last tasks stopped nothing: the batch completed.
  const notStarted = total - next - ahead();
  const stoppedSomething = notStarted > 0 || (totals.budgetStopped ?? 0) > 0;
  const reason = stop?.reason === 'budget_exhausted' && !stoppedSomething ? 'completed' : (stop?.reason ?? 'completed');
  const terminal: BatchTerminal = {
    reason,
    ...(stop && reason !== 'completed' ? { detail: stop.detail } : {}),
    tasks: total,
    notStarted,
    ...(upFront ? { reached: Math.max(next, input.earlierRunTook ?? 0) } : {}),
    outcomes: totals.outcomes,
    turns: totals.turns,
    costUsd: totals.costUsd,
    durationMs: Date.now() - startedAtMs,
    skipped: totals.skipped,
    continued: totals.continued,
    ...(input.maxBudgetUsd !== undefined ? { maxBudgetUsd: input.maxBudgetUsd } : {}),
    ...(reason === 'budget_exhausted' && stop?.spentUsd !== undefined ? { stoppedAtUsd: stop.spentUsd } : {}),
    ...(totals.paidAgainUsd ? { paidAgainUsd: totals.paidAgainUsd } : {}),
  };
  if (workflowInfo().typedSearchAttributes.get(OUTCOME_KEY) !== undefined) {
    upsertSearchAttributes([{ key: OUTCOME_KEY, value: terminal.reason }]);
  }
  return terminal;
}

/**
 * Guards how a rerun counts its earlier runs. Before it, a rerun summed only what their ended jobs
 * cost, and met each finished task (and each job still running) only when the task's turn came:
 * a rerun whose budget was already spent reported the finished tasks as not started, and a job
 * still running past its turn spent uncounted and never got the stop. Asked once, by a rerun's
 * first run; later runs carry the answer.
 */
export const EARLIER_RUNS_UP_FRONT_PATCH = 'batch-earlier-runs-up-front';

/**
 * A continued task's job carries the turns and time of the task's earlier jobs in its memo
 * (`PRIOR_WORK_MEMO`), as it carries their cost, so its row and the batch's sums count all its
 * jobs. Batches recorded before it started their continued jobs with the cost alone.
 */
export const PRIOR_WORK_PATCH = 'batch-prior-work-memo';

/** An adopted job's ended summary without what its earlier jobs took (the totals have that already). */
function withoutEarlier(summary: TaskSummary, task: RunningTask | undefined): TaskSummary {
  return {
    ...summary,
    costUsd: Math.max(0, summary.costUsd - (task?.priorCostUsd ?? 0)),
    turns: Math.max(0, summary.turns - (task?.priorWork?.turns ?? 0)),
    durationMs: Math.max(0, summary.durationMs - (task?.priorWork?.durationMs ?? 0)),
  };
}

/**
 * Batches recorded before this patch counted a job that ended without a Terminal (terminated from
 * outside, failed, timed out) as having cost nothing, so what it had reported spending left the
 * budget and further tasks started on it. Newer runs keep what it reported. Asked only when such a
 * job ends, so older histories replay their old sums.
 */
export const BATCH_KEEPS_ENDED_COST_PATCH = 'batch-keeps-ended-cost';

/** What an ended task cost: its Terminal's sum, or for a job with none, what it reported while running. */
function withReportedCost(summary: TaskSummary, reportedUsd: number): TaskSummary {
  if (!NO_TERMINAL_OUTCOMES.has(summary.outcome) || reportedUsd <= summary.costUsd) return summary;
  return patched(BATCH_KEEPS_ENDED_COST_PATCH) ? { ...summary, costUsd: reportedUsd } : summary;
}
const NO_TERMINAL_OUTCOMES = new Set<TaskSummary['outcome']>(['terminated', 'failed', 'cancelled', 'timed_out']);

/** A child job that ended without a Terminal: terminated, failed, timed out. */
function failedSummary(id: string, error: unknown): TaskSummary {
  const cause = error instanceof ChildWorkflowFailure ? error.cause : undefined;
  const name = cause?.name ?? '';
  const outcome: TaskSummary['outcome'] = /Terminated/.test(name)
    ? 'terminated'
    : /Cancel/.test(name)
      ? 'cancelled'
      : /Timeout/.test(name)
        ? 'timed_out'
        : 'failed';
  return { id, outcome, turns: 0, costUsd: 0, durationMs: 0, detail: failureText(error) };
}

/** A job an earlier run started that is gone now (deleted by retention): counted as failed. */
function vanished(id: string): TaskSummary {
  return { id, outcome: 'failed', turns: 0, costUsd: 0, durationMs: 0, detail: 'its job is no longer on the server' };
}

/** A task the previous run took up whose job the server has since deleted: not run again blindly. */
function lostToRetention(id: string): TaskSummary {
  return {
    id,
    outcome: 'failed',
    turns: 0,
    costUsd: 0,
    durationMs: 0,
    detail:
      "an earlier run of the batch started its job, which the server's retention has since deleted: it may have " +
      'finished and been paid for, so it is not started again (run it under a new batch id to do it again)',
  };
}

function failureText(error: unknown): string {
  const inner = error instanceof ActivityFailure || error instanceof ChildWorkflowFailure ? error.cause : error;
  return inner instanceof Error ? inner.message : String(inner);
}
