import { defineSearchAttributeKey } from '@temporalio/common';
import type { SearchAttributePair, SearchAttributeUpdatePair } from '@temporalio/common';
import { patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Terminal } from '../shared/terminal';

/**
 * The custom search attributes of a job, as Temporal's visibility (the `ls` filters, the UI's
 * list, `temporal workflow list --query`) sees them. The outcome is `running` until the job ends
 * (`waiting_for_approval` while a call waits for a person), then the Terminal's reason; turns and
 * cost are set when it ends.
 */
export const OUTCOME_KEY = defineSearchAttributeKey('DurableAgentOutcome', 'KEYWORD');
export const TURNS_KEY = defineSearchAttributeKey('DurableAgentTurns', 'INT');
export const COST_KEY = defineSearchAttributeKey('DurableAgentCostUsd', 'DOUBLE');
export const WORKSPACE_KEY = defineSearchAttributeKey('DurableAgentWorkspace', 'KEYWORD');
export const MODEL_KEY = defineSearchAttributeKey('DurableAgentModel', 'KEYWORD');

/** Each attribute with its type as `temporal` spells it (`--search-attribute`, `search-attribute create`). */
export const JOB_SEARCH_ATTRIBUTES = [
  { key: OUTCOME_KEY, cliType: 'Keyword' },
  { key: TURNS_KEY, cliType: 'Int' },
  { key: COST_KEY, cliType: 'Double' },
  { key: WORKSPACE_KEY, cliType: 'Keyword' },
  { key: MODEL_KEY, cliType: 'Keyword' },
] as const;

/** The outcome of a job that has not ended yet. */
export const RUNNING_OUTCOME = 'running';

/** The outcome of a running job while at least one of its tool calls waits for a person's approval. */
export const WAITING_OUTCOME = 'waiting_for_approval';

/** Guards the search attributes a job sets when it ends. */
const SEARCH_ATTRIBUTES_PATCH = 'search-attributes';

/** Guards the outcome a job shows while a call is parked; jobs recorded before it stayed `running`. */
export const WAITING_OUTCOME_PATCH = 'waiting-outcome';

/** What a job's start carries: the client sets these, so a namespace without them refuses the start, not the job. */
export function startSearchAttributes(input: { workspace: string; model: string }): SearchAttributePair[] {
  return [
    { key: OUTCOME_KEY, value: RUNNING_OUTCOME },
    { key: WORKSPACE_KEY, value: input.workspace },
    { key: MODEL_KEY, value: input.model },
  ];
}

/**
 * Set the ended job's outcome, turns, cost and final model. Only a job whose start carried the
 * outcome does this: upserting an attribute the namespace does not know fails the workflow task
 * on every attempt, and the start having been accepted with it is the proof that it is known.
 */
export function publishOutcome(terminal: Terminal): void {
  if (!startedWithOutcome()) return;
  if (!patched(SEARCH_ATTRIBUTES_PATCH)) return;
  // The cost is absent on Terminals of older versions and null when a model had no known price.
  const cost = (terminal as { totalCostUsd?: number | null }).totalCostUsd;
  const pairs: SearchAttributeUpdatePair[] = [
    { key: OUTCOME_KEY, value: terminal.reason },
    { key: TURNS_KEY, value: terminal.turnCount },
    { key: MODEL_KEY, value: terminal.model },
  ];
  if (typeof cost === 'number' && Number.isFinite(cost)) pairs.push({ key: COST_KEY, value: cost });
  upsertSearchAttributes(pairs);
}

/**
 * Show whether the job waits for a person: `waiting_for_approval` once a call is parked, `running`
 * again once none is, so the UI's list and `ls --outcome waiting_for_approval` find the jobs
 * someone has to answer. Same guard as {@link publishOutcome}.
 */
export function publishWaiting(waiting: boolean): void {
  if (!startedWithOutcome()) return;
  if (!patched(WAITING_OUTCOME_PATCH)) return;
  upsertSearchAttributes([{ key: OUTCOME_KEY, value: waiting ? WAITING_OUTCOME : RUNNING_OUTCOME }]);
}

/** The start carried the outcome, so the namespace knows the attributes (see {@link publishOutcome}). */
function startedWithOutcome(): boolean {
  return workflowInfo().typedSearchAttributes.get(OUTCOME_KEY) !== undefined;
}
