/**
 * Claude Code's hooks as durable-agent models them: the event names, the configuration after
 * validation, and what the `runHooks` activity takes and returns. Pure types, constants and one
 * helper: the workflow bundle imports them.
 */
import type { JobSandbox } from '../sandbox';

/**
 * Every hook event Claude Code documents (hooks reference, "Hook lifecycle"; the last four are
 * newer additions), so that a settings file shared with Claude Code loads whatever it configures.
 */
export const HOOK_EVENTS = [
  'SessionStart',
  'Setup',
  'InstructionsLoaded',
  'UserPromptSubmit',
  'UserPromptExpansion',
  'MessageDisplay',
  'PreToolUse',
  'PermissionRequest',
  'PermissionDenied',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'Notification',
  'SubagentStart',
  'SubagentStop',
  'TaskCreated',
  'TaskCompleted',
  'Stop',
  'StopFailure',
  'TeammateIdle',
  'ConfigChange',
  'CwdChanged',
  'FileChanged',
  'WorktreeCreate',
  'WorktreeRemove',
  'PreCompact',
  'PostCompact',
  'Elicitation',
  'ElicitationResult',
  'SessionEnd',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The events whose hooks durable-agent runs; every other configured event is reported as not run. */
export const RUN_HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'Stop'] as const;
export type RunHookEvent = (typeof RUN_HOOK_EVENTS)[number];

/**
 * Seconds a hook command may run when its settings give no `timeout`. Claude Code's reference
 * said 60 for a long time; newer Claude Code versions wait 600. A hook holds up the loop while it
 * runs, and the activity has to outlast its slowest hook, so durable-agent keeps the shorter one.
 */
export const HOOK_DEFAULT_TIMEOUT_SEC = 60;

/** The seconds a hook may run; the activity running some hooks must be allowed the largest of them. */
export function hookTimeoutSec(hook: Pick<HookCommand, 'timeoutSec'>): number {
  return hook.timeoutSec ?? HOOK_DEFAULT_TIMEOUT_SEC;
}

/**
 * Characters of one hook's output, reason or message that reach the result (Claude Code caps
 * what a hook injects into context at 10,000 as well). The result goes into workflow history.
 */
export const HOOK_TEXT_CHARS = 10_000;

/** One command hook (`type: "command"`) as configured, ready to run. */
export interface HookCommand {
  /** Run with `bash -c` in the workspace (Claude Code's default shell for command hooks). */
  command: string;
  /** The handler's `timeout`, in seconds; `HOOK_DEFAULT_TIMEOUT_SEC` when absent. */
  timeoutSec?: number;
  /** Where it was configured: a settings file's path, or '--stop-hook'. */
  source: string;
  /**
   * The handler's `if` condition, in permission rule syntax (`Bash(git *)`, `Edit(*.ts)`): the
   * hook runs only for tool calls the rule matches. Only on tool events.
   */
  if?: string;
  /**
   * A hook callback of the Agent SDK app that started the job (its id as registered in
   * `initialize`): the app is asked over the SDK's channel, and `command` only names it.
   */
  callback?: string;
  /** A callback's `onFailure: 'block'`: if it fails or times out, the call it guards is not made. */
  onFailure?: 'block';
}

/** One matcher group: the handlers that run when `matcher` matches. */
export interface HookMatcherGroup {
  /** Absent, `""` or `"*"` matches everything; see `matchesHookMatcher`. */
  matcher?: string;
  hooks: HookCommand[];
  /**
   * What of this group does not run as written, each saying what and why: handlers durable-agent
   * does not run (prompt, agent and http hooks, async hooks, ...) and, on an event without matcher
   * support, a matcher that is ignored. Reported when the job resolves its hooks.
   */
  notes?: string[];
}

/**
 * A settings file's `hooks` block after validation: event name to matcher groups. Event names
 * Claude Code does not know are kept too, so they can be reported rather than silently dropped.
 */
export type HooksConfig = { [event: string]: HookMatcherGroup[] | undefined };

/** What the `runHooks` activity is asked to do: run these hooks of one event, in parallel. */
export interface RunHooksInput {
  sessionKey: string;
  /** Realpath of the workspace: every hook's working directory and `$CLAUDE_PROJECT_DIR`. */
  workspace: string;
  event: RunHookEvent;
  /** The matched, deduplicated hooks (`matchHooks`); duplicates are dropped again. */
  hooks: HookCommand[];
  /** The JSON each hook reads on stdin (`hookStdin`). */
  stdin: Record<string, unknown>;
  /**
   * ContentRef of the tool result in the content store, for PostToolUse: resolved into
   * `stdin.tool_response`, so the result's text need not travel through workflow history.
   */
  toolResponseRef?: string;
  /** The job's sandbox policy; absent means the default (sandbox required), as for Bash. */
  sandbox?: JobSandbox;
}

/** The combined decision of an event's hooks (see `combineHookOutcomes`). */
export type HookDecision = 'none' | 'block' | 'deny' | 'ask' | 'allow';

/** What the hooks of one event decided together, and what the user should be shown. */
export interface RunHooksResult {
  /**
   * - `none`: no hook decided anything; carry on as without hooks.
   * - `block` (Stop, PostToolUse): Stop: do not stop, feed `reason` to the model as the next
   *   instruction. PostToolUse: feed `reason` to the model beside the tool result.
   * - `deny` (PreToolUse): do not run the call; `reason` is the tool result the model reads.
   * - `ask` (PreToolUse): ask the user to approve the call; `reason` is shown in the prompt.
   * - `allow` (PreToolUse): skip the approval prompt. Deny and ask rules still apply (Claude
   *   Code evaluates them whatever a hook returned).
   */
  outcome: HookDecision;
  reason?: string;
  /**
   * A hook said `continue: false`: end the session after this step, showing `stopReason` to the
   * user (not to the model). Takes precedence over `outcome`; on PreToolUse the outcome is then
   * always `deny`, so the call cannot run whatever the caller does with this field.
   */
  preventContinuation?: { stopReason: string };
  /** Context for the model (`hookSpecificOutput.additionalContext` of PreToolUse and PostToolUse). */
  additionalContext?: string;
  /** Shown to the user, not the model: systemMessage, plain stdout, non-blocking errors, timeouts. */
  userMessages: string[];
  /** The commands that were started, for the record. */
  ran: Array<{ command: string; exitCode: number | null; timedOut: boolean; ms: number }>;
}
