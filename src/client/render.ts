import { InvalidArgumentError } from 'commander';
import type { HooksReport, SessionSnapshot } from '../shared/session';
import type { PermissionSummary } from '../shared/settings-trust';
import type { ContextReport, SandboxReport, Terminal, TransitionCounts } from '../shared/terminal';
import { formatUsd, knownCostUsd, unpricedModels } from '../shared/pricing';

/** Where the CLI writes; tests capture it. */
export interface Output {
  write(line: string): void;
  /** Text without a line end (a reply as it streams). An Output without it is given whole lines. */
  writePartial?(text: string): void;
  /** True when a person watches at a terminal: colour and a spinner are welcome. */
  readonly isTTY?: boolean;
}

/** An Output onto a process stream. */
export function streamOutput(stream: NodeJS.WriteStream): Output {
  return {
    write: (line) => stream.write(`${line}\n`),
    writePartial: (text) => stream.write(text),
    get isTTY() {
      return Boolean(stream.isTTY);
    },
  };
}

export const stdoutOutput: Output = streamOutput(process.stdout);

export const clip = (text: string, max: number) => {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
};

export function formatUsage(usage: Terminal['usage']): string {
  return (
    `tokens in ${usage.input_tokens} / out ${usage.output_tokens}` +
    ` (cache read ${usage.cache_read_input_tokens}, cache write ${usage.cache_creation_input_tokens})`
  );
}

/**
 * The job's cost: the total (against its budget, if any), each model's share when there are
 * several, and which models have no price. Undefined for jobs that did not count cost.
 */
export function formatCost(
  report: Pick<Terminal, 'modelUsage' | 'maxBudgetUsd' | 'durationMs' | 'durationApiMs' | 'modelRetries' | 'paidAgain'>,
  indent = '  ',
): string | undefined {
  const usage = report.modelUsage;
  if (!usage) return undefined;
  const known = knownCostUsd(usage);
  const unpriced = unpricedModels(usage);
  const budget = report.maxBudgetUsd !== undefined ? ` of the ${formatUsd(report.maxBudgetUsd)} budget` : '';
  const total =
    unpriced.length === 0
      ? `cost ${formatUsd(known)}${budget}`
      : `cost unknown${known > 0 ? ` (at least ${formatUsd(known)})` : ''}${budget}: no price for ${unpriced.join(', ')}, ` +
        `add ${unpriced.length === 1 ? 'it' : 'them'} to "modelPrices" in settings`;
  const models = Object.entries(usage);
  const perModel =
    models.length > 1
      ? ` · ${models.map(([model, entry]) => `${model} ${entry.costUSD === null ? 'unpriced' : formatUsd(entry.costUSD)}`).join(', ')}`
      : '';
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const time =
    report.durationMs !== undefined
      ? ` · took ${seconds(report.durationMs)}${report.durationApiMs !== undefined ? ` (API ${seconds(report.durationApiMs)})` : ''}`
      : '';
  const retries = report.modelRetries
    ? ` · ${report.modelRetries} model call retr${report.modelRetries === 1 ? 'y' : 'ies'}`
    : '';
  const paid = report.paidAgain;
  const again =
    paid && paid.attempts > 0
      ? ` · paid again for ${paid.attempts} cut-off attempt${paid.attempts === 1 ? '' : 's'}: ` +
        `${(paid.inputTokens + paid.cacheReadInputTokens + paid.cacheCreationInputTokens + paid.outputTokens).toLocaleString('en-US')} tokens` +
        (paid.costUSD === null ? '' : `, ${formatUsd(paid.costUSD)}`)
      : '';
  return `${indent}${total}${perModel}${time}${retries}${again}`;
}

/** One line on how Bash was confined; loud when anything ran unsandboxed. */
export function formatSandbox(report: SandboxReport, indent = '  '): string {
  const ran = report.unsandboxedCommands;
  const warning = ran > 0 ? ` — ${ran} command${ran === 1 ? '' : 's'} ran UNSANDBOXED` : '';
  return `${indent}sandbox: ${report.description}${warning}`;
}

/** The context against the model's window, and what kept it small. */
export function formatContext(report: ContextReport, indent = '  '): string {
  const share = Math.round((report.tokens / report.contextWindow) * 100);
  const source = report.limitsSource === 'default' ? ', window assumed: model not in the table' : '';
  const compactions = `${report.compactions} compaction${report.compactions === 1 ? '' : 's'}`;
  const off = report.autocompactOff ? ` · AUTOCOMPACT OFF: ${report.autocompactOff}` : '';
  return (
    `${indent}context: about ${report.tokens} of ${report.contextWindow} tokens (${share}%${source}) · ` +
    `compacts at ${report.autocompactAt} · ${compactions}${off}`
  );
}

/** The hooks that run, and those that do not (another event, or a workspace file in CI). */
export function formatHooks(report: HooksReport, indent = '  '): string[] {
  const running = Object.entries(report.running).map(([event, n]) => `${event} ${n}`);
  return [
    `${indent}hooks: ${running.length ? running.join(', ') : 'none run'}`,
    ...report.notRun.map((what) => `${indent}  not run: ${what}`),
    ...report.ignored.map((why) => `${indent}  ignored: ${why}`),
  ];
}

