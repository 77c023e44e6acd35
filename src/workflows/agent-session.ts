import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  workflowInfo,
  allHandlersFinished,
} from '@temporalio/workflow';
import type { CallModelResult } from '../shared/activity-types';
import { MODEL_FAILURE_TYPES } from '../shared/activity-types';
import { addUsage, assistantText, emptyUsage, findToolUseBlocks } from '../shared/messages';
import type { AssistantMessage, ToolUseBlock } from '../shared/messages';
import { DEFAULT_MAX_TOKENS, decideMaxOutputRecovery, exceedsMaxTurns } from '../shared/recovery';
import { DEFAULT_SESSION_TIMEOUTS } from '../shared/session';
import type { SessionInput, State } from '../shared/session';
import type { Terminal, TerminalReason } from '../shared/terminal';
import { emptyTranscript } from '../shared/transcript';
import type { PendingUserMessage } from '../shared/transcript';
import { TOOL_DEFINITIONS } from '../shared/tools';
import { sessionActivities } from './activity-proxies';
import type { SessionActivities } from './activity-proxies';
import { runTools, syntheticError } from './run-tools';
import { SessionControl } from './session-control';

/** Everything a turn needs besides the State: fixed for the life of the job. */
interface Session {
  input: SessionInput;
  sessionKey: string;
  systemPromptRef: string;
  tools: string[];
  maxTokens: number;
  activities: SessionActivities;
  control: SessionControl;
}

/** How a model call ended, as the loop needs to know it. */
type ModelOutcome =
  | { kind: 'reply'; reply: CallModelResult }
  | { kind: 'aborted' }
  | { kind: 'fallback'; detail: string }
  | { kind: 'failed'; reason: TerminalReason; detail: string };

/**
 * Claude Code's `queryLoop()` as a durable workflow. Each pass of the loop is one turn made of the
 * seed's phases; every exit returns a Terminal.
 */
export async function agentSession(input: SessionInput): Promise<Terminal> {
  const timeouts = { ...DEFAULT_SESSION_TIMEOUTS, ...input.timeouts };
  const activities = sessionActivities(timeouts);
  let state: State = input.resume?.state ?? initialState(input);
  const control = new SessionControl(input.maxTurns, input.resume, () => state);
  control.install();

  const info = workflowInfo();
  let systemPromptRef: string;
  try {
    systemPromptRef =
      input.resume?.systemPromptRef ??
      (
        await activities.buildSystemPrompt({
          workspace: input.workspace,
          model: input.model,
          appendSystemPrompt: input.appendSystemPrompt,
        })
      ).ref;
  } catch (error) {
    // A job that cannot start (its workspace missing on the worker) still ends with a Terminal.
    if (!(error instanceof ActivityFailure)) throw error;
    return setupFailed(state, control, error.cause?.message ?? error.message);
  }
  const session: Session = {
    input,
    sessionKey: `${info.workflowId}/${info.firstExecutionRunId}`,
    systemPromptRef,
    tools: input.tools ?? TOOL_DEFINITIONS.map((tool) => tool.name),
    maxTokens: input.maxTokens ?? DEFAULT_MAX_TOKENS,
    activities,
    control,
  };

  try {
    for (;;) {
      const step = await runTurn(session, state);
      if (step.kind === 'terminal') return await finish(session, step.state, step.reason, step.detail);
      state = step.state;
      control.showTurnState(undefined);
      if (workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        await continueAsNew<typeof agentSession>({
          ...input,
          resume: { state, systemPromptRef: session.systemPromptRef, ...control.carryOver() },
        });
      }
    }
  } catch (error) {
    // Plain Temporal cancellation of the whole job lands here when no turn was running.
    if (isCancellation(error)) return await finish(session, state, 'aborted_streaming', 'workflow cancelled');
    throw error;
  }
}

type TurnStep =
  | { kind: 'continue'; state: State }
  | { kind: 'terminal'; state: State; reason: TerminalReason; detail?: string };

