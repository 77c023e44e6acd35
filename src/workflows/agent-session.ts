import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import type { CallModelResult, MicrocompactInput } from '../shared/activity-types';
import { KEEP_RECENT_TOOL_RESULTS } from '../shared/context/context-state';
import { addUsage, assistantText, findToolUseBlocks } from '../shared/messages';
import type { TextBlock, ToolUseBlock } from '../shared/messages';
import { decideMaxOutputRecovery, exceedsMaxTurns } from '../shared/recovery';
import { DEFAULT_SESSION_TIMEOUTS, initialState } from '../shared/session';
import type { SessionInput, State } from '../shared/session';
import type { SubagentStats, Terminal } from '../shared/terminal';
import { terminalFailure } from '../shared/terminal-failure';
import type { PendingUserMessage, TextRef } from '../shared/transcript';
import type { QueuedMessage } from '../shared/signal-payloads';
import { sessionActivities, WORKSPACE_AFFINITY_PATCH } from './activity-proxies';
import type { SessionActivities, WorkspaceRoute } from './activity-proxies';
import {
  contextOf,
  contextPhase,
  contextReport,
  counted,
  reactiveCompact,
  thresholdsFor,
  withTurnBudget,
} from './context-phase';
import {
  budgetExhausted,
  COST_BUDGET_PATCH,
  costReport,
  durationOf,
  reportReplyCost,
  stoppedBeforeTurn,
  withCallCost,
} from './cost-budget';
import { finish, setupFailed } from './finish';
import { hookRunner, stopHooks } from './hooks-phase';
import { callModelPhase, contextAfterReply } from './model-phase';
import { RESUME_FROM_PATCH, seededState } from './resume-from';
import { prepareSession } from './session';
import type { Session } from './session';
import { describeMessage, SessionControl } from './session-control';
import { runToolsPhase } from './tools-phase';
import type { ToolsPhaseOutcome } from './tools-phase';
import type { TurnStep } from './turn-step';
import { waitAfterTurn } from './wait-phase';
import { nextQuery, OPEN_INPUT_PATCH, publishTurnResult, waitForInput } from './input-phase';
import { BackgroundTasks, taskNotification } from './background-tasks';
import { withAgentCosts } from './agent-phase';

/** Guards the stop-reason paths (refusal, pause_turn, context window, exhausted recovery). */
const STOP_REASONS_PATCH = 'stop-reasons';

/** Guards Phase 1's context pipeline: tool-result budget, microcompact, autocompact, reactive compact. */
const CONTEXT_PIPELINE_PATCH = 'context-pipeline';

/** A model that keeps pausing its turn is stopped after this many pauses in a row. */
const MAX_CONSECUTIVE_PAUSES = 10;

/**
 * Guards ending a job that did not complete as a failed workflow (its Terminal in the failure's
 * details), so Temporal's status, the UI's list and its metrics tell it from one that completed.
 * Jobs recorded before it returned every Terminal; their histories replay that way.
 */
export const FAILED_STATUS_PATCH = 'failed-status';

/**
 * Claude Code's `queryLoop()` as a durable workflow. Each pass of the loop is one turn made of the
 * seed's phases; every exit has a Terminal: a `completed` job returns it, any other ends the
 * workflow failed with it in the failure's details (`terminalInFailure` reads it back).
 */
export async function agentSession(input: SessionInput): Promise<Terminal> {
  const terminal = await runSession(input);
  if (terminal.reason !== 'completed' && patched(FAILED_STATUS_PATCH)) throw terminalFailure(terminal);
  return terminal;
}

