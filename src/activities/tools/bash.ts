import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { sandboxNetworkMode } from '../../shared/sandbox';
import type { ToolOutcome } from '../../shared/tool-definition';
import {
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_MAX_OUTPUT_CHARS,
  BASH_MAX_TIMEOUT_MS,
  type BashInput,
} from '../../shared/tools/bash';
import type { PreparedCommand, RefusedCommand } from '../sandbox/engine';
import { withGitHardening } from '../sandbox/git-hardening';
import { abortError } from './abort-error';
import { defaultBashEnv } from './bash-env';
import { toolError, toolResult } from './fs-errors';
import { killProcessGroup, waitForProcessGroupExit } from './process-group';
import type { ToolContext } from './tool-context';

/**
 * A cancellation (abort) reaches the activity only in the answer to a heartbeat: at one a second
 * (the worker's throttle lets each through), an abort stops the command within about a second.
 */
const HEARTBEAT_MS = 1000;
/**
 * After bash exits, a background job it started may still hold our pipes open. Wait this long
 * for them to close, then stop reading rather than hang until the timeout.
 */
const PIPE_GRACE_MS = 500;

interface Finished {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  totalChars: number;
  timedOut: boolean;
}

/**
 * Run `bash -c command` in the workspace as its own process group, with a timeout: inside the
 * worker's sandbox unless the job opted out, and refused when the job needs the sandbox and the
 * worker has none.
 */
export async function runBash(input: BashInput, ctx: ToolContext, heartbeatMs = HEARTBEAT_MS): Promise<ToolOutcome> {
  const timeoutMs = Math.min(input.timeout ?? BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS);
  let result: Finished | { spawnError: Error };
  let prepared: PreparedCommand;
  try {
    const outcome = await prepareCommand(input.command, ctx);
    if ('refused' in outcome) return toolError(outcome.refused);
    prepared = outcome;
    try {
      result = await runProcess(prepared, timeoutMs, ctx, heartbeatMs);
    } finally {
      await prepared.release?.();
    }
  } catch (error) {
    if (error instanceof Error && error.name === 'AbortError') throw error;
    return toolError(`Could not start bash: ${error instanceof Error ? error.message : String(error)}`);
  }
  if ('spawnError' in result) return toolError(`Could not start bash: ${result.spawnError.message}`);
  return formatResult(result, timeoutMs, prepared.sandboxed ? sandboxHints(result, ctx) : []);
}

function prepareCommand(command: string, ctx: ToolContext): Promise<PreparedCommand | RefusedCommand> {
  const env = ctx.env ?? defaultBashEnv();
  if (!ctx.sandbox) {
    return Promise.resolve({
      file: 'bash',
      args: ['-c', command],
      env: withGitHardening(env, { sandboxed: false }),
      sandboxed: false,
    });
  }
  return ctx.sandbox.engine.prepare({
    command,
    workspace: ctx.workspace,
    sessionKey: ctx.sessionKey ?? 'one-shot',
    policy: ctx.sandbox.policy,
    env,
  });
}

/** A failed sandboxed command may have hit the sandbox's walls; say where they are. */
function sandboxHints(run: Finished, ctx: ToolContext): string[] {
  if (run.exitCode === 0 || run.timedOut || !ctx.sandbox) return [];
  const hints: string[] = [];
  if (/Read-only file system|Device or resource busy/.test(run.output)) {
    hints.push(
      '(Sandbox: commands may write only inside the workspace and $TMPDIR. Inside the workspace, .git/config, .git/hooks, .claude, .vscode, .idea, .mcp.json and the shell start-up files are read-only, and .git cannot be moved or created; edit those with the Edit and Write tools.)',
    );
  }
  const { policy } = ctx.sandbox;
  const domains = policy.network?.allowedDomains ?? [];
  if (sandboxNetworkMode(policy) === 'none' && domains.length > 0 && !domains.includes('*')) {
    hints.push(
      `(Sandbox: there is no network. allowedDomains ${domains.join(', ')} cannot be enforced by host name here; "*" allows every host.)`,
    );
  }
  return hints;
}

