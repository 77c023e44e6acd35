/**
 * Turns what a client can see of a job into {@link FollowEvent}s: the `snapshot` query's recorded
 * events, and the server's pending-activity info (`describe`), whose heartbeat details carry the
 * text of the reply being streamed and whose attempt and last failure tell of retries.
 *
 * Feed it the snapshot first, then a `describe` taken after that snapshot: an activity still
 * pending then has not ended before the snapshot, so its reply's `assistant_text` event always
 * comes after the text it streamed.
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import type { SessionEvent, SessionSnapshot } from '../shared/session';
import { asStreamProgress } from '../shared/stream-progress';
import type { BackgroundTaskView, FollowEvent, FollowListener } from './live-events';

/** What the follower reads of one of the server's `PendingActivityInfo`s. */
export interface PendingActivity {
  activityId: string;
  activityType: string;
  state: 'scheduled' | 'started' | 'other';
  /** The current attempt: the running one, or the next one while in backoff. */
  attempt: number;
  /** 0: no limit. */
  maximumAttempts: number;
  /** The last heartbeat's details, decoded (they outlive the attempt that sent them). */
  details: unknown;
  /** The last failed attempt's failure, message and causes. */
  lastFailure?: string;
  /** While in backoff: when the next attempt is due. */
  nextAttemptAt?: number;
  /** When the current attempt was scheduled (for a retry: when its backoff ended). */
  scheduledAt?: number;
  lastStartedAt?: number;
}

/** The server's pending-activity info of a `describe()`, in the follower's terms. */
export function pendingActivities(description: WorkflowExecutionDescription): PendingActivity[] {
  return (description.raw.pendingActivities ?? []).map((info) => {
    const payload = info.heartbeatDetails?.payloads?.[0];
    let details: unknown;
    try {
      details = payload ? defaultPayloadConverter.fromPayload(payload as Payload) : undefined;
    } catch {
      details = undefined; // details some other client encoded: nothing to show
    }
    const lastFailure = info.lastFailure ? failureText(info.lastFailure) : undefined;
    const nextAttemptAt = optionalTsToMs(info.nextAttemptScheduleTime);
    const lastStartedAt = optionalTsToMs(info.lastStartedTime);
    const scheduledAt = optionalTsToMs(info.scheduledTime);
    return {
      activityId: info.activityId ?? '',
      activityType: info.activityType?.name ?? '',
      state: info.state === 1 ? 'scheduled' : info.state === 2 ? 'started' : 'other',
      attempt: info.attempt ?? 1,
      maximumAttempts: info.maximumAttempts ?? 0,
      details,
      ...(lastFailure ? { lastFailure } : {}),
      ...(nextAttemptAt !== undefined ? { nextAttemptAt } : {}),
      ...(scheduledAt !== undefined ? { scheduledAt } : {}),
      ...(lastStartedAt !== undefined ? { lastStartedAt } : {}),
    };
  });
}

interface FailureLike {
  message?: string | null;
  cause?: FailureLike | null;
}

/** A failure's message and its causes' messages, each said once. */
function failureText(failure: FailureLike): string {
  const parts: string[] = [];
  for (let at: FailureLike | null | undefined = failure; at && parts.length < 4; at = at.cause) {
    const message = at.message?.trim();
    if (message && !parts.some((part) => part.includes(message))) parts.push(message);
  }
  return parts.join(': ') || 'no reason given';
}

/** The reply text being streamed by one model call attempt, and how much of it went out. */
interface StreamState {
  key: string;
  attempt: number;
  /** Characters of the attempt's text already sent as deltas. */
  shown: number;
  /** Those characters, unless some were skipped. */
  text: string;
  gap: boolean;
  /** The next delta starts the reply over (a retried call that had shown text). */
  restart: boolean;
}

const ELLIPSIS = '…';

/** Produces a job's {@link FollowEvent}s from its snapshots and pending activities. */
export class LiveFollower {
  /** Seq of the last recorded event passed on: the next snapshot query asks for what follows it. */
  lastSeq = 0;
  private turn = 0;
  private phase = 'starting';
  /** The last message of an open-input job whose result was told. */
  private answered = 0;
  private readonly announcedCallbacks = new Set<string>();
  private runningTools: string[] = [];
  private modelAttempt = 1;
  /** Characters of thought of the model call's current thinking block; undefined when it is not thinking. */
  private modelThinking: number | undefined;
  private stream: StreamState | undefined;
  /** Per activity, the last failed attempt a retry event told of. */
  private readonly announcedRetries = new Map<string, number>();
  private readonly announcedApprovals = new Set<string>();
  private readonly toolNames = new Map<string, string>();
  /** Background tasks told of, by task id: started, and ended. */
  private readonly tasksStarted = new Set<string>();
  private readonly tasksEnded = new Set<string>();
  /** Per subagent (its Agent call's tool_use_id): its events not yet passed on. */
  private readonly agentEvents = new Map<string, SessionEvent[]>();
  /** Per subagent: the seq of the last of its events taken in; the next look asks for what follows. */
  readonly agentSeq = new Map<string, number>();
  /** Subagents whose job was seen ended: every event of theirs has been taken in. */
  private readonly agentsDrained = new Set<string>();
  /** Set before the job's last snapshot: endings no look confirmed are told anyway. */
  finalLook = false;

