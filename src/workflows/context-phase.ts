import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import type { MicrocompactInput } from '../shared/activity-types';
import { addUsage } from '../shared/messages';
import {
  afterCompaction,
  afterCompactionFailure,
  estimateContextTokens,
  initialContextState,
  KEEP_RECENT_TOOL_RESULTS,
  overBudgetResults,
  pendingChars,
  planContext,
  tokensPerChar,
} from '../shared/context/context-state';
import type { ContextState } from '../shared/context/context-state';
import { contextThresholds, MAX_OUTPUT_RESERVE_TOKENS, modelLimitsFor } from '../shared/context/model-limits';
import type { ContextThresholds } from '../shared/context/model-limits';
import type { State } from '../shared/session';
import type { ContextReport, TransitionCounts } from '../shared/terminal';
import type { PendingBlock } from '../shared/transcript';
import { budgetExhausted, callPricing, withCallCost } from './cost-budget';
import { withModelCredentials } from './model-credentials';
import type { Session } from './session';
import type { TurnStep } from './turn-step';

/** Below this, clearing old results saves less than rewriting the cached prompt after them costs. */
const MIN_SAVING_CHARS = 20_000;

/** A compaction keeps at most this share of the threshold as recent messages, verbatim. */
const KEPT_TAIL_SHARE = 0.1;
const KEPT_TAIL_MAX_TOKENS = 40_000;

export function contextOf(state: State): ContextState {
  return state.context ?? initialContextState();
}

export function thresholdsFor(
  session: Session,
  model: string,
): ContextThresholds & { source: ContextReport['limitsSource']; maxOutputTokens: number } {
  const limits = modelLimitsFor(model, session.modelLimits);
  return {
    ...contextThresholds(limits, session.maxTokens),
    source: limits.source,
    maxOutputTokens: limits.maxOutputTokens,
  };
}

/** One more of `what` in the job's transition counts. */
export function counted(state: State, what: keyof TransitionCounts): State {
  const counts = state.transitionCounts ?? {};
  return { ...state, transitionCounts: { ...counts, [what]: (counts[what] ?? 0) + 1 } };
}

export type ContextStep =
  { kind: 'ready'; state: State; microcompact: MicrocompactInput } | { kind: 'aborted'; state: State };

/**
 * Phase 1 before a model call: autocompact when the estimated prompt passes the threshold;
 * otherwise tell the model call whether to clear old tool results (microcompact). The tool-result
 * budget was applied when the results came in ({@link withTurnBudget}).
 */
export async function contextPhase(session: Session, state: State): Promise<ContextStep> {
  const thresholds = thresholdsFor(session, state.model);
  const plan = planContext({
    context: contextOf(state),
    addedChars: pendingChars(state.pending),
    thresholds,
    now: Date.now(),
    ...(session.input.timeouts?.promptCacheTtlMs !== undefined
      ? { cacheTtlMs: session.input.timeouts.promptCacheTtlMs }
      : {}),
  });
  let next = state;
  let microcompact = plan.action === 'microcompact';
  if (plan.action === 'autocompact') {
    const compacted = await compact(session, state, 'auto', plan.estimate);
    if (compacted.kind === 'aborted') return { kind: 'aborted', state };
    next = compacted.state;
    // A failed compaction leaves the conversation as it was: clearing old results still helps.
    microcompact = compacted.kind === 'failed';
  }
  return {
    kind: 'ready',
    state: next,
    microcompact: {
      clearedBefore: contextOf(next).clearedBefore,
      microcompact,
      keepRecentToolResults: KEEP_RECENT_TOOL_RESULTS,
      // A warm cache is worth keeping: clear only when that takes a tenth off the prompt.
      ...(plan.cacheCold
        ? {}
        : {
            minSavingChars: Math.max(
              MIN_SAVING_CHARS,
              Math.round((plan.estimate / tokensPerChar(contextOf(next))) * 0.1),
            ),
          }),
    },
  };
}

export type CompactStep =
  { kind: 'compacted'; state: State } | { kind: 'failed'; state: State; detail: string } | { kind: 'aborted' };

/**
 * Summarise the conversation (`auto`: it passed the threshold; `reactive`: the API said the prompt
 * is too long) and go on from the summary and the recent tail. A failure is counted and noted;
 * the caller decides what it means.
 */
