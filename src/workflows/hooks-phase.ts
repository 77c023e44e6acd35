import { ActivityFailure, condition, isCancellation } from '@temporalio/workflow';
import {
  combineHookOutcomes,
  hookStdin,
  hookTimeoutSec,
  interpretHookRun,
  matchHooks,
  STOP_HOOK_FLAG,
} from '../shared/hooks';
import type {
  HookCommand,
  HookEventFacts,
  HookOutcome,
  HookRun,
  HooksConfig,
  RunHookEvent,
  RunHooksResult,
} from '../shared/hooks';
import type { PendingHookCallback } from '../shared/session';
import type { HookCallbackAnswer } from '../shared/signal-payloads';
import type { ToolUseBlock } from '../shared/messages';
import { exceedsMaxTurns } from '../shared/recovery';
import type { State } from '../shared/session';
import type { Session } from './session';
import type { TurnStep } from './turn-step';
import type { SessionActivities } from './activity-proxies';
import type { SessionControl } from './session-control';

/** What the tool gate and the end of the turn need to run a job's hooks. */
export interface HookRunner {
  /** PreToolUse: undefined when no hook matches the call. */
  pre(toolUse: ToolUseBlock): Promise<RunHooksResult | undefined>;
  /** PostToolUse, after a call that ran and succeeded. */
  post(toolUse: ToolUseBlock, resultRef: string): Promise<RunHooksResult | undefined>;
  /** Stop: undefined when the job has no Stop hook. */
  stop(args: { turn: number; stopHookActive: boolean; lastAssistantText: string }): Promise<RunHooksResult | undefined>;
}

interface HookRunnerDeps {
  config: HooksConfig;
  sessionKey: string;
  workspace: string;
  permissionMode: () => string;
  sandbox: RunHooksSandbox;
  activities: SessionActivities;
  control: SessionControl;
}

/** One event's hooks to run: which, with what facts, under which activity key, in which turn. */
interface HookCall {
  event: RunHookEvent;
  hooks: HookCommand[];
  facts: HookEventFacts;
  key: string;
  turn: number;
  /** PostToolUse: the tool result in the content store. */
  toolResponseRef?: string;
}

type RunHooksSandbox = Parameters<SessionActivities['runHooks']>[0]['sandbox'];

/**
 * Hooks as the loop calls them: only when a hook matches (no activity otherwise), each event's
 * hooks in one activity, their messages for the user recorded as notices. A hook activity that
 * fails on the worker is taken as Claude Code takes a failing hook, a non-blocking error, except
 * before a tool call: a guard that could not run has not vetted the call, so it is not made.
 */
export function hookRunner(deps: HookRunnerDeps): HookRunner {
  /** Command hooks in the activity, the app's callbacks over its channel; their decisions together. */
  const run = async (call: HookCall): Promise<RunHooksResult> => {
    const callbacks = call.hooks.filter((hook) => hook.callback !== undefined);
    if (callbacks.length === 0) return runCommands(call);
    const commands = call.hooks.filter((hook) => hook.callback === undefined);
    const stdin = stdinOf(call.facts);
    const [fromCommands, ...fromApp] = await Promise.all([
      commands.length > 0 ? runCommands({ ...call, hooks: commands }) : undefined,
      ...callbacks.map((hook) => askApp(deps.control, call, hook, stdin)),
    ]);
    const outcomes: HookOutcome[] = fromApp.map((answer) => answer.outcome);
    if (fromCommands) outcomes.unshift(outcomeOf(fromCommands));
    const combined = combineHookOutcomes(call.event, outcomes);
    for (const answer of fromApp)
      for (const text of answer.outcome.userMessages)
        deps.control.record({ turn: call.turn, kind: 'notice', text: `${call.event} hook: ${text}` });
    return { ...combined, ran: [...(fromCommands?.ran ?? []), ...fromApp.map((answer) => answer.ran)] };
  };
  const stdinOf = (facts: HookEventFacts) =>
    hookStdin({ sessionId: deps.sessionKey, cwd: deps.workspace, permissionMode: deps.permissionMode() }, facts);
  const runCommands = async ({
    event,
    hooks,
    facts,
    key,
    turn,
    toolResponseRef,
  }: HookCall): Promise<RunHooksResult> => {
    try {
      const result = await deps.activities.runHooks(
        {
          sessionKey: deps.sessionKey,
          workspace: deps.workspace,
          event,
          hooks,
          stdin: stdinOf(facts),
          ...(toolResponseRef ? { toolResponseRef } : {}),
          ...(deps.sandbox ? { sandbox: deps.sandbox } : {}),
        },
        key,
      );
      for (const text of result.userMessages)
        deps.control.record({ turn, kind: 'notice', text: `${event} hook: ${text}` });
      return result;
    } catch (error) {
      if (isCancellation(error) || !(error instanceof ActivityFailure)) throw error;
      const why = error.cause?.message ?? error.message;
      deps.control.record({ turn, kind: 'notice', text: `${event} hooks could not run on the worker: ${why}` });
      return event === 'PreToolUse'
        ? {
            outcome: 'deny',
            reason: `The PreToolUse hooks could not run (${why}), so the call was not made.`,
            userMessages: [],
            ran: [],
          }
        : { outcome: 'none', userMessages: [], ran: [] };
    }
  };
  /** A tool event's hooks, when any matches the call; the same facts for before and after it. */
  const toolEvent = async (
    event: 'PreToolUse' | 'PostToolUse',
    toolUse: ToolUseBlock,
    key: string,
    resultRef?: string,
  ): Promise<RunHooksResult | undefined> => {
    const hooks = matchHooks(deps.config, event, toolUse.name, { input: toolUse.input, workspace: deps.workspace });
    if (hooks.length === 0) return undefined;
    const facts = { event, toolName: toolUse.name, toolInput: toolUse.input, toolUseId: toolUse.id };
    return run({
      event,
      hooks,
      facts,
      key,
      turn: deps.control.turnCount(),
      ...(resultRef ? { toolResponseRef: resultRef } : {}),
    });
  };
  return {
    pre: (toolUse) => toolEvent('PreToolUse', toolUse, `pre-${toolUse.id}`),
    post: (toolUse, resultRef) => toolEvent('PostToolUse', toolUse, `post-${toolUse.id}`, resultRef),
    stop: async ({ turn, stopHookActive, lastAssistantText }) => {
      const hooks = matchHooks(deps.config, 'Stop');
      if (hooks.length === 0) return undefined;
      const facts = { event: 'Stop' as const, stopHookActive, lastAssistantMessage: lastAssistantText };
      return run({ event: 'Stop', hooks, facts, key: `stop-${turn}`, turn });
    },
  };
}

