import { condition, workflowInfo } from '@temporalio/workflow';
import type { ToolUseBlock } from '../shared/messages';
import { knownCostUsd, type ModelUsage } from '../shared/pricing';
import type { SessionInput, State } from '../shared/session';
import {
  AGENT_MAX_TURNS,
  AGENT_MODEL_ALIASES,
  agentTool,
  GENERAL_PURPOSE_AGENT,
  MAX_RUNNING_AGENTS,
  subagentInstructions,
} from '../shared/tools/agent';
import { formatInputValidationError } from '../shared/tools/input-validation-error';
import { toolUseError } from '../shared/tools/tool-use-error';
import type { Session } from './session';
import type { FinishedCall } from './run-tools';

/**
 * Agent: a subagent is a child job (`agentSession` as a child workflow) in the same workspace, with
 * the job's permission settings, sandbox and settings sources, its tools less Agent (so no deeper),
 * its model unless the call names another, and what is left of its budget. In the foreground the
 * call waits for the child's Terminal; in the background (the default) it answers at once and the
 * report joins a later turn as a notification. Either way the child's cost joins the job's.
 */
export async function launchAgent(session: Session, state: State, toolUse: ToolUseBlock): Promise<FinishedCall> {
  const { control } = session;
  const background = control.background!;
  const parsed = agentTool.inputSchema.safeParse(toolUse.input);
  if (!parsed.success) return inline(toolUse.id, formatInputValidationError(agentTool.name, parsed.error), true);
  const call = parsed.data;
  const type = call.subagent_type ?? GENERAL_PURPOSE_AGENT;
  if (type !== GENERAL_PURPOSE_AGENT) {
    return inline(
      toolUse.id,
      toolUseError(`Agent type '${type}' not found. Available agents: ${GENERAL_PURPOSE_AGENT}`),
      true,
    );
  }
  if (call.isolation !== undefined) {
    return inline(
      toolUse.id,
      toolUseError(
        `isolation "${call.isolation}" is not supported: agents work in the job's workspace; leave isolation out`,
      ),
      true,
    );
  }
  const running = background.running.filter((task) => task.kind === 'agent').length;
  if (running >= MAX_RUNNING_AGENTS) {
    return inline(
      toolUse.id,
      toolUseError(
        `${running} agents are already running, the most a job runs at once: wait for one to end, or stop one with TaskStop`,
      ),
      true,
    );
  }
  const budget = session.input.maxBudgetUsd;
  const left = budget === undefined ? undefined : budget - knownCostUsd(state.modelUsage);
  if (left !== undefined && left <= 0) {
    return inline(
      toolUse.id,
      toolUseError('The job has spent its budget (--max-budget-usd): no agent can be launched'),
      true,
    );
  }
  const input = childInput(session, state, call.prompt, call.description, call.model, call.effort, left);
  const label = call.name ? `${call.name}: ${call.description}` : call.description;
  const task = background.startAgent(toolUse, input, `${workflowInfo().workflowId}-agent-${toolUse.id}`, label);
  control.record({
    turn: state.turnCount,
    kind: 'notice',
    text: `agent ${task.taskId} launched (job ${task.childId}): ${task.label}`,
  });
  if (call.run_in_background !== false) {
    return {
      ...inline(
        toolUse.id,
        `Async agent launched successfully.\nagentId: ${task.taskId} (its job: ${task.childId})\n` +
          'The agent is working in the background; its report arrives in a later message when it ends. Do not duplicate its work meanwhile, and do not wait for it by polling.',
        false,
      ),
      ran: true,
    };
  }
  // Cancellable, unlike the promise itself: an abort of the turn ends the wait (the job's end then
  // stops the agent with its other tasks).
  await condition(() => task.status !== 'running');
  await task.settled;
  // Told here, in the call's result: no notification follows.
  task.reported = true;
  const usage = `agentId: ${task.taskId} (its job: ${task.childId})\n<usage>subagent_tokens: ${task.tokens ?? 0}\nturns: ${task.turns ?? 0}\nduration_ms: ${task.durationMs ?? 0}</usage>`;
  if (task.status === 'completed') {
    return {
      ...inline(toolUse.id, `${task.result || '(Subagent completed but returned no output.)'}\n${usage}`, false),
      ran: true,
    };
  }
  return {
    ...inline(
      toolUse.id,
      `The agent ended without completing its task (${task.status === 'stopped' ? 'stopped' : task.failure}).` +
        (task.result ? `\nIts last reply:\n${task.result}` : '') +
        `\n${usage}`,
      true,
    ),
    ran: true,
  };
}