export async function compact(
  session: Session,
  state: State,
  trigger: 'auto' | 'reactive',
  estimate: number,
): Promise<CompactStep> {
  const { control, activities } = session;
  const context = contextOf(state);
  const thresholds = thresholdsFor(session, state.model);
  const phaseBefore = control.phase;
  control.phase = 'compacting';
  try {
    const result = await withModelCredentials(control, state.turnCount, () =>
      control.runAbortable(() =>
        activities.compactConversation({
          sessionKey: session.sessionKey,
          transcript: state.transcript,
          append: state.pending,
          systemPromptRef: session.systemPromptRef,
          model: state.model,
          tools: session.tools,
          workspace: session.input.workspace,
          clearedBefore: context.clearedBefore,
          trigger,
          contextWindow: thresholds.contextWindow,
          tokensPerChar: tokensPerChar(context),
          maxSummaryTokens: Math.min(MAX_OUTPUT_RESERVE_TOKENS, thresholds.maxOutputTokens),
          keepRecentTokens: Math.min(KEPT_TAIL_MAX_TOKENS, Math.floor(thresholds.autocompactAt * KEPT_TAIL_SHARE)),
          fallbackAvailable: false,
          ...callPricing(session),
        }),
      ),
    );
    const after = afterCompaction(context, { chars: result.requestChars, turn: state.turnCount });
    const tokens = estimateContextTokens(after.context, 0);
    control.record({
      turn: state.turnCount,
      kind: 'notice',
      text:
        `context compacted (${trigger}): about ${estimate} tokens against a threshold of ${thresholds.autocompactAt}; ` +
        `${result.summarisedMessages} messages summarised, ${result.keptMessages} kept, now about ${tokens} tokens` +
        (result.omittedMessages > 0
          ? ` (${result.omittedMessages} oldest messages did not fit the summary request)`
          : ''),
    });
    if (after.notice) control.record({ turn: state.turnCount, kind: 'notice', text: after.notice });
    const compacted: State = {
      ...state,
      transcript: result.transcript,
      pending: [],
      usage: addUsage(state.usage, result.usage),
      ...withCallCost(session, state, state.model, result),
      context: after.context,
    };
    return { kind: 'compacted', state: counted(compacted, trigger === 'auto' ? 'autocompact' : 'reactive_compact') };
  } catch (error) {
    if (isCancellation(error)) return { kind: 'aborted' };
    if (!(error instanceof ActivityFailure)) throw error;
    const failure = error.cause instanceof ApplicationFailure ? error.cause : undefined;
    const detail = failure?.message ?? error.cause?.message ?? error.message;
    const after = afterCompactionFailure(context, detail);
    control.record({ turn: state.turnCount, kind: 'notice', text: after.notice });
    return { kind: 'failed', state: { ...state, context: after.context }, detail };
  } finally {
    control.phase = phaseBefore;
  }
}

/**
 * The turn's tool-result budget: when its results together pass 200,000 characters, the largest
 * go aside (the model call stores each in the workspace and sends a preview and the path).
 */
export function withTurnBudget<T extends PendingBlock>(results: T[]): T[] {
  const aside = new Set(
    overBudgetResults(
      results.map((block) => ({
        chars:
          block.type === 'tool_result_ref'
            ? (block.chars ?? 0)
            : block.type === 'text_ref'
              ? block.chars
              : block.type === 'text'
                ? block.text.length
                : block.content.length,
        canGoAside: block.type === 'tool_result_ref' && !block.is_error,
      })),
    ),
  );
  if (aside.size === 0) return results;
  return results.map((block, index) =>
    aside.has(index) && block.type === 'tool_result_ref' ? { ...block, aside: true } : block,
  );
}

/** The context for `status` and the Terminal. */
export function contextReport(session: Session, state: State): ContextReport {
  const context = contextOf(state);
  const thresholds = thresholdsFor(session, state.model);
  return {
    model: state.model,
    contextWindow: thresholds.contextWindow,
    limitsSource: thresholds.source,
    tokens: estimateContextTokens(context, pendingChars(state.pending)),
    microcompactAt: thresholds.microcompactAt,
    autocompactAt: thresholds.autocompactAt,
    compactions: context.compactions,
    ...(context.autocompactOff ? { autocompactOff: context.autocompactOff } : {}),
  };
}

/**
 * Phase 3's prompt-too-long recovery: compact once and send the turn again. If this turn was
 * already compacted for it, or the compaction fails, the job ends saying what to change.
 */
export async function reactiveCompact(
  session: Session,
  state: State,
  detail: string,
  promptTokens?: number,
): Promise<TurnStep> {
  const context = contextOf(state);
  const thresholds = thresholdsFor(session, state.model);
  const estimate = promptTokens ?? estimateContextTokens(context, pendingChars(state.pending));
  const giveUp = (why: string): TurnStep => ({
    kind: 'terminal',
    state,
    reason: 'prompt_too_long',
    detail:
      `${detail}; ${why}. The conversation (about ${estimate} tokens) does not fit ${state.model}'s context window ` +
      `(${thresholds.contextWindow} tokens, ${thresholds.source === 'settings' ? 'from settings' : thresholds.source === 'built-in' ? 'built-in table' : 'assumed for an unknown model'}). ` +
      'Start a new job with a narrower task or split it up, use a model with a larger window (--model), ' +
      'or correct the window with "modelLimits" in settings if it is wrong',
  });
  if (context.reactiveTurn === state.turnCount) return giveUp('compacting it once already did not help');
  const spent = budgetExhausted(session, state, 'the compaction this prompt needs');
  if (spent) return { kind: 'terminal', state, reason: 'budget_exhausted', detail: `${detail}; ${spent}` };
  const compacted = await compact(session, state, 'reactive', estimate);
  if (compacted.kind === 'aborted') {
    return { kind: 'terminal', state, reason: 'aborted_streaming', detail: session.control.abortDetail };
  }
  if (compacted.kind === 'failed') {
    return giveUp(
      `compacting it failed (${compacted.detail}); if that was the API's own trouble (overload, 5xx), ` +
        'starting the job again later may be enough',
    );
  }
  return {
    kind: 'continue',
    state: {
      ...compacted.state,
      context: { ...contextOf(compacted.state), reactiveTurn: state.turnCount },
      transition: { reason: 'reactive_compact_retry' },
    },
  };
}
