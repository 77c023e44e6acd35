import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sandboxNetworkMode, type JobSandbox } from '../../shared/sandbox';
import type { ToolOutcome } from '../../shared/tool-definition';
import {
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_MAX_OUTPUT_CHARS,
  BASH_MAX_TIMEOUT_MS,
  type BashInput,
} from '../../shared/tools/bash';
import type { PreparedCommand, RefusedCommand } from '../sandbox/engine';
import { GIT_GUARD_ENV, withGitHardening } from '../sandbox/git-hardening';
import { defaultBashEnv } from './bash-env';
import { linkedReadRefusal } from './bash-linked-reads';
import { commandFiles, runCommand, type Finished } from './command-run';
import { toolError, toolResult } from './fs-errors';
import { ReadDenyGuard } from './read-deny';
import type { ToolContext } from './tool-context';

/**
 * How long a background command may run: as long as its job, in practice (the job stops it when
 * it ends); this only bounds one that outlives a job nobody ends.
 */
export const BACKGROUND_TIMEOUT_MS = 7 * 24 * 3_600_000;

/**
 * A cancellation (abort) reaches the activity only in the answer to a heartbeat: at one a second
 * (the worker's throttle lets each through), an abort stops the command within about a second.
 */
const HEARTBEAT_MS = 1000;

/**
 * Run `bash -c command` in the workspace as its own process group, with a timeout: inside the
 * worker's sandbox unless the job opted out, and refused when the job needs the sandbox and the
 * worker has none.
 */
export async function runBash(input: BashInput, ctx: ToolContext, heartbeatMs = HEARTBEAT_MS): Promise<ToolOutcome> {
  const timeoutMs = ctx.background
    ? BACKGROUND_TIMEOUT_MS
    : Math.min(input.timeout ?? BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS);
  let result: Finished | { spawnError: Error };
  let prepared: PreparedCommand;
  try {
    const linked = await linkedReadCheck(input.command, ctx);
    if (linked !== undefined) return toolError(linked);
    const outcome = await prepareCommand(input.command, ctx);
    if ('refused' in outcome) return toolError(outcome.refused);
    prepared = outcome;
    try {
      result = await runInGroup(prepared, timeoutMs, ctx, heartbeatMs);
    } finally {
      await prepared.release?.();
    }
  } catch (error) {
    if (error instanceof Error && error.name === 'AbortError') throw error;
    return toolError(`Could not start bash: ${error instanceof Error ? error.message : String(error)}`);
  }
  if ('spawnError' in result) return toolError(`Could not start bash: ${result.spawnError.message}`);
  return formatResult(
    result,
    timeoutMs,
    prepared.sandboxed && ctx.sandbox ? sandboxHints(result, ctx.sandbox.policy) : [],
  );
}

/** With Read deny rules in the job: a refusal when the command reads a denied place through a link. */
async function linkedReadCheck(command: string, ctx: ToolContext): Promise<string | undefined> {
  if (ctx.readDenyRules.length === 0) return undefined;
  const guard = await ReadDenyGuard.create(ctx);
  return guard === undefined ? undefined : linkedReadRefusal(command, ctx.workspace, guard);
}

function prepareCommand(command: string, ctx: ToolContext): Promise<PreparedCommand | RefusedCommand> {
  const env = { ...(ctx.env ?? defaultBashEnv()), ...(ctx.gitGuard === true ? { [GIT_GUARD_ENV]: '1' } : {}) };
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
    readDenyRules: ctx.readDenyRules,
    env,
  });
}

/** A failed sandboxed command may have hit the sandbox's walls; say where they are. */
export function sandboxHints(run: Finished, policy: JobSandbox): string[] {
  if (run.exitCode === 0 || run.timedOut) return [];
  const hints: string[] = [];
  if (/Read-only file system|Device or resource busy/.test(run.output)) {
    hints.push(
      '(Sandbox: commands may write only inside the workspace and $TMPDIR. Inside the workspace, .git/config, .git/hooks, .claude, .vscode, .idea, .mcp.json and the shell start-up files are read-only, and .git cannot be moved or created; edit those with the Edit and Write tools.)',
    );
  }
  const domains = policy.network?.allowedDomains ?? [];
  if (sandboxNetworkMode(policy) === 'none' && domains.length > 0 && !domains.includes('*')) {
    hints.push(
      `(Sandbox: there is no network. allowedDomains ${domains.join(', ')} cannot be enforced by host name here; "*" allows every host.)`,
    );
  }
  return hints;
}

/**
 * The exit code a command killed at its timeout is reported with: 128 + SIGKILL, what a shell
 * reports for a child killed so, since the whole group is killed with SIGKILL (process-group.ts).
 */
