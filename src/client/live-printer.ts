/**
 * The terminal view of a followed job: a header per turn, each tool call and result, retries with
 * their cause and next attempt, and the model's text as it streams. Colour and a spinner only
 * when a person watches at a terminal, and no colour when `NO_COLOR` is set (https://no-color.org).
 */
import type { FollowEvent, FollowListener, LiveStatus, RetryEvent } from './live-events';
import { clip } from './render';
import type { Output } from './render';

export interface LivePrinterOptions {
  color?: boolean;
  spinner?: boolean;
  /** Clock for "in 3 s" and the spinner's elapsed time. */
  now?: () => number;
}

/** Colour and spinner for `out` in this environment. */
export function terminalStyle(out: Output, env: NodeJS.ProcessEnv = process.env): Required<LivePrinterOptions> {
  const tty = out.isTTY === true && out.writePartial !== undefined && env.TERM !== 'dumb';
  // no-color.org: present and not empty disables colour, whatever the value.
  return { color: tty && !env.NO_COLOR, spinner: tty, now: Date.now };
}

const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const ERASE_LINE = '\r\x1b[2K';

type Paint = (text: string) => string;
const ansi =
  (code: string): Paint =>
  (text) =>
    `\x1b[${code}m${text}\x1b[0m`;
const plain: Paint = (text) => text;

/** Prints {@link FollowEvent}s to an {@link Output}. */
export class LivePrinter implements FollowListener {
  private lastTurn = 0;
  /** Streamed text is on the screen without its line end yet. */
  private openLine = false;
  /** Streamed text not yet written, for an Output that takes whole lines only. */
  private pendingLine = '';
  private spinnerShown = false;
  private frame = 0;
  private label = '';
  private labelSince = 0;
  private readonly options: Required<LivePrinterOptions>;
  private readonly paint: { bold: Paint; dim: Paint; red: Paint; yellow: Paint; cyan: Paint };

  constructor(
    private readonly out: Output,
    options: LivePrinterOptions = terminalStyle(out),
  ) {
    this.options = { color: false, spinner: false, now: Date.now, ...options };
    const color = this.options.color;
    this.paint = {
      bold: color ? ansi('1') : plain,
      dim: color ? ansi('2') : plain,
      red: color ? ansi('31') : plain,
      yellow: color ? ansi('33') : plain,
      cyan: color ? ansi('36') : plain,
    };
  }

  onEvent(event: FollowEvent): void {
    this.clearSpinner();
    const { dim, red, cyan, yellow } = this.paint;
    switch (event.kind) {
      case 'text_delta':
        this.header(event.turn);
        if (event.restart) {
          this.endLine();
          this.out.write(yellow('(retry: the reply restarts)'));
        }
        if (event.skipped > 0) this.partial(dim(`[… ${event.skipped} characters not shown …]`));
        this.partial(event.text);
        break;
      case 'assistant_text':
        this.header(event.turn);
        if (event.streamed > 0) {
          this.partial(event.text.slice(event.streamed));
          this.endLine();
        } else {
          this.endLine();
          this.out.write(event.text);
        }
        break;
      case 'tool_call':
        this.header(event.turn);
        this.line(`${cyan('→')} ${event.name} ${clip(event.input, 160)}`);
        break;
      case 'tool_result':
        this.header(event.turn);
        this.line(`${event.isError ? red('✗') : dim('←')} ${event.name}: ${dim(clip(event.preview, 200))}`);
        break;
      case 'notice':
        // The job's end: the Terminal line printed after the events says it, with turns and cost.
        if (event.text.startsWith('terminal: ')) break;
        this.line(dim(`· ${event.text}`));
        break;
      case 'retry':
        if (event.turn > 0) this.header(event.turn);
        this.line(yellow(`↻ ${this.retryLine(event)}`));
        break;
      case 'approval_needed': {
        const { pending, jobId } = event;
        this.line(
          `  ${yellow('⏸')} ${pending.toolName} needs approval (${pending.reason}). From any shell:\n` +
            `    durable-agent approve ${jobId}            # or --always to add ${pending.suggestedRule}\n` +
            `    durable-agent deny ${jobId} --reason "..."`,
        );
        break;
      }
      case 'subagent_event': {
        // An agent's work, indented under its job's: what it called and what it said.
        const agent = dim(`  ↳ [${clip(event.label, 40)}]`);
        const inner = event.event;
        if (inner.kind === 'tool_call') this.line(`${agent} ${cyan('→')} ${inner.name} ${clip(inner.input, 140)}`);
        else if (inner.kind === 'tool_result')
          this.line(`${agent} ${inner.isError ? red('✗') : dim('←')} ${inner.name}: ${dim(clip(inner.preview, 160))}`);
        else if (inner.kind === 'assistant_text') this.line(`${agent} ${clip(inner.text, 300)}`);
        break;
      }
      case 'hook_callback':
        this.line(
          dim(
            `· waiting for the Agent SDK app's ${event.pending.event} hook (${event.pending.callbackId}): resume the app to answer it`,
          ),
        );
        break;
      case 'answered':
        this.line(dim(`· message ${event.query} answered; the job waits for the next`));
        break;
      case 'earlier_events_dropped':
        this.line(dim(`· (${event.count} earlier event${event.count === 1 ? ' is' : 's are'} no longer kept)`));
        break;
      case 'no_worker':
        this.line(
          event.text
            ? `· ${event.text}`
            : `· no worker has answered for ${Math.round(event.afterMs / 1000)} s; ` +
                'is `durable-agent worker` running for this task queue?',
        );
        break;
    }
  }

