import { getExternalWorkflowHandle, patched, workflowInfo } from '@temporalio/workflow';
import { BATCH_BUDGET_DETAIL } from '../shared/batch';
import { taskCostSignal } from './batch-definitions';
import type { CallAccounting, CallPricing } from '../shared/activity-types';
import type { Usage } from '../shared/messages';
import { addModelUsage, formatUsd, knownCostUsd, totalCostUsd, type PaidAgainReport } from '../shared/pricing';
import type { State } from '../shared/session';
import type { Terminal } from '../shared/terminal';
import type { Session } from './session';

/** Guards cost counting and `--max-budget-usd`: runs recorded before them replay without. */
export const COST_BUDGET_PATCH = 'cost-budget';

/**
 * Guards a batch job's cost report as each reply lands. Jobs recorded before it reported only
 * before their next model call, so the batch's stop could reach them one call late.
 */
export const COST_AT_REPLY_PATCH = 'batch-cost-at-reply';

/**
 * How a model call prices itself. The activity works the cost out and the workflow only adds up
 * what it reports, so a later change to the built-in prices cannot change a replayed decision.
 */
export function callPricing(session: Session): { pricing?: CallPricing } {
  if (!session.costBudget) return {};
  // A budget, the job's own or its batch's, cannot be kept with a model whose price is unknown.
  const budgeted = session.input.maxBudgetUsd !== undefined || session.input.batch?.reportCost === true;
  return { pricing: { prices: session.modelPrices, requirePrice: budgeted } };
}

/** A model call that answered, counted: its usage and cost against `model`, its API time and retries. */
export function withCallCost(
  session: Session,
  state: State,
  model: string,
  call: CallAccounting & { usage: Usage },
): Pick<State, 'modelUsage' | 'durationApiMs' | 'modelRetries' | 'paidAgain'> {
  if (!session.costBudget) return {};
  const answered = addModelUsage(state.modelUsage, model, call.usage, call.costUsd ?? null);
  // What earlier attempts were billed for and lost is on the bill too, and counts against the budget.
  const paid = call.paidAgain;
  return {
    modelUsage: paid ? addModelUsage(answered, model, paid.usage, paid.costUsd) : answered,
    durationApiMs: (state.durationApiMs ?? 0) + (call.apiMs ?? 0),
    modelRetries: (state.modelRetries ?? 0) + Math.max(0, (call.attempt ?? 1) - 1),
    ...(paid || state.paidAgain ? { paidAgain: addPaidAgain(state.paidAgain, paid) } : {}),
  };
}

function addPaidAgain(before: PaidAgainReport | undefined, paid: CallAccounting['paidAgain']): PaidAgainReport {
  const total: PaidAgainReport = before ?? {
    attempts: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    costUSD: 0,
  };
  if (!paid) return total;
  return {
    attempts: total.attempts + paid.attempts,
    inputTokens: total.inputTokens + paid.usage.input_tokens,
    outputTokens: total.outputTokens + paid.usage.output_tokens,
    cacheReadInputTokens: total.cacheReadInputTokens + paid.usage.cache_read_input_tokens,
    cacheCreationInputTokens: total.cacheCreationInputTokens + paid.usage.cache_creation_input_tokens,
    costUSD: total.costUSD === null || paid.costUsd === null ? null : total.costUSD + paid.costUsd,
  };
}

/**
 * Checked before every model call, a turn's or a compaction's: once the job has cost its budget,
 * no further call starts. The call before this check may have gone over, so a job ends at most
 * one call over its budget. Returns the Terminal's detail, or undefined while money is left.
 */
export function budgetExhausted(session: Session, state: State, nextCall: string): string | undefined {
  const batch = session.input.batch;
  if (batch && session.costBudget) {
    if (session.control.batchBudgetStop !== undefined) {
      return (
        `${BATCH_BUDGET_DETAIL} (${session.control.batchBudgetStop}), so ${nextCall} was not started; ` +
        `rerun the batch with a larger --max-budget-usd to go on from here`
      );
    }
    if (batch.reportCost) reportCost(session, knownCostUsd(state.modelUsage));
  }
  const budget = session.input.maxBudgetUsd;
  if (!session.costBudget || budget === undefined) return undefined;
  const spent = knownCostUsd(state.modelUsage);
  if (spent < budget) return undefined;
  return (
    `the job has cost ${formatUsd(spent)} of its ${formatUsd(budget)} budget (--max-budget-usd ${budget}), ` +
    `so ${nextCall} was not started; to go on from here: durable-agent run --resume ${workflowInfo().workflowId} ` +
    `--max-budget-usd <more> "Go on"`
  );
}

/**
 * Tell the batch what the job has cost as soon as a reply is counted, in the workflow task that
 * starts the reply's tools: the batch's stop then has the whole tool phase to come back before the
 * job's next model call, instead of arriving while that call runs. The report before each call
 * stays (it sends nothing when the cost has not changed since).
 */
export function reportReplyCost(session: Session, state: State): void {
  if (!session.costBudget || session.input.batch?.reportCost !== true) return;
  if (patched(COST_AT_REPLY_PATCH)) reportCost(session, knownCostUsd(state.modelUsage));
}

/** What each job last told its batch it had cost, so an unchanged cost is not sent again. */
const reported = new WeakMap<Session, number>();

/**
 * Tell the job's batch what the job has cost so far: the batch adds up its running jobs' reports
 * to keep its own budget. Not awaited: a batch that is gone (aborted,
 * terminated) changes nothing for the job.
 */
function reportCost(session: Session, costUsd: number): void {
  const batch = session.input.batch;
  if (!batch || costUsd <= 0 || reported.get(session) === costUsd) return;
  reported.set(session, costUsd);
  getExternalWorkflowHandle(batch.batchId)
    .signal(taskCostSignal, { taskId: batch.taskId, costUsd })
    .catch(() => undefined);
}

/** Transitions that start a new turn: a budget stop right after one ends with the turns that ran. */
const NEW_TURN_TRANSITIONS: ReadonlySet<string> = new Set([
  'next_turn',
  'pause_turn',
  'stop_hook_blocking',
  'scheduled_wakeup',
  'scheduled_task',
]);

/**
 * The State a budget stop at the start of a turn ends with: a turn whose model call never started
 * is not counted, as `max_turns` counts only the turns that ran.
 */
export function stoppedBeforeTurn(state: State): State {
  const reason = state.transition?.reason;
  return reason !== undefined && NEW_TURN_TRANSITIONS.has(reason)
    ? { ...state, turnCount: state.turnCount - 1 }
    : state;
}

/** The cost fields of `status` and the Terminal. */
export function costReport(
  session: Session,
  state: State,
): Pick<Terminal, 'totalCostUsd' | 'modelUsage' | 'maxBudgetUsd' | 'durationApiMs' | 'modelRetries' | 'paidAgain'> {
  if (!session.costBudget) return {};
  const budget = session.input.maxBudgetUsd;
  return {
    totalCostUsd: totalCostUsd(state.modelUsage),
    modelUsage: state.modelUsage ?? {},
    ...(budget !== undefined ? { maxBudgetUsd: budget } : {}),
    durationApiMs: state.durationApiMs ?? 0,
    modelRetries: state.modelRetries ?? 0,
    ...(state.paidAgain ? { paidAgain: state.paidAgain } : {}),
  };
}

/** Workflow time since the job started, for the Terminal (continue-as-new carries the start). */
export function durationOf(session: Session, state: State): Pick<Terminal, 'durationMs'> {
  if (!session.costBudget || state.startedAtMs === undefined) return {};
  return { durationMs: Date.now() - state.startedAtMs };
}
