import { CancellationScope, patched, setHandler } from '@temporalio/workflow';
import type { Terminal } from '../shared/terminal';
import { PERMISSION_MODES } from '../shared/permissions';
import type { PermissionMode } from '../shared/permissions';
import type { PermissionSummary } from '../shared/settings-trust';
import { describeJobSandbox } from '../shared/sandbox';
import type { JobSandbox } from '../shared/sandbox';
import type { ContextReport, SandboxReport } from '../shared/terminal';
import type {
  ApprovalAnswer,
  HooksReport,
  NewSessionEvent,
  PendingApproval,
  PendingHookCallback,
  ResumeState,
  SessionEvent,
  SessionPhase,
  SessionSnapshot,
  State,
} from '../shared/session';
import {
  abortPayload,
  approvalPayload,
  batchBudgetPayload,
  hookCallbackAnswerPayload,
  INBOX_INLINE_CHARS,
  INBOX_MESSAGES,
  INBOX_REF_CHARS,
  INLINE_MESSAGE_CHARS,
  maxTurnsPayload,
  modelNamePayload,
  parsePayload,
  permissionModePayload,
  queuedMessagePayload,
  sinceSeqPayload,
  userMessagePayload,
} from '../shared/signal-payloads';
import type { HookCallbackAnswer, QueuedMessage } from '../shared/signal-payloads';
import type { ContentRef } from '../shared/transcript';
import {
  abortSignal,
  approvalSignal,
  batchBudgetSpentSignal,
  closeInputSignal,
  hookCallbackAnswerSignal,
  setMaxTurnsSignal,
  setModelSignal,
  setPermissionModeSignal,
  snapshotQuery,
  storeRootsQuery,
  userMessageSignal,
  wakeSignal,
} from './definitions';
import { showProgress } from './progress-details';
import { commandSummary, type BackgroundTasks } from './background-tasks';
import { clock } from '../shared/tools/schedule-wakeup';
import { humanSchedule, nextDue, when } from '../shared/tools/cron';
import { storeRoots } from './store-roots';

/** How many progress events a job keeps in memory for `status`; older ones are dropped. */
const EVENT_LOG_LIMIT = 500;
/** How much of an assistant reply or tool result an event keeps. */
const EVENT_PREVIEW_CHARS = 2_000;
/**
 * Jobs started before the inbox was bounded queued every message, whatever its size: their
 * histories replay that way.
 */
export const INBOX_BOUNDS_PATCH = 'inbox-bounds';

/**
 * Everything that reaches a running job from outside (signals, queries) and the progress log the
 * CLI renders. The loop reads it at turn boundaries; the handlers only record.
 */
