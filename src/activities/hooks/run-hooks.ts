import { withInputRefsResolved } from '../../shared/tool-input-refs';
import { Context } from '@temporalio/activity';
import {
  combineHookOutcomes,
  dedupeHooks,
  hookTimeoutSec,
  interpretHookRun,
  STOP_HOOK_FLAG,
  type HookCommand,
  type HookOutcome,
  type HookRun,
  type RunHookEvent,
  type RunHooksInput,
  type RunHooksResult,
} from '../../shared/hooks';
import { jobSandboxOrDefault, type JobSandbox } from '../../shared/sandbox';
import type { SandboxEngine } from '../sandbox/engine';
import type { ContentStore } from '../store/content-store';
import { runHookProcess, type HookProcessResult } from './hook-process';

export interface RunHooksDeps {
  /** Where `toolResponseRef` is resolved. */
  store: ContentStore;
  /** The environment Bash starts from: an allowlist of the worker's variables, no credentials. */
  toolEnv: NodeJS.ProcessEnv;
  /** The worker's sandbox: hooks run in it under the job's policy, exactly as Bash does. */
  sandbox: SandboxEngine;
  heartbeatMs?: number;
}

const HEARTBEAT_MS = 2000;

/**
 * Run the hooks of one event, all at once (Claude Code runs an event's matching hooks in
 * parallel), each with the event's JSON on stdin, and combine what they decided. A hook runs in
 * the job's OS sandbox with Bash's environment plus `CLAUDE_PROJECT_DIR`: it is a command on the
 * worker like any other, and a workspace's hook must not reach what the model's commands cannot.
 * Cancelling the activity kills every hook's process tree before it rejects.
 */
export async function runHooks(deps: RunHooksDeps, input: RunHooksInput): Promise<RunHooksResult> {
  const ctx = Context.current();
  const hooks = dedupeHooks(input.hooks);
  if (hooks.length === 0) return { outcome: 'none', userMessages: [], ran: [] };
  const policy = jobSandboxOrDefault(input.sandbox);
  if (policy.enabled) {
    const availability = await deps.sandbox.availability();
    if (!availability.available) return sandboxMissing(input.event, hooks.length, policy, availability.reason);
  }
  const withInput =
    'tool_input' in input.stdin
      ? {
          ...input.stdin,
          tool_input: await withInputRefsResolved(deps.store, input.stdin.tool_input, String(input.stdin.tool_use_id)),
        }
      : input.stdin;
  // A hook sees the call as the model wrote it: a Write's content, not the store reference.
  const stdin =
    input.toolResponseRef === undefined
      ? withInput
      : { ...withInput, tool_response: await toolResponse(deps.store, input.toolResponseRef) };
  const stdinText = JSON.stringify(stdin);
  const env: NodeJS.ProcessEnv = { ...deps.toolEnv, CLAUDE_PROJECT_DIR: input.workspace };

  let running = hooks.length;
  const beat = setInterval(() => {
    try {
      ctx.heartbeat({ hooks: input.event, running });
    } catch {
      // A failing heartbeat must not kill the hooks; cancellation arrives through the signal.
    }
  }, deps.heartbeatMs ?? HEARTBEAT_MS);
  let settled: Array<PromiseSettledResult<HookProcessResult>>;
  try {
    settled = await Promise.allSettled(
      hooks.map(async (hook) => {
        try {
          return await runHookProcess({
            command: hook.command,
            timeoutSec: hookTimeoutSec(hook),
            workspace: input.workspace,
            sessionKey: input.sessionKey,
            policy,
            env,
            stdin: stdinText,
            engine: deps.sandbox,
            signal: ctx.cancellationSignal,
          });
        } finally {
          running--;
        }
      }),
    );
  } finally {
    clearInterval(beat);
  }
  // Every hook has ended by now (allSettled), killed ones included: only then report the cancel.
  if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new Error('The hooks were cancelled');

  const outcomes: HookOutcome[] = [];
  const ran: RunHooksResult['ran'] = [];
  settled.forEach((result, index) => {
    const command = (hooks[index] as { command: string }).command;
    if (result.status === 'rejected') {
      // Not a cancellation (handled above): the sandbox could not be prepared for this hook.
      const why = result.reason instanceof Error ? result.reason.message : String(result.reason);
      outcomes.push(notRunOutcome(input.event, command, why));
    } else if ('refused' in result.value) {
      outcomes.push(notRunOutcome(input.event, command, result.value.refused));
    } else {
      const hook = hooks[index] as HookCommand;
      const run = input.event === 'Stop' && hook.source === STOP_HOOK_FLAG ? asGate(result.value) : result.value;
      ran.push({ command, exitCode: run.exitCode, timedOut: run.timedOut, ms: run.ms });
      outcomes.push(interpretHookRun(input.event, run));
    }
  });
  return { ...combineHookOutcomes(input.event, outcomes), ran };
}

