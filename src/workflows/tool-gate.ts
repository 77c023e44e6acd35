import { ActivityFailure, condition, isCancellation, patched } from '@temporalio/workflow';
import type { z } from 'zod';
import type { RunToolInput, ToolRunResult } from '../shared/activity-types';
import type { ReadFileStates } from '../shared/file-state';
import type { ToolUseBlock } from '../shared/messages';
import { decidePermission, isBashRuleText, suggestAllowRule } from '../shared/permissions';
import type { PermissionContext } from '../shared/permissions';
import type { ApprovalAnswer, PendingApproval, SessionPermissions } from '../shared/session';
import type { JobSandbox } from '../shared/sandbox';
import { denialInput } from '../shared/terminal';
import type { Denial } from '../shared/terminal';
import { TODO_WRITE_RESULT, todoWriteTool } from '../shared/tools/todo-write';
import type { TodoItem } from '../shared/tools/todo-write';
import { decideWakeup, scheduleWakeupTool } from '../shared/tools/schedule-wakeup';
import { bashTool } from '../shared/tools/bash';
import { taskStopTool } from '../shared/tools/task-stop';
import { agentTool } from '../shared/tools/agent';
import {
  cronCreateTool,
  cronDeleteTool,
  cronListTool,
  decideCronCreate,
  decideCronDelete,
  listCrons,
} from '../shared/tools/cron';
import type { CronDecision, ScheduledPrompt } from '../shared/tools/cron';
import type { BackgroundTasks } from './background-tasks';
import type { Wakeup } from '../shared/tools/schedule-wakeup';
import { fileStateKeysFor } from '../shared/tools';
import { formatInputValidationError } from '../shared/tools/input-validation-error';
import { legacyInputValidationError, legacyParseErrorOptions } from '../shared/tools/legacy-input-validation-error';
import { noSuchToolError, toolUseError } from '../shared/tools/tool-use-error';
import type { RunHooksResult } from '../shared/hooks';
import type { HookRunner } from './hooks-phase';
import type { FinishedCall } from './run-tools';
import { publishWaiting } from './search-attributes';
import type { SessionControl } from './session-control';

/** What one turn's tool calls change in the State, collected as they finish. */
export interface TurnEffects {
  readFileState: ReadFileStates;
  todos: TodoItem[];
  denials: Denial[];
  /** Bash commands that ran without the OS sandbox, the job's count so far. */
  unsandboxedCommands: number;
  /** What PreToolUse and PostToolUse hooks told the model this turn; sent after the results. */
  hookFeedback: string[];
  /** A hook's `continue: false`: the job ends after this turn, with this reason. */
  stopRequested?: string;
  /** The wake-up pending after this turn's ScheduleWakeup calls (the State's, if none was made). */
  wakeup: Wakeup | undefined;
  /** The job's schedules after this turn's CronCreate and CronDelete calls. */
  crons: ScheduledPrompt[] | undefined;
}

export interface GateContext {
  sessionKey: string;
  workspace: string;
  control: SessionControl;
  permissions: () => PermissionContext | undefined;
  addAllowRule: (rule: string) => void;
  settings: SessionPermissions | undefined;
  /** The job's sandbox policy, passed to every call; undefined for jobs started before it existed. */
  sandbox: JobSandbox | undefined;
  runTool: (input: RunToolInput) => Promise<ToolRunResult>;
  /** The job's PreToolUse and PostToolUse hooks; undefined when it has none. */
  hooks?: HookRunner;
  effects: TurnEffects;
  /** The tools offered to the model (`--tools`, less the tools a bare deny rule names). */
  offered: readonly string[];
  /** The job's background commands (Bash `run_in_background`, TaskStop). */
  background?: BackgroundTasks;
  /** Starts a subagent for an Agent call (`agent-phase.ts`). */
  launchAgent?: (toolUse: ToolUseBlock) => Promise<GatedResult>;
}

/**
 * Guards the answer to a call of a tool the job did not offer: jobs recorded before it sent such a
 * call through the permission rules (and ran it when they allowed it).
 */
export const UNOFFERED_TOOL_PATCH = 'unoffered-tool';

/**
 * Guards Claude Code's wording of the errors the workflow answers itself (a tool not offered, a bad
 * TodoWrite input), `<tool_use_error>` included: jobs recorded before it keep the answers they gave.
 */
export const TOOL_USE_ERROR_PATCH = 'tool-use-error-wording';

/**
 * Guards ScheduleWakeup: jobs recorded before it answered a call of it as a tool they did not offer
 * (its name was in no tool list then), and never slept.
 */