function formatResult(run: Finished, timeoutMs: number, hints: string[] = []): ToolOutcome {
  const parts: string[] = [];
  const output = run.output.replace(/[\r\n]+$/, '');
  if (output) parts.push(output);
  if (run.totalChars > BASH_MAX_OUTPUT_CHARS) {
    parts.push(`... [output truncated: ${run.totalChars - BASH_MAX_OUTPUT_CHARS} more characters not shown]`);
  }
  if (run.timedOut) {
    parts.push(`Command timed out after ${timeoutMs} ms; it and every process it started were killed.`);
    return toolError(parts.join('\n'));
  }
  if (run.exitCode !== null && run.exitCode !== 0) {
    parts.push(`Exit code ${run.exitCode}`, ...hints);
    return toolError(parts.join('\n'));
  }
  if (run.signal) {
    parts.push(`Command was terminated by signal ${run.signal}`);
    return toolError(parts.join('\n'));
  }
  return toolResult(parts.length > 0 ? parts.join('\n') : '(Bash completed with no output)');
}

function runProcess(
  prepared: PreparedCommand,
  timeoutMs: number,
  ctx: ToolContext,
  heartbeatMs: number,
): Promise<Finished | { spawnError: Error }> {
  if (ctx.signal.aborted) return Promise.reject(abortError());
  return new Promise((resolve, reject) => {
    // detached: the child leads a new process group, so one kill reaches everything it started.
    // In the sandbox, the group is bwrap and its PID namespace: whatever leaves the group (setsid)
    // still dies with the namespace when bwrap does.
    const child = spawn(prepared.file, prepared.args, {
      cwd: ctx.workspace,
      env: prepared.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid !== undefined) ctx.onCommandStart?.({ sandboxed: prepared.sandboxed });
    let output = '';
    let totalChars = 0;
    let timedOut = false;
    let aborted = false;
    let exited = false;
    let settled = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let graceTimer: NodeJS.Timeout | undefined;

    const append = (text: string) => {
      totalChars += text.length;
      if (output.length < BASH_MAX_OUTPUT_CHARS) output += text.slice(0, BASH_MAX_OUTPUT_CHARS - output.length);
    };
    // stdout and stderr are interleaved in arrival order, as a terminal would show them.
    for (const stream of [child.stdout, child.stderr]) {
      const decoder = new StringDecoder('utf8');
      stream.on('data', (chunk: Buffer) => append(decoder.write(chunk)));
      stream.on('end', () => append(decoder.end()));
    }

    const killGroup = () => {
      if (pid !== undefined) killProcessGroup(pid);
    };
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const timeout = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const beat = setInterval(() => {
      try {
        ctx.heartbeat({ tool: 'Bash', outputChars: totalChars });
      } catch {
        // A failing heartbeat must not kill the command; cancellation arrives through the signal.
      }
    }, heartbeatMs);

    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      clearTimeout(graceTimer);
      clearInterval(beat);
      ctx.signal.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      // After a kill, report only once nothing the command started is still running.
      const done = aborted
        ? () => reject(abortError('The Bash command was aborted'))
        : () => resolve({ exitCode, signal: exitSignal, output, totalChars, timedOut });
      if ((aborted || timedOut) && pid !== undefined) void waitForProcessGroupExit(pid).then(done, done);
      else done();
    };

    child.on('error', (error) => {
      if (settled) return;
      if (pid === undefined) {
        settled = true;
        clearTimeout(timeout);
        clearInterval(beat);
        ctx.signal.removeEventListener('abort', onAbort);
        if (aborted) reject(abortError('The Bash command was aborted'));
        else resolve({ spawnError: error });
      }
    });
    child.on('exit', (code, signal) => {
      exited = true;
      exitCode = code;
      exitSignal = signal;
      graceTimer = setTimeout(finish, PIPE_GRACE_MS);
    });
    child.on('close', () => {
      if (exited) finish();
    });
  });
}
