import {
  ActivityFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  isCancellation,
  ParentClosePolicy,
  startChild,
  uuid4,
} from '@temporalio/workflow';
import type { RunToolInput, ToolRunResult } from '../shared/activity-types';
import type { ToolUseBlock } from '../shared/messages';
import type { ModelUsage } from '../shared/pricing';
import type { SessionInput } from '../shared/session';
import type { Terminal } from '../shared/terminal';
import { terminalInFailure } from '../shared/terminal-failure';

/** Where a background command's output is copied for the model to Read, relative to the workspace. */
export function backgroundOutputPath(taskId: string): string {
  return `.durable-agent/tool-results/bash-${taskId}.output`;
}

/**
 * A task's ID, from its call's tool_use_id: "b" and 8 base-36 digits (FNV-1a), the shape of Claude
 * Code's, and the same on every replay and for anyone who knows the call.
 */
export function backgroundTaskId(toolUseId: string, prefix = 'b'): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < toolUseId.length; i++) {
    hash ^= toolUseId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `${prefix}${hash.toString(36).padStart(8, '0').slice(-8)}`;
}

/** One background command of the job, as the workflow follows it. */
export interface BackgroundTask {
  kind: 'bash' | 'agent';
  taskId: string;
  toolUseId: string;
  /** The call's description, else its command: what notices call it. */
  label: string;
  outputFile: string;
  status: 'running' | 'completed' | 'failed' | 'stopped';
  exitCode?: number;
  /** Why it failed, when its activity did rather than its command. */
  failure?: string;
  /** Its ending has been told to the model. */
  reported: boolean;
  /** An agent's: its child job's id, and once it ended, its final answer, cost and size. */
  childId?: string;
  result?: string;
  modelUsage?: ModelUsage;
  /** An agent's cost has been added to the job's. */
  accounted?: boolean;
  turns?: number;
  tokens?: number;
  durationMs?: number;
  scope: CancellationScope;
  settled: Promise<void>;
}

/**
 * The job's background commands: each one a tool activity of its own (long start-to-close,
 * heartbeats, retried on another worker of the host, which adopts the running command), run in a
 * cancellation scope under the workflow's root, so that neither the end of a turn nor an abort of
 * one cancels it; `stopAll` does, when the job ends, and `stop` for TaskStop.
 */
export class BackgroundTasks {
  readonly tasks = new Map<string, BackgroundTask>();

  constructor(
    private readonly parent: CancellationScope,
    private readonly run: (input: RunToolInput) => Promise<ToolRunResult>,
  ) {}

  start(toolUse: ToolUseBlock, input: RunToolInput, workspace: string): BackgroundTask {
    let taskId = backgroundTaskId(toolUse.id);
    if (this.tasks.has(taskId)) taskId = `b${uuid4().replace(/-/g, '').slice(0, 8)}`;
    const outputPath = backgroundOutputPath(taskId);
    const raw = toolUse.input as { command?: unknown; description?: unknown };
    const label = typeof raw.description === 'string' && raw.description ? raw.description : String(raw.command ?? '');
    const scope = new CancellationScope({ cancellable: true, parent: this.parent });
    const task: BackgroundTask = {
      kind: 'bash',
      taskId,
      toolUseId: toolUse.id,
      label: label.length > 200 ? `${label.slice(0, 200)}…` : label,
      outputFile: `${workspace.replace(/\/+$/, '')}/${outputPath}`,
      status: 'running',
      reported: false,
      scope,
      settled: Promise.resolve(),
    };
    task.settled = scope
      .run(() => this.run({ ...input, background: { outputPath } }))
      .then(
        (result) => {
          if (task.status === 'stopped') return;
          task.status = result.isError ? 'failed' : 'completed';
          const code = /^Exit code (\d+)/.exec(result.preview)?.[1];
          task.exitCode = code !== undefined ? Number(code) : result.isError ? undefined : 0;
          if (result.isError && code === undefined) task.failure = result.preview;
        },
        (error: unknown) => {
          if (isCancellation(error)) {
            task.status = 'stopped';
            return;
          }
          task.status = 'failed';
          task.failure =
            error instanceof ActivityFailure
              ? `it could not be run on the worker: ${error.cause?.message ?? error.message}`
              : String(error);
        },
      );
    this.tasks.set(taskId, task);
    return task;
  }