  constructor(
    private readonly jobId: string,
    private readonly listener: FollowListener,
  ) {}

  /**
   * The subagents whose jobs are worth a look before the next {@link onSnapshot}: those running,
   * and those ended whose last events have not been taken in.
   */
  agentsToFollow(snapshot: SessionSnapshot): Array<{ toolUseId: string; jobId: string }> {
    return (snapshot.backgroundTasks ?? [])
      .filter((task) => task.agentJobId && !this.tasksEnded.has(task.taskId))
      .map((task) => ({ toolUseId: task.toolUseId, jobId: task.agentJobId as string }));
  }

  /** A subagent's job's snapshot: its new events, held until their place among the job's own. */
  onAgentSnapshot(toolUseId: string, snapshot: SessionSnapshot): void {
    if (snapshot.terminal) this.agentsDrained.add(toolUseId);
    const after = this.agentSeq.get(toolUseId) ?? 0;
    const fresh = snapshot.events.filter((event) => event.seq > after);
    const last = fresh.at(-1);
    if (!last) return;
    this.agentSeq.set(toolUseId, last.seq);
    this.agentEvents.set(toolUseId, [...(this.agentEvents.get(toolUseId) ?? []), ...fresh]);
  }

  /** The snapshot's events after {@link lastSeq}, and its new pending approvals. */
  onSnapshot(snapshot: SessionSnapshot): void {
    const events = snapshot.events.filter((event) => event.seq > this.lastSeq);
    const first = events[0];
    if (this.lastSeq === 0 && first && first.seq > 1) {
      this.emit({ kind: 'earlier_events_dropped', count: first.seq - 1 });
    }
    const tasks = new Map((snapshot.backgroundTasks ?? []).map((task) => [task.toolUseId, task]));
    const lastText = [...events].reverse().find((event) => event.kind === 'assistant_text');
    for (const event of events) {
      this.lastSeq = event.seq;
      if (event.kind === 'tool_call') this.toolNames.set(event.toolUseId, event.name);
      const task = event.kind === 'tool_call' || event.kind === 'tool_result' ? tasks.get(event.toolUseId) : undefined;
      // A foreground agent's work and ending come before its call's result, as they happened.
      if (task && event.kind === 'tool_result') this.taskNews(task, snapshot.turnCount, !task.agent?.background);
      if (event.kind !== 'assistant_text') {
        this.emit(event);
        // A task starts with its call.
        if (task && event.kind === 'tool_call') this.taskNews(task, snapshot.turnCount, false);
        continue;
      }
      // Events are clipped; the last reply's whole text is in the snapshot.
      const text =
        event === lastText && snapshot.lastAssistantText.startsWith(unclipped(event.text))
          ? snapshot.lastAssistantText
          : event.text;
      this.emit({ ...event, text, streamed: this.streamedPart(text) });
      this.stream = undefined;
    }
    for (const task of tasks.values()) this.taskNews(task, snapshot.turnCount, task.status !== 'running');
    for (const pending of snapshot.pendingApprovals) {
      if (this.announcedApprovals.has(pending.toolUseId)) continue;
      this.announcedApprovals.add(pending.toolUseId);
      this.emit({ kind: 'approval_needed', turn: snapshot.turnCount, jobId: this.jobId, pending });
    }
    for (const pending of snapshot.hookCallbacks ?? []) {
      const key = `${pending.jobId ?? ''}/${pending.id}`;
      if (this.announcedCallbacks.has(key)) continue;
      this.announcedCallbacks.add(key);
      this.emit({ kind: 'hook_callback', pending });
    }
    // After the answer's events, its result: once per message.
    if (snapshot.turnResult && snapshot.turnResult.query > this.answered) {
      this.answered = snapshot.turnResult.query;
      this.emit({ kind: 'answered', ...snapshot.turnResult });
    }
    this.turn = snapshot.turnCount;
    this.phase = snapshot.phase;
    this.runningTools = snapshot.runningTools.map((tool) => tool.name);
  }

  /** Retries, and the text the running model call streamed since the last look. */
  onActivities(runId: string, activities: PendingActivity[]): void {
    this.modelAttempt = 1;
    this.modelThinking = undefined;
    for (const activity of activities) {
      this.announceRetry(runId, activity);
      if (activity.activityType === 'callModel') {
        this.modelAttempt = activity.attempt;
        const progress = asStreamProgress(activity.details);
        if (progress?.attempt === activity.attempt) this.modelThinking = progress.thinking;
        this.streamed(`${runId}/${activity.activityId}`, activity);
      }
    }
  }

