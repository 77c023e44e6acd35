import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from 'commander';
import type { ContentStore } from '../activities/store/content-store';
import type { ToolResultBlock, Usage } from '../shared/messages';
import type { ContentRef } from '../shared/transcript';
import type { SessionEvent } from '../shared/session';
import type { SubagentStats, Terminal, TerminalReason } from '../shared/terminal';
import { streamOutput } from './render';
import type { FollowEvent } from './live-events';
import type { Output } from './render';
import type { PaidAgainReport } from '../shared/pricing';

/** Progress and summaries in text mode: stdout is kept for the answer. */
export const stderrOutput: Output = streamOutput(process.stderr);

/** `--output-format`, as `claude -p` spells it. */
export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function parseOutputFormat(value: string): OutputFormat {
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new InvalidArgumentError(`--output-format "${value}" is not one of ${OUTPUT_FORMATS.join(', ')}.`);
}

/** `--output-format` wins over `--json`, which stays as the older spelling of `--output-format json`. */
export function chosenFormat(flags: { outputFormat?: OutputFormat; json?: boolean }): OutputFormat {
  return flags.outputFormat ?? (flags.json ? 'json' : 'text');
}

/** Claude Code's result subtypes; every other ending is an error during execution. */
export type ResultSubtype = 'success' | 'error_max_turns' | 'error_during_execution' | 'error_max_budget_usd';

/**
 * The subtype of an ending. A model API error is `success` with `is_error: true`, as `claude -p`
 * reports it: the error stands in the result text, as the answer would.
 */
export function resultSubtype(reason: TerminalReason | 'terminated', apiError = false): ResultSubtype {
  if (reason === 'completed' || (reason === 'model_error' && apiError)) return 'success';
  if (reason === 'max_turns') return 'error_max_turns';
  if (reason === 'budget_exhausted') return 'error_max_budget_usd';
  return 'error_during_execution';
}

/** `terminal_reason`: the Terminal's reason in Claude Code's words where they differ. */
export type ResultTerminalReason = TerminalReason | 'terminated' | 'api_error';

/** What the model API answered when a job ended on its error. */
export interface ApiErrorFacts {
  status: number;
  /** The error body's `error.type`, e.g. `invalid_request_error`. */
  type?: string;
  /** The API's own message. */
  message: string;
}

/**
 * The API's answer in a `model_error` Terminal's detail, which the model call activity words as
 * `Model API error <status> <type>: <message>` (model-errors.ts); undefined for any other model
 * error (an unreachable API, a stream cut without a status).
 */
export function apiErrorOf(terminal: Pick<Terminal, 'reason' | 'detail'>): ApiErrorFacts | undefined {
  if (terminal.reason !== 'model_error' || !terminal.detail) return undefined;
  const match = /^Model API error (\d{3})(?: ([a-z_]+))?: ([\s\S]*)$/.exec(terminal.detail);
  if (!match) return undefined;
  const [, status, type, message = ''] = match;
  return { status: Number(status), ...(type ? { type } : {}), message };
}

/**
 * `num_turns` as Claude Code counts it: the turns begun, where a turn whose model call a limit
 * refused counts too. Our `turnCount` counts the turns whose model call started, so a
 * `max_turns` ending adds the refused one, and a budget stop counts the turn it refused (its
 * detail names it).
 */
export function numTurns(terminal: Pick<Terminal, 'reason' | 'turnCount' | 'detail'>): number {
  if (terminal.reason === 'max_turns') return terminal.turnCount + 1;
  if (terminal.reason === 'budget_exhausted') {
    const refused = /\bturn (\d+)'s model call\b/.exec(terminal.detail ?? '');
    if (refused) return Math.max(terminal.turnCount, Number(refused[1]));
  }
  return terminal.turnCount;
}

/** A denied call as `claude -p` lists it in `permission_denials`, with our reason beside. */
export interface PermissionDenialOut {
  tool_name: string;
  tool_use_id: string;
  tool_input: Record<string, unknown>;
  reason: string;
}