/** How often each transition happened, next_turn first. */
export function formatTransitions(counts: TransitionCounts, indent = '  '): string {
  const entries = Object.entries(counts).sort(([a], [b]) =>
    a === 'next_turn' ? -1 : b === 'next_turn' ? 1 : a.localeCompare(b),
  );
  return `${indent}transitions: ${entries.map(([name, n]) => `${name} ${n}`).join(', ')}`;
}

/** The mode in force and each rule with where it came from, one per line. */
export function formatPermissions(summary: PermissionSummary, indent = '  '): string[] {
  const lines = [`${indent}permission mode: ${summary.mode} (from ${summary.modeSource})`];
  for (const origin of summary.rules) lines.push(`${indent}  ${origin.list} ${origin.rule} (from ${origin.source})`);
  for (const dir of summary.additionalDirectories) lines.push(`${indent}  directory ${dir.path} (from ${dir.source})`);
  for (const why of summary.ignored) lines.push(`${indent}  ignored: ${why}`);
  return lines;
}

export function formatTerminal(terminal: Terminal): string {
  const turns = `${terminal.turnCount} turn${terminal.turnCount === 1 ? '' : 's'}`;
  const detail = terminal.detail ? ` — ${terminal.detail}` : '';
  const denials = (terminal.denials ?? [])
    .map((d) => `\n  denied: ${d.toolName} [${d.toolUseId}] — ${d.reason}`)
    .join('');
  const permissions = terminal.permissions ? `\n${formatPermissions(terminal.permissions).join('\n')}` : '';
  const sandbox = terminal.sandbox ? `\n${formatSandbox(terminal.sandbox)}` : '';
  const context = terminal.context ? `\n${formatContext(terminal.context)}` : '';
  const transitions = terminal.transitions ? `\n${formatTransitions(terminal.transitions)}` : '';
  const costLine = formatCost(terminal);
  const cost = costLine ? `\n${costLine}` : '';
  return `Terminal: ${terminal.reason} after ${turns}${detail}\n  ${formatUsage(terminal.usage)} · model ${terminal.model}${cost}${context}${transitions}${sandbox}${permissions}${denials}`;
}

/** A pending wake-up: when it fires, why, with what, and how to fire it now. */
function formatWakeup(
  id: string,
  phase: SessionSnapshot['phase'],
  wakeup: NonNullable<SessionSnapshot['wakeup']>,
): string {
  const at = new Date(wakeup.at);
  const seconds = Math.max(0, Math.round((at.getTime() - Date.now()) / 1000));
  const within = seconds >= 60 ? `${Math.floor(seconds / 60)} min ${seconds % 60} s` : `${seconds} s`;
  return [
    `  ${phase === 'sleeping' ? 'sleeping until' : 'wake-up set for'} ${wakeup.at.slice(0, 19).replace('T', ' ')} UTC (in ${within}): ${clip(wakeup.reason, 200)}`,
    `    then: ${clip(wakeup.prompt, 200)}`,
    `    \`durable-agent wake ${id}\` wakes it now; \`durable-agent send ${id} <text>\` gives it a turn first`,
  ].join('\n');
}

/** How many of a job's notices `status` shows. */
const RECENT_NOTICES = 10;