async function runSession(input: SessionInput): Promise<Terminal> {
  const timeouts = { ...DEFAULT_SESSION_TIMEOUTS, ...input.timeouts };
  // A State carried over by an older version of this workflow may lack newer fields.
  let state: State = input.resume ? { ...initialState(input), ...input.resume.state } : initialState(input);
  // Each activity's summary names the turn it belongs to.
  // The host that holds the workspace, once the job knows it: its tools go to that host's queue.
  const route: WorkspaceRoute = input.resume?.hostQueue ? { hostQueue: input.resume.hostQueue } : {};
  const activities = sessionActivities(timeouts, () => state.turnCount, route);
  const control = new SessionControl(input.maxTurns, input.resume, () => state);
  control.route = route;
  control.install();
  control.background = new BackgroundTasks(
    control.rootScope,
    (run) => activities.runBackgroundTool(run),
    input.resume?.subagentStats,
  );

  const info = workflowInfo();
  if (!input.resume && input.batch?.setupError === undefined && patched(WORKSPACE_AFFINITY_PATCH)) {
    // A batch task's clone is on the host that made it: asked first, and waited for while it is away.
    if (input.batch?.workspaceHost) route.hostQueue = input.batch.workspaceHost;
    let claimed = await claimWorkspace(activities, input.workspace);
    if (claimed.kind === 'failed' && route.hostQueue) {
      delete route.hostQueue;
      claimed = await claimWorkspace(activities, input.workspace);
    }
    if (claimed.kind === 'failed') return setupFailed(control, state, claimed.detail);
    if (claimed.hostQueue) route.hostQueue = claimed.hostQueue;
  }
  const prepared = await prepareSession(input, `${info.workflowId}/${info.firstExecutionRunId}`, activities, control);
  if (prepared.kind === 'failed') return setupFailed(control, state, prepared.detail);
  const session = prepared.session;
  control.permissionMode = session.permissions?.mode;
  control.setSystemPromptRef(session.systemPromptRef);
  // Jobs recorded before the pipeline never compacted; their histories replay without it.
  session.contextPipeline = patched(CONTEXT_PIPELINE_PATCH);
  if (session.contextPipeline) control.describeContext = (current) => contextReport(session, current);
  // Jobs recorded before cost counting neither priced their calls nor kept a budget.
  session.costBudget = patched(COST_BUDGET_PATCH);
  if (session.costBudget) {
    control.describeCost = (current) => costReport(session, current);
    if (state.startedAtMs === undefined) state = { ...state, startedAtMs: info.startTime.getTime() };
  }
  // Only jobs that continue a conversation take this path, so every older history replays as it was.
  if (input.resumeFrom && !input.resume && patched(RESUME_FROM_PATCH)) {
    const seeded = await seededState(session, state);
    if (seeded.kind === 'failed') return setupFailed(control, state, seeded.detail);
    state = seeded.state;
  }
  if (session.hooksConfig) {
    session.hooks = hookRunner({
      config: session.hooksConfig,
      sessionKey: session.sessionKey,
      workspace: input.workspace,
      permissionMode: () => session.permissions?.mode ?? 'default',
      sandbox: session.sandbox,
      activities,
      control,
    });
  }
  const ending = (ended: State) => ({
    ...(ended.transitionCounts ? { transitions: ended.transitionCounts } : {}),
    ...(session.contextPipeline ? { context: contextReport(session, ended) } : {}),
    ...costReport(session, ended),
    ...durationOf(session, ended),
  });

  try {
    for (;;) {
      let step = await runTurn(session, state);
      // A job whose input stays open (the Agent SDK's streaming input) publishes each answer and
      // waits for the next message, unless it was told none comes.
      const answered =
        step.kind === 'terminal' &&
        step.reason === 'completed' &&
        input.inputOpen !== undefined &&
        patched(OPEN_INPUT_PATCH);
      // What its agents cost is counted into the State here, for the answer's cost to include it.
      if (answered) step = { ...step, state: withAgentCosts(session, step.state) };
      const answeredState = step.state;
      if (answered) publishTurnResult(session, answeredState, ending(answeredState));
      // Only a job whose model called ScheduleWakeup or CronCreate or ran a background command (each
      // behind its patch) ends a turn with something to wait for.
      if (
        step.kind === 'terminal' &&
        step.reason === 'completed' &&
        (step.state.wakeup ||
          step.state.crons?.length ||
          control.background.running.length > 0 ||
          control.background.news.length > 0)
      ) {
        step = await waitAfterTurn(session, step.state, answered ? { turnsPerMessage: true } : {});
        // What wakes it (a message, a background command's end, a scheduled prompt) is answered anew.
        if (answered && step.kind === 'continue')
          step = { ...step, state: nextQuery(session, answeredState, step.state) };
      } else if (answered && input.inputOpen && (!control.inputClosed || control.inbox.length > 0)) {
        step = await waitForInput(session, step.state, input.inputOpen.idleMs);
      }
      if (step.kind === 'terminal') {
        // Nothing of the job runs on after it: its background commands and agents are stopped
        // first, and what the agents cost is the job's.
        await control.background.stopAll();
        const last = withAgentCosts(session, step.state);
        return await finish(activities, control, last, step.reason, step.detail, ending(last));
      }
      const transition = step.state.transition?.reason;
      state = transition ? counted(step.state, transition) : step.state;
      if (transition && transition !== 'next_turn') {
        control.record({ turn: state.turnCount, kind: 'notice', text: `transition: ${transition}` });
      }
      control.showTurnState(undefined);
      // A background command's activity belongs to this run: the job continues as new once none runs.
      if (workflowInfo().continueAsNewSuggested && control.background.running.length === 0) {
        await condition(allHandlersFinished);
        // A mode or model asked for meanwhile is carried in the State and rules of the next run.
        state = withRequestedSettings(session, state);
        await continueAsNew<typeof agentSession>({
          ...input,
          // The prompt is in the transcript; the next run starts from the State, not from it.
          ...(session.contextPipeline ? { prompt: '' } : {}),
          // The resumed conversation is in the transcript now; a next run need not carry it.
          ...(input.resumeFrom ? { resumeFrom: undefined } : {}),
          resume: {
            state,
            systemPromptRef: session.systemPromptRef,
            ...(session.permissions ? { permissions: session.permissions } : {}),
            ...(session.sandbox ? { sandbox: session.sandbox } : {}),
            ...(session.hooksConfig ? { hooks: session.hooksConfig } : {}),
            ...(session.modelLimits.length ? { modelLimits: session.modelLimits } : {}),
            ...(session.modelPrices.length ? { modelPrices: session.modelPrices } : {}),
            ...(route.hostQueue ? { hostQueue: route.hostQueue } : {}),
            ...(agentsCounted(control.background.subagentStats())
              ? { subagentStats: control.background.subagentStats() }
              : {}),
            ...control.carryOver(),
          },
        });
      }
    }
  } catch (error) {
    // Plain Temporal cancellation of the whole job lands here when no turn was running.
    if (isCancellation(error)) {
      // The cancellation reached the background commands' scopes too: wait until they have stopped.
      await control.background.stopAll();
      const last = session ? withAgentCosts(session, state) : state;
      return await finish(activities, control, last, 'aborted_streaming', 'workflow cancelled', ending(last));
    }
    throw error;
  }
}

