import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { createActivities } from '../src/activities';
import type { CallModelResult, ToolRunResult } from '../src/shared/activity-types';
import type { ReadFileStates } from '../src/shared/file-state';
import { addUsage, assistantText, findToolUseBlocks } from '../src/shared/messages';
import type { ToolUseBlock } from '../src/shared/messages';
import { decidePermission, mergeRules } from '../src/shared/permissions';
import type { PermissionContext } from '../src/shared/permissions';
import { DEFAULT_MAX_TOKENS, decideMaxOutputRecovery, exceedsMaxTurns } from '../src/shared/recovery';
import { initialState } from '../src/shared/session';
import type { SessionInput, State as SessionState } from '../src/shared/session';
import type { Terminal, TerminalReason } from '../src/shared/terminal';
import { TODO_WRITE_RESULT, todoWriteTool } from '../src/shared/tools/todo-write';
import { classifyToolUse } from '../src/shared/tool-definition';
import { TOOL_DEFINITIONS, fileStateKeysFor, formatInputValidationError, getToolDefinition } from '../src/shared/tools';
import type { PendingBlock } from '../src/shared/transcript';

type Activities = ReturnType<typeof createActivities>;

/** The part of `agentSession`'s State this loop drives (the rest belongs to features it leaves out). */
type State = Pick<
  SessionState,
  | 'transcript'
  | 'pending'
  | 'turnCount'
  | 'maxOutputTokensRecoveryCount'
  | 'maxOutputTokensOverride'
  | 'transition'
  | 'usage'
  | 'model'
  | 'lastAssistantText'
  | 'readFileState'
  | 'todos'
  | 'denials'
>;

/** What the loop returns: the Terminal's accounting fields. */
export type InProcessResult = Pick<
  Terminal,
  'reason' | 'turnCount' | 'finalText' | 'usage' | 'model' | 'detail' | 'transcriptHead' | 'messageCount'
> &
  Pick<State, 'todos' | 'denials'>;

const quietLogger = new DefaultLogger('WARN');

/**
 * Run one activity function in an activity Context, as a worker would but without Temporal: a fresh
 * `MockActivityEnvironment` per call, like the fresh Context a worker gives each activity task.
 */
function inActivity<I, O>(
  activityType: string,
  activityId: string,
  fn: (input: I) => Promise<O>,
  input: I,
  info: { startToCloseTimeoutMs: number; heartbeatTimeoutMs?: number },
): Promise<O> {
  const env = new MockActivityEnvironment(
    { activityType, activityId, attempt: 1, scheduleToCloseTimeoutMs: 0, ...info },
    { logger: quietLogger },
  );
  return env.run(fn, input);
}

const MODEL_TIMEOUTS = { startToCloseTimeoutMs: 15 * 60_000, heartbeatTimeoutMs: 60_000 };
const TOOL_TIMEOUTS = { startToCloseTimeoutMs: 20 * 60_000, heartbeatTimeoutMs: 30_000 };
const LOCAL_TIMEOUTS = { startToCloseTimeoutMs: 60_000 };

/**
 * The seed's `queryLoop()` as a plain async loop: the same activity functions as `agentSession`
 * (buildSystemPrompt and loadPermissionSettings once, then callModel and runTool per turn,
 * commitTranscript at the end if messages are pending), the same State, the same pure per-call
 * decisions (permission rules, read-before-edit file state, TodoWrite) and the same
 * transcript-store semantics (pending messages go into the transcript with the next model call;
 * tool results travel as `tool_result_ref`s), but no Temporal: no history, no retries, no
 * durability. Signals, aborts, approvals and the fallback model are not modelled; a failing
 * activity, or a call the rules say to ask a person about, throws.
 */
