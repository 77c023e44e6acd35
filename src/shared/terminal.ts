import type { Usage } from './messages';
import type { ModelUsage, PaidAgainReport } from './pricing';
import type { PermissionSummary } from './settings-trust';
import type { TodoItem } from './tools/todo-write';

/** Why the loop ended. Every ending is one of these (DESIGN.md invariant 5). */
export const TERMINAL_REASONS = [
  'completed',
  'max_turns',
  'aborted_streaming',
  'aborted_tools',
  'stop_hook_prevented',
  'prompt_too_long',
  'model_error',
  'budget_exhausted',
  'blocking_limit',
  // Not in the seed: the job could not start (e.g. its workspace is missing on the worker).
  'setup_failed',
  // Not in the seed: replies stayed cut at the output limit after every recovery step.
  'max_output_tokens',
  // Not in the seed: the model stopped with stop_reason `refusal`.
  'refusal',
] as const;
export type TerminalReason = (typeof TERMINAL_REASONS)[number];

/** Why the loop went round again; recorded on the State at each continue site. */
export const TRANSITION_REASONS = [
  'next_turn',
  'collapse_drain_retry',
  'reactive_compact_retry',
  'max_output_tokens_escalate',
  'max_output_tokens_recovery',
  'stop_hook_blocking',
  'token_budget_continuation',
  'fallback_model',
  // Not in the seed: the API paused a long turn (`pause_turn`); the conversation is sent back as is.
  'pause_turn',
  // Not in the seed: a wake-up ScheduleWakeup set fired (or `wake` came); its prompt is the next message.
  'scheduled_wakeup',
  // Not in the seed: a prompt scheduled with CronCreate fired; it is the next message.
  'scheduled_task',
] as const;
export type TransitionReason = (typeof TRANSITION_REASONS)[number];

export interface Transition {
  reason: TransitionReason;
}

/** Besides the transitions: what Phase 1 did to keep the context small. */
export const CONTEXT_ACTIONS = ['autocompact', 'reactive_compact', 'microcompact'] as const;

/** How often each transition and context action happened in a job. */
export type TransitionCounts = Partial<Record<TransitionReason | (typeof CONTEXT_ACTIONS)[number], number>>;

/** The context as `status` and the Terminal show it. */
export interface ContextReport {
  model: string;
  contextWindow: number;
  /** Where the window came from: the built-in table, settings, or the default for unknown models. */
  limitsSource: 'built-in' | 'settings' | 'default';
  /** Estimated tokens of the next request (the last call's usage plus what was added since). */
  tokens: number;
  microcompactAt: number;
  autocompactAt: number;
  compactions: number;
  /** Set when autocompact stopped trying, with the reason. */
  autocompactOff?: string;
}

/** A tool call the permission rules or a person refused; listed on the Terminal. */
export interface Denial {
  toolUseId: string;
  toolName: string;
  /** The call's input, each text field cut at `DENIAL_INPUT_CHARS` (absent on older jobs). */
  toolInput?: Record<string, unknown>;
  reason: string;
}

/** How much of each text field of a denied call's input the Terminal keeps. */
export const DENIAL_INPUT_CHARS = 2_000;

/** A denied call's input as the Terminal lists it: long text fields cut, so a denied Write stays small. */
export function denialInput(input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return {};
  const kept: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input as Record<string, unknown>)) {
    if (typeof value === 'string' && value.length > DENIAL_INPUT_CHARS) {
      kept[field] = `${value.slice(0, DENIAL_INPUT_CHARS)}… [${value.length - DENIAL_INPUT_CHARS} more characters]`;
    } else if (typeof value === 'object' && value !== null && JSON.stringify(value).length > DENIAL_INPUT_CHARS) {
      kept[field] = `${JSON.stringify(value).slice(0, DENIAL_INPUT_CHARS)}… [cut]`;
    } else kept[field] = value;
  }
  return kept;
}

/** The result of an `agentSession` workflow: what `query()` returns in the seed, plus accounting. */
export interface Terminal {
  reason: TerminalReason;
  turnCount: number;
  finalText: string;
  /** The stop reason of the last reply, as the API gave it; absent when none came (and on older jobs). */
  stopReason?: string | null;
  usage: Usage;
  model: string;
  /** A human-readable detail for non-completed endings (the model error, the abort source, ...). */
  detail?: string;
  /** Reference to the full transcript in the store, for export and inspection. */
  transcriptHead: string | null;
  messageCount: number;
  /** Tool calls that were denied, by rule, mode or person. */
  /** The most recent denials; `denialCount` counts them all. */
  denials: Denial[];
  denialCount?: number;
  todos: TodoItem[];
  /** The permission mode in force and where it and each rule came from. */
  permissions?: PermissionSummary;
  /** How Bash was confined; `unsandboxedCommands` > 0 means some ran without the OS sandbox. */
  sandbox?: SandboxReport;
  /** The context at the end, and how it was kept small. */
  context?: ContextReport;
  /** How often each transition happened (`next_turn`, `autocompact`, `fallback_model`, ...). */
  transitions?: TransitionCounts;
  /** What the job cost in USD, compactions included; null when a model it used has no known price. */
  totalCostUsd?: number | null;
  /** Usage and cost per model, as Claude Code's `modelUsage`. */
  modelUsage?: ModelUsage;
  /** The job's `--max-budget-usd`, if it had one. */
  maxBudgetUsd?: number;
  /** Workflow time from the job's start to its end, across continue-as-new. */
  durationMs?: number;
  /** Time the model calls that answered spent on the API (each call's successful attempt). */
  durationApiMs?: number;
  /** Model call attempts beyond the first (a crash, a 529, a stalled stream), of calls that answered. */
  modelRetries?: number;
  /**
   * What model call attempts cut off mid-stream (a worker crash, a dropped stream) were billed for
   * and lost, so the calls were paid again: attempts, tokens (output estimated), cost. Absent when
   * none was. Already part of `modelUsage` and `totalCostUsd`.
   */
  paidAgain?: PaidAgainReport;
  /** The job's subagents, in Claude Code's `subagent_stats` shape; absent on older jobs. */
  subagentStats?: SubagentStats;
}

/** Claude Code's `subagent_stats`: how many agents a job launched, how, and how they ended. */
export interface SubagentStats {
  spawned: number;
  requested: { background: number; foreground: number; unset: number };
  started_in_background: number;
  max_depth: number;
  spawned_by_subagents: number;
  completed: number;
  failed: number;
  killed: { parent: number; user: number; system: number };
  refused: { depth_limit: number; concurrency_limit: number; budget: number };
  by_type: Record<string, number>;
}

/** The sandbox as `status` and the Terminal show it. */
export interface SandboxReport {
  enabled: boolean;
  /** Where the choice came from: 'default', '--no-sandbox', a settings file. */
  source: string;
  /** One line: what a command can and cannot reach. */
  description: string;
  unsandboxedCommands: number;
}