/**
 * What `setPermissionMode` and `setModel` asked for since the last turn (the Agent SDK's
 * `set_permission_mode` and `set_model`), in force from here on.
 */
function withRequestedSettings(session: Session, state: State): State {
  const { control } = session;
  let mode = control.requestedMode;
  control.requestedMode = undefined;
  // Only the Agent SDK's jobs take it, and none is raised to bypassPermissions unless it said so at
  // its start: a client that may signal a job must not lift its permissions.
  const refusal =
    mode === undefined
      ? undefined
      : !session.input.inputOpen
        ? 'only jobs the Agent SDK started take it'
        : mode === 'bypassPermissions' &&
            !session.input.allowBypassPermissions &&
            session.input.permissions?.mode !== 'bypassPermissions'
          ? 'the job was not started with bypassPermissions allowed (allowDangerouslySkipPermissions)'
          : undefined;
  if (refusal) {
    control.record({ turn: state.turnCount, kind: 'notice', text: `setPermissionMode ${mode} refused: ${refusal}` });
    mode = undefined;
  }
  if (mode !== undefined && session.permissions && session.permissions.mode !== mode) {
    session.permissions = { ...session.permissions, mode };
    control.permissionMode = mode;
    if (control.permissionSummary)
      control.permissionSummary = { ...control.permissionSummary, mode, modeSource: 'setPermissionMode signal' };
    control.record({ turn: state.turnCount, kind: 'notice', text: `permission mode is now ${mode}` });
  }
  const model = control.requestedModel;
  control.requestedModel = undefined;
  if (model === undefined || model === state.model) return state;
  control.record({ turn: state.turnCount, kind: 'notice', text: `model is now ${model} (was ${state.model})` });
  return { ...state, model };
}