export function formatSnapshot(id: string, snapshot: SessionSnapshot): string {
  const lines = [
    `job ${id}: ${snapshot.phase}${snapshot.abortRequested && snapshot.phase !== 'finished' ? ' (abort requested)' : ''}`,
    `  turn ${snapshot.turnCount}${snapshot.maxTurns !== undefined ? ` of at most ${snapshot.maxTurns}` : ''} · model ${snapshot.model}`,
    `  ${formatUsage(snapshot.usage)}`,
  ];
  const cost = snapshot.terminal ? undefined : formatCost(snapshot);
  if (cost) lines.push(cost);
  if (snapshot.phase === 'waiting_for_credentials') {
    lines.push(
      '  waiting for a worker with model credentials: start `durable-agent worker` with ANTHROPIC_API_KEY set, ' +
        'or run any durable-agent command from a shell that has it (the embedded worker is restarted with it)',
    );
  }
  if (snapshot.wakeup && !snapshot.terminal) lines.push(formatWakeup(id, snapshot.phase, snapshot.wakeup));
  if (snapshot.crons?.length && !snapshot.terminal) {
    lines.push(
      `  scheduled prompts (CronCreate; the job sleeps between runs${snapshot.wakeup ? '' : `, \`durable-agent wake ${id}\` fires the next now`}):`,
      ...[...snapshot.crons]
        .sort((a, b) => a.nextAt.localeCompare(b.nextAt))
        .map(
          (cron) =>
            `    ${cron.id} ${cron.schedule} (${cron.recurring ? 'recurring' : 'once'}), next ${cron.nextAt.slice(0, 16).replace('T', ' ')} UTC: ${clip(cron.prompt, 160)}`,
        ),
    );
  }
  if (snapshot.backgroundTasks?.length) {
    lines.push(
      '  background commands:',
      ...snapshot.backgroundTasks.map(
        (task) =>
          `    ${task.taskId} ${task.status}${task.exitCode !== undefined && task.status !== 'running' ? ` (exit code ${task.exitCode})` : ''}: ${clip(task.label, 120)}` +
          (task.status === 'running' ? `\n      output: ${task.outputFile}` : ''),
      ),
    );
  }
  if (snapshot.runningTools.length > 0) {
    lines.push(`  running: ${snapshot.runningTools.map((tool) => `${tool.name} (${tool.toolUseId})`).join(', ')}`);
  }
  for (const pending of snapshot.pendingApprovals ?? []) {
    lines.push(
      `  waiting for approval${pending.agent ? ` (agent "${clip(pending.agent.label, 60)}", job ${pending.agent.jobId})` : ''}: ` +
        `${pending.toolName} ${clip(pending.input, 200)} [${pending.toolUseId}] — ${pending.reason}`,
    );
  }
  for (const pending of snapshot.hookCallbacks ?? []) {
    lines.push(
      `  waiting for the Agent SDK app's ${pending.event} hook callback ${pending.callbackId}` +
        `${pending.toolUseId ? ` [${pending.toolUseId}]` : ''}: a query() with resume answers it; abort ends the job`,
    );
  }
  if (snapshot.todos?.length) {
    const marks = { pending: '[ ]', in_progress: '[~]', completed: '[x]' } as const;
    lines.push('  todos:', ...snapshot.todos.map((todo) => `    ${marks[todo.status]} ${todo.content}`));
  }
  if (snapshot.context && !snapshot.terminal) lines.push(formatContext(snapshot.context));
  if (snapshot.transitions && !snapshot.terminal) lines.push(formatTransitions(snapshot.transitions));
  if (snapshot.hooks) lines.push(...formatHooks(snapshot.hooks));
  if (snapshot.sandbox && !snapshot.terminal) lines.push(formatSandbox(snapshot.sandbox));
  if (snapshot.permissions && !snapshot.terminal) lines.push(...formatPermissions(snapshot.permissions));
  else if (snapshot.permissionMode && !snapshot.terminal) lines.push(`  permission mode: ${snapshot.permissionMode}`);
  if (snapshot.queuedUserMessages > 0) lines.push(`  queued user messages: ${snapshot.queuedUserMessages}`);
  if (snapshot.lastAssistantText) lines.push(`  last reply: ${clip(snapshot.lastAssistantText, 300)}`);
  // Notices are how a detached job tells of ignored settings, bad signals and recoveries.
  const notices = snapshot.events.filter((event) => event.kind === 'notice').slice(-RECENT_NOTICES);
  if (notices.length > 0) lines.push('  recent notices:', ...notices.map((event) => `    · ${clip(event.text, 300)}`));
  if (snapshot.terminal) lines.push(`  ${formatTerminal(snapshot.terminal).replace('\n', '\n  ')}`);
  return lines.join('\n');
}

/**
 * `--exit-status`: `simple`, as `claude -p` exits (0 when the job completed, 1 for any other
 * ending), or `detailed`, where CI can tell the endings apart (see {@link exitCodeFor}).
 */
export const EXIT_STATUS_SCHEMES = ['simple', 'detailed'] as const;
export type ExitStatusScheme = (typeof EXIT_STATUS_SCHEMES)[number];

export function parseExitStatusScheme(value: string): ExitStatusScheme {
  if ((EXIT_STATUS_SCHEMES as readonly string[]).includes(value)) return value as ExitStatusScheme;
  throw new InvalidArgumentError(`--exit-status "${value}" is not one of ${EXIT_STATUS_SCHEMES.join(', ')}.`);
}

/** `detailed`: the exit status of a job ended from outside (terminated, timed out, cancelled). */
export const EXIT_ENDED_OUTSIDE = 5;

/**
 * Exit status of `run`, `result` and `tail` for a job's Terminal. `detailed`: 0 completed,
 * 2 max_turns, 3 aborted, 4 budget_exhausted, 1 anything else; `simple`: 0 completed, else 1.
 */
export function exitCodeFor(terminal: Pick<Terminal, 'reason'>, scheme: ExitStatusScheme): number {
  if (terminal.reason === 'completed') return 0;
  if (scheme === 'simple') return 1;
  if (terminal.reason === 'max_turns') return 2;
  if (terminal.reason === 'aborted_streaming' || terminal.reason === 'aborted_tools') return 3;
  if (terminal.reason === 'budget_exhausted') return 4;
  return 1;
}

/** Exit status of a job that ended from outside, with no Terminal. */
export function endedOutsideExitCode(scheme: ExitStatusScheme): number {
  return scheme === 'detailed' ? EXIT_ENDED_OUTSIDE : 1;
}