/** The subagent's job: the parent's settings, its own prompt and instructions. */
function childInput(
  session: Session,
  state: State,
  prompt: string,
  description: string,
  model: keyof typeof AGENT_MODEL_ALIASES | undefined,
  effort: SessionInput['effort'],
  budgetLeft: number | undefined,
): SessionInput {
  const parent = session.input;
  const maxTurns = Math.min(AGENT_MAX_TURNS, session.control.maxTurns ?? AGENT_MAX_TURNS);
  return {
    prompt,
    workspace: parent.workspace,
    model: model ? AGENT_MODEL_ALIASES[model]! : state.model,
    maxTokens: session.maxTokens,
    maxTurns,
    ...(budgetLeft !== undefined ? { maxBudgetUsd: budgetLeft } : {}),
    ...(parent.thinking ? { thinking: parent.thinking } : {}),
    ...((effort ?? parent.effort) ? { effort: effort ?? parent.effort } : {}),
    appendSystemPrompt: [parent.appendSystemPrompt, subagentInstructions(description)].filter(Boolean).join('\n\n'),
    tools: session.tools.filter((name) => name !== agentTool.name),
    ...(parent.timeouts ? { timeouts: parent.timeouts } : {}),
    ...(parent.permissions ? { permissions: parent.permissions } : {}),
    ...(parent.settingSources ? { settingSources: parent.settingSources } : {}),
    ...(parent.noSandbox ? { noSandbox: true } : {}),
    ...(parent.modelLimits ? { modelLimits: parent.modelLimits } : {}),
    ...(parent.modelPrices ? { modelPrices: parent.modelPrices } : {}),
    ...(parent.fallbackModels ? { fallbackModels: parent.fallbackModels } : {}),
  };
}

/** `a` with every model of `b` added in (a cost unknown in either stays unknown). */
export function mergeModelUsage(a: ModelUsage | undefined, b: ModelUsage): ModelUsage {
  const merged: ModelUsage = { ...a };
  for (const [model, entry] of Object.entries(b)) {
    const before = merged[model];
    merged[model] = before
      ? {
          inputTokens: before.inputTokens + entry.inputTokens,
          outputTokens: before.outputTokens + entry.outputTokens,
          cacheReadInputTokens: before.cacheReadInputTokens + entry.cacheReadInputTokens,
          cacheCreationInputTokens: before.cacheCreationInputTokens + entry.cacheCreationInputTokens,
          costUSD: before.costUSD === null || entry.costUSD === null ? null : before.costUSD + entry.costUSD,
        }
      : { ...entry };
  }
  return merged;
}

/** The State with the cost of every agent that ended since it was last counted. */
export function withAgentCosts(session: Session, state: State): State {
  const costs = session.control.background?.takeCosts() ?? [];
  if (costs.length === 0) return state;
  return {
    ...state,
    modelUsage: costs.reduce<ModelUsage | undefined>((sum, cost) => mergeModelUsage(sum, cost), state.modelUsage),
  };
}

function inline(toolUseId: string, content: string, isError: boolean): FinishedCall {
  return {
    entry: { type: 'tool_result', tool_use_id: toolUseId, content, ...(isError ? { is_error: true } : {}) },
    isError,
    preview: content,
    ran: false,
  };
}