/** One iteration of the seed's `while (true)`. */
async function runTurn(session: Session, state: State): Promise<TurnStep> {
  const { control } = session;
  state = withRequestedSettings(session, state);
  // What agents that ended since the last turn cost counts before the budget is checked.
  state = withAgentCosts(session, state);
  // Before anything of the turn, so input queued for it is reported as not sent.
  const spent = budgetExhausted(session, state, `turn ${state.turnCount}'s model call`);
  if (spent) return { kind: 'terminal', state: stoppedBeforeTurn(state), reason: 'budget_exhausted', detail: spent };
  state = withQueuedUserInput(session, withBackgroundNews(session, state));

  // Phase 1: keep the context within the model's window.
  let microcompact: MicrocompactInput | undefined;
  if (session.contextPipeline) {
    const prepared = await contextPhase(session, state);
    if (prepared.kind === 'aborted') {
      return { kind: 'terminal', state, reason: 'aborted_streaming', detail: control.abortDetail };
    }
    state = prepared.state;
    microcompact = prepared.microcompact;
    // An autocompact is a model call too: the turn's own call must not start past the budget.
    const compacted = budgetExhausted(session, state, `turn ${state.turnCount}'s model call after compacting`);
    if (compacted) {
      return { kind: 'terminal', state: stoppedBeforeTurn(state), reason: 'budget_exhausted', detail: compacted };
    }
  }

  // Phase 2: the model call.
  control.phase = 'calling_model';
  const outcome = await callModelPhase(session, state, microcompact);
  if (outcome.kind === 'aborted') {
    return { kind: 'terminal', state, reason: 'aborted_streaming', detail: control.abortDetail };
  }
  if (outcome.kind === 'too_long') return reactiveCompact(session, state, outcome.detail, outcome.promptTokens);
  if (outcome.kind === 'failed') return { kind: 'terminal', state, reason: outcome.reason, detail: outcome.detail };
  if (outcome.kind === 'fallback') {
    control.record({ turn: state.turnCount, kind: 'notice', text: outcome.detail });
    return { kind: 'continue', state: { ...state, model: outcome.model, transition: { reason: 'fallback_model' } } };
  }

  const { reply } = outcome;
  const message = reply.message;
  const text = assistantText(message);
  if (text) control.record({ turn: state.turnCount, kind: 'assistant_text', text });
  const cleared = session.contextPipeline && (reply.clearedBefore ?? 0) > contextOf(state).clearedBefore;
  // Above the threshold the boundary moves on every turn; one notice per stretch of such turns.
  if (cleared && contextOf(state).lastMicrocompactTurn !== state.turnCount - 1) {
    control.record({
      turn: state.turnCount,
      kind: 'notice',
      text: `microcompact: tool results older than the last ${KEEP_RECENT_TOOL_RESULTS} are sent as a short marker from now on`,
    });
  }
  const replied: State = {
    ...state,
    pauseTurnCount: 0,
    transcript: reply.transcript,
    pending: [],
    usage: addUsage(state.usage, reply.usage),
    ...withCallCost(session, state, state.model, reply),
    lastAssistantText: text || state.lastAssistantText,
    lastStopReason: reply.stopReason,
    ...(session.contextPipeline ? contextAfterReply(state, reply) : {}),
  };
  const afterReply = cleared ? counted(replied, 'microcompact') : replied;
  // The snapshot shows the reply's usage and text while the tools run, not the State before it.
  control.showTurnState(afterReply);
  reportReplyCost(session, afterReply);

  // Stop reasons that end or redirect the turn whatever the reply holds.
  // Jobs recorded before these stop reasons had their own paths took the generic ones; the
  // patch keeps their histories replaying.
  if (reply.stopReason === 'refusal' && patched(STOP_REASONS_PATCH)) {
    const why = [reply.stopDetails?.category, reply.stopDetails?.explanation].filter(Boolean).join(': ');
    return {
      kind: 'terminal',
      state: afterReply,
      reason: 'refusal',
      detail: `the model declined to continue${why ? ` (${why})` : ''}; nothing it asked for in that reply was run`,
    };
  }
  if (reply.stopReason === 'model_context_window_exceeded' && session.contextPipeline) {
    // The reply was cut because the window filled: compact and ask again (the cut reply is dropped).
    return reactiveCompact(
      session,
      { ...afterReply, transcript: reply.transcriptBeforeReply },
      'the context window filled up mid-reply',
    );
  }
  if (reply.stopReason === 'model_context_window_exceeded' && patched(STOP_REASONS_PATCH)) {
    return {
      kind: 'terminal',
      state: afterReply,
      reason: 'prompt_too_long',
      detail:
        "the conversation filled the model's context window mid-reply; start a new job with a narrower task, or a model with a larger window",
    };
  }
  // The seed's needsFollowUp: tool_use blocks in the reply, never stop_reason.
  const toolUseBlocks = findToolUseBlocks(message);
  // A tool call cut off by the output limit has a partial input: it is never run (the activity
  // left it out of the reply); the reply takes the max-output recovery path instead.
  if (reply.truncatedToolUse) return cutToolUse(session, state, afterReply, reply, toolUseBlocks);
  if (reply.stopReason === 'pause_turn' && toolUseBlocks.length === 0 && patched(STOP_REASONS_PATCH)) {
    // The API paused a long turn: sending the conversation back as it is lets the model resume.
    const pauses = (state.pauseTurnCount ?? 0) + 1;
    if (pauses >= MAX_CONSECUTIVE_PAUSES) {
      return {
        kind: 'terminal',
        state: afterReply,
        reason: 'model_error',
        detail: `the model paused its turn ${pauses} times in a row (stop_reason pause_turn); stopped rather than pay for more calls`,
      };
    }
    return nextTurn(
      session,
      { ...afterReply, pauseTurnCount: pauses },
      'pause_turn',
      'paused reply not resumed: maxTurns reached',
    );
  }
  if (toolUseBlocks.length === 0) return endOfTurn(session, state, afterReply, reply);

  // Phase 4: the tools.
  control.phase = 'running_tools';
  const tools = await runToolsPhase(session, afterReply, toolUseBlocks);
  // Phase 5 happens at the start of the next turn (queued input joins the tool results).
  // Phase 6: the next State, if another turn is allowed.
  const step = afterTools(session, afterReply, tools, []);
  if (step.kind === 'terminal') return step;
  return {
    kind: 'continue',
    state: {
      ...step.state,
      maxOutputTokensRecoveryCount: 0,
      maxOutputTokensOverride: undefined,
      transition: { reason: 'next_turn' },
    },
  };
}

