import type { BatchMembership } from './batch';
import type { ReadFileStates } from './file-state';
import { emptyUsage } from './messages';
import type { Message, Usage } from './messages';
import type { PermissionContext, PermissionMode } from './permissions';
import type { HooksConfig, RunHookEvent } from './hooks';
import type { JobSandbox } from './sandbox';
import type { SettingSource, PermissionSummary } from './settings-trust';
import type { QueuedMessage } from './signal-payloads';
import type { ContextReport, SandboxReport } from './terminal';
import type { TodoItem } from './tools/todo-write';
import type { Wakeup } from './tools/schedule-wakeup';
import type { ScheduledPrompt } from './tools/cron';
import type { SubagentStats } from './terminal';
import type { ContextState } from './context/context-state';
import type { ModelLimitsEntry } from './context/model-limits';
import type { ModelPricesEntry, ModelUsage, PaidAgainReport } from './pricing';
import type { Denial, Terminal, Transition, TransitionCounts } from './terminal';
import { emptyTranscript } from './transcript';
import type { Effort, ThinkingSetting } from './thinking';
import type { ContentRef, PendingUserMessage, TranscriptRef } from './transcript';

/** Timeouts and retry knobs; production defaults live in `DEFAULT_SESSION_TIMEOUTS`. */
export interface SessionTimeouts {
  /** A model call that reports no progress for this long is presumed lost and retried. */
  modelHeartbeatMs: number;
  modelStartToCloseMs: number;
  modelRetryInitialMs: number;
  modelRetryMaxAttempts: number;
  /** A tool whose worker stops heartbeating for this long is retried on another worker. */
  toolHeartbeatMs: number;
  /** How long the API keeps a prompt prefix cached: after this, microcompact may clear freely. */
  promptCacheTtlMs?: number;
}

export const DEFAULT_SESSION_TIMEOUTS: SessionTimeouts = {
  modelHeartbeatMs: 60_000,
  modelStartToCloseMs: 15 * 60_000,
  modelRetryInitialMs: 2_000,
  modelRetryMaxAttempts: 20,
  toolHeartbeatMs: 30_000,
};

/**
 * Time allowed per output token a model call may ask for, on top of `modelStartToCloseMs`: 50 ms
 * is 20 tokens a second, slower than any model streams, so a 64k-token reply (max-output
 * recovery's limit) gets 15 + 53 minutes. The heartbeat and the stream-idle detector find a dead
 * stream long before; this only stops a call that streams for ever.
 */
export const MODEL_MS_PER_OUTPUT_TOKEN = 50;

/** The most any model call may run, whatever its `max_tokens`. */
export const MODEL_START_TO_CLOSE_CAP_MS = 2 * 60 * 60_000;

/**
 * The start-to-close timeout of a model call that may write up to `maxTokens` tokens:
 * `modelStartToCloseMs` plus {@link MODEL_MS_PER_OUTPUT_TOKEN} per token, at most
 * {@link MODEL_START_TO_CLOSE_CAP_MS} (or `modelStartToCloseMs` when that is larger).
 */
export function modelStartToCloseMs(timeouts: SessionTimeouts, maxTokens: number): number {
  const floor = timeouts.modelStartToCloseMs;
  const tokens = Number.isFinite(maxTokens) && maxTokens > 0 ? Math.ceil(maxTokens) : 0;
  return Math.max(floor, Math.min(MODEL_START_TO_CLOSE_CAP_MS, floor + tokens * MODEL_MS_PER_OUTPUT_TOKEN));
}

