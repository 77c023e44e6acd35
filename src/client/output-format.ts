import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from 'commander';
import type { Usage } from '../shared/messages';
import type { SessionEvent } from '../shared/session';
import type { Terminal, TerminalReason } from '../shared/terminal';
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

export function resultSubtype(reason: TerminalReason | 'terminated'): ResultSubtype {
  if (reason === 'completed') return 'success';
  if (reason === 'max_turns') return 'error_max_turns';
  if (reason === 'budget_exhausted') return 'error_max_budget_usd';
  return 'error_during_execution';
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
 */
export interface ResultMessage {
  type: 'result';
  subtype: ResultSubtype;
  is_error: boolean;
  duration_ms: number | null;
  duration_api_ms: number | null;
  num_turns: number;
  result: string;
  session_id: string;
  total_cost_usd: number | null;
  usage: Usage;
  modelUsage: Record<string, ModelUsageOut>;
  permission_denials: PermissionDenialOut[];
  terminal_reason: TerminalReason | 'terminated';
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
}

/** The Terminal's optional accounting, read where present (jobs from older workers lack it). */
interface TerminalAccounting {
  totalCostUsd?: number | null;
  modelUsage?: Record<string, Partial<ModelUsageOut>>;
  durationMs?: number;
  durationApiMs?: number;
  modelRetries?: number;
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
  return {
    type: 'result',
    subtype: resultSubtype(terminal.reason),
    is_error: terminal.reason !== 'completed',
    duration_ms: accounting.durationMs ?? null,
    duration_api_ms: accounting.durationApiMs ?? null,
    num_turns: terminal.turnCount,
    result: terminal.finalText,
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
    terminal_reason: terminal.reason,
    ...(terminal.detail ? { detail: terminal.detail } : {}),
    job_id: jobId,
    model: terminal.model,
    transcript_head: terminal.transcriptHead,
    message_count: terminal.messageCount,
    retries: accounting.modelRetries ?? null,
    recoveries,
    permission_denial_count: terminal.denialCount ?? terminal.denials?.length ?? 0,
    ...(terminal.paidAgain ? { paid_again: terminal.paidAgain } : {}),
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
    result: '',
    session_id: jobId,
    total_cost_usd: null,
    usage,
    modelUsage: {},
    permission_denials: [],
    terminal_reason: 'terminated',
    detail: `${status.toLowerCase()} from outside durable-agent: ${detail}`,
    job_id: jobId,
    model: '',
    transcript_head: null,
    message_count: 0,
    retries: null,
    recoveries: {},
    permission_denial_count: 0,
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

/**
 * `--output-format stream-json`: one JSON object per line in Claude Code's message shapes. Each
 * content block is its own `assistant` line and each tool result its own `user` line, as Claude
 * Code streams them; text, tool inputs and results carry what the job's progress log keeps (2,000
 * characters per block; `export` gives them whole). Notices are `system` lines of subtype `notice`,
 * retries `api_retry` (as Claude Code reports its own) and parked calls `approval_needed`.
 */
export class StreamJsonPrinter {
  lastSeq = 0;

  constructor(
    private readonly out: Output,
    private readonly jobId: string,
  ) {}

  private line(message: Record<string, unknown>): void {
    this.out.write(JSON.stringify({ ...message, uuid: randomUUID(), session_id: this.jobId }));
  }

  init(facts: InitFacts): void {
    this.line({
      type: 'system',
      subtype: 'init',
      cwd: facts.cwd,
      tools: facts.tools,
      mcp_servers: [],
      model: facts.model,
      permissionMode: facts.permissionMode,
      job_id: facts.jobId,
    });
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
        this.line({
          type: 'system',
          subtype: 'api_retry',
          what: event.what,
          attempt: event.nextAttempt,
          max_retries: event.maximumAttempts > 0 ? event.maximumAttempts - 1 : null,
          retry_delay_ms: event.nextAttemptAt !== undefined ? Math.max(0, event.nextAttemptAt - Date.now()) : null,
          error: event.cause,
          turn: event.turn,
        });
        break;
      case 'approval_needed':
        this.line({
          type: 'system',
          subtype: 'approval_needed',
          tool_name: event.pending.toolName,
          tool_use_id: event.pending.toolUseId,
          reason: event.pending.reason,
          turn: event.turn,
        });
        break;
      case 'no_worker':
        this.line({
          type: 'system',
          subtype: 'no_worker',
          after_ms: event.afterMs,
          ...(event.text ? { message: event.text } : {}),
        });
        break;
      default:
        break;
    }
  }

  print(events: SessionEvent[]): void {
    for (const event of events) {
      if (event.seq <= this.lastSeq) continue;
      this.lastSeq = event.seq;
      switch (event.kind) {
        case 'assistant_text':
          this.assistant(event.turn, [{ type: 'text', text: event.text }]);
          break;
        case 'tool_call':
          this.assistant(event.turn, [
            { type: 'tool_use', id: event.toolUseId, name: event.name, input: parseInput(event.input) },
          ]);
          break;
        case 'tool_result':
          this.line({
            type: 'user',
            parent_tool_use_id: null,
            message: {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: event.toolUseId, content: event.preview, is_error: event.isError },
              ],
            },
            turn: event.turn,
          });
          break;
        case 'notice':
          this.line({ type: 'system', subtype: 'notice', text: event.text, turn: event.turn });
          break;
      }
    }
  }

  result(message: ResultMessage): void {
    this.out.write(JSON.stringify({ ...message, uuid: randomUUID() }));
  }

  private assistant(turn: number, content: unknown[]): void {
    this.line({
      type: 'assistant',
      parent_tool_use_id: null,
      message: { id: `turn-${turn}`, type: 'message', role: 'assistant', content },
      turn,
    });
  }
}

/** A tool call's input as the progress log keeps it: JSON, unless it was cut at 2,000 characters. */
function parseInput(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { truncated_input: text };
  }
}