  /** A spinner on the last line while nothing else moves (at a terminal only). */
  onStatus(status: LiveStatus): void {
    if (!this.options.spinner || !this.out.writePartial || this.openLine || this.pendingLine) return;
    const label = spinnerLabel(status);
    if (!label) return this.clearSpinner();
    const now = this.options.now();
    if (label !== this.label) {
      this.label = label;
      this.labelSince = now;
    }
    const seconds = Math.floor((now - this.labelSince) / 1000);
    const frame = SPINNER_FRAMES[this.frame++ % SPINNER_FRAMES.length] ?? '';
    this.out.writePartial(`${ERASE_LINE}${this.paint.dim(`${frame} ${label}${seconds > 0 ? ` ${seconds}s` : ''}`)}`);
    this.spinnerShown = true;
  }

  close(): void {
    this.clearSpinner();
    this.endLine();
  }

  private retryLine(event: RetryEvent): string {
    const of = event.maximumAttempts > 0 ? ` of ${event.maximumAttempts}` : '';
    let when = '';
    if (event.nextAttemptAt !== undefined) {
      const at = clockTime(event.nextAttemptAt);
      const wait = Math.round((event.nextAttemptAt - this.options.now()) / 1000);
      when = event.started ? ` started at ${at}` : ` at ${at}${wait > 0 ? ` (in ${wait} s)` : ''}`;
    } else if (event.started) {
      when = ' running';
    }
    const n = event.unseenFailures;
    const earlier = n > 0 ? ` (after ${n} earlier failed attempt${n === 1 ? '' : 's'})` : '';
    return (
      `${event.what}: attempt ${event.failedAttempt} failed${earlier}: ${clip(event.cause, 300)} — ` +
      `attempt ${event.nextAttempt}${of}${when}`
    );
  }

  private header(turn: number): void {
    if (turn === this.lastTurn) return;
    this.endLine();
    this.lastTurn = turn;
    this.out.write(this.paint.bold(`\n── turn ${turn} ──`));
  }

  private line(text: string): void {
    this.endLine();
    this.out.write(text);
  }

  private partial(text: string): void {
    if (!text) return;
    if (this.out.writePartial) {
      this.out.writePartial(text);
      this.openLine = !text.endsWith('\n');
      return;
    }
    const lines = (this.pendingLine + text).split('\n');
    this.pendingLine = lines.pop() ?? '';
    for (const line of lines) this.out.write(line);
  }

  private endLine(): void {
    if (this.openLine) this.out.writePartial?.('\n');
    this.openLine = false;
    if (this.pendingLine) this.out.write(this.pendingLine);
    this.pendingLine = '';
  }

  private clearSpinner(): void {
    if (!this.spinnerShown) return;
    this.out.writePartial?.(ERASE_LINE);
    this.spinnerShown = false;
  }
}

function spinnerLabel(status: LiveStatus): string | undefined {
  switch (status.phase) {
    case 'starting':
      return 'starting';
    case 'calling_model':
      return `${status.modelThinking !== undefined ? 'the model is thinking' : 'waiting for the model'}${status.modelAttempt ? ` (attempt ${status.modelAttempt})` : ''}`;
    case 'running_tools':
      return status.runningTools.length ? `running ${[...new Set(status.runningTools)].join(', ')}` : 'running tools';
    case 'running_hooks':
      return 'running hooks';
    case 'compacting':
      return 'compacting the conversation';
    default:
      return undefined; // waiting for approval says so itself; finished needs no spinner
  }
}

/** HH:MM:SS, local time. */
function clockTime(ms: number): string {
  const date = new Date(ms);
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}