/** What `durable-agent run` (or any client) starts a job with. Never holds a secret. */
export interface SessionInput {
  prompt: string;
  /** Absolute path of the workspace on the worker's machine. */
  workspace: string;
  model: string;
  /** The model a repeatedly overloaded `model` hands over to (older jobs; see `fallbackModels`). */
  fallbackModel?: string;
  /** Models tried in order after repeated overload, at most three (`--fallback-model a,b`). */
  fallbackModels?: string[];
  /** Context window and output limit per model prefix, over the built-in table (settings `modelLimits`). */
  modelLimits?: ModelLimitsEntry[];
  /** USD per million tokens per model prefix, over the built-in table (settings `modelPrices`). */
  modelPrices?: ModelPricesEntry[];
  maxTurns?: number;
  /**
   * `--max-budget-usd`: no model call starts once the job has cost this much, so it ends at most
   * one call over (Terminal `budget_exhausted`).
   */
  maxBudgetUsd?: number;
  /** Output token limit of one model call before max-output recovery escalates it. */
  maxTokens?: number;
  /** Extended thinking (`--thinking`, `--max-thinking-tokens`); absent in jobs from before it: no thinking. */
  thinking?: ThinkingSetting;
  /** `--effort`; the model's default (see `shared/thinking.ts`) when absent. */
  effort?: Effort;
  appendSystemPrompt?: string;
  /** Names of the tools offered to the model; every built-in tool when absent. */
  tools?: string[];
  timeouts?: Partial<SessionTimeouts>;
  permissions?: SessionPermissions;
  /** `--stop-hook`: commands run as Stop hooks, besides those in settings (e.g. the test suite). */
  stopHooks?: string[];
  /** Timeout of each `--stop-hook` command, in seconds (default 600: a test suite may take minutes). */
  stopHookTimeoutSec?: number;
  /** `--no-sandbox`: run Bash without the OS sandbox (the user's explicit choice). */
  noSandbox?: boolean;
  /** Which settings files to read (Claude Code's `--setting-sources`); all three when absent. */
  settingSources?: SettingSource[];
  /** Set only by continue-as-new: the State and bookkeeping to carry over. */
  resume?: ResumeState;
  /**
   * `run --resume <id>` and `--resume-from FILE`: the conversation this job continues; the prompt
   * joins it as the next user message. Read once, at the start of the job.
   */
  resumeFrom?: ResumeFrom;
  /** Set for a job a batch started: where it reports its cost, and which task it is. */
  batch?: BatchMembership;
  /**
   * The job's input stays open (the Agent SDK's streaming input): a completed turn does not end the
   * job but publishes its result and waits for the next user message, until `closeInput` or
   * `idleMs` without one.
   */
  inputOpen?: { idleMs: number };
  /**
   * `setPermissionMode` may switch this job to bypassPermissions (the SDK's
   * `allowDangerouslySkipPermissions`); without it the signal may not.
   */
  allowBypassPermissions?: true;
  /** The Agent SDK app's hook callbacks (`HookCommand.callback`), by event, run beside the settings' hooks. */
  appHooks?: HooksConfig;
}

/** The conversation a new job continues: in the store, or (small, from a file) in the input. */
export interface ResumeFrom {
  /** Where it came from, for the job's events: `job <id>` or the file's path. */
  source: string;
  /** A finished job's transcript, or one the CLI wrote into the store from a file. */
  transcript?: TranscriptRef;
  /** A conversation small enough to travel in the input itself (see `MAX_INLINE_RESUME_CHARS`). */
  messages?: Message[];
}

/** The most a resumed conversation may take inline in a job's input (256 KiB of JSON). */
export const MAX_INLINE_RESUME_CHARS = 256 * 1024;

/** Permission settings given when the job starts; the workspace's `.claude/settings*.json` add to them. */
export interface SessionPermissions {
  mode?: PermissionMode;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  /** Directories besides the workspace that Read, Glob, Grep and read-only Bash may reach (`--add-dir`). */
  additionalDirectories?: string[];
  /**
   * Nobody vets this workspace (CI): its settings files may only add deny and ask rules. Set by
   * the CLI when `CI` is true.
   */
  restrictWorkspace?: boolean;
  /** How long a call waits for `approve`/`deny`; unset waits as long as it takes. */
  approvalTimeoutMs?: number;
  /** What an unanswered approval becomes when the timeout passes. */
  onApprovalTimeout?: 'deny' | 'allow';
  /** Where `mode` came from when the CLI chose it (the headless default), not `--permission-mode`. */
  modeSource?: string;
}

/** The seed's loop State, as plain data: replaced whole at every transition. */
export interface State {
  transcript: TranscriptRef;
  /** Messages that join the transcript with the next model call. */
  pending: PendingUserMessage[];
  turnCount: number;
  maxOutputTokensRecoveryCount: number;
  maxOutputTokensOverride: number | undefined;
  transition: Transition | undefined;
  /** The stop reason of the last reply (absent before the first, and in States of older jobs). */
  lastStopReason?: string | null;
  usage: Usage;
  model: string;
  lastAssistantText: string;
  /** Files read or written, and their state then: the read-before-edit rule. */
  readFileState: ReadFileStates;
  todos: TodoItem[];
  /** The most recent denials (at most 50; see `denialCount`). */
  denials: Denial[];
  /** Every denial of the job, including those no longer listed (absent in older States). */
  denialCount?: number;
  /** Stop hooks that blocked in a row; at 8 the job ends anyway (absent in older States). */
  stopHookBlocks?: number;
  /** Replies in a row that ended with stop_reason `pause_turn` (absent in older States). */
  pauseTurnCount?: number;
  /** Bash commands that ran without the OS sandbox (absent in older States). */
  unsandboxedCommands?: number;
  /** What the loop knows of its context's size, for microcompact and autocompact (absent in older States). */
  context?: ContextState;
  /** How often each transition happened in this job, autocompact and microcompact included. */
  transitionCounts?: TransitionCounts;
  /** Usage and cost per model, compaction calls included (absent in older States). */
  modelUsage?: ModelUsage;
  /** Milliseconds the model calls that answered spent on the API (absent in older States). */
  durationApiMs?: number;
  /** Model call attempts beyond the first, of calls that answered (absent in older States). */
  modelRetries?: number;
  /** What attempts cut off mid-stream cost the job (absent until one was, and in older States). */
  paidAgain?: PaidAgainReport;
  /** Workflow time the job started, in ms since the epoch (absent in older States). */
  startedAtMs?: number;
  /** The wake-up ScheduleWakeup set: when the turn ends, the job sleeps until it fires. */
  wakeup?: Wakeup;
  /** Prompts scheduled into the job with CronCreate: it sleeps until the next instead of ending. */
  crons?: ScheduledPrompt[];
  /** A job whose input stays open: which user message it is answering, from which turn and usage. */
  inputQuery?: InputQuery;
}