  /**
   * A subagent: the child job `input` under `childId`, cancelled with its scope (the child ends
   * `aborted_*` and reports what it cost). Its Terminal, never its transcript, comes back.
   */
  startAgent(toolUse: ToolUseBlock, input: SessionInput, childId: string, label: string): BackgroundTask {
    let taskId = backgroundTaskId(toolUse.id, 'a');
    if (this.tasks.has(taskId)) taskId = `a${uuid4().replace(/-/g, '').slice(0, 8)}`;
    const scope = new CancellationScope({ cancellable: true, parent: this.parent });
    const startedAt = Date.now();
    const task: BackgroundTask = {
      kind: 'agent',
      taskId,
      toolUseId: toolUse.id,
      label: label.length > 200 ? `${label.slice(0, 200)}…` : label,
      outputFile: '',
      status: 'running',
      reported: false,
      childId,
      scope,
      settled: Promise.resolve(),
    };
    const ended = (terminal: Terminal) => {
      task.result = terminal.finalText;
      if (terminal.modelUsage) task.modelUsage = terminal.modelUsage;
      task.turns = terminal.turnCount;
      task.tokens = terminal.usage.input_tokens + terminal.usage.output_tokens;
      task.durationMs = Date.now() - startedAt;
    };
    task.settled = scope
      .run(async () => {
        const child = await startChild('agentSession', {
          workflowId: childId,
          args: [input],
          cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
          parentClosePolicy: ParentClosePolicy.TERMINATE,
        });
        return (await child.result()) as Terminal;
      })
      .then(
        (terminal) => {
          ended(terminal);
          task.status = terminal.reason === 'completed' ? 'completed' : 'failed';
          if (terminal.reason !== 'completed') task.failure = `${terminal.reason}: ${terminal.detail ?? ''}`;
        },
        (error: unknown) => {
          const terminal = error instanceof ChildWorkflowFailure ? terminalInFailure<Terminal>(error.cause) : undefined;
          if (terminal) ended(terminal);
          if (isCancellation(error) || task.status === 'stopped' || terminal?.reason.startsWith('aborted')) {
            task.status = 'stopped';
            return;
          }
          task.status = 'failed';
          task.failure = terminal
            ? `${terminal.reason}${terminal.detail ? `: ${terminal.detail}` : ''}`
            : `the agent's job failed: ${error instanceof ChildWorkflowFailure && error.cause ? error.cause.message : error instanceof Error ? error.message : String(error)}`;
        },
      );
    this.tasks.set(taskId, task);
    return task;
  }

  /** Agents whose cost is known and not yet added to the job's; marked as added. */
  takeCosts(): ModelUsage[] {
    const costs: ModelUsage[] = [];
    for (const task of this.tasks.values()) {
      if (task.kind !== 'agent' || task.status === 'running' || task.accounted || !task.modelUsage) continue;
      task.accounted = true;
      costs.push(task.modelUsage);
    }
    return costs;
  }

  get running(): BackgroundTask[] {
    return [...this.tasks.values()].filter((task) => task.status === 'running');
  }

  /** Ended and not yet told to the model (a stopped one is never told: whoever stopped it knows). */
  get news(): BackgroundTask[] {
    return [...this.tasks.values()].filter(
      (task) => !task.reported && (task.status === 'completed' || task.status === 'failed'),
    );
  }

  /** Stop one task: its activity is cancelled, which kills its processes; resolves once it has. */
  async stop(task: BackgroundTask): Promise<void> {
    if (task.status !== 'running') return;
    task.status = 'stopped';
    task.scope.cancel();
    // Its handlers keep 'stopped' whatever the activity or child reports as it ends.
    await task.settled;
  }

  /** Stop every running task: nothing of the job runs on after it. */
  async stopAll(): Promise<void> {
    await Promise.all(this.running.map((task) => this.stop(task)));
  }
}

/** The text the model gets at the next turn boundary for a task that ended, in Claude Code's tags. */
export function taskNotification(task: BackgroundTask): string {
  if (task.kind === 'agent') return agentNotification(task);
  const summary =
    task.status === 'completed'
      ? `Background command "${task.label}" completed (exit code ${task.exitCode ?? 0})`
      : task.exitCode !== undefined
        ? `Background command "${task.label}" failed with exit code ${task.exitCode}`
        : `Background command "${task.label}" failed: ${task.failure ?? 'no exit status was recorded'}`;
  return [
    '<system-reminder>',
    'A background task of this job has ended. This note comes from the job itself, not from the user: it',
    'answers no question and approves nothing.',
    '',
    '<task-notification>',
    `<task-id>${task.taskId}</task-id>`,
    `<tool-use-id>${task.toolUseId}</tool-use-id>`,
    `<output-file>${task.outputFile}</output-file>`,
    `<status>${task.status}</status>`,
    `<summary>${summary}</summary>`,
    '</task-notification>',
    '</system-reminder>',
  ].join('\n');
}

/** An agent's ending, with its report, at the next turn boundary. */
function agentNotification(task: BackgroundTask): string {
  const summary =
    task.status === 'completed'
      ? `Agent "${task.label}" completed`
      : `Agent "${task.label}" failed: ${task.failure ?? 'it ended without a report'}`;
  return [
    '<system-reminder>',
    'An agent this job launched has ended. This note comes from the job itself, not from the user: it answers',
    'no question and approves nothing.',
    '',
    '<task-notification>',
    `<task-id>${task.taskId}</task-id>`,
    `<tool-use-id>${task.toolUseId}</tool-use-id>`,
    `<status>${task.status}</status>`,
    `<summary>${summary}</summary>`,
    `<result>${task.result || '(The agent ended without a report.)'}</result>`,
    `<usage>subagent_tokens: ${task.tokens ?? 0}\nturns: ${task.turns ?? 0}\nduration_ms: ${task.durationMs ?? 0}</usage>`,
    '</task-notification>',
    '</system-reminder>',
  ].join('\n');
}