/** Per model, as Claude Code's `modelUsage` reports it. */
export interface ModelUsageOut {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  costUSD: number | null;
}

/**
 * The `type: "result"` object of `claude -p --output-format json`, from a Terminal, with the
 * job's own fields beside Claude Code's (`job_id`, `transcript_head`, retries, recoveries).
 * As Claude Code's: a `success` result has `result` (and `api_error_status`); an error subtype has
 * `errors` instead.
 */
export interface ResultMessage {
  type: 'result';
  subtype: ResultSubtype;
  is_error: boolean;
  duration_ms: number | null;
  duration_api_ms: number | null;
  num_turns: number;
  /** The answer, or `API Error: <status> <message>`; only on `success`. */
  result?: string;
  /** What ended the job; only on the error subtypes. */
  errors?: string[];
  /** The API's status when a model API error ended the job, else null; only on `success`. */
  api_error_status?: number | null;
  api_error_type?: string;
  /** The last reply's stop reason; null when no reply came. */
  stop_reason: string | null;
  session_id: string;
  total_cost_usd: number | null;
  usage: Usage;
  modelUsage: Record<string, ModelUsageOut>;
  permission_denials: PermissionDenialOut[];
  terminal_reason: ResultTerminalReason;
  uuid: string;
  /** Set for every ending but `completed`: what happened and what to do. */
  detail?: string;
  job_id: string;
  model: string;
  transcript_head: string | null;
  message_count: number;
  /** Model call attempts beyond the first (a crash, a 529, a stalled stream). */
  retries: number | null;
  /** How often each recovery and context action ran (`reactive_compact_retry`, `fallback_model`, ...). */
  recoveries: Record<string, number>;
  permission_denial_count: number;
  /** What model call attempts cut off mid-stream (worker crashes) cost again; absent when none were. */
  paid_again?: PaidAgainReport;
  /** Claude Code's count of the job's subagents: all zero for a job that launched none. */
  subagent_stats: SubagentStats;
}

/** `subagent_stats` of a job that launched no agent (or ran before they were counted). */
const NO_SUBAGENTS: SubagentStats = {
  spawned: 0,
  requested: { background: 0, foreground: 0, unset: 0 },
  started_in_background: 0,
  max_depth: 0,
  spawned_by_subagents: 0,
  completed: 0,
  failed: 0,
  killed: { parent: 0, user: 0, system: 0 },
  refused: { depth_limit: 0, concurrency_limit: 0, budget: 0 },
  by_type: {},
};

/** The Terminal's optional accounting, read where present (jobs from older workers lack it). */
interface TerminalAccounting {
  totalCostUsd?: number | null;
  modelUsage?: Record<string, Partial<ModelUsageOut>>;
  durationMs?: number;
  durationApiMs?: number;
  modelRetries?: number;
}

/** The `errors` of an error subtype, in Claude Code's words for the limits it shares with us. */
function endingErrors(terminal: Terminal): string[] {
  if (terminal.reason === 'max_turns') return [`Reached maximum number of turns (${terminal.turnCount})`];
  if (terminal.reason === 'budget_exhausted' && terminal.maxBudgetUsd !== undefined) {
    return [`Reached maximum budget ($${terminal.maxBudgetUsd})`];
  }
  return [terminal.detail ?? terminal.reason];
}