/** One iteration of the seed's `while (true)`. */
async function runTurn(session: Session, state: State): Promise<TurnStep> {
  const { control } = session;
  state = withQueuedUserInput(session, state);

  // Phase 2: the model call.
  control.phase = 'calling_model';
  const outcome = await callModelPhase(session, state);
  if (outcome.kind === 'aborted') {
    return { kind: 'terminal', state, reason: 'aborted_streaming', detail: control.abortDetail };
  }
  if (outcome.kind === 'failed') return { kind: 'terminal', state, reason: outcome.reason, detail: outcome.detail };
  if (outcome.kind === 'fallback') {
    control.record({ turn: state.turnCount, kind: 'notice', text: outcome.detail });
    return {
      kind: 'continue',
      state: { ...state, model: session.input.fallbackModel ?? state.model, transition: { reason: 'fallback_model' } },
    };
  }

  const { reply } = outcome;
  const message = reply.message;
  const text = assistantText(message);
  if (text) control.record({ turn: state.turnCount, kind: 'assistant_text', text });
  const afterReply: State = {
    ...state,
    transcript: reply.transcript,
    pending: [],
    usage: addUsage(state.usage, reply.usage),
    lastAssistantText: text || state.lastAssistantText,
  };
  // The snapshot shows the reply's usage and text while the tools run, not the State before it.
  control.showTurnState(afterReply);

  // The seed's needsFollowUp: tool_use blocks in the reply, never stop_reason.
  const toolUseBlocks = findToolUseBlocks(message);
  if (toolUseBlocks.length === 0) return endOfTurn(session, state, afterReply, reply);

  // Phase 4: the tools.
  control.phase = 'running_tools';
  const tools = await runToolsPhase(session, afterReply.turnCount, toolUseBlocks);
  const withResults: State = { ...afterReply, pending: [{ role: 'user', content: tools.results }] };
  if (tools.aborted) return { kind: 'terminal', state: withResults, reason: 'aborted_tools', detail: control.abortDetail };

  // Phase 5 happens at the start of the next turn (queued input joins the tool results).
  // Phase 6: the next State, if another turn is allowed.
  const nextTurnCount = state.turnCount + 1;
  if (exceedsMaxTurns(nextTurnCount, control.maxTurns)) {
    return {
      kind: 'terminal',
      state: withResults,
      reason: 'max_turns',
      detail: `reached maxTurns ${control.maxTurns} with tool results pending`,
    };
  }
  return {
    kind: 'continue',
    state: {
      ...withResults,
      turnCount: nextTurnCount,
      maxOutputTokensRecoveryCount: 0,
      maxOutputTokensOverride: undefined,
      transition: { reason: 'next_turn' },
    },
  };
}

/** Phase 3: the reply asked for no tool. Recover from a cut-off reply, take queued input, or stop. */
function endOfTurn(session: Session, before: State, after: State, reply: CallModelResult): TurnStep {
  const { control } = session;
  if (reply.stopReason === 'max_tokens') {
    const decision = decideMaxOutputRecovery({
      maxTokens: session.maxTokens,
      maxOutputTokensOverride: before.maxOutputTokensOverride,
      maxOutputTokensRecoveryCount: before.maxOutputTokensRecoveryCount,
    });
    if (decision.kind === 'escalate') {
      // The cut reply is withheld: the same request runs again with room to finish.
      return {
        kind: 'continue',
        state: {
          ...after,
          transcript: reply.transcriptBeforeReply,
          maxOutputTokensOverride: decision.maxTokens,
          transition: { reason: 'max_output_tokens_escalate' },
        },
      };
    }
    if (decision.kind === 'recover') {
      return {
        kind: 'continue',
        state: {
          ...after,
          pending: [{ role: 'user', content: [{ type: 'text', text: decision.prompt }] }],
          maxOutputTokensRecoveryCount: before.maxOutputTokensRecoveryCount + 1,
          transition: { reason: 'max_output_tokens_recovery' },
        },
      };
    }
    control.record({ turn: after.turnCount, kind: 'notice', text: 'output token limit reached; recovery exhausted' });
  }

  if (control.inbox.length > 0) {
    const nextTurnCount = after.turnCount + 1;
    if (exceedsMaxTurns(nextTurnCount, control.maxTurns)) {
      return { kind: 'terminal', state: after, reason: 'max_turns', detail: 'queued user input not sent: maxTurns reached' };
    }
    return {
      kind: 'continue',
      state: { ...after, turnCount: nextTurnCount, maxOutputTokensRecoveryCount: 0, transition: { reason: 'next_turn' } },
    };
  }
  return { kind: 'terminal', state: after, reason: 'completed' };
}

/** Phase 5, taken at the turn boundary: user input queued by signal joins the next request. */
function withQueuedUserInput(session: Session, state: State): State {
  const queued = session.control.drainInbox();
  if (queued.length === 0) return state;
  for (const text of queued) session.control.record({ turn: state.turnCount, kind: 'notice', text: `user: ${text}` });
  const text = queued.join('\n\n');
  const last = state.pending.at(-1);
  const pending: PendingUserMessage[] = last
    ? [...state.pending.slice(0, -1), { role: 'user', content: [...last.content, { type: 'text', text }] }]
    : [...state.pending, { role: 'user', content: [{ type: 'text', text }] }];
  return { ...state, pending };
}