export async function runInProcessLoop(
  activities: Activities,
  input: SessionInput,
  sessionKey: string,
): Promise<InProcessResult> {
  // Start-up, as agentSession's prepareSession.
  const { ref: systemPromptRef } = await inActivity(
    'buildSystemPrompt',
    'system-prompt',
    activities.buildSystemPrompt,
    {
      workspace: input.workspace,
      model: input.model,
      appendSystemPrompt: input.appendSystemPrompt,
    },
    LOCAL_TIMEOUTS,
  );
  const settings = await inActivity(
    'loadPermissionSettings',
    'permission-settings',
    activities.loadPermissionSettings,
    {
      workspace: input.workspace,
    },
    LOCAL_TIMEOUTS,
  );
  const own = input.permissions;
  const permissions: PermissionContext = {
    mode: own?.mode ?? settings.defaultMode ?? 'default',
    rules: mergeRules(settings.rules, { allow: own?.allow, ask: own?.ask, deny: own?.deny }),
    workspace: input.workspace,
  };
  const gate: Gate = { activities, sessionKey, workspace: input.workspace, permissions };
  const tools = input.tools ?? TOOL_DEFINITIONS.map((tool) => tool.name);
  const maxTokens = input.maxTokens ?? DEFAULT_MAX_TOKENS;
  let state: State = initialState(input);
  let modelCalls = 0;

  for (;;) {
    // Phase 2: the model call.
    const reply: CallModelResult = await inActivity(
      'callModel',
      String(++modelCalls),
      activities.callModel,
      {
        sessionKey,
        transcript: state.transcript,
        append: state.pending,
        systemPromptRef,
        model: state.model,
        maxTokens: state.maxOutputTokensOverride ?? maxTokens,
        tools,
        fallbackAvailable: false,
      },
      MODEL_TIMEOUTS,
    );
    const text = assistantText(reply.message);
    const afterReply: State = {
      ...state,
      transcript: reply.transcript,
      pending: [],
      usage: addUsage(state.usage, reply.usage),
      lastAssistantText: text || state.lastAssistantText,
    };

    const toolUseBlocks = findToolUseBlocks(reply.message);
    if (toolUseBlocks.length === 0) {
      // Phase 3: no tool asked for. Recover from a cut-off reply, or stop.
      if (reply.stopReason === 'max_tokens') {
        const decision = decideMaxOutputRecovery({
          maxTokens,
          maxOutputTokensOverride: state.maxOutputTokensOverride,
          maxOutputTokensRecoveryCount: state.maxOutputTokensRecoveryCount,
        });
        if (decision.kind === 'escalate') {
          state = {
            ...afterReply,
            transcript: reply.transcriptBeforeReply,
            maxOutputTokensOverride: decision.maxTokens,
            transition: { reason: 'max_output_tokens_escalate' },
          };
          continue;
        }
        if (decision.kind === 'recover') {
          state = {
            ...afterReply,
            pending: [{ role: 'user', content: [{ type: 'text', text: decision.prompt }] }],
            maxOutputTokensRecoveryCount: state.maxOutputTokensRecoveryCount + 1,
            transition: { reason: 'max_output_tokens_recovery' },
          };
          continue;
        }
      }
      return finish(activities, afterReply, 'completed');
    }

    // Phase 4: the tools, in request order; adjacent concurrency-safe calls run together.
    const effects: Effects = { readFileState: state.readFileState, todos: state.todos, denials: [...state.denials] };
    const results = await runToolCalls(gate, effects, toolUseBlocks);
    const withResults: State = { ...afterReply, pending: [{ role: 'user', content: results }], ...effects };

    // Phase 6: the next State, if another turn is allowed.
    const nextTurnCount = state.turnCount + 1;
    if (exceedsMaxTurns(nextTurnCount, input.maxTurns)) {
      return finish(
        activities,
        withResults,
        'max_turns',
        `reached maxTurns ${input.maxTurns} with tool results pending`,
      );
    }
    state = {
      ...withResults,
      turnCount: nextTurnCount,
      maxOutputTokensRecoveryCount: 0,
      maxOutputTokensOverride: undefined,
      transition: { reason: 'next_turn' },
    };
  }
}