/**
 * Phase 4's results folded into the State, and the next turn counted; a Terminal instead when the
 * tools were aborted or maxTurns is reached.
 */
function afterTools(session: Session, after: State, tools: ToolsPhaseOutcome, extra: TextBlock[]): TurnStep {
  const { control } = session;
  const results = session.contextPipeline ? withTurnBudget(tools.results) : tools.results;
  // Agents that ended in the foreground this turn: their cost is the job's from now on.
  after = withAgentCosts(session, after);
  const feedback: TextBlock[] = tools.effects.hookFeedback.map((text) => ({ type: 'text', text }));
  const withResults: State = {
    ...after,
    pending: [{ role: 'user', content: [...results, ...feedback, ...extra] }],
    ...boundedEffects(after, tools),
    todos: tools.effects.todos,
    unsandboxedCommands: tools.effects.unsandboxedCommands,
    wakeup: tools.effects.wakeup,
    crons: tools.effects.crons?.length ? tools.effects.crons : undefined,
  };
  if (tools.aborted)
    return { kind: 'terminal', state: withResults, reason: 'aborted_tools', detail: control.abortDetail };
  if (tools.effects.stopRequested) {
    return { kind: 'terminal', state: withResults, reason: 'stop_hook_prevented', detail: tools.effects.stopRequested };
  }
  const nextTurnCount = after.turnCount + 1;
  if (exceedsMaxTurns(nextTurnCount, control.maxTurns)) {
    return {
      kind: 'terminal',
      state: withResults,
      reason: 'max_turns',
      detail: `reached maxTurns ${control.maxTurns} with tool results pending`,
    };
  }
  return { kind: 'continue', state: { ...withResults, turnCount: nextTurnCount } };
}

/** Most recent denials a job keeps by name; older ones only count. */
export const KEPT_DENIALS = 50;
/** Files whose read state a job keeps; the least recently used is forgotten (Edit then asks for a fresh Read). */
export const KEPT_FILE_STATES = 256;

/** The tools' effects on the State, capped so that nothing in it grows with the job's age. */
function boundedEffects(
  before: State,
  tools: ToolsPhaseOutcome,
): Pick<State, 'denials' | 'denialCount' | 'readFileState'> {
  const { denials, readFileState } = tools.effects;
  const added = denials.length - before.denials.length;
  const keys = Object.keys(readFileState);
  return {
    denials: denials.slice(-KEPT_DENIALS),
    denialCount: (before.denialCount ?? before.denials.length) + added,
    readFileState:
      keys.length <= KEPT_FILE_STATES
        ? readFileState
        : Object.fromEntries(keys.slice(-KEPT_FILE_STATES).map((key) => [key, readFileState[key]!])),
  };
}