export const SCHEDULE_WAKEUP_PATCH = 'schedule-wakeup';

/**
 * Guards background commands: jobs recorded before it refused Bash's `run_in_background: true`
 * (the tool's input check did) and answered TaskStop as a tool they did not offer.
 */
export const BACKGROUND_BASH_PATCH = 'background-bash';

/** Guards Agent: jobs recorded before it answered a call of it as a tool they did not offer. */
export const AGENT_PATCH = 'agent-subagents';

/** Guards CronCreate, CronList and CronDelete: jobs recorded before it answered them as tools they did not offer. */
export const CRON_PATCH = 'cron-tools';

/** Tools newer than some recorded jobs, and the patch that guards each: unoffered in those jobs' replays. */
const NEWER_TOOLS: Readonly<Record<string, string>> = {
  [scheduleWakeupTool.name]: SCHEDULE_WAKEUP_PATCH,
  [taskStopTool.name]: BACKGROUND_BASH_PATCH,
  [agentTool.name]: AGENT_PATCH,
  [cronCreateTool.name]: CRON_PATCH,
  [cronListTool.name]: CRON_PATCH,
  [cronDeleteTool.name]: CRON_PATCH,
};

const CRON_TOOLS: ReadonlySet<string> = new Set([cronCreateTool.name, cronListTool.name, cronDeleteTool.name]);

export type GatedResult = FinishedCall;

const INPUT_PREVIEW_CHARS = 500;

/**
 * Everything between "the model asked for a tool" and "the tool ran": TodoWrite is answered from
 * the State; other calls pass the permission rules, wait for a person when the rules say ask
 * (holding no worker: the workflow just waits for a signal), and then run as an activity.
 */