async function callModelPhase(session: Session, state: State): Promise<ModelOutcome> {
  const { control, activities } = session;
  try {
    const reply = await control.runAbortable(() =>
      activities.callModel({
        sessionKey: session.sessionKey,
        transcript: state.transcript,
        append: state.pending,
        systemPromptRef: session.systemPromptRef,
        model: state.model,
        maxTokens: state.maxOutputTokensOverride ?? session.maxTokens,
        tools: session.tools,
        fallbackAvailable: canFallBack(session, state),
      }),
    );
    return { kind: 'reply', reply };
  } catch (error) {
    if (isCancellation(error)) return { kind: 'aborted' };
    const failure = error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? error.cause : undefined;
    const detail = failure?.message ?? (error instanceof Error ? error.message : String(error));
    if (failure?.type === MODEL_FAILURE_TYPES.overloadedFallback && canFallBack(session, state)) {
      return { kind: 'fallback', detail: `Switched to ${session.input.fallbackModel} after repeated overload of ${state.model}` };
    }
    if (failure?.type === MODEL_FAILURE_TYPES.promptTooLong) return { kind: 'failed', reason: 'prompt_too_long', detail };
    if (error instanceof ActivityFailure) return { kind: 'failed', reason: 'model_error', detail };
    throw error;
  }
}

function canFallBack(session: Session, state: State): boolean {
  const fallback = session.input.fallbackModel;
  return fallback !== undefined && fallback !== state.model;
}

async function runToolsPhase(session: Session, turn: number, toolUseBlocks: ToolUseBlock[]) {
  const { control, activities } = session;
  try {
    return await control.runAbortable(() =>
      runTools(toolUseBlocks, {
        runTool: (toolUse) => activities.runTool({ sessionKey: session.sessionKey, workspace: session.input.workspace, toolUse }),
        onStart: (toolUse) => {
          control.runningTools.set(toolUse.id, toolUse.name);
          control.record({ turn, kind: 'tool_call', toolUseId: toolUse.id, name: toolUse.name, input: JSON.stringify(toolUse.input) });
        },
        onFinish: (toolUse, result, preview) => {
          control.runningTools.delete(toolUse.id);
          control.record({
            turn,
            kind: 'tool_result',
            toolUseId: toolUse.id,
            name: toolUse.name,
            isError: result.is_error ?? false,
            preview,
          });
        },
        isAborted: () => control.abortRequested,
      }),
    );
  } catch (error) {
    // An activity that exhausted its retries is an infrastructure failure, not the model's: the
    // model is told, and the job goes on rather than dying with tool_uses unanswered.
    if (!(error instanceof ActivityFailure)) throw error;
    return {
      aborted: false,
      results: toolUseBlocks.map((block) =>
        syntheticError(block.id, `Tool execution failed on the worker: ${error.cause?.message ?? error.message}`),
      ),
    };
  }
}

/** Every exit goes through here: pending messages are written to the transcript, then the Terminal. */
async function finish(session: Session, state: State, reason: TerminalReason, detail?: string): Promise<Terminal> {
  const { control, activities } = session;
  const transcript =
    state.pending.length === 0
      ? state.transcript
      : await CancellationScope.nonCancellable(() =>
          activities.commitTranscript({ transcript: state.transcript, append: state.pending }),
        );
  const terminal: Terminal = {
    reason,
    turnCount: state.turnCount,
    finalText: state.lastAssistantText,
    usage: state.usage,
    model: state.model,
    ...(detail !== undefined ? { detail } : {}),
    transcriptHead: transcript.head,
    messageCount: transcript.messageCount,
  };
  control.phase = 'finished';
  control.terminal = terminal;
  control.showTurnState(state);
  control.record({ turn: state.turnCount, kind: 'notice', text: `terminal: ${reason}${detail ? ` (${detail})` : ''}` });
  return terminal;
}

function setupFailed(state: State, control: SessionControl, detail: string): Terminal {
  const terminal: Terminal = {
    reason: 'setup_failed',
    turnCount: 0,
    finalText: '',
    usage: state.usage,
    model: state.model,
    detail,
    transcriptHead: null,
    messageCount: 0,
  };
  control.phase = 'finished';
  control.terminal = terminal;
  control.record({ turn: 0, kind: 'notice', text: `terminal: setup_failed (${detail})` });
  return terminal;
}

function initialState(input: SessionInput): State {
  return {
    transcript: emptyTranscript(),
    pending: [{ role: 'user', content: [{ type: 'text', text: input.prompt }] }],
    turnCount: 1,
    maxOutputTokensRecoveryCount: 0,
    maxOutputTokensOverride: undefined,
    transition: undefined,
    usage: emptyUsage(),
    model: input.model,
    lastAssistantText: '',
  };
}

export type { AssistantMessage };