/** Phase 3: the reply asked for no tool. Recover from a cut-off reply, take queued input, or stop. */
async function endOfTurn(session: Session, before: State, after: State, reply: CallModelResult): Promise<TurnStep> {
  const { control } = session;
  if (reply.stopReason === 'max_tokens') {
    const decision = decideMaxOutputRecovery({
      maxTokens: session.maxTokens,
      maxOutputTokensOverride: before.maxOutputTokensOverride,
      maxOutputTokensRecoveryCount: before.maxOutputTokensRecoveryCount,
      ...modelOutputLimit(session, after),
    });
    if (decision.kind === 'escalate') return escalated(after, reply, decision.maxTokens);
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
    if (patched(STOP_REASONS_PATCH)) {
      return {
        kind: 'terminal',
        state: after,
        reason: 'max_output_tokens',
        detail: outputLimitExhausted(session, before),
      };
    }
    control.record({ turn: after.turnCount, kind: 'notice', text: 'output token limit reached; recovery exhausted' });
  }

  if (control.inbox.length > 0) {
    const nextTurnCount = after.turnCount + 1;
    if (exceedsMaxTurns(nextTurnCount, control.maxTurns)) {
      return {
        kind: 'terminal',
        state: after,
        reason: 'max_turns',
        detail: 'queued user input not sent: maxTurns reached',
      };
    }
    return {
      kind: 'continue',
      state: {
        ...after,
        turnCount: nextTurnCount,
        maxOutputTokensRecoveryCount: 0,
        transition: { reason: 'next_turn' },
      },
    };
  }
  return stopHooks(session, after);
}

/**
 * A reply that stopped at the output limit inside a tool call. First the same request runs again
 * with room to finish (the cut reply is withheld); after that, the complete calls before the cut
 * one run, and the model is told the cut call was not run and to split it up.
 */
async function cutToolUse(
  session: Session,
  before: State,
  after: State,
  reply: CallModelResult,
  completeToolUses: ToolUseBlock[],
): Promise<TurnStep> {
  const cut = reply.truncatedToolUse as { id: string; name: string };
  const { control } = session;
  control.record({
    turn: after.turnCount,
    kind: 'notice',
    text: `output token limit reached inside ${cut.name} (${cut.id}); the cut call is not run`,
  });
  const decision = decideMaxOutputRecovery({
    maxTokens: session.maxTokens,
    maxOutputTokensOverride: before.maxOutputTokensOverride,
    maxOutputTokensRecoveryCount: before.maxOutputTokensRecoveryCount,
    ...modelOutputLimit(session, after),
  });
  if (decision.kind === 'escalate') return escalated(after, reply, decision.maxTokens);
  // Only replies recorded since truncatedToolUse existed come here, so no patch is needed.
  if (decision.kind === 'exhausted') {
    return {
      kind: 'terminal',
      state: after,
      reason: 'max_output_tokens',
      detail: outputLimitExhausted(session, before),
    };
  }
  const notice: TextBlock = {
    type: 'text',
    text:
      `Your previous reply stopped at the output token limit in the middle of the ${cut.name} call ${cut.id}, ` +
      'so that call was not run. Issue it again with a smaller input (split a large Write, Edit or MultiEdit ' +
      'into several calls), without repeating what you already wrote.',
  };
  const recovering = {
    maxOutputTokensRecoveryCount: before.maxOutputTokensRecoveryCount + 1,
    transition: { reason: 'max_output_tokens_recovery' as const },
  };
  if (completeToolUses.length === 0) {
    return { kind: 'continue', state: { ...after, ...recovering, pending: [{ role: 'user', content: [notice] }] } };
  }
  // The complete calls before the cut one are in the transcript and must get their results.
  control.phase = 'running_tools';
  const tools = await runToolsPhase(session, after, completeToolUses);
  return afterTools(session, { ...after, ...recovering }, tools, [notice]);
}

/** The cut reply is withheld: the same request runs again with room to finish. */
function escalated(after: State, reply: CallModelResult, maxTokens: number): TurnStep {
  return {
    kind: 'continue',
    state: {
      ...after,
      transcript: reply.transcriptBeforeReply,
      maxOutputTokensOverride: maxTokens,
      transition: { reason: 'max_output_tokens_escalate' },
    },
  };
}