/** A command hooks' combined result, as one outcome to combine with the app's. */
function outcomeOf(result: RunHooksResult): HookOutcome {
  return {
    command: 'command hooks',
    ...(result.outcome !== 'none' ? { decision: result.outcome } : {}),
    ...(result.reason !== undefined ? { reason: result.reason } : {}),
    ...(result.preventContinuation ? { preventContinuation: result.preventContinuation } : {}),
    ...(result.additionalContext !== undefined ? { additionalContext: result.additionalContext } : {}),
    // Already recorded as notices by the command hooks' run.
    userMessages: [],
  };
}

/**
 * Ask the Agent SDK app's hook callback: the job waits, holding nothing, until the app answers
 * (the CLI it started asks it, and gives it the hook's timeout) or the job is aborted. With no
 * process of the app there, it waits as an approval does, until one resumes the job. The answer
 * means what the same JSON printed by a command hook means; a failed or timed-out callback is a
 * non-blocking error, as a failed command hook is.
 */
async function askApp(
  control: SessionControl,
  { event, facts, key, toolResponseRef }: HookCall,
  hook: HookCommand,
  input: Record<string, unknown>,
): Promise<{ outcome: HookOutcome; ran: RunHooksResult['ran'][number] }> {
  const id = `${key}/${hook.callback}`;
  const timeoutSec = hookTimeoutSec(hook);
  const entry: { request: PendingHookCallback; answer?: HookCallbackAnswer } = {
    request: {
      id,
      callbackId: hook.callback!,
      event,
      input,
      ...('toolUseId' in facts ? { toolUseId: facts.toolUseId } : {}),
      ...(toolResponseRef ? { toolResponseRef } : {}),
      timeoutSec,
    },
  };
  control.hookCallbacks.set(id, entry);
  const startedAt = Date.now();
  try {
    await condition(() => entry.answer !== undefined);
  } finally {
    control.hookCallbacks.delete(id);
  }
  const answer = entry.answer!;
  const run: HookRun = {
    command: hook.command,
    exitCode: answer.error !== undefined ? 1 : 0,
    timedOut: answer.timedOut === true,
    timeoutSec,
    stdout: answer.output !== undefined ? JSON.stringify(answer.output) : '',
    stderr: answer.error ?? '',
  };
  const outcome = interpretHookRun(event, run);
  if (event === 'PreToolUse' && hook.onFailure === 'block' && (run.exitCode !== 0 || run.timedOut)) {
    outcome.decision = 'deny';
    outcome.reason = `The app's PreToolUse hook ${run.timedOut ? `gave no answer within ${timeoutSec} s` : `failed (${answer.error})`}, and it blocks on failure, so the call was not made.`;
  }
  return {
    outcome,
    ran: { command: hook.command, exitCode: run.exitCode, timedOut: run.timedOut, ms: Date.now() - startedAt },
  };
}

/** Claude Code's cap: a Stop hook may block this many times in a row before the job ends anyway. */
export const MAX_STOP_HOOK_BLOCKS = 8;

