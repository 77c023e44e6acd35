import type { PaidAgain } from './stream-progress';
import type { FileStateUpdate, ReadFileStates } from './file-state';
import type { AssistantMessage, ToolUseBlock, Usage } from './messages';
import type { PermissionMode, PermissionRules } from './permissions';
import type { ModelPricesEntry } from './pricing';
import type { JobSandbox } from './sandbox';
import type { SettingSource, SettingsLayer } from './settings-trust';
import type { ContentRef, PendingUserMessage, TranscriptRef } from './transcript';
import type { Effort, ThinkingSetting } from './thinking';

/**
 * Inputs and results of the activities, declared apart from their implementations so the
 * workflow can name them without importing anything that does I/O.
 */

/** Identifies one job across continue-as-new: workflow id plus the first run's id. */
export type SessionKey = string;

export interface CallModelInput {
  sessionKey: SessionKey;
  transcript: TranscriptRef;
  /** Messages to write into the transcript before the call (tool results, user input). */
  append: PendingUserMessage[];
  systemPromptRef: ContentRef;
  model: string;
  maxTokens: number;
  /** The job's thinking and effort (absent in older jobs: the call sends neither). */
  thinking?: ThinkingSetting;
  effort?: Effort;
  tools: string[];
  /** When true, repeated overload fails fast so the workflow can switch to the fallback model. */
  fallbackAvailable: boolean;
  /** The job's workspace: where tool results over the turn's budget are stored (absent in older jobs). */
  workspace?: string;
  /** Phase 1's microcompact: which old tool results go out cleared (absent in older jobs: none). */
  context?: MicrocompactInput;
  /** How the call's cost is worked out (absent in older jobs: built-in prices only). */
  pricing?: CallPricing;
}

/** Prices from settings for a model call, and whether a call without a known price may run. */
export interface CallPricing {
  /** The job's `modelPrices` entries, highest precedence first; the built-in table comes after them. */
  prices: ModelPricesEntry[];
  /** Under a budget a call must have a price: without one it fails before anything is sent. */
  requirePrice: boolean;
}

/** What a model call (a turn's or a compaction's) reports about itself, besides its reply. */
export interface CallAccounting {
  /** What the call cost, in USD; null when no price is known for the model (absent from older workers). */
  costUsd?: number | null;
  /** Milliseconds the successful attempt spent on the API (for a compaction, on every summary request). */
  apiMs?: number;
  /** Which attempt of the activity answered: 1 unless it was retried. */
  attempt?: number;
  /**
   * What earlier attempts were billed for and lost (cut off mid-stream), and its cost (null
   * without a price). Absent when none was (and from older workers).
   */
  paidAgain?: PaidAgain & { costUsd: number | null };
}

export interface MicrocompactInput {
  /** Tool results in messages before this index are cleared (it only grows, until a compaction). */
  clearedBefore: number;
  /** Move the boundary forward now, leaving the most recent `keepRecentToolResults` results. */
  microcompact: boolean;
  keepRecentToolResults: number;
  /** Move it only if that clears at least this many characters (absent: any saving). */
  minSavingChars?: number;
}

export interface CompactInput {
  sessionKey: SessionKey;
  transcript: TranscriptRef;
  /** Messages not yet written (the last turn's tool results): they are part of what is compacted. */
  append: PendingUserMessage[];
  systemPromptRef: ContentRef;
  model: string;
  tools: string[];
  workspace: string;
  clearedBefore: number;
  /** `auto`: the context passed the threshold; `reactive`: the API said the prompt is too long. */
  trigger: 'auto' | 'reactive';
  /** The model's window and the conversation's tokens per character, to fit the summary request. */
  contextWindow: number;
  tokensPerChar: number;
  /** Output limit of the summary reply. */
  maxSummaryTokens: number;
  /** How much of the most recent conversation is kept verbatim after the summary, in tokens. */
  keepRecentTokens: number;
  fallbackAvailable: boolean;
  /** How the call's cost is worked out (absent in older jobs). */
  pricing?: CallPricing;
}

export interface CompactResult extends CallAccounting {
  /** The new chain: the summary message and the kept tail (it links back to the compacted chain). */
  transcript: TranscriptRef;
  /** Characters of the next request's system, tools and messages, for the context estimate. */
  requestChars: number;
  summaryChars: number;
  /** Messages of the old conversation summarised, and kept as they were. */
  summarisedMessages: number;
  keptMessages: number;
  /** Oldest messages left out of the summary request because it would not fit. */
  omittedMessages: number;
  /** The compaction call's own usage (it is billed like any call). */
  usage: Usage;
}

export interface CallModelResult extends CallAccounting {
  /**
   * The reply as kept: without a tool_use cut off by the end of the reply (see
   * `truncatedToolUse`), without blank text blocks, and on `refusal` without any tool_use. Every
   * tool_use left in it is complete and may be run.
   */
  message: AssistantMessage;
  usage: Usage;
  /**
   * The API's `stop_reason`: `end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, `pause_turn`,
   * `refusal` or `model_context_window_exceeded`.
   */
  stopReason: string | null;
  model: string;
  /**
   * The transcript with `append` and `message` written into it; equal to `transcriptBeforeReply`
   * when `message` was not written: `emptyReply`, or `stopReason` `refusal`.
   */
  transcript: TranscriptRef;
  /** The transcript with only `append` written: what a retry of this turn starts from. */
  transcriptBeforeReply: TranscriptRef;
  /**
   * True when the reply kept no content (none came, only blank text, or only the cut tool_use):
   * nothing was written, since the API refuses an assistant message with empty content.
   */
  emptyReply: boolean;
  /**
   * Set when the reply stopped (`max_tokens`, `model_context_window_exceeded`, `refusal`) in the
   * middle of this tool call. Its input was partial, so it is in neither `message` nor the
   * transcript, and must never run.
   */
  truncatedToolUse?: { id: string; name: string };
  /** On `refusal`: the API's reason, either field null when it names none. */
  stopDetails?: { category: string | null; explanation: string | null };
  /** With `context` in the input: characters of the request, and the clearing boundary used. */
  requestChars?: number;
  clearedBefore?: number;
}