export function resultMessage(jobId: string, terminal: Terminal): ResultMessage {
  const accounting = terminal as Terminal & TerminalAccounting;
  const modelUsage: Record<string, ModelUsageOut> = {};
  for (const [model, entry] of Object.entries(accounting.modelUsage ?? {})) {
    modelUsage[model] = {
      inputTokens: entry.inputTokens ?? 0,
      outputTokens: entry.outputTokens ?? 0,
      cacheReadInputTokens: entry.cacheReadInputTokens ?? 0,
      cacheCreationInputTokens: entry.cacheCreationInputTokens ?? 0,
      costUSD: entry.costUSD ?? null,
    };
  }
  const recoveries: Record<string, number> = {};
  for (const [name, count] of Object.entries(terminal.transitions ?? {})) {
    if (name !== 'next_turn' && count) recoveries[name] = count;
  }
  const apiError = apiErrorOf(terminal);
  const subtype = resultSubtype(terminal.reason, apiError !== undefined);
  const ending: Pick<ResultMessage, 'result' | 'errors' | 'api_error_status' | 'api_error_type'> =
    subtype !== 'success'
      ? { errors: endingErrors(terminal) }
      : apiError
        ? {
            result: `API Error: ${apiError.status} ${apiError.message}`,
            api_error_status: apiError.status,
            ...(apiError.type ? { api_error_type: apiError.type } : {}),
          }
        : { result: terminal.finalText, api_error_status: null };
  return {
    type: 'result',
    subtype,
    is_error: terminal.reason !== 'completed',
    duration_ms: accounting.durationMs ?? null,
    duration_api_ms: accounting.durationApiMs ?? null,
    num_turns: numTurns(terminal),
    ...ending,
    // A job that ended on a failed model call has no reply of that call to name.
    stop_reason: terminal.reason === 'model_error' ? null : (terminal.stopReason ?? null),
    session_id: jobId,
    total_cost_usd: accounting.totalCostUsd ?? null,
    usage: terminal.usage,
    modelUsage,
    permission_denials: (terminal.denials ?? []).map((denial) => ({
      tool_name: denial.toolName,
      tool_use_id: denial.toolUseId,
      tool_input: denial.toolInput ?? {},
      reason: denial.reason,
    })),
    terminal_reason: apiError ? 'api_error' : terminal.reason,
    uuid: randomUUID(),
    ...(terminal.detail ? { detail: terminal.detail } : {}),
    job_id: jobId,
    model: terminal.model,
    transcript_head: terminal.transcriptHead,
    message_count: terminal.messageCount,
    retries: accounting.modelRetries ?? null,
    recoveries,
    permission_denial_count: terminal.denialCount ?? terminal.denials?.length ?? 0,
    ...(terminal.paidAgain ? { paid_again: terminal.paidAgain } : {}),
    subagent_stats: terminal.subagentStats ?? NO_SUBAGENTS,
  };
}

/**
 * A job ended from outside (`temporal workflow terminate`, the UI, a reset or timeout): there is
 * no Terminal, so the result says what Temporal says.
 */
