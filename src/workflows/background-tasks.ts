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
import type { SubagentStats, Terminal } from '../shared/terminal';
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
  /** An agent's type, and whether its call returned at once (else it waited for the report). */
  subagentType?: string;
  background?: boolean;
  /** What the call asked for: `run_in_background` true, false, or left out. */
  requested?: 'background' | 'foreground' | 'unset';
  /** Who stopped it: the job as it ended, or a TaskStop call. */
  stoppedBy?: 'job' | 'task_stop';
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
  /** Agent calls refused, by why (Claude Code's `subagent_stats.refused`). */
  readonly refused = { depth_limit: 0, concurrency_limit: 0, budget: 0 };

  constructor(
    private readonly parent: CancellationScope,
    private readonly run: (input: RunToolInput) => Promise<ToolRunResult>,
    /** What the job's earlier runs counted, before it continued as new. */
    private readonly earlier?: SubagentStats,
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
    const asked = (toolUse.input as { run_in_background?: unknown }).run_in_background;
    const requested = asked === false ? 'foreground' : asked === true ? 'background' : 'unset';
    const task: BackgroundTask = {
      kind: 'agent',
      taskId,
      toolUseId: toolUse.id,
      label: label.length > 200 ? `${label.slice(0, 200)}…` : label,
      outputFile: '',
      status: 'running',
      reported: false,
      childId,
      subagentType: agentType(toolUse.input),
      background: requested !== 'foreground',
      requested,
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
  async stop(task: BackgroundTask, by: 'job' | 'task_stop'): Promise<void> {
    if (task.status !== 'running') return;
    task.status = 'stopped';
    task.stoppedBy = by;
    task.scope.cancel();
    // Its handlers keep 'stopped' whatever the activity or child reports as it ends.
    await task.settled;
  }

  /** Stop every running task: nothing of the job runs on after it. */
  async stopAll(): Promise<void> {
    await Promise.all(this.running.map((task) => this.stop(task, 'job')));
  }

  /** Claude Code's `subagent_stats`: the job's agents, how they were asked for, and how they ended. */
  subagentStats(): SubagentStats {
    const agents = [...this.tasks.values()].filter((task) => task.kind === 'agent');
    const count = (test: (task: BackgroundTask) => boolean) => agents.filter(test).length;
    const byType: Record<string, number> = {};
    for (const task of agents)
      byType[task.subagentType ?? 'general-purpose'] = (byType[task.subagentType ?? 'general-purpose'] ?? 0) + 1;
    return addStats(this.earlier, {
      spawned: agents.length,
      requested: {
        background: count((task) => task.requested === 'background'),
        foreground: count((task) => task.requested === 'foreground'),
        unset: count((task) => task.requested === 'unset'),
      },
      started_in_background: count((task) => task.background === true),
      // Agents get no Agent tool: none spawns another.
      max_depth: agents.length > 0 ? 1 : 0,
      spawned_by_subagents: 0,
      completed: count((task) => task.status === 'completed'),
      failed: count((task) => task.status === 'failed'),
      killed: {
        parent: count((task) => task.stoppedBy === 'job'),
        user: count((task) => task.stoppedBy === 'task_stop'),
        system: 0,
      },
      refused: { ...this.refused },
      by_type: byType,
    });
  }
}

/** A background command's ending in one line, in Claude Code's words. */
export function commandSummary(task: Pick<BackgroundTask, 'label' | 'status' | 'exitCode' | 'failure'>): string {
  if (task.status === 'running') return `Background command "${task.label}" is running`;
  if (task.status === 'stopped') return `Background command "${task.label}" was stopped`;
  return task.status === 'completed'
    ? `Background command "${task.label}" completed (exit code ${task.exitCode ?? 0})`
    : task.exitCode !== undefined
      ? `Background command "${task.label}" failed with exit code ${task.exitCode}`
      : `Background command "${task.label}" failed: ${task.failure ?? 'no exit status was recorded'}`;
}

/** The text the model gets at the next turn boundary for a task that ended, in Claude Code's tags. */
export function taskNotification(task: BackgroundTask): string {
  if (task.kind === 'agent') return agentNotification(task);
  const summary = commandSummary(task);
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

/** The Agent call's `subagent_type`, or the type a call without one gets. */
function agentType(input: unknown): string {
  const type = (input as { subagent_type?: unknown }).subagent_type;
  return typeof type === 'string' && type.trim() ? type.trim() : 'general-purpose';
}

/** `b` added to `a`, field by field (`a` absent: `b`). */
function addStats(a: SubagentStats | undefined, b: SubagentStats): SubagentStats {
  if (!a) return b;
  const byType = { ...a.by_type };
  for (const [type, n] of Object.entries(b.by_type)) byType[type] = (byType[type] ?? 0) + n;
  return {
    spawned: a.spawned + b.spawned,
    requested: {
      background: a.requested.background + b.requested.background,
      foreground: a.requested.foreground + b.requested.foreground,
      unset: a.requested.unset + b.requested.unset,
    },
    started_in_background: a.started_in_background + b.started_in_background,
    max_depth: Math.max(a.max_depth, b.max_depth),
    spawned_by_subagents: a.spawned_by_subagents + b.spawned_by_subagents,
    completed: a.completed + b.completed,
    failed: a.failed + b.failed,
    killed: {
      parent: a.killed.parent + b.killed.parent,
      user: a.killed.user + b.killed.user,
      system: a.killed.system + b.killed.system,
    },
    refused: {
      depth_limit: a.refused.depth_limit + b.refused.depth_limit,
      concurrency_limit: a.refused.concurrency_limit + b.refused.concurrency_limit,
      budget: a.refused.budget + b.refused.budget,
    },
    by_type: byType,
  };
}