export async function gateAndRun(toolUse: ToolUseBlock, ctx: GateContext): Promise<GatedResult> {
  const since = NEWER_TOOLS[toolUse.name];
  const offered =
    since !== undefined && !patched(since) ? ctx.offered.filter((name) => name !== toolUse.name) : ctx.offered;
  // A tool the job did not offer does not exist for it, as for Claude Code: no hook, no rule, no run.
  if (!offered.includes(toolUse.name) && patched(UNOFFERED_TOOL_PATCH)) {
    // The model has the offered tools in its request; the answer needs no list of them.
    const answer = patched(TOOL_USE_ERROR_PATCH)
      ? noSuchToolError(toolUse.name)
      : `No such tool available: ${toolUse.name}. Available tools: ${offered.join(', ') || 'none'}.`;
    return inline(toolUse.id, answer, true);
  }
  // Claude Code runs PreToolUse hooks before the permission check; their verdict shapes it.
  const pre = ctx.hooks ? await ctx.hooks.pre(toolUse) : undefined;
  if (pre) noteHookResult(ctx, 'PreToolUse', toolUse, pre);
  if (pre?.outcome === 'deny') {
    const reason = pre.reason ?? 'A PreToolUse hook denied the call.';
    ctx.effects.denials.push({
      toolUseId: toolUse.id,
      toolName: toolUse.name,
      toolInput: denialInput(toolUse.input),
      reason: `PreToolUse hook: ${reason}`,
    });
    return inline(toolUse.id, `A PreToolUse hook blocked this ${toolUse.name} call: ${reason}`, true);
  }
  if (toolUse.name === todoWriteTool.name) return todoWrite(toolUse, ctx);
  if (toolUse.name === scheduleWakeupTool.name && offered.includes(toolUse.name)) return scheduleWakeup(toolUse, ctx);
  if (toolUse.name === taskStopTool.name && offered.includes(toolUse.name)) return taskStop(toolUse, ctx);
  if (CRON_TOOLS.has(toolUse.name) && offered.includes(toolUse.name)) return cron(toolUse, ctx);
  if (toolUse.name === agentTool.name && offered.includes(toolUse.name) && ctx.launchAgent)
    return ctx.launchAgent(toolUse);

  const permissions = ctx.permissions();
  if (permissions) {
    let decision = decidePermission(toolUse.name, toolUse.input, permissions);
    // A hook's allow answers the question the mode would ask, never a rule's: with the mode out of
    // the way (bypassPermissions) the call must still be allowed, so deny and ask rules, and deny
    // rules that cannot be ruled out, still stand.
    if (
      decision.behavior === 'ask' &&
      pre?.outcome === 'allow' &&
      decidePermission(toolUse.name, toolUse.input, { ...permissions, mode: 'bypassPermissions' }).behavior === 'allow'
    ) {
      decision = { behavior: 'allow', reason: 'allowed by a PreToolUse hook' };
    }
    if (decision.behavior === 'allow' && pre?.outcome === 'ask') {
      decision = { behavior: 'ask', reason: `PreToolUse hook: ${pre.reason ?? 'asks for approval'}` };
    }
    if (decision.behavior === 'ask') {
      const answer = await askPerson(toolUse, decision.reason, ctx);
      decision = answer;
      // Allowed with a changed input: that input is what runs, and no deny rule may match it.
      if (answer.behavior === 'allow' && answer.updatedInput) {
        // The approver answered the question the mode asked, not a rule's: with the mode out of the
        // way the changed input must be allowed, so a deny or ask rule it meets refuses it.
        const changed = { ...toolUse, input: answer.updatedInput };
        const again = decidePermission(changed.name, changed.input, { ...permissions, mode: 'bypassPermissions' });
        decision =
          again.behavior !== 'allow'
            ? { behavior: 'deny', reason: `The input the approver changed it to is not allowed: ${again.reason}` }
            : answer;
        if (again.behavior === 'allow') {
          ctx.control.record({
            turn: ctx.control.turnCount(),
            kind: 'notice',
            text: `approved with a changed input: ${changed.name} ${clipInput(changed.input)}`,
          });
          toolUse = changed;
        }
      }
    }
    if (decision.behavior === 'deny') {
      ctx.effects.denials.push({
        toolUseId: toolUse.id,
        toolName: toolUse.name,
        toolInput: denialInput(toolUse.input),
        reason: decision.reason,
      });
      return inline(toolUse.id, `Permission to use ${toolUse.name} was denied. ${decision.reason}`, true);
    }
  }

  const readState: ReadFileStates = {};
  for (const key of fileStateKeysFor(toolUse.name, toolUse.input, ctx.workspace)) {
    const known = ctx.effects.readFileState[key];
    if (known) readState[key] = known;
  }
  const readDenyRules = permissions?.rules.deny.filter((rule) => rule.startsWith('Read('));
  const gitGuard = [...(permissions?.rules.deny ?? []), ...(permissions?.rules.ask ?? [])].some(isBashRuleText);
  const runInput: RunToolInput = {
    sessionKey: ctx.sessionKey,
    workspace: ctx.workspace,
    toolUse,
    readState,
    ...(readDenyRules?.length ? { readDenyRules } : {}),
    ...(gitGuard ? { gitGuard } : {}),
    ...(ctx.sandbox ? { sandbox: ctx.sandbox } : {}),
  };
  const background =
    ctx.background && isBackgroundBash(toolUse) && patched(BACKGROUND_BASH_PATCH)
      ? withoutBackgroundFlag(toolUse)
      : undefined;
  // An input the tool would refuse runs as a foreground call, whose input check says what is wrong.
  if (background && !bashTool.inputSchema.safeParse(background.input).success) runInput.toolUse = background;
  else if (background && ctx.background) {
    const task = ctx.background.start(toolUse, { ...runInput, toolUse: background }, ctx.workspace);
    ctx.control.record({
      turn: ctx.control.turnCount(),
      kind: 'notice',
      text: `background command ${task.taskId} started: ${task.label}`,
    });
    return {
      ...inline(
        toolUse.id,
        `Command running in background with ID: ${task.taskId}. Output is being written to: ${task.outputFile}. ` +
          'You will be notified when it completes. To check interim output, use Read on that file path.',
        false,
      ),
      ran: true,
    };
  }
  let result: ToolRunResult;
  try {
    result = await ctx.runTool(runInput);
  } catch (error) {
    // Retries exhausted: an infrastructure failure, not the model's. The model is told and the job
    // goes on, rather than dying with a tool_use unanswered.
    if (isCancellation(error) || !(error instanceof ActivityFailure)) throw error;
    return {
      ...inline(toolUse.id, `Tool execution failed on the worker: ${error.cause?.message ?? error.message}`, true),
      ran: true,
    };
  }
  if (result.sandboxed === false) ctx.effects.unsandboxedCommands += 1;
  for (const update of result.fileStates ?? []) {
    // Re-inserted at the end, so the order of keys is least recently used first.
    const { [update.key]: _previous, ...rest } = ctx.effects.readFileState;
    ctx.effects.readFileState = update.state ? { ...rest, [update.key]: update.state } : rest;
  }
  if (!result.isError && ctx.hooks) {
    const post = await ctx.hooks.post(toolUse, result.ref);
    if (post) noteHookResult(ctx, 'PostToolUse', toolUse, post);
  }
  return {
    entry: {
      type: 'tool_result_ref',
      tool_use_id: result.toolUseId,
      ref: result.ref,
      is_error: result.isError,
      chars: result.chars,
    },
    isError: result.isError,
    preview: result.preview,
    ran: true,
  };
}