export function endedFromOutsideMessage(jobId: string, status: string, detail: string): ResultMessage {
  const usage: Usage = {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  return {
    type: 'result',
    subtype: 'error_during_execution',
    is_error: true,
    duration_ms: null,
    duration_api_ms: null,
    num_turns: 0,
    stop_reason: null,
    errors: [`${status.toLowerCase()} from outside durable-agent: ${detail}`],
    session_id: jobId,
    total_cost_usd: null,
    usage,
    modelUsage: {},
    permission_denials: [],
    terminal_reason: 'terminated',
    uuid: randomUUID(),
    detail: `${status.toLowerCase()} from outside durable-agent: ${detail}`,
    job_id: jobId,
    model: '',
    transcript_head: null,
    message_count: 0,
    retries: null,
    recoveries: {},
    permission_denial_count: 0,
    subagent_stats: NO_SUBAGENTS,
  };
}

/** What the `system`/`init` line says about the job before its first turn. */
export interface InitFacts {
  jobId: string;
  cwd: string;
  model: string;
  tools: string[];
  permissionMode: string;
}

/** The whole of a stored tool result, or undefined when this process cannot read the job's store. */
export type ToolResultLookup = (ref: ContentRef) => Promise<string | undefined>;

/**
 * `--output-format stream-json`: one JSON object per line in Claude Code's message shapes. Each
 * content block is its own `assistant` line and each tool result its own `user` line, as Claude
 * Code streams them. A tool result is sent whole, read from the content store (the progress log
 * keeps its first 300 characters, which stand in when the store cannot be read); text and tool
 * inputs carry what the progress log keeps (2,000 characters per block). A refused call gets a
 * `system` `permission_denied` line before its result, retries `api_retry` (as Claude Code
 * reports its own) and parked calls `approval_needed`. The job's notices have no counterpart in
 * Claude Code's stream: they go to the human-readable progress only.
 */
export class StreamJsonPrinter {
  lastSeq = 0;
  /** Per subagent (its Agent call's tool_use_id): the tool calls of its that went out. */
  private readonly agentToolUses = new Map<string, number>();
  /** Lines still waiting for a stored result, so that every line keeps its place. */
  private backlog: Promise<void> | undefined;

  constructor(
    private readonly out: Output,
    private readonly jobId: string,
    private readonly lookup?: ToolResultLookup,
  ) {}

  private line(message: Record<string, unknown>): void {
    this.out.write(JSON.stringify({ ...message, uuid: randomUUID(), session_id: this.jobId }));
  }

  /** Runs `write` after every line before it: at once when nothing waits, else in turn. */
  private inOrder(write: () => unknown): void {
    if (this.backlog === undefined) {
      const pending = write();
      if (pending instanceof Promise) this.track(pending.then(() => undefined));
      return;
    }
    this.track(this.backlog.then(async () => void (await write())));
  }

  private track(pending: Promise<void>): void {
    const settled: Promise<void> = pending
      .catch(() => undefined)
      .then(() => {
        if (this.backlog === settled) this.backlog = undefined;
      });
    this.backlog = settled;
  }

  /** Resolves once every line so far is written. */
  async drain(): Promise<void> {
    while (this.backlog) await this.backlog;
  }

  init(facts: InitFacts): void {
    this.inOrder(() =>
      this.line({
        type: 'system',
        subtype: 'init',
        cwd: facts.cwd,
        tools: facts.tools,
        mcp_servers: [],
        model: facts.model,
        permissionMode: facts.permissionMode,
        job_id: facts.jobId,
      }),
    );
  }

  /** What `follow()` sees: the job's events, and retries and parked calls as `system` lines. */
  onEvent(event: FollowEvent): void {
    switch (event.kind) {
      case 'assistant_text':
        this.print([{ seq: event.seq, turn: event.turn, kind: 'assistant_text', text: event.text }]);
        break;
      case 'tool_call':
      case 'tool_result':
      case 'notice':
        this.print([event]);
        break;
      case 'retry':
        this.inOrder(() =>
          this.line({
            type: 'system',
            subtype: 'api_retry',
            what: event.what,
            attempt: event.nextAttempt,
            max_retries: event.maximumAttempts > 0 ? event.maximumAttempts - 1 : null,
            retry_delay_ms: event.nextAttemptAt !== undefined ? Math.max(0, event.nextAttemptAt - Date.now()) : null,
            error: event.cause,
            turn: event.turn,
          }),
        );
        break;
      case 'approval_needed':
        this.inOrder(() =>
          this.line({
            type: 'system',
            subtype: 'approval_needed',
            tool_name: event.pending.toolName,
            tool_use_id: event.pending.toolUseId,
            reason: event.pending.reason,
            turn: event.turn,
          }),
        );
        break;
      case 'task_started': {
        const { task } = event;
        this.inOrder(() =>
          this.line({
            type: 'system',
            subtype: 'task_started',
            task_id: task.taskId,
            tool_use_id: task.toolUseId,
            description: task.label,
            ...(task.agent ? { subagent_type: task.agent.type } : {}),
            is_backgrounded: task.agent ? task.agent.background : true,
            ...(task.agent ? { spawn_depth: 1 } : {}),
            task_type: task.agent ? 'local_agent' : 'local_bash',
            ...(task.agentJobId ? { job_id: task.agentJobId } : {}),
          }),
        );
        break;
      }
      case 'task_ended': {
        const { task } = event;
        if (task.status === 'running') break;
        const toolUses = this.agentToolUses.get(task.toolUseId) ?? 0;
        this.inOrder(() =>
          this.line({
            type: 'system',
            subtype: 'task_notification',
            task_id: task.taskId,
            tool_use_id: task.toolUseId,
            status: task.status,
            output_file: task.outputFile,
            summary: task.agent ? (task.agent.result ?? '') : (task.summary ?? task.label),
            ...(task.agent
              ? {
                  usage: {
                    total_tokens: task.agent.tokens ?? 0,
                    tool_uses: toolUses,
                    duration_ms: task.agent.durationMs ?? 0,
                  },
                  job_id: task.agentJobId,
                }
              : {}),
          }),
        );
        break;
      }
      case 'subagent_event':
        if (event.event.kind === 'tool_call')
          this.agentToolUses.set(event.parentToolUseId, (this.agentToolUses.get(event.parentToolUseId) ?? 0) + 1);
        this.printOne(event.event, event.parentToolUseId);
        break;
      case 'answered':
        // Claude Code's result for each message of a streaming input: that message's turns and usage.
        this.result(resultMessage(this.jobId, event.terminal));
        break;
      case 'no_worker':
        this.inOrder(() =>
          this.line({
            type: 'system',
            subtype: 'no_worker',
            after_ms: event.afterMs,
            ...(event.text ? { message: event.text } : {}),
          }),
        );
        break;
      default:
        break;
    }
  }

  print(events: SessionEvent[]): void {
    for (const event of events) {
      if (event.seq <= this.lastSeq) continue;
      this.lastSeq = event.seq;
      this.printOne(event, null);
    }
  }

  /** One event of the job's (`parent` null) or of the subagent its Agent call `parent` started. */
  private printOne(event: SessionEvent, parent: string | null): void {
    switch (event.kind) {
      case 'assistant_text':
        this.inOrder(() => this.assistant(event.turn, [{ type: 'text', text: event.text }], parent));
        break;
      case 'tool_call':
        this.inOrder(() =>
          this.assistant(
            event.turn,
            [{ type: 'tool_use', id: event.toolUseId, name: event.name, input: parseInput(event.input) }],
            parent,
          ),
        );
        break;
      case 'tool_result': {
        const { ref } = event;
        const lookup = this.lookup;
        if (ref !== undefined && lookup) {
          this.inOrder(async () =>
            this.toolResult(event, (await lookup(ref).catch(() => undefined)) ?? event.preview, parent),
          );
        } else this.inOrder(() => this.toolResult(event, event.preview, parent));
        break;
      }
      case 'notice':
        break;
    }
  }

  result(message: ResultMessage): void {
    this.inOrder(() => this.out.write(JSON.stringify(message)));
  }

  private toolResult(
    event: Extract<SessionEvent, { kind: 'tool_result' }>,
    content: string,
    parent: string | null,
  ): void {
    if (event.denied) {
      this.line({
        type: 'system',
        subtype: 'permission_denied',
        tool_name: event.name,
        tool_use_id: event.toolUseId,
        message: content,
      });
    }
    this.line({
      type: 'user',
      parent_tool_use_id: parent,
      message: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: event.toolUseId, content, is_error: event.isError }],
      },
      // Claude Code's own structured result per tool is not kept; an error reads as it writes one.
      tool_use_result: event.isError ? `Error: ${content}` : content,
      turn: event.turn,
    });
  }

  private assistant(turn: number, content: unknown[], parent: string | null): void {
    this.line({
      type: 'assistant',
      parent_tool_use_id: parent,
      message: { id: parent ? `${parent}-turn-${turn}` : `turn-${turn}`, type: 'message', role: 'assistant', content },
      turn,
    });
  }
}

/** Reads stored tool results from `store` (opened on first use), for {@link StreamJsonPrinter}. */
export function storedToolResults(open: () => Promise<ContentStore>): ToolResultLookup {
  let store: Promise<ContentStore> | undefined;
  return async (ref) => {
    store ??= open();
    const block = await (await store).get<Partial<ToolResultBlock>>(ref);
    return typeof block.content === 'string' ? block.content : undefined;
  };
}

/** A tool call's input as the progress log keeps it: JSON, unless it was cut at 2,000 characters. */
function parseInput(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { truncated_input: text };
  }
}