/** The user message an open-input job is answering (the first is 1), and where its turns began. */
export interface InputQuery {
  n: number;
  startTurn: number;
  startUsage: Usage;
}

export interface ResumeState {
  state: State;
  systemPromptRef: ContentRef;
  /** Mode and rules in force, including rules added by `approve --always`. */
  permissions?: PermissionContext;
  /** Where the mode and each rule came from, for `status` and the Terminal. */
  permissionSummary?: PermissionSummary;
  /** The job's sandbox policy, resolved at start. */
  sandbox?: JobSandbox;
  /** The hooks the job runs, resolved at start. */
  hooks?: HooksConfig;
  /** What `status` says about them. */
  hooksReport?: HooksReport;
  /** Model limits from the job and its settings, resolved at start. */
  modelLimits?: ModelLimitsEntry[];
  /** Model prices from the job and its settings, resolved at start. */
  modelPrices?: ModelPricesEntry[];
  /** The queue of the host that holds the workspace (`hostTaskQueue`), found at start. */
  hostQueue?: string;
  maxTurns: number | undefined;
  inbox: QueuedMessage[];
  events: SessionEvent[];
  nextSeq: number;
  /** The agents counted so far (Claude Code's `subagent_stats`), when there were any. */
  subagentStats?: SubagentStats;
  /** An open-input job was told no further message comes (`closeInput`). */
  inputClosed?: true;
  /** An open-input job's latest answered message, so a follower does not hear it twice. */
  turnResult?: { query: number; terminal: Terminal };
}

/** One line of a job's progress, kept in workflow memory for `status` and the CLI's live view. */
export type SessionEvent =
  | { seq: number; turn: number; kind: 'assistant_text'; text: string }
  | { seq: number; turn: number; kind: 'tool_call'; toolUseId: string; name: string; input: string }
  | {
      seq: number;
      turn: number;
      kind: 'tool_result';
      toolUseId: string;
      name: string;
      isError: boolean;
      preview: string;
      /** The whole result in the content store (absent for results answered inline, and on older jobs). */
      ref?: ContentRef;
      /** The permission rules, the mode, a person or a hook refused the call. */
      denied?: boolean;
    }
  | { seq: number; turn: number; kind: 'notice'; text: string };

export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewSessionEvent = DistributiveOmit<SessionEvent, 'seq'>;

export const SESSION_PHASES = [
  'starting',
  'calling_model',
  'running_tools',
  'waiting_for_approval',
  // Stop hooks (e.g. the test suite of --stop-hook) are deciding whether the job may end.
  'running_hooks',
  // Summarising the conversation to keep it within the model's context window.
  'compacting',
  // The worker that took the model call has no credentials; the job asks again until one has.
  'waiting_for_credentials',
  // ScheduleWakeup: the turn ended and the job waits on a timer, holding no worker.
  'sleeping',
  // The turn ended with background commands running: the job waits for the first to end.
  'waiting_for_background',
  // The job's input is open (the Agent SDK): its answer is out, and it waits for the next message.
  'waiting_for_input',
  'finished',
] as const;
export type SessionPhase = (typeof SESSION_PHASES)[number];