export class SessionControl {
  maxTurns: number | undefined;
  abortReason: string | undefined;
  /** Set once the job's batch has spent its budget: what it spent. */
  batchBudgetStop: string | undefined;
  /** `wake` came while this wake-up (the ScheduleWakeup call's id) was pending: it fires now. */
  wakeRequestedFor: string | undefined;
  readonly inbox: QueuedMessage[];
  private currentPhase: SessionPhase = 'starting';
  readonly runningTools = new Map<string, string>();
  /**
   * Store references in the inputs of tool calls not finished yet (large fields the model call
   * stored, e.g. a Write parked for approval): `prune` must keep them until the call has run.
   */
  readonly inFlightInputRefs = new Set<string>();
  /** Calls waiting for a person, by tool_use_id, with the answer once it came. */
  readonly approvals = new Map<string, { request: PendingApproval; answer?: ApprovalAnswer }>();
  permissionMode: PermissionMode | undefined;
  permissionSummary: PermissionSummary | undefined;
  /** The job's sandbox policy; undefined for jobs started before it existed. */
  sandbox: JobSandbox | undefined;
  terminal: Terminal | undefined;
  /** The job's hooks as `status` shows them. */
  hooksReport: HooksReport | undefined;
  /** The context as `status` shows it; set by the loop when the context pipeline is on. */
  describeContext: ((state: State) => ContextReport) | undefined;
  /** Where the workspace's work goes (`agentSession`'s route); shown so `status` can tell a parked job. */
  route: { hostQueue?: string } | undefined;
  /** Cost so far, budget and model usage as `status` shows them; set by the loop when cost is counted. */
  describeCost: ((state: State) => Pick<SessionSnapshot, 'totalCostUsd' | 'modelUsage' | 'maxBudgetUsd'>) | undefined;
  private events: SessionEvent[];
  /**
   * The State the loop is working on, when it is newer than the loop's own `state` variable (which
   * only changes between turns): after the model replied and while its tools run, or at the end.
   */
  private turnState: State | undefined;
  private nextSeq: number;
  /** Cancelled by `abort`; the loop runs each turn's model call and tools inside it. */
  private turnScope: CancellationScope | undefined;
  /** The workflow's root scope: plain Temporal cancellation of the job cancels it. */
  readonly rootScope = CancellationScope.current();
  /** The Agent SDK app's hook callbacks the job waits on, by id, with the answer once it came. */
  readonly hookCallbacks = new Map<string, { request: PendingHookCallback; answer?: HookCallbackAnswer }>();
  /** `setPermissionMode` and `setModel`: what the next turn changes to. */
  requestedMode: PermissionMode | undefined;
  requestedModel: string | undefined;
  /** An open-input job was told that no further user message comes (`closeInput`). */
  inputClosed = false;
  /** An open-input job's latest answered message and its result, for the snapshot. */
  turnResult: { query: number; terminal: Terminal } | undefined;
  /** The job's background commands (Bash `run_in_background`); set by the loop. */
  background: BackgroundTasks | undefined;
  /** The job's stored system prompt, for `storeRoots`; carried over by continue-as-new, else set at start. */
  private systemPromptRef: ContentRef | undefined;

  /** What the job is doing; every change is shown as the workflow's current details in the UI. */
  get phase(): SessionPhase {
    return this.currentPhase;
  }

  set phase(next: SessionPhase) {
    this.currentPhase = next;
    const state = this.turnState ?? this.currentState();
    showProgress({
      phase: next,
      turn: state.turnCount,
      maxTurns: this.maxTurns,
      model: state.model,
      waitingFor: [...this.approvals.values()].filter((e) => e.answer === undefined).map((e) => e.request),
      ...(this.terminal ? { outcome: this.terminal.reason } : {}),
      ...(next === 'sleeping' && state.wakeup && !(state.wakeup.atMs > (nextDue(state.crons)?.nextFireAtMs ?? Infinity))
        ? { sleepingUntil: `${clock(state.wakeup.atMs)}: ${state.wakeup.reason}` }
        : next === 'sleeping' && state.crons?.length
          ? { sleepingUntil: `${when(nextDue(state.crons)?.nextFireAtMs ?? 0)}: a scheduled prompt` }
          : {}),
    });
  }

  constructor(
    maxTurns: number | undefined,
    resume: ResumeState | undefined,
    private readonly currentState: () => State,
  ) {
    this.maxTurns = resume ? resume.maxTurns : maxTurns;
    this.inbox = resume ? [...resume.inbox] : [];
    this.events = resume ? [...resume.events] : [];
    this.nextSeq = resume ? resume.nextSeq : 1;
    this.permissionSummary = resume?.permissionSummary;
    this.sandbox = resume?.sandbox;
    this.hooksReport = resume?.hooksReport;
    this.systemPromptRef = resume?.systemPromptRef;
    this.inputClosed = resume?.inputClosed === true;
    this.turnResult = resume?.turnResult;
  }

  /** The system prompt the job's model calls use, once it is built. */
  setSystemPromptRef(ref: ContentRef): void {
    this.systemPromptRef = ref;
  }