  /** Tell the listener what the job is doing now. */
  status(): void {
    this.listener.onStatus?.({
      phase: this.phase,
      turn: this.turn,
      runningTools: this.runningTools,
      ...(this.modelAttempt > 1 ? { modelAttempt: this.modelAttempt } : {}),
      ...(this.modelThinking !== undefined ? { modelThinking: this.modelThinking } : {}),
    });
  }

  /** A task's start, its subagent's events taken in so far, and (with `end`) its ending, each told once. */
  private taskNews(task: BackgroundTaskView, turn: number, end: boolean): void {
    if (!this.tasksStarted.has(task.taskId)) {
      this.tasksStarted.add(task.taskId);
      this.emit({ kind: 'task_started', turn, task });
    }
    for (const event of this.agentEvents.get(task.toolUseId) ?? [])
      this.emit({ kind: 'subagent_event', parentToolUseId: task.toolUseId, label: task.label, event });
    this.agentEvents.delete(task.toolUseId);
    // An agent's ending waits until its own last events are in, so that none is lost.
    const drained = !task.agentJobId || this.agentsDrained.has(task.toolUseId) || this.finalLook;
    if (end && drained && task.status !== 'running' && !this.tasksEnded.has(task.taskId)) {
      this.tasksEnded.add(task.taskId);
      this.emit({ kind: 'task_ended', turn, task });
    }
  }

  private emit(event: FollowEvent): void {
    this.listener.onEvent(event);
  }

  private announceRetry(runId: string, activity: PendingActivity): void {
    if (activity.attempt <= 1 || activity.lastFailure === undefined) return;
    const key = `${runId}/${activity.activityId}`;
    const failedAttempt = activity.attempt - 1;
    const announced = this.announcedRetries.get(key) ?? 0;
    if (announced >= failedAttempt) return;
    this.announcedRetries.set(key, failedAttempt);
    const started = activity.state === 'started';
    // Out of backoff but not yet picked up by a worker, the attempt is due since it was scheduled.
    const nextAttemptAt = started ? activity.lastStartedAt : (activity.nextAttemptAt ?? activity.scheduledAt);
    this.emit({
      kind: 'retry',
      turn: this.turn,
      what: this.describeActivity(activity),
      activityType: activity.activityType,
      activityId: activity.activityId,
      failedAttempt,
      nextAttempt: activity.attempt,
      unseenFailures: failedAttempt - 1 - announced,
      maximumAttempts: activity.maximumAttempts,
      cause: activity.lastFailure,
      ...(nextAttemptAt !== undefined ? { nextAttemptAt } : {}),
      started,
    });
  }

  private describeActivity(activity: PendingActivity): string {
    switch (activity.activityType) {
      case 'callModel':
        return 'model call';
      case 'compactConversation':
        return 'compaction';
      case 'runHooks':
        return 'hooks';
      case 'runTool': {
        const toolUseId = activity.activityId.replace(/^tool-/, '');
        return `${this.toolNames.get(toolUseId) ?? 'tool'} (${toolUseId})`;
      }
      default:
        return activity.activityType || 'activity';
    }
  }

  /** Send the text a model call received since it was last looked at. */
  private streamed(key: string, activity: PendingActivity): void {
    const progress = asStreamProgress(activity.details);
    // A retry shows the failed attempt's last heartbeat until it sends its own.
    if (!progress || progress.attempt !== activity.attempt) return;
    let stream = this.stream;
    if (!stream || stream.key !== key) {
      stream = { key, attempt: progress.attempt, shown: 0, text: '', gap: false, restart: false };
      this.stream = stream;
    }
    if (stream.attempt !== progress.attempt) {
      stream.restart = stream.restart || stream.shown > 0;
      Object.assign(stream, { attempt: progress.attempt, shown: 0, text: '', gap: false });
    }
    const fresh = progress.chars - stream.shown;
    if (fresh <= 0) return;
    const skipped = Math.max(0, fresh - progress.tail.length);
    let text = progress.tail.slice(progress.tail.length - (fresh - skipped));
    // After a gap the tail may start inside a surrogate pair; never print half a character.
    if (skipped > 0 && /^[\uDC00-\uDFFF]/.test(text)) text = text.slice(1);
    this.emit({ kind: 'text_delta', turn: this.turn, text, restart: stream.restart, skipped });
    stream.restart = false;
    stream.shown = progress.chars;
    stream.gap = stream.gap || skipped > 0;
    if (!stream.gap) stream.text += text;
  }

  /** How many leading characters of a finished reply's `text` went out as deltas already. */
  private streamedPart(text: string): number {
    const stream = this.stream;
    if (!stream || stream.shown === 0) return 0;
    if (stream.gap) return Math.min(stream.shown, text.length);
    const known = unclipped(text);
    const k = Math.min(stream.text.length, known.length);
    return stream.text.slice(0, k) === known.slice(0, k) ? Math.min(stream.text.length, text.length) : 0;
  }
}

/** An event's text without the clip mark the workflow adds past 2,000 characters. */
function unclipped(text: string): string {
  return text.endsWith(ELLIPSIS) ? text.slice(0, -ELLIPSIS.length) : text;
}