function outputLimitExhausted(session: Session, before: State): string {
  const limit = before.maxOutputTokensOverride ?? session.maxTokens;
  return (
    `the reply was still cut at the output limit (${limit} tokens) after ${before.maxOutputTokensRecoveryCount} ` +
    'continuation prompt(s); raise --max-tokens or split the task into smaller steps'
  );
}

/** The model's output limit from the table, for jobs on the context pipeline (older runs escalate as they did). */
function modelOutputLimit(session: Session, state: State): { modelMaxOutputTokens?: number } {
  return session.contextPipeline ? { modelMaxOutputTokens: thresholdsFor(session, state.model).maxOutputTokens } : {};
}

/** Go round again without a new user message (a paused turn), if maxTurns allows. */
function nextTurn(session: Session, after: State, reason: 'pause_turn', detailIfStopped: string): TurnStep {
  const nextTurnCount = after.turnCount + 1;
  if (exceedsMaxTurns(nextTurnCount, session.control.maxTurns)) {
    return { kind: 'terminal', state: after, reason: 'max_turns', detail: detailIfStopped };
  }
  return { kind: 'continue', state: { ...after, turnCount: nextTurnCount, transition: { reason } } };
}

/** Background commands that ended since the last turn: a notification for each joins the next request. */
function withBackgroundNews(session: Session, state: State): State {
  const news = session.control.background?.news ?? [];
  if (news.length === 0) return state;
  const blocks: TextBlock[] = news.map((task) => {
    task.reported = true;
    session.control.record({
      turn: state.turnCount,
      kind: 'notice',
      text: `background command ${task.taskId} ${task.status}${task.exitCode !== undefined ? ` (exit code ${task.exitCode})` : ''}: ${task.label}`,
    });
    return { type: 'text', text: taskNotification(task) };
  });
  const last = state.pending.at(-1);
  const pending: PendingUserMessage[] = last
    ? [...state.pending.slice(0, -1), { role: 'user', content: [...last.content, ...blocks] }]
    : [...state.pending, { role: 'user', content: blocks }];
  return { ...state, pending };
}

/** Phase 5, taken at the turn boundary: user input queued by signal joins the next request. */
function withQueuedUserInput(session: Session, state: State): State {
  const queued = session.control.drainInbox();
  if (queued.length === 0) return state;
  for (const message of queued) {
    const text = typeof message === 'string' ? message : describeMessage(message);
    session.control.record({ turn: state.turnCount, kind: 'notice', text: `user: ${text}` });
  }
  const blocks = queuedBlocks(queued);
  const last = state.pending.at(-1);
  const pending: PendingUserMessage[] = last
    ? [...state.pending.slice(0, -1), { role: 'user', content: [...last.content, ...blocks] }]
    : [...state.pending, { role: 'user', content: blocks }];
  // New instructions start a new stretch: Stop hooks that blocked before count from zero again.
  return { ...state, pending, ...(state.stopHookBlocks ? { stopHookBlocks: 0 } : {}) };
}

/**
 * Queued messages as the blocks of the next user message: each run of inline messages one text
 * block (as jobs always sent them), each message by reference a block the model call fills in.
 */
function queuedBlocks(queued: QueuedMessage[]): Array<TextBlock | TextRef> {
  const blocks: Array<TextBlock | TextRef> = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length > 0) blocks.push({ type: 'text', text: run.join('\n\n') });
    run = [];
  };
  for (const message of queued) {
    if (typeof message === 'string') {
      run.push(message);
      continue;
    }
    flush();
    blocks.push({ type: 'text_ref', ref: message.$contentRef, chars: message.chars });
  }
  flush();
  return blocks;
}

/**
 * Which host holds the workspace: the queue of the worker that found it a folder. When none of
 * the workers the claim reached has it, the job cannot start.
 */
async function claimWorkspace(
  activities: SessionActivities,
  workspace: string,
): Promise<{ kind: 'ready'; hostQueue?: string } | { kind: 'failed'; detail: string }> {
  try {
    return { kind: 'ready', ...(await activities.claimWorkspace({ workspace })) };
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    return {
      kind: 'failed',
      detail:
        `no worker of this job's task queue has the workspace ${workspace} (${error.cause?.message ?? error.message}): ` +
        'check the path, or start a worker on the machine that holds it',
    };
  }
}

/** Whether the job has launched or refused an agent: only then is there a count to carry on. */
function agentsCounted(stats: SubagentStats): boolean {
  return stats.spawned > 0 || Object.values(stats.refused).some((n) => n > 0);
}
