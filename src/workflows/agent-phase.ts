import { ActivityFailure, condition, isCancellation, patched, workflowInfo } from '@temporalio/workflow';
import type { AgentDefinition, LoadAgentDefinitionResult } from '../shared/activity-types';
import type { ToolUseBlock } from '../shared/messages';
import { knownCostUsd, type ModelUsage } from '../shared/pricing';
import type { SessionInput, State } from '../shared/session';
import {
  AGENT_MAX_TURNS,
  AGENT_MODEL_ALIASES,
  agentTool,
  type AgentInput,
  GENERAL_PURPOSE_AGENT,
  MAX_RUNNING_AGENTS,
  subagentInstructions,
} from '../shared/tools/agent';
import { formatInputValidationError } from '../shared/tools/input-validation-error';
import { toolUseError } from '../shared/tools/tool-use-error';
import type { Session } from './session';
import type { FinishedCall } from './run-tools';
import { CRON_PATCH, inline } from './tool-gate';
import { scheduleWakeupTool } from '../shared/tools/schedule-wakeup';
import { cronCreateTool, cronDeleteTool, cronListTool } from '../shared/tools/cron';

/**
 * Guards `.claude/agents` definitions: jobs recorded before it knew only general-purpose and
 * refused another type without reading any definition.
 */
export const AGENT_DEFINITIONS_PATCH = 'agent-definitions';

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
  let definition: AgentDefinition | undefined;
  if (type !== GENERAL_PURPOSE_AGENT && !patched(AGENT_DEFINITIONS_PATCH)) {
    return inline(
      toolUse.id,
      toolUseError(`Agent type '${type}' not found. Available agents: ${GENERAL_PURPOSE_AGENT}`),
      true,
    );
  }
  if (type !== GENERAL_PURPOSE_AGENT) {
    let found: LoadAgentDefinitionResult;
    try {
      found = await session.activities.loadAgentDefinition({
        workspace: session.input.workspace,
        name: type,
        ...(session.input.settingSources ? { settingSources: session.input.settingSources } : {}),
      });
    } catch (error) {
      if (isCancellation(error) || !(error instanceof ActivityFailure)) throw error;
      return inline(
        toolUse.id,
        toolUseError(`The agent definitions could not be read: ${error.cause?.message ?? error.message}`),
        true,
      );
    }
    if (!found.definition) {
      const available = [GENERAL_PURPOSE_AGENT, ...found.available].join(', ');
      return inline(toolUse.id, toolUseError(`Agent type '${type}' not found. Available agents: ${available}`), true);
    }
    definition = found.definition;
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
    background.refused.concurrency_limit++;
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
    background.refused.budget++;
    return inline(
      toolUse.id,
      toolUseError('The job has spent its budget (--max-budget-usd): no agent can be launched'),
      true,
    );
  }
  const input = childInput(session, state, call, definition, left);
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

/**
 * The subagent's job: the parent's settings, its own prompt and instructions; a definition's
 * system prompt, model and tools (never a tool the job lacks) when the call names one.
 */
/** Tools that keep a job waiting after its turn: a subagent does not get them. */
const AGENT_WITHOUT: ReadonlySet<string> = new Set([
  scheduleWakeupTool.name,
  cronCreateTool.name,
  cronListTool.name,
  cronDeleteTool.name,
]);

/**
 * The permissions a subagent starts with: its parent's, in the mode the parent is in now when the
 * Agent SDK changed it (`setPermissionMode`), so a subagent never keeps a mode its parent left.
 */
function childPermissions(session: Session): SessionInput['permissions'] {
  const parent = session.input.permissions;
  const now = session.permissions?.mode;
  if (!parent || !session.input.inputOpen || now === undefined || now === (parent.mode ?? 'default')) return parent;
  return { ...parent, mode: now };
}

function childInput(
  session: Session,
  state: State,
  call: AgentInput,
  definition: AgentDefinition | undefined,
  budgetLeft: number | undefined,
): SessionInput {
  const parent = session.input;
  const maxTurns = Math.min(AGENT_MAX_TURNS, session.control.maxTurns ?? AGENT_MAX_TURNS);
  const { prompt, description, effort } = call;
  const model = call.model ?? definition?.model;
  // A subagent launches none (depth 1), and it finishes and reports: it schedules nothing that
  // would keep it, and with it its parent's call, waiting (jobs recorded before the Cron tools
  // gave their agents ScheduleWakeup).
  const waits = patched(CRON_PATCH) ? AGENT_WITHOUT : new Set<string>();
  const own = session.tools.filter((name) => name !== agentTool.name && !waits.has(name));
  return {
    prompt,
    workspace: parent.workspace,
    model: model ? (AGENT_MODEL_ALIASES[model] ?? model) : state.model,
    maxTokens: session.maxTokens,
    maxTurns,
    ...(budgetLeft !== undefined ? { maxBudgetUsd: budgetLeft } : {}),
    ...(parent.thinking ? { thinking: parent.thinking } : {}),
    ...((effort ?? parent.effort) ? { effort: effort ?? parent.effort } : {}),
    appendSystemPrompt: [parent.appendSystemPrompt, definition?.prompt, subagentInstructions(description)]
      .filter(Boolean)
      .join('\n\n'),
    tools: definition?.tools ? own.filter((name) => definition.tools!.includes(name)) : own,
    ...(parent.timeouts ? { timeouts: parent.timeouts } : {}),
    ...(parent.permissions ? { permissions: childPermissions(session) } : {}),
    // The Agent SDK app's hooks see a subagent's calls too, as in Claude Code (asked in its job).
    ...(parent.appHooks ? { appHooks: parent.appHooks } : {}),
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
