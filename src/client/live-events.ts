/**
 * What following a job reports, in the order it happened: the job's own progress events, the
 * model's text as it streams, retries, and what the job waits for. A printer turns them into a
 * terminal view (live-printer.ts) or anything else (JSON lines); `follow()` produces them.
 */
import type { PendingApproval, PendingHookCallback, SessionEvent, SessionSnapshot } from '../shared/session';
import type { Terminal } from '../shared/terminal';

/** The job's recorded events, as the `snapshot` query has them, except for `assistant_text`. */
export type RecordedEvent = Exclude<SessionEvent, { kind: 'assistant_text' }>;

/**
 * A reply's text once the model call ended. `text` is the whole text when the job still has it
 * (the last reply's), else the event's (clipped at 2,000 characters). `streamed` is how many of its
 * first characters already went out as `text_delta`s: print `text.slice(streamed)`.
 */
export interface AssistantTextEvent {
  seq: number;
  turn: number;
  kind: 'assistant_text';
  text: string;
  streamed: number;
}

/** Text of the reply being streamed, as it arrives: append it to what came before. */
export interface TextDeltaEvent {
  kind: 'text_delta';
  turn: number;
  text: string;
  /**
   * True on the first delta of a retried model call that already showed text: the reply starts
   * again from its beginning.
   */
  restart: boolean;
  /**
   * Characters of this reply that were received but never shown before `text` (the follower
   * fell more than a heartbeat's worth of text behind); usually 0.
   */
  skipped: number;
}

/** An activity attempt failed and Temporal retries it. */
export interface RetryEvent {
  kind: 'retry';
  turn: number;
  /** What is retried, for people: `model call`, `compaction`, `Bash (toolu_…)`, `hooks`. */
  what: string;
  activityType: string;
  activityId: string;
  /** The attempt that failed, and the one that follows. */
  failedAttempt: number;
  nextAttempt: number;
  /**
   * Attempts before `failedAttempt` that failed without a retry event of their own (they came and
   * went between two looks, or before following began); their causes are not known.
   */
  unseenFailures: number;
  /** 0 when the retry policy sets no limit. */
  maximumAttempts: number;
  /** The failure's message, with its causes. */
  cause: string;
  /** When the next attempt starts (or started), ms since the epoch, when the server says. */
  nextAttemptAt?: number;
  /** True when the next attempt is already running. */
  started: boolean;
}

/** A tool call parked for approval; the commands to answer it go with it. */
export interface ApprovalNeededEvent {
  kind: 'approval_needed';
  turn: number;
  jobId: string;
  pending: PendingApproval;
}

/** The job's first events were dropped from its in-memory log before the follower saw them. */
export interface EarlierEventsDroppedEvent {
  kind: 'earlier_events_dropped';
  count: number;
}

/** No worker answered the snapshot query for a while. */
export interface NoWorkerEvent {
  kind: 'no_worker';
  afterMs: number;
  /** What happened or what to do, when the follower knows better than the generic hint (the embedded default). */
  text?: string;
}

/**
 * A job whose input stays open (the Agent SDK's streaming input) answered its `query`th message and
 * waits for the next: `terminal` is that message's result.
 */
export interface AnsweredEvent {
  kind: 'answered';
  query: number;
  terminal: Terminal;
}

/** The job waits on a hook callback of the Agent SDK app that started it (told once per callback). */
export interface HookCallbackEvent {
  kind: 'hook_callback';
  pending: PendingHookCallback;
}

/** A background command or subagent of the job, as its snapshot shows it. */
export type BackgroundTaskView = NonNullable<SessionSnapshot['backgroundTasks']>[number];

/** A background command or subagent started, or ended (completed, failed or stopped). */
export interface TaskEvent {
  kind: 'task_started' | 'task_ended';
  turn: number;
  task: BackgroundTaskView;
}

/** One of a subagent's own events, from its job, under the Agent call that started it. */
export interface SubagentEvent {
  kind: 'subagent_event';
  parentToolUseId: string;
  /** What the Agent call called it. */
  label: string;
  event: SessionEvent;
}

export type FollowEvent =
  | TaskEvent
  | SubagentEvent
  | RecordedEvent
  | AssistantTextEvent
  | TextDeltaEvent
  | RetryEvent
  | ApprovalNeededEvent
  | EarlierEventsDroppedEvent
  | NoWorkerEvent
  | AnsweredEvent
  | HookCallbackEvent;

/** What the job is doing right now, after each poll: a spinner's cue. */
export interface LiveStatus {
  phase: string;
  turn: number;
  /** Names of the tools running now. */
  runningTools: string[];
  /** Attempt of the running model call, when it is a retry. */
  modelAttempt?: number;
  /** Set while the model thinks: characters of thought so far in this call. */
  modelThinking?: number;
}

/** Receives what `follow()` sees. Only `onEvent` is required. */
export interface FollowListener {
  onEvent(event: FollowEvent): void;
  /** After every poll, with the job's current state. */
  onStatus?(status: LiveStatus): void;
  /** Following ended (the job ended, or it was interrupted): end an open line, stop a spinner. */
  close?(): void;
}