/** The text of a stored tool result, as the model saw it; anything else stored, as it is. */
async function toolResponse(store: ContentStore, ref: string): Promise<unknown> {
  const stored = await store.get<unknown>(ref);
  if (typeof stored === 'object' && stored !== null && typeof (stored as { content?: unknown }).content === 'string') {
    return (stored as { content: string }).content;
  }
  return stored;
}

/**
 * A hook that could not be started. Like any hook error it does not decide anything, except on
 * PreToolUse: a guard that did not run has not vetted the call, so the call does not run.
 */
function notRunOutcome(event: RunHookEvent, command: string, why: string): HookOutcome {
  const outcome: HookOutcome = {
    command,
    userMessages: [`${event} hook ${JSON.stringify(command)} did not run: ${why}`],
  };
  if (event === 'PreToolUse') {
    outcome.decision = 'deny';
    outcome.reason = `A PreToolUse hook of this job could not run, so this call was not run either: ${why}`;
  }
  return outcome;
}

/**
 * The job requires the OS sandbox and this worker has none: no hook runs (a hook is a command,
 * confined exactly as Bash would be). PreToolUse denies the call, since its guards did not vet
 * it. Stop lets the model stop: blocking would have it go round again to a hook that still cannot
 * run. PostToolUse: the tool already ran; the user is told.
 */
function sandboxMissing(event: RunHookEvent, count: number, policy: JobSandbox, reason: string): RunHooksResult {
  const hooks = `${count} ${event} hook${count === 1 ? '' : 's'}`;
  const fix =
    'install bubblewrap on the worker (`bash scripts/setup.sh`, or `apt-get install bubblewrap`) and restart it, or opt the job out of the sandbox with --no-sandbox';
  const userMessages = [
    `${hooks} did not run: this job requires the OS sandbox (${policy.source}), and this worker has none: ${reason}. To fix it, ${fix}.`,
  ];
  if (event !== 'PreToolUse') return { outcome: 'none', userMessages, ran: [] };
  return {
    outcome: 'deny',
    reason: `This call was not run: the job's PreToolUse hooks must vet it first, and they could not run because the worker has no OS sandbox (${reason}). The user has to fix the worker; tell them.`,
    userMessages,
    ran: [],
  };
}

/**
 * A `--stop-hook` is a test suite, not a Claude Code hook script: it fails with exit 1 (npm, jest,
 * pytest), not 2. So any failing exit blocks, with everything it printed as the reason, except
 * 126 and 127 (not executable, not found): those mean the gate could not run at all, and the
 * workflow ends the job for want of a verdict.
 */
function asGate<T extends HookRun>(run: T): T {
  if (run.timedOut || run.exitCode === null || [0, 2, 126, 127].includes(run.exitCode)) return run;
  const printed = [run.stdout.trim(), run.stderr.trim()].filter(Boolean).join('\n');
  return { ...run, exitCode: 2, stderr: printed || `${run.command} failed with exit code ${run.exitCode}` };
}