export const TIMEOUT_EXIT_CODE = 128 + os.constants.signals.SIGKILL;

/**
 * The tool result for a command that ended. A failure is laid out as Claude Code lays it out:
 * "Exit code N" first (then, for a timeout, how long it was given), then the output.
 */
export function formatResult(run: Finished, timeoutMs: number, hints: string[] = []): ToolOutcome {
  const parts: string[] = [];
  const output = run.output.replace(/[\r\n]+$/, '');
  if (output) parts.push(output);
  if (run.totalChars > BASH_MAX_OUTPUT_CHARS) {
    parts.push(`... [output truncated: ${run.totalChars - BASH_MAX_OUTPUT_CHARS} more characters not shown]`);
  }
  if (run.timedOut) {
    const header = [`Exit code ${TIMEOUT_EXIT_CODE}`, `Command timed out after ${timeoutText(timeoutMs)}`];
    return toolError([...header, ...parts].join('\n'));
  }
  const code = exitStatus(run);
  if (code !== null && code !== 0) {
    // The sandbox's hints follow the output as notes, a blank line apart.
    const body = [...parts, ...hints.map((hint) => `\n${hint}`)];
    return toolError([`Exit code ${code}`, ...body].join('\n'));
  }
  const outcome = toolResult(parts.length > 0 ? parts.join('\n') : '(Bash completed with no output)');
  if (run.kept === undefined) return outcome;
  // Too long to show: the whole output is saved for the model to Read (storeLargeResult), and
  // `content`, the first part with a notice, is what it sees if saving fails.
  const lost = run.totalChars - run.kept.length;
  const full = run.kept.replace(/[\r\n]+$/, '');
  return { ...outcome, fullOutput: lost > 0 ? `${full}\n... [${lost} more characters were not kept]` : full };
}

/**
 * The shell's status of a command: its exit code, or 128 + n for one a signal killed (the status
 * the leader recorded, which `splitStatus` reads as the signal). A command may exit with such a
 * status itself, so the status is what is reported, not a guess at the signal.
 */
function exitStatus(run: Finished): number | null {
  if (run.exitCode !== null) return run.exitCode;
  const signal = run.signal === null ? undefined : os.constants.signals[run.signal];
  return signal === undefined ? null : 128 + signal;
}

/**
 * A timeout as Claude Code words it: whole seconds below a minute ("1s", a 1500 ms timeout too),
 * then minutes and rounded seconds ("2m 0s"). Timeouts are at most BASH_MAX_TIMEOUT_MS (10 minutes).
 */
export function timeoutText(ms: number): string {
  if (ms < 60_000) return `${Math.floor(ms / 1000)}s`;
  let minutes = Math.floor(ms / 60_000);
  let seconds = Math.round((ms % 60_000) / 1000);
  if (seconds === 60) [minutes, seconds] = [minutes + 1, 0];
  return `${minutes}m ${seconds}s`;
}

/**
 * Run the prepared command as its own process group (`command-run.ts`): its output goes to the
 * files the journal keeps beside the call's entry, or, for a call nobody journals, to a temporary
 * folder removed afterwards.
 */
async function runInGroup(
  prepared: PreparedCommand,
  timeoutMs: number,
  ctx: ToolContext,
  heartbeatMs: number,
): Promise<Finished | { spawnError: Error }> {
  const scratch = ctx.command ? undefined : await mkdtemp(path.join(os.tmpdir(), 'durable-agent-bash-'));
  let unregister: (() => Promise<void>) | undefined;
  try {
    return await runCommand({
      file: prepared.file,
      args: prepared.args,
      env: prepared.env,
      cwd: ctx.workspace,
      files: ctx.command?.files ?? commandFiles(path.join(scratch ?? '', 'command')),
      timeoutMs,
      ...(prepared.placeholders ? { placeholders: prepared.placeholders } : {}),
      signal: ctx.signal,
      record: async (group) => {
        ctx.onCommandStart?.({ sandboxed: prepared.sandboxed });
        unregister = await ctx.registerGroup?.(group);
        await ctx.command?.record(group);
      },
      progress: (outputBytes) => {
        try {
          ctx.heartbeat({ tool: 'Bash', outputBytes });
        } catch {
          // A failing heartbeat must not kill the command; cancellation arrives through the signal.
        }
      },
      progressMs: heartbeatMs,
      ...(ctx.command?.stillOwner ? { stillOwner: ctx.command.stillOwner } : {}),
    });
  } finally {
    await unregister?.().catch(() => undefined);
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}