  /** How Bash is confined in this job, for `status` and the Terminal. */
  sandboxReport(state: State): SandboxReport | undefined {
    if (!this.sandbox) return undefined;
    return {
      enabled: this.sandbox.enabled,
      source: this.sandbox.source,
      description: describeJobSandbox(this.sandbox),
      unsandboxedCommands: state.unsandboxedCommands ?? 0,
    };
  }

  install(): void {
    // Any client can signal a job, so every payload is checked here: a handler that threw would
    // fail the workflow task on every attempt and wedge the job. A bad payload becomes a notice.
    setHandler(abortSignal, (...args: unknown[]) => {
      const parsed = parsePayload('abort', abortPayload, args, 'no argument or a reason string');
      // Stopping is what the sender wanted even when the reason is garbled; only the reason is dropped.
      if (!parsed.ok)
        this.notice(`abort: the reason sent is not text, so it was dropped; aborting anyway (${parsed.notice})`);
      if (this.abortReason !== undefined) return;
      this.abortReason = (parsed.ok ? parsed.value : undefined) || 'aborted by request';
      this.turnScope?.cancel();
    });
    setHandler(batchBudgetSpentSignal, (...args: unknown[]) => {
      const parsed = parsePayload('batchBudgetSpent', batchBudgetPayload, args, 'no argument or what was spent');
      this.batchBudgetStop ??= (parsed.ok ? parsed.value : undefined) || 'all of it';
    });
    setHandler(setMaxTurnsSignal, (...args: unknown[]) => {
      const parsed = parsePayload('setMaxTurns', maxTurnsPayload, args, 'a positive whole number, e.g. 20');
      if (!parsed.ok) return this.notice(parsed.notice);
      this.maxTurns = parsed.value;
      this.notice(`maxTurns set to ${parsed.value}`);
    });
    const boundedInbox = patched(INBOX_BOUNDS_PATCH);
    setHandler(userMessageSignal, (...args: unknown[]) => {
      if (!boundedInbox) {
        const parsed = parsePayload('userMessage', userMessagePayload, args, 'the message as a JSON string');
        if (!parsed.ok) return this.notice(parsed.notice);
        this.inbox.push(parsed.value);
        return;
      }
      const parsed = parsePayload('userMessage', queuedMessagePayload, args, 'the message as a JSON string');
      if (!parsed.ok) return this.notice(parsed.notice);
      const refusal = this.inboxRefusal(parsed.value);
      if (refusal) return this.notice(`userMessage signal refused: ${describeMessage(parsed.value)}: ${refusal}`);
      this.inbox.push(parsed.value);
    });
    setHandler(approvalSignal, (...args: unknown[]) => {
      const parsed = parsePayload(
        'approval',
        approvalPayload,
        args,
        '{"decision":"allow"|"deny","toolUseId"?:string,"always"?:boolean,"reason"?:string}',
      );
      if (!parsed.ok) return this.notice(parsed.notice);
      this.answerApproval(parsed.value);
    });
    setHandler(wakeSignal, (...args: unknown[]) => {
      // Waking is what the sender wanted whatever came with it: anything sent along is only noted.
      if (args.length > 0 && args.some((arg) => arg !== null && arg !== undefined)) {
        this.notice('wake: the signal takes no argument; what came with it was ignored');
      }
      // While the job sleeps, the turn's State (with what its calls scheduled) is the current one.
      const state = this.turnState ?? this.currentState();
      const wakeup = state.wakeup;
      // Without a wake-up, the scheduled prompt due first fires now.
      const scheduled = wakeup ? undefined : nextDue(state.crons);
      if (!wakeup && !scheduled)
        return this.notice('wake: no wake-up is pending, so there is nothing to wake; nothing changed');
      this.wakeRequestedFor = wakeup ? wakeup.toolUseId : scheduled?.id;
    });
    setHandler(hookCallbackAnswerSignal, (...args: unknown[]) => {
      const parsed = parsePayload(
        'hookCallbackAnswer',
        hookCallbackAnswerPayload,
        args,
        '{"id":string,"output"?:object,"error"?:string,"timedOut"?:boolean}',
      );
      if (!parsed.ok) return this.notice(parsed.notice);
      const entry = this.hookCallbacks.get(parsed.value.id);
      if (!entry || entry.answer !== undefined)
        return this.notice(`hookCallbackAnswer: no hook callback ${parsed.value.id} is waiting for an answer; ignored`);
      entry.answer = parsed.value;
    });
    setHandler(setPermissionModeSignal, (...args: unknown[]) => {
      const parsed = parsePayload(
        'setPermissionMode',
        permissionModePayload,
        args,
        `one of ${PERMISSION_MODES.join(', ')}`,
      );
      if (!parsed.ok) return this.notice(parsed.notice);
      this.requestedMode = parsed.value;
      this.notice(`permission mode ${parsed.value} requested: it applies from the next turn`);
    });
    setHandler(setModelSignal, (...args: unknown[]) => {
      const parsed = parsePayload('setModel', modelNamePayload, args, 'a model name, e.g. "claude-sonnet-4-5"');
      if (!parsed.ok) return this.notice(parsed.notice);
      this.requestedModel = parsed.value;
      this.notice(`model ${parsed.value} requested: it applies from the next turn`);
    });
    setHandler(closeInputSignal, (...args: unknown[]) => {
      if (args.length > 0 && args.some((arg) => arg !== null && arg !== undefined)) {
        this.notice('closeInput: the signal takes no argument; what came with it was ignored');
      }
      this.inputClosed = true;
    });
    setHandler(snapshotQuery, (...args: unknown[]) => {
      const parsed = parsePayload('snapshot', sinceSeqPayload, args, 'no argument or a sequence number');
      return this.snapshot(parsed.ok ? (parsed.value ?? 0) : 0);
    });
    // Read-only, for `durable-agent prune`: what this job still needs from the content store.
    setHandler(storeRootsQuery, () => [
      ...storeRoots(this.currentState(), this.systemPromptRef, this.turnState),
      ...this.inFlightInputRefs,
      ...this.inbox.flatMap((message) => (typeof message === 'string' ? [] : [message.$contentRef])),
    ]);
  }

