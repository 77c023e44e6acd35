import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { lazySchema } from '../lazy-schema';
import { flagField, textField } from './schema-parts';

/** The subagent type every job has; others come from `.claude/agents/*.md` (`agent-definitions.ts`). */
export const GENERAL_PURPOSE_AGENT = 'general-purpose';

/** The model ids the Agent tool's aliases stand for (the newest of each family the pricing table knows). */
export const AGENT_MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: 'claude-sonnet-5-5',
  opus: 'claude-opus-5-5',
  haiku: 'claude-haiku-5-5',
  fable: 'claude-fable-5-1',
};

/** Subagents of one job running at once; a call past it is refused, and the model may wait for one. */
export const MAX_RUNNING_AGENTS = 4;

/** Turns a subagent may take, unless the job's own limit is lower. */
export const AGENT_MAX_TURNS = 100;

const agentSchema = lazySchema(() =>
  z.strictObject({
    description: textField('A short (3-5 word) description of the task', 500),
    prompt: textField(
      'The task for the agent to perform: all it needs to know, since it sees none of this conversation',
      200_000,
    ),
    subagent_type: textField(
      `The type of agent to use: "${GENERAL_PURPOSE_AGENT}" (the default), or one defined in .claude/agents`,
      200,
    ).optional(),
    model: z
      .enum(['sonnet', 'opus', 'haiku', 'fable'])
      .describe("Optional model for the agent; it runs on this job's model when omitted")
      .optional(),
    effort: z
      .enum(['low', 'medium', 'high', 'xhigh', 'max'])
      .describe('Reasoning effort for the agent; only when the user asked for one')
      .optional(),
    run_in_background: flagField(
      "true (the default): the call returns at once and the agent's report arrives as a notification when it ends; false: the call returns the report.",
    ).optional(),
    name: textField('A name for the agent, shown in the job status', 200).optional(),
    team_name: textField('Ignored', 200).optional(),
    mode: z
      .enum(['acceptEdits', 'auto', 'bypassPermissions', 'default', 'dontAsk', 'plan'])
      .describe("Ignored: a subagent has the job's permission mode and rules")
      .optional(),
    isolation: z
      .enum(['worktree', 'remote'])
      .describe("Not supported: the agent works in the job's workspace")
      .optional(),
  }),
);

export type AgentInput = z.infer<typeof agentSchema>;

/**
 * Agent hands a task to a subagent: a child job of its own (a child workflow) in the same
 * workspace, under the same permission rules and sandbox, whose final answer comes back as the
 * call's result. Answered by the workflow, which starts and follows the child.
 */
export const agentTool: ToolDefinition<AgentInput> = {
  name: 'Agent',
  description: [
    'Launch a subagent to handle a self-contained part of the task on its own: a search across many files, an',
    'investigation, a change that can be described completely. The agent starts with no knowledge of this',
    'conversation, so the prompt must say everything it needs and what to report back. It works in the same',
    'workspace, with the same permissions, and cannot launch agents itself.',
    '',
    'Agents run in the background by default: the call returns at once and the report arrives as a notification',
    'when the agent ends; launch several in one reply to have them work side by side. Set run_in_background to',
    `false when your next step needs the report. At most ${MAX_RUNNING_AGENTS} agents run at once; TaskStop stops one.`,
    "Their cost counts against this job's budget.",
  ].join('\n'),
  inputSchema: agentSchema,
  isConcurrencySafe: () => true,
  isReadOnly: () => false,
};

/** What the subagent is told besides the job's own system prompt. */
export function subagentInstructions(description: string): string {
  return [
    `You are a subagent of a durable-agent job, launched for: ${description}.`,
    'Do the task in the user message on your own, using the tools you have, then end with a final answer that',
    'reports what you found or changed, concisely and completely: that answer is all the job that launched you',
    'will see. Nobody answers questions while you work.',
  ].join('\n');
}
