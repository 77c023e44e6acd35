import type { Usage } from './messages';
import type { Terminal, Transition } from './terminal';
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
}

export const DEFAULT_SESSION_TIMEOUTS: SessionTimeouts = {
  modelHeartbeatMs: 60_000,
  modelStartToCloseMs: 15 * 60_000,
  modelRetryInitialMs: 2_000,
  modelRetryMaxAttempts: 20,
  toolHeartbeatMs: 30_000,
};

/** What `durable-agent run` (or any client) starts a job with. Never holds a secret. */
export interface SessionInput {
  prompt: string;
  /** Absolute path of the workspace on the worker's machine. */
  workspace: string;
  model: string;
  fallbackModel?: string;
  maxTurns?: number;
  /** Output token limit of one model call before max-output recovery escalates it. */
  maxTokens?: number;
  appendSystemPrompt?: string;
  /** Names of the tools offered to the model; every built-in tool when absent. */
  tools?: string[];
  timeouts?: Partial<SessionTimeouts>;
  /** Set only by continue-as-new: the State and bookkeeping to carry over. */
  resume?: ResumeState;
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
  usage: Usage;
  model: string;
  lastAssistantText: string;
}

export interface ResumeState {
  state: State;
  systemPromptRef: ContentRef;
  maxTurns: number | undefined;
  inbox: string[];
  events: SessionEvent[];
  nextSeq: number;
}

/** One line of a job's progress, kept in workflow memory for `status` and the CLI's live view. */
export type SessionEvent =
  | { seq: number; turn: number; kind: 'assistant_text'; text: string }
  | { seq: number; turn: number; kind: 'tool_call'; toolUseId: string; name: string; input: string }
  | { seq: number; turn: number; kind: 'tool_result'; toolUseId: string; name: string; isError: boolean; preview: string }
  | { seq: number; turn: number; kind: 'notice'; text: string };

export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewSessionEvent = DistributiveOmit<SessionEvent, 'seq'>;

export const SESSION_PHASES = ['starting', 'calling_model', 'running_tools', 'finished'] as const;
export type SessionPhase = (typeof SESSION_PHASES)[number];

/** What the `snapshot` query returns: a live view of a running (or finished) job. */
export interface SessionSnapshot {
  phase: SessionPhase;
  turnCount: number;
  maxTurns: number | undefined;
  model: string;
  lastAssistantText: string;
  runningTools: Array<{ toolUseId: string; name: string }>;
  usage: Usage;
  queuedUserMessages: number;
  abortRequested: boolean;
  events: SessionEvent[];
  terminal: Terminal | undefined;
}