export interface RunToolInput {
  sessionKey: SessionKey;
  workspace: string;
  toolUse: ToolUseBlock;
  /** What the session knows of the files this call touches (only those, to keep history small). */
  readState: ReadFileStates;
  /**
   * The job's `Read(...)` deny rules: the workflow decides on the path the model wrote, the tool
   * re-checks what it really touches (a symlink's target, each file a Grep or Glob finds).
   */
  readDenyRules?: string[];
  /** The job has a Bash deny or ask rule: git refuses the programs a repository's own config names. */
  gitGuard?: boolean;
  /**
   * The job's sandbox policy for Bash. Absent (a job started before sandboxing existed): the
   * sandbox is required, with the default policy.
   */
  sandbox?: JobSandbox;
  /**
   * A Bash call the model asked to run in the background: it runs without Bash's timeout (the job
   * stops it when it ends), and its output is copied as it grows to `outputPath` (relative to the
   * workspace), which the model may Read.
   */
  background?: { outputPath: string };
}

/** A tool's result as the workflow keeps it: the content itself is in the store. */
export interface ToolRunResult {
  toolUseId: string;
  isError: boolean;
  ref: ContentRef;
  preview: string;
  chars: number;
  /** Changes to the session's file knowledge (a Read records a file, a Write updates it). */
  fileStates?: FileStateUpdate[];
  /** Set when the call started a command: true if it ran in the OS sandbox, false if unsandboxed. */
  sandboxed?: boolean;
}

export interface PermissionSettings {
  rules: PermissionRules;
  defaultMode?: PermissionMode;
  /** The settings files that were read, for the record. */
  sources: string[];
}

export interface LoadSettingsInput {
  workspace: string;
  sources: SettingSource[];
}

export interface LoadSettingsResult {
  /** The settings files that exist, lowest precedence first. */
  layers: SettingsLayer[];
  /** The worker's home directory: where user settings and `~` rules point. */
  homeDir: string;
}

export interface BuildSystemPromptInput {
  workspace: string;
  model: string;
  appendSystemPrompt?: string;
  /** Which settings the job reads; also which `.claude/agents` definitions the prompt lists. */
  settingSources?: SettingSource[];
}

/** A subagent type from `.claude/agents/*.md` (Claude Code's format). */
export interface AgentDefinition {
  name: string;
  description: string;
  /** The tools it may use (less any the job lacks); all the job's when absent. */
  tools?: string[];
  /** An alias (sonnet, opus, haiku, fable) or a model id; the job's model when absent. */
  model?: string;
  /** Its system prompt: the file's body. */
  prompt: string;
  source: 'project' | 'user';
  file: string;
}

export interface LoadAgentDefinitionInput {
  workspace: string;
  name: string;
  settingSources?: SettingSource[];
}

export interface LoadAgentDefinitionResult {
  definition?: AgentDefinition;
  /** The names of every definition found. */
  available: string[];
}

export interface BuildSystemPromptResult {
  ref: ContentRef;
  chars: number;
}

export interface CommitTranscriptInput {
  transcript: TranscriptRef;
  append: PendingUserMessage[];
}

/** Failure types the model-call activity raises; the workflow's recovery decisions key on them. */
export const MODEL_FAILURE_TYPES = {
  promptTooLong: 'prompt_too_long',
  invalidRequest: 'invalid_request',
  authentication: 'authentication',
  /** 402 `billing_error`: nothing to retry until someone fixes the account. */
  billing: 'billing',
  /** A 429 for a spending cap (`enforced_spend_limit_reached`, ...): final, unlike a rate limit. */
  spendLimit: 'spend_limit',
  permission: 'permission',
  notFound: 'not_found',
  requestTooLarge: 'request_too_large',
  /** 409 `conflict_error`: retried. */
  conflict: 'conflict',
  /** 408, 504 `timeout_error`: retried. */
  timeout: 'timeout',
  rateLimited: 'rate_limited',
  overloaded: 'overloaded',
  overloadedFallback: 'overloaded_fallback',
  apiError: 'api_error',
  connection: 'connection',
  /** Connection refused, a host name not found, a certificate not accepted: retried about a minute. */
  unreachable: 'unreachable',
  streamStalled: 'stream_stalled',
  /** The summary call answered, but with nothing usable as a summary. */
  compactionFailed: 'compaction_failed',
  configuration: 'configuration',
  /**
   * The worker that took the call has no model credentials: a condition of that worker, not of
   * the job. The job waits for a worker that has them (model-phase.ts), it never fails for it.
   */
  noCredentials: 'no_model_credentials',
} as const;
export type ModelFailureType = (typeof MODEL_FAILURE_TYPES)[keyof typeof MODEL_FAILURE_TYPES];
