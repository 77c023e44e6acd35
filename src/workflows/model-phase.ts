import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import type { CallModelResult, MicrocompactInput } from '../shared/activity-types';
import { MODEL_FAILURE_TYPES } from '../shared/activity-types';
import { afterModelCall } from '../shared/context/context-state';
import type { State } from '../shared/session';
import type { TerminalReason } from '../shared/terminal';
import { contextOf } from './context-phase';
import { modelLimitsFor } from '../shared/context/model-limits';
import { callPricing } from './cost-budget';
import { withModelCredentials } from './model-credentials';
import type { Session } from './session';

/** How a model call ended, as the loop needs to know it. */
export type ModelOutcome =
  | { kind: 'reply'; reply: CallModelResult }
  | { kind: 'aborted' }
  | { kind: 'fallback'; model: string; detail: string }
  | { kind: 'too_long'; detail: string; promptTokens?: number }
  | { kind: 'failed'; reason: TerminalReason; detail: string };

/** Phase 2: the model call, its failures sorted into what the loop does next. */
export async function callModelPhase(
  session: Session,
  state: State,
  microcompact: MicrocompactInput | undefined,
): Promise<ModelOutcome> {
  const { control, activities } = session;
  const fallback = nextFallbackModel(session, state);
  try {
    const reply = await withModelCredentials(control, state.turnCount, () =>
      control.runAbortable(() =>
        activities.callModel({
          sessionKey: session.sessionKey,
          transcript: state.transcript,
          append: state.pending,
          systemPromptRef: session.systemPromptRef,
          model: state.model,
          maxTokens: callMaxTokens(session, state),
          ...(session.input.thinking ? { thinking: session.input.thinking } : {}),
          ...(session.input.effort ? { effort: session.input.effort } : {}),
          tools: session.tools,
          fallbackAvailable: fallback !== undefined,
          ...(microcompact ? { workspace: session.input.workspace, context: microcompact } : {}),
          ...callPricing(session),
        }),
      ),
    );
    return { kind: 'reply', reply };
  } catch (error) {
    if (isCancellation(error)) return { kind: 'aborted' };
    const failure =
      error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? error.cause : undefined;
    const detail = failure?.message ?? (error instanceof Error ? error.message : String(error));
    if (failure?.type === MODEL_FAILURE_TYPES.overloadedFallback && fallback !== undefined) {
      return {
        kind: 'fallback',
        model: fallback,
        detail: `Switched to ${fallback} after repeated overload of ${state.model}`,
      };
    }
    if (failure?.type === MODEL_FAILURE_TYPES.promptTooLong) {
      if (session.contextPipeline) {
        const details = failure.details?.[0] as { promptTokens?: number } | undefined;
        return { kind: 'too_long', detail, ...(details?.promptTokens ? { promptTokens: details.promptTokens } : {}) };
      }
      return { kind: 'failed', reason: 'prompt_too_long', detail };
    }
    if (error instanceof ActivityFailure) return { kind: 'failed', reason: 'model_error', detail };
    throw error;
  }
}

/**
 * The call's output limit: the job's (or the escalated one), never more than a model the table
 * knows accepts. A fallback model may write less than the one the job started with, and a call
 * asking it for more would be refused.
 */
function callMaxTokens(session: Session, state: State): number {
  const asked = state.maxOutputTokensOverride ?? session.maxTokens;
  const limits = modelLimitsFor(state.model, session.modelLimits);
  return limits.source === 'default' ? asked : Math.min(asked, limits.maxOutputTokens);
}

/**
 * The model to switch to after repeated overload: the next in the job's chain after the one in
 * use (`--fallback-model a,b`; older jobs name a single `fallbackModel`).
 */
function nextFallbackModel(session: Session, state: State): string | undefined {
  const { input } = session;
  const fallbacks = input.fallbackModels ?? (input.fallbackModel !== undefined ? [input.fallbackModel] : []);
  const chain = [input.model, ...fallbacks];
  const at = chain.indexOf(state.model);
  return chain.slice(at + 1).find((model) => model !== state.model);
}

/** The context after a reply: its usage is the new baseline for the estimate. */
export function contextAfterReply(before: State, reply: CallModelResult): Pick<State, 'context'> {
  const context = afterModelCall(contextOf(before), {
    usage: reply.usage,
    requestChars: reply.requestChars ?? 0,
    clearedBefore: reply.clearedBefore ?? 0,
    now: Date.now(),
  });
  const cleared = context.clearedBefore > contextOf(before).clearedBefore;
  return { context: cleared ? { ...context, lastMicrocompactTurn: before.turnCount } : context };
}