/** What the `snapshot` query returns: a live view of a running (or finished) job. */
export interface SessionSnapshot {
  phase: SessionPhase;
  turnCount: number;
  maxTurns: number | undefined;
  model: string;
  lastAssistantText: string;
  runningTools: Array<{ toolUseId: string; name: string }>;
  /** Tool calls parked until someone runs `approve` or `deny`. */
  pendingApprovals: PendingApproval[];
  todos: TodoItem[];
  permissionMode: PermissionMode | undefined;
  /** The mode in force and where it and each rule came from. */
  permissions?: PermissionSummary;
  /** How Bash is confined, and how many commands ran unsandboxed. */
  sandbox?: SandboxReport;
  /** The context's size against the model's window, and what was done to keep it small. */
  context?: ContextReport;
  /** The hooks the job runs, and those it ignores or does not run. */
  hooks?: HooksReport;
  transitions?: TransitionCounts;
  usage: Usage;
  /** The job's cost so far in USD; null when a model it used has no known price. */
  totalCostUsd?: number | null;
  /** Usage and cost per model. */
  modelUsage?: ModelUsage;
  /** The job's `--max-budget-usd`. */
  maxBudgetUsd?: number;
  queuedUserMessages: number;
  abortRequested: boolean;
  /** The task queue of the host that holds the workspace (its tool calls and hooks run there), once known. */
  hostQueue?: string;
  /** The job's background commands: running, and ended (with how). */
  backgroundTasks?: Array<{
    taskId: string;
    toolUseId: string;
    label: string;
    status: 'running' | 'completed' | 'failed' | 'stopped';
    outputFile: string;
    exitCode?: number;
    /** A command's state in one line, in Claude Code's words. */
    summary?: string;
    /** A subagent's child job, where its approvals and transcript are. */
    agentJobId?: string;
    /** A subagent's type, how it was launched, and once it ended its report (clipped) and size. */
    agent?: {
      type: string;
      background: boolean;
      result?: string;
      turns?: number;
      tokens?: number;
      durationMs?: number;
    };
  }>;
  /** The wake-up the job has scheduled, if any: when it fires (ISO 8601), why, and with what message. */
  wakeup?: { at: string; reason: string; prompt: string };
  /** The prompts scheduled with CronCreate: when each fires next (ISO 8601), how often, and what it says. */
  crons?: Array<{ id: string; cron: string; schedule: string; recurring: boolean; nextAt: string; prompt: string }>;
  events: SessionEvent[];
  terminal: Terminal | undefined;
  /**
   * An open-input job's latest answered message (see `SessionInput.inputOpen`): which one, and its
   * result as a Terminal of that message alone (its turns, its usage; the cost is the job's so far).
   */
  turnResult?: { query: number; terminal: Terminal };
  /** The Agent SDK app's hook callbacks the job waits on. */
  hookCallbacks?: PendingHookCallback[];
}

/** A hook callback of the Agent SDK app that the job waits on: the app is asked, and answers with a signal. */
export interface PendingHookCallback {
  /** Unique in the job: what `hookCallbackAnswer` names. */
  id: string;
  /** The app's callback id, as it registered it in `initialize`. */
  callbackId: string;
  event: RunHookEvent;
  /** The hook's input, as a command hook reads it on stdin. */
  input: Record<string, unknown>;
  toolUseId?: string;
  /** PostToolUse: the tool result in the content store, for `tool_response`. */
  toolResponseRef?: string;
  /** How long the app is given once asked. */
  timeoutSec: number;
  /** Set by the client when a subagent's job waits on it: where the answer goes. */
  jobId?: string;
}

/** A tool call waiting for a human decision. */
export interface PendingApproval {
  toolUseId: string;
  toolName: string;
  /** The call's input as JSON, clipped. */
  input: string;
  /**
   * The whole input, its fields over 16,384 characters by reference (`InputFieldRef`), for a
   * program that answers (the Agent SDK's `canUseTool` gets it whole). Absent in older jobs.
   */
  toolInput?: unknown;
  /** Why it needs approval (the rule or mode). */
  reason: string;
  /** The allow rule `approve --always` would add. */
  suggestedRule: string;
  /** Workflow time of the request, ISO 8601. */
  requestedAt: string;
  /**
   * Set by the client when the call is a subagent's: the agent's own job, which the answer goes to,
   * and what the parent's Agent call called it.
   */
  agent?: { jobId: string; label: string };
}

/** The answer to a pending approval, sent by `durable-agent approve` or `deny`. */
export interface ApprovalAnswer {
  /** Which call; may be omitted when exactly one is pending. */
  toolUseId?: string;
  decision: 'allow' | 'deny';
  /** With `allow`: add the suggested rule for the rest of the job. */
  always?: boolean;
  reason?: string;
  /**
   * With `allow`: run the call with this input instead of the model's (the Agent SDK's
   * `canUseTool` answering `updatedInput`). Deny rules are checked again against it.
   */
  updatedInput?: Record<string, unknown>;
}

/** The hooks as `status` shows them. */
export interface HooksReport {
  /** Hooks per event that run, e.g. `{ Stop: 1, PreToolUse: 2 }`. */
  running: Record<string, number>;
  /** Configured, but not run by durable-agent (another event, or another hook type). */
  notRun: string[];
  /** Not run because of where they come from (a workspace file in CI). */
  ignored: string[];
}

/** The State of turn 1: the user's prompt waits to be sent. */
export function initialState(input: SessionInput): State {
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
    readFileState: {},
    todos: [],
    denials: [],
  };
}