/** What a hook said for the model joins the turn's feedback; `continue: false` ends the job after it. */
function noteHookResult(ctx: GateContext, event: string, toolUse: ToolUseBlock, result: RunHooksResult): void {
  const about = `${event} hook on ${toolUse.name} (${toolUse.id})`;
  if (event === 'PostToolUse' && result.outcome === 'block' && result.reason) {
    ctx.effects.hookFeedback.push(`${about}: ${result.reason}`);
  }
  if (result.additionalContext) ctx.effects.hookFeedback.push(`${about}, context: ${result.additionalContext}`);
  if (result.preventContinuation) ctx.effects.stopRequested ??= `${about}: ${result.preventContinuation.stopReason}`;
}

type Answer = { behavior: 'allow' | 'deny'; reason: string; updatedInput?: Record<string, unknown> };

/** Park the call until `approve`/`deny` answers it, the optional timeout passes, or the job is aborted. */
async function askPerson(toolUse: ToolUseBlock, reason: string, ctx: GateContext): Promise<Answer> {
  const { control } = ctx;
  const input = JSON.stringify(toolUse.input) ?? 'null';
  const suggestedRule = suggestAllowRule(toolUse.name, toolUse.input);
  const entry: { request: PendingApproval; answer?: ApprovalAnswer } = {
    request: {
      toolUseId: toolUse.id,
      toolName: toolUse.name,
      input: input.length > INPUT_PREVIEW_CHARS ? `${input.slice(0, INPUT_PREVIEW_CHARS)}…` : input,
      toolInput: toolUse.input,
      reason,
      suggestedRule,
      // Workflow code's Date is Temporal's deterministic workflow time.
      requestedAt: new Date().toISOString(),
    },
  };
  control.approvals.set(toolUse.id, entry);
  if (control.approvals.size === 1) publishWaiting(true);
  const phaseBefore = control.phase;
  control.phase = 'waiting_for_approval';
  control.record({
    turn: control.turnCount(),
    kind: 'notice',
    text: `waiting for approval: ${toolUse.name} ${entry.request.input} (${reason})`,
  });
  try {
    const timeout = ctx.settings?.approvalTimeoutMs;
    const isAnswered = () => entry.answer !== undefined;
    const answered = timeout === undefined ? (await condition(isAnswered), true) : await condition(isAnswered, timeout);
    if (!answered || !entry.answer) {
      const behavior = ctx.settings?.onApprovalTimeout ?? 'deny';
      return {
        behavior,
        reason: `No approval answer within ${Math.round((timeout ?? 0) / 1000)} s; the configured default is ${behavior}.`,
      };
    }
    const { answer } = entry;
    if (answer.decision === 'allow') {
      if (answer.always) ctx.addAllowRule(suggestedRule);
      control.record({
        turn: control.turnCount(),
        kind: 'notice',
        text: `approved: ${toolUse.name}${answer.always ? ` (rule ${suggestedRule} added)` : ''}`,
      });
      return {
        behavior: 'allow',
        reason: 'approved',
        ...(answer.updatedInput ? { updatedInput: answer.updatedInput } : {}),
      };
    }
    control.record({ turn: control.turnCount(), kind: 'notice', text: `denied: ${toolUse.name}` });
    return { behavior: 'deny', reason: `Denied by the user${answer.reason ? `: ${answer.reason}` : '.'}` };
  } finally {
    control.approvals.delete(toolUse.id);
    if (control.approvals.size === 0) publishWaiting(false);
    if (control.phase === 'waiting_for_approval' && control.approvals.size === 0) control.phase = phaseBefore;
  }
}

function clipInput(input: unknown): string {
  const text = JSON.stringify(input) ?? 'null';
  return text.length > INPUT_PREVIEW_CHARS ? `${text.slice(0, INPUT_PREVIEW_CHARS)}…` : text;
}

/** A Bash call with `run_in_background: true` (or "true"). */
function isBackgroundBash(toolUse: ToolUseBlock): boolean {
  if (toolUse.name !== bashTool.name) return false;
  const input = toolUse.input;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return false;
  const flag = (input as Record<string, unknown>).run_in_background;
  return flag === true || flag === 'true';
}

/** The call as the tool runs it: the job, not the tool, takes care of running it in the background. */
function withoutBackgroundFlag(toolUse: ToolUseBlock): ToolUseBlock {
  const { run_in_background: _flag, ...rest } = toolUse.input as Record<string, unknown>;
  return { ...toolUse, input: rest };
}