  private notice(text: string): void {
    this.record({ turn: this.currentState().turnCount, kind: 'notice', text });
  }

  turnCount(): number {
    return this.currentState().turnCount;
  }

  get abortRequested(): boolean {
    return this.abortReason !== undefined || this.rootScope.consideredCancelled;
  }

  /** Why the job is stopping, for the Terminal's detail. */
  get abortDetail(): string {
    return this.abortReason ?? 'workflow cancelled';
  }

  /** Runs `fn` in a scope that `abort` cancels. */
  async runAbortable<T>(fn: () => Promise<T>): Promise<T> {
    const scope = new CancellationScope();
    this.turnScope = scope;
    if (this.abortRequested) scope.cancel();
    try {
      return await scope.run(fn);
    } finally {
      this.turnScope = undefined;
    }
  }

  /** Show `state` in snapshots until the next call; `undefined` goes back to the loop's State. */
  showTurnState(state: State | undefined): void {
    this.turnState = state;
  }

  /**
   * Record an answer. Without a tool_use_id it applies to the only pending call; an answer that
   * matches nothing is noted and dropped (the CLI checks before sending, another client may not).
   */
  private answerApproval(answer: ApprovalAnswer): void {
    const waiting = [...this.approvals.values()].filter((entry) => entry.answer === undefined);
    const target = answer.toolUseId
      ? waiting.find((entry) => entry.request.toolUseId === answer.toolUseId)
      : waiting.length === 1
        ? waiting[0]
        : undefined;
    if (!target) {
      this.notice(
        `approval answer ignored: ${answer.toolUseId ? `no pending call ${answer.toolUseId}` : `${waiting.length} calls pending, name one`}`,
      );
      return;
    }
    target.answer = answer;
  }