interface Gate {
  activities: Activities;
  sessionKey: string;
  workspace: string;
  permissions: PermissionContext;
}

/** What one turn's tool calls change in the State, as agentSession's TurnEffects. */
type Effects = Pick<State, 'readFileState' | 'todos' | 'denials'>;

async function runToolCalls(gate: Gate, effects: Effects, blocks: ToolUseBlock[]): Promise<PendingBlock[]> {
  const results: PendingBlock[] = [];
  let batch: ToolUseBlock[] = [];
  const flush = async () => {
    results.push(...(await Promise.all(batch.map((block) => gateAndRun(gate, effects, block)))));
    batch = [];
  };
  for (const block of blocks) {
    if (classifyToolUse(getToolDefinition(block.name), block.input).concurrencySafe) {
      batch.push(block);
      continue;
    }
    await flush();
    results.push(await gateAndRun(gate, effects, block));
  }
  await flush();
  return results;
}

/** One call: TodoWrite from the State, else the permission rules, then the runTool activity. */
async function gateAndRun(gate: Gate, effects: Effects, toolUse: ToolUseBlock): Promise<PendingBlock> {
  const inline = (content: string, isError: boolean): PendingBlock => ({
    type: 'tool_result',
    tool_use_id: toolUse.id,
    content,
    ...(isError ? { is_error: true } : {}),
  });
  if (toolUse.name === todoWriteTool.name) {
    const parsed = todoWriteTool.inputSchema.safeParse(toolUse.input);
    if (!parsed.success) return inline(formatInputValidationError(todoWriteTool.name, parsed.error), true);
    effects.todos = parsed.data.todos;
    return inline(TODO_WRITE_RESULT, false);
  }
  const decision = decidePermission(toolUse.name, toolUse.input, gate.permissions);
  if (decision.behavior === 'ask')
    throw new Error(`in-process loop: ${toolUse.name} needs approval (${decision.reason})`);
  if (decision.behavior === 'deny') {
    effects.denials.push({ toolUseId: toolUse.id, toolName: toolUse.name, reason: decision.reason });
    return inline(`Permission to use ${toolUse.name} was denied. ${decision.reason}`, true);
  }

  const readState: ReadFileStates = {};
  for (const key of fileStateKeysFor(toolUse.name, toolUse.input, gate.workspace)) {
    const known = effects.readFileState[key];
    if (known) readState[key] = known;
  }
  const result: ToolRunResult = await inActivity(
    'runTool',
    `tool-${toolUse.id}`,
    gate.activities.runTool,
    { sessionKey: gate.sessionKey, workspace: gate.workspace, toolUse, readState },
    TOOL_TIMEOUTS,
  );
  for (const update of result.fileStates ?? []) {
    if (update.state) effects.readFileState = { ...effects.readFileState, [update.key]: update.state };
    else {
      const { [update.key]: _forgotten, ...rest } = effects.readFileState;
      effects.readFileState = rest;
    }
  }
  return { type: 'tool_result_ref', tool_use_id: result.toolUseId, ref: result.ref, is_error: result.isError };
}

/** Every exit: pending messages are written to the transcript, then the Terminal. */
async function finish(
  activities: Activities,
  state: State,
  reason: TerminalReason,
  detail?: string,
): Promise<InProcessResult> {
  const transcript =
    state.pending.length === 0
      ? state.transcript
      : await inActivity(
          'commitTranscript',
          'commit',
          activities.commitTranscript,
          {
            transcript: state.transcript,
            append: state.pending,
          },
          LOCAL_TIMEOUTS,
        );
  return {
    reason,
    turnCount: state.turnCount,
    finalText: state.lastAssistantText,
    usage: state.usage,
    model: state.model,
    ...(detail !== undefined ? { detail } : {}),
    transcriptHead: transcript.head,
    messageCount: transcript.messageCount,
    denials: state.denials,
    todos: state.todos,
  };
}