/** TaskStop: the task's activity is cancelled, which kills its processes, before the answer. */
async function taskStop(toolUse: ToolUseBlock, ctx: GateContext): Promise<GatedResult> {
  const parsed = taskStopTool.inputSchema.safeParse(toolUse.input);
  if (!parsed.success) return inline(toolUse.id, formatInputValidationError(taskStopTool.name, parsed.error), true);
  const id = parsed.data.task_id ?? parsed.data.shell_id;
  if (id === undefined) return inline(toolUse.id, toolUseError('Missing required parameter: task_id'), true);
  const task = ctx.background?.tasks.get(id);
  if (!task) return inline(toolUse.id, toolUseError(`No task found with ID: ${id}`), true);
  if (task.status !== 'running') {
    return inline(toolUse.id, toolUseError(`Task ${id} is not running (status: ${task.status})`), true);
  }
  await ctx.background!.stop(task, 'task_stop');
  ctx.control.record({ turn: ctx.control.turnCount(), kind: 'notice', text: `background command ${id} stopped` });
  return { ...inline(toolUse.id, `Successfully stopped task: ${id} (${task.label})`, false), ran: true };
}

/** ScheduleWakeup is answered here: the wake-up joins the State, and the loop sleeps when the turn ends. */
function scheduleWakeup(toolUse: ToolUseBlock, ctx: GateContext): GatedResult {
  const parsed = scheduleWakeupTool.inputSchema.safeParse(toolUse.input);
  if (!parsed.success) {
    return inline(toolUse.id, formatInputValidationError(scheduleWakeupTool.name, parsed.error), true);
  }
  // Workflow code's Date is Temporal's deterministic workflow time.
  const decision = decideWakeup(parsed.data, toolUse.id, Date.now(), ctx.effects.wakeup);
  if (decision.kind === 'invalid') return inline(toolUse.id, toolUseError(decision.text), true);
  ctx.effects.wakeup = decision.kind === 'scheduled' ? decision.wakeup : undefined;
  return inline(toolUse.id, decision.text, false);
}

/** CronCreate, CronList and CronDelete are answered here, from and into the job's schedules. */
function cron(toolUse: ToolUseBlock, ctx: GateContext): GatedResult {
  const crons = ctx.effects.crons ?? [];
  const invalid = (error: z.ZodError) => inline(toolUse.id, formatInputValidationError(toolUse.name, error), true);
  let decision: CronDecision;
  if (toolUse.name === cronListTool.name) {
    const parsed = cronListTool.inputSchema.safeParse(toolUse.input);
    if (!parsed.success) return invalid(parsed.error);
    return inline(toolUse.id, listCrons(crons), false);
  } else if (toolUse.name === cronCreateTool.name) {
    const parsed = cronCreateTool.inputSchema.safeParse(toolUse.input);
    if (!parsed.success) return invalid(parsed.error);
    // Workflow code's Date is Temporal's deterministic workflow time.
    decision = decideCronCreate(parsed.data, toolUse.id, Date.now(), crons);
  } else {
    const parsed = cronDeleteTool.inputSchema.safeParse(toolUse.input);
    if (!parsed.success) return invalid(parsed.error);
    decision = decideCronDelete(parsed.data, crons);
  }
  if (decision.isError) return inline(toolUse.id, toolUseError(decision.text), true);
  ctx.effects.crons = decision.crons;
  return inline(toolUse.id, decision.text, false);
}

function todoWrite(toolUse: ToolUseBlock, ctx: GateContext): GatedResult {
  const parsed = todoWriteTool.inputSchema.safeParse(toolUse.input);
  if (!parsed.success) {
    if (patched(TOOL_USE_ERROR_PATCH)) {
      return inline(toolUse.id, formatInputValidationError(todoWriteTool.name, parsed.error), true);
    }
    const legacy = todoWriteTool.inputSchema.safeParse(toolUse.input, legacyParseErrorOptions);
    const issues = legacy.success ? parsed.error.issues : legacy.error.issues;
    return inline(toolUse.id, legacyInputValidationError(todoWriteTool.name, todoWriteTool.inputSchema, issues), true);
  }
  ctx.effects.todos = parsed.data.todos;
  return inline(toolUse.id, TODO_WRITE_RESULT, false);
}

/** An answer the workflow gives itself, without running the tool. */
export function inline(toolUseId: string, content: string, isError: boolean): GatedResult {
  return {
    entry: { type: 'tool_result', tool_use_id: toolUseId, content, ...(isError ? { is_error: true } : {}) },
    isError,
    preview: content,
    ran: false,
  };
}
