import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ApprovalAnswer, SessionSnapshot } from '../shared/session';
import type { ContentRef } from '../shared/transcript';
import type { PermissionMode } from '../shared/permissions';
import type { HookCallbackAnswer, QueuedMessage } from '../shared/signal-payloads';

/** The Temporal task queue the worker polls unless told otherwise. */
export const DEFAULT_TASK_QUEUE = 'durable-agent';

/** Stop the job: cancels the running model call or tools; the Terminal says where it stopped. */
export const abortSignal = defineSignal<[reason?: string]>('abort');

/** Change the turn limit of a running job; checked before the next turn starts. */
export const setMaxTurnsSignal = defineSignal<[maxTurns: number]>('setMaxTurns');

/** Queue text from the user; it joins the conversation at the next turn boundary. */
export const userMessageSignal = defineSignal<[message: QueuedMessage]>('userMessage');

/**
 * An open-input job (the Agent SDK's streaming input) gets no further user message: it ends once
 * its current message is answered, or at once when it waits for the next.
 */
export const closeInputSignal = defineSignal<[]>('closeInput');

/** The Agent SDK app's answer to a hook callback the job waits on (`SessionSnapshot.hookCallbacks`). */
export const hookCallbackAnswerSignal = defineSignal<[answer: HookCallbackAnswer]>('hookCallbackAnswer');

/** Change the job's permission mode from its next turn on (the Agent SDK's `set_permission_mode`). */
export const setPermissionModeSignal = defineSignal<[mode: PermissionMode]>('setPermissionMode');

/** Change the job's model from its next turn on (the Agent SDK's `set_model`). */
export const setModelSignal = defineSignal<[model: string]>('setModel');

/** A live view of the job. `sinceSeq` returns only events with a greater sequence number. */
export const snapshotQuery = defineQuery<SessionSnapshot, [sinceSeq?: number]>('snapshot');

/** Answer a tool call that waits for approval: allow (optionally for the rest of the job) or deny. */
export const approvalSignal = defineSignal<[answer: ApprovalAnswer]>('approval');

/**
 * The content-store references a job still needs (see `store-roots.ts`), for `durable-agent prune`.
 * Read-only, so it changes no history; workers older than it do not answer it.
 */
export const storeRootsQuery = defineQuery<ContentRef[]>('storeRoots');

/**
 * Sent by a job's batch once the batch has spent its `--max-budget-usd`: the job starts no further
 * model call and ends `budget_exhausted`. The text says what the batch spent.
 */
export const batchBudgetSpentSignal = defineSignal<[spent?: string]>('batchBudgetSpent');

/**
 * Wake a job that sleeps on a wake-up it scheduled (ScheduleWakeup) now rather than at its time:
 * it goes on with the wake-up's prompt. A job with no wake-up pending notes the signal and goes on.
 */
export const wakeSignal = defineSignal<[]>('wake');