  /**
   * Why a message cannot join the inbox, if it cannot: everything queued travels in the next model
   * call's input, which Temporal bounds (2 MB), so a flood would fail that call's scheduling on
   * every attempt and wedge the job.
   */
  private inboxRefusal(message: QueuedMessage): string | undefined {
    const sendFile = 'send it with `durable-agent send <id> --file <path>`, which keeps it by reference';
    if (typeof message === 'string' && message.length > INLINE_MESSAGE_CHARS) {
      return `a message sent inline may be at most ${count(INLINE_MESSAGE_CHARS)} characters; ${sendFile}`;
    }
    const again = "send it again once the job has taken the queue (at its next turn's model call)";
    if (this.inbox.length >= INBOX_MESSAGES) {
      return `${count(this.inbox.length)} messages are already queued, the most a job holds; ${again}`;
    }
    const inline = this.inbox.reduce((sum, each) => sum + (typeof each === 'string' ? each.length : 0), 0);
    if (typeof message === 'string' && inline + message.length > INBOX_INLINE_CHARS) {
      return (
        `the queued messages already hold ${count(inline)} of the ${count(INBOX_INLINE_CHARS)} characters ` +
        `a job queues inline; ${again}, or ${sendFile}`
      );
    }
    const byRef = this.inbox.reduce((sum, each) => sum + (typeof each === 'string' ? 0 : each.chars), 0);
    if (typeof message !== 'string' && byRef + message.chars > INBOX_REF_CHARS) {
      return (
        `the queued messages by reference already hold ${count(byRef)} of the ${count(INBOX_REF_CHARS)} ` +
        `characters a job queues; ${again}`
      );
    }
    return undefined;
  }

  drainInbox(): QueuedMessage[] {
    return this.inbox.splice(0, this.inbox.length);
  }

  record(event: NewSessionEvent): void {
    const clipped = clipEvent(event);
    this.events.push({ ...clipped, seq: this.nextSeq++ } as SessionEvent);
    if (this.events.length > EVENT_LOG_LIMIT) this.events.splice(0, this.events.length - EVENT_LOG_LIMIT);
  }

  /** What continue-as-new carries over besides the State itself. */
  carryOver(): Pick<
    ResumeState,
    'maxTurns' | 'inbox' | 'events' | 'nextSeq' | 'permissionSummary' | 'hooksReport' | 'inputClosed' | 'turnResult'
  > {
    return {
      ...(this.inputClosed ? { inputClosed: true as const } : {}),
      ...(this.turnResult ? { turnResult: this.turnResult } : {}),
      maxTurns: this.maxTurns,
      inbox: [...this.inbox],
      events: this.events.slice(-100),
      nextSeq: this.nextSeq,
      ...(this.permissionSummary ? { permissionSummary: this.permissionSummary } : {}),
      ...(this.hooksReport ? { hooksReport: this.hooksReport } : {}),
    };
  }