/**
 * The end-of-turn Stop hooks (`--stop-hook`, settings): a block feeds its reason back and the
 * loop goes on, at most 8 times in a row; `continue: false` ends the job as stop_hook_prevented.
 */
export async function stopHooks(session: Session, after: State): Promise<TurnStep> {
  const { control } = session;
  const blocks = after.stopHookBlocks ?? 0;
  const hooks = session.hooks;
  if (!hooks) return { kind: 'terminal', state: after, reason: 'completed' };
  const phaseBefore = control.phase;
  control.phase = 'running_hooks';
  let result: RunHooksResult | undefined;
  try {
    // A Stop hook may be a whole test suite: `abort` must reach it like a tool call.
    result = await control.runAbortable(() =>
      hooks.stop({ turn: after.turnCount, stopHookActive: blocks > 0, lastAssistantText: after.lastAssistantText }),
    );
  } catch (error) {
    if (!isCancellation(error)) throw error;
    return {
      kind: 'terminal',
      state: after,
      reason: 'aborted_tools',
      detail: `${control.abortDetail} (during the Stop hooks)`,
    };
  } finally {
    control.phase = phaseBefore;
  }
  if (!result) return { kind: 'terminal', state: after, reason: 'completed' };
  if (result.preventContinuation) {
    return {
      kind: 'terminal',
      state: after,
      reason: 'stop_hook_prevented',
      detail: `a Stop hook ended the job: ${result.preventContinuation.stopReason}`,
    };
  }
  if (result.outcome !== 'block') {
    const unchecked = uncheckedGates(session, result);
    if (unchecked.length === 0) return { kind: 'terminal', state: after, reason: 'completed' };
    // The person who started the job made this command the gate: without its verdict the job
    // must not pass as completed (Claude Code treats a timeout as non-blocking; a CI gate cannot).
    return { kind: 'terminal', state: after, reason: 'stop_hook_prevented', detail: unchecked.join('; ') };
  }
  const reason = result.reason ?? 'A Stop hook asked you to continue.';
  if (blocks >= MAX_STOP_HOOK_BLOCKS) {
    // A --stop-hook that still fails is a red gate: the job must not pass as completed.
    const gateFails = result.ran.some((run) => run.exitCode === 2 && isGate(session, run.command));
    return {
      kind: 'terminal',
      state: after,
      reason: gateFails ? 'stop_hook_prevented' : 'completed',
      detail: `warning: the Stop hooks blocked ${blocks} times in a row and still block (${reason}); stopped anyway`,
    };
  }
  control.record({
    turn: after.turnCount,
    kind: 'notice',
    text: `Stop hook blocked (${blocks + 1} in a row): ${reason}`,
  });
  const nextTurnCount = after.turnCount + 1;
  if (exceedsMaxTurns(nextTurnCount, control.maxTurns)) {
    return {
      kind: 'terminal',
      state: after,
      reason: 'max_turns',
      detail: `a Stop hook blocked, but maxTurns ${control.maxTurns} is reached: ${reason}`,
    };
  }
  return {
    kind: 'continue',
    state: {
      ...after,
      pending: [{ role: 'user', content: [{ type: 'text', text: `Stop hook feedback:\n${reason}` }] }],
      turnCount: nextTurnCount,
      stopHookBlocks: blocks + 1,
      maxOutputTokensRecoveryCount: 0,
      transition: { reason: 'stop_hook_blocking' },
    },
  };
}

/** `--stop-hook` commands that gave no verdict: timed out, or never ran. */
function uncheckedGates(session: Session, result: RunHooksResult): string[] {
  return stopGates(session).flatMap((gate) => {
    const run = result.ran.find((entry) => entry.command === gate.command);
    const name = `the --stop-hook ${JSON.stringify(gate.command)}`;
    if (!run)
      return [
        `${name} could not run (${result.userMessages.join('; ') || 'no reason given'}), so the work was not checked`,
      ];
    if (run.timedOut) {
      return [
        `${name} timed out after ${hookTimeoutSec(gate)} s, so the work was not checked; raise --stop-hook-timeout`,
      ];
    }
    if (run.exitCode === null) return [`${name} was killed before it finished, so the work was not checked`];
    if (run.exitCode === 126 || run.exitCode === 127) {
      return [
        `${name} could not run (exit ${run.exitCode}: ${run.exitCode === 127 ? 'command not found' : 'not executable'}), so the work was not checked`,
      ];
    }
    return [];
  });
}

function isGate(session: Session, command: string): boolean {
  return stopGates(session).some((hook) => hook.command === command);
}

/** The job's `--stop-hook` commands: the gates its caller chose. */
function stopGates(session: Session): HookCommand[] {
  return matchHooks(session.hooksConfig ?? {}, 'Stop').filter((hook) => hook.source === STOP_HOOK_FLAG);
}