  private snapshot(sinceSeq: number): SessionSnapshot {
    const state = this.turnState ?? this.currentState();
    return {
      phase: this.phase,
      turnCount: state.turnCount,
      maxTurns: this.maxTurns,
      model: state.model,
      lastAssistantText: state.lastAssistantText,
      runningTools: [...this.runningTools].map(([toolUseId, name]) => ({ toolUseId, name })),
      pendingApprovals: [...this.approvals.values()].filter((e) => e.answer === undefined).map((e) => e.request),
      todos: state.todos,
      permissionMode: this.permissionMode,
      ...(this.permissionSummary ? { permissions: this.permissionSummary } : {}),
      ...(this.sandbox ? { sandbox: this.sandboxReport(state) } : {}),
      ...(this.describeContext ? { context: this.describeContext(state) } : {}),
      ...(this.hooksReport ? { hooks: this.hooksReport } : {}),
      ...(state.transitionCounts ? { transitions: state.transitionCounts } : {}),
      usage: state.usage,
      ...(this.describeCost ? costFields(this.describeCost(state)) : {}),
      queuedUserMessages: this.inbox.length,
      abortRequested: this.abortRequested,
      ...(this.route?.hostQueue ? { hostQueue: this.route.hostQueue } : {}),
      ...(state.wakeup
        ? {
            wakeup: {
              at: new Date(state.wakeup.atMs).toISOString(),
              reason: state.wakeup.reason,
              prompt: clip(state.wakeup.prompt),
            },
          }
        : {}),
      ...(state.crons?.length
        ? {
            crons: state.crons.map((cron) => ({
              id: cron.id,
              cron: cron.cron,
              schedule: humanSchedule(cron.cron),
              recurring: cron.recurring,
              nextAt: new Date(cron.nextFireAtMs).toISOString(),
              prompt: clip(cron.prompt),
            })),
          }
        : {}),
      ...(this.background?.tasks.size
        ? {
            backgroundTasks: [...this.background.tasks.values()].map((task) => ({
              taskId: task.taskId,
              toolUseId: task.toolUseId,
              label: task.label,
              status: task.status,
              outputFile: task.outputFile,
              ...(task.exitCode !== undefined ? { exitCode: task.exitCode } : {}),
              ...(task.kind === 'bash' ? { summary: commandSummary(task) } : {}),
              ...(task.childId !== undefined ? { agentJobId: task.childId } : {}),
              ...(task.kind === 'agent'
                ? {
                    agent: {
                      type: task.subagentType ?? 'general-purpose',
                      background: task.background ?? true,
                      ...(task.result !== undefined ? { result: clip(task.result) } : {}),
                      ...(task.turns !== undefined ? { turns: task.turns } : {}),
                      ...(task.tokens !== undefined ? { tokens: task.tokens } : {}),
                      ...(task.durationMs !== undefined ? { durationMs: task.durationMs } : {}),
                    },
                  }
                : {}),
            })),
          }
        : {}),
      ...(this.turnResult ? { turnResult: this.turnResult } : {}),
      ...(this.hookCallbacks.size > 0
        ? {
            hookCallbacks: [...this.hookCallbacks.values()]
              .filter((entry) => entry.answer === undefined)
              .map((entry) => entry.request),
          }
        : {}),
      events: this.events.filter((event) => event.seq > sinceSeq),
      terminal: this.terminal,
    };
  }
}

/** Only the cost fields of the snapshot: the rest of the report is the Terminal's. */
function costFields(
  report: Pick<SessionSnapshot, 'totalCostUsd' | 'modelUsage' | 'maxBudgetUsd'>,
): Pick<SessionSnapshot, 'totalCostUsd' | 'modelUsage' | 'maxBudgetUsd'> {
  const { totalCostUsd, modelUsage, maxBudgetUsd } = report;
  return { totalCostUsd, modelUsage, ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}) };
}

/** "1,900,001": counts in notices, grouped the same on every worker (no locale). */
function count(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A queued message in a notice: its start, quoted, and its length. */
export function describeMessage(message: QueuedMessage): string {
  const text = typeof message === 'string' ? message : message.preview;
  const chars = typeof message === 'string' ? message.length : message.chars;
  const start = JSON.stringify(text.slice(0, 60)) + (chars > 60 ? '…' : '');
  return `${start} (${count(chars)} characters${typeof message === 'string' ? '' : ', by reference'})`;
}

function clip(text: string): string {
  return text.length > EVENT_PREVIEW_CHARS ? `${text.slice(0, EVENT_PREVIEW_CHARS)}…` : text;
}

function clipEvent(event: NewSessionEvent): NewSessionEvent {
  switch (event.kind) {
    case 'assistant_text':
    case 'notice':
      return { ...event, text: clip(event.text) };
    case 'tool_call':
      return { ...event, input: clip(event.input) };
    case 'tool_result':
      return { ...event, preview: clip(event.preview) };
  }
}
