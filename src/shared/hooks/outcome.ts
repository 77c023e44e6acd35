/**
 * What a finished hook command means, and what several of them mean together, as Claude Code
 * reads them (hooks reference, "Exit code output", "JSON output", "Decision control"):
 * - exit 0: stdout is parsed when it is a JSON object; plain text is shown to the user only;
 * - exit 2: a blocking error, stdout ignored, stderr fed to the model (Stop: keep going;
 *   PreToolUse: the call is denied; PostToolUse: the tool already ran, the model is told);
 * - anything else, a timeout, a hook that would not start: a non-blocking error the user sees.
 * Pure code, so the combination can be tested, and named by workflow code, without a process.
 */
import { z } from 'zod';
import { HOOK_TEXT_CHARS, type HookDecision, type RunHookEvent, type RunHooksResult } from './types';
import { lazySchema } from '../lazy-schema';

/** How one hook command ended, as the activity saw it. */
export interface HookRun {
  command: string;
  exitCode: number | null;
  /** The signal that ended it, when it was not killed by us. */
  signal?: string | null;
  timedOut: boolean;
  timeoutSec: number;
  stdout: string;
  stderr: string;
  /** It could not be started at all. */
  spawnError?: string;
  /** It ran in the OS sandbox: a failure may be the sandbox's walls. */
  sandboxed?: boolean;
}

/** What one hook decided. */
export interface HookOutcome {
  command: string;
  /** `block` on Stop and PostToolUse; `deny`, `ask`, `allow` on PreToolUse. */
  decision?: Exclude<HookDecision, 'none'>;
  /** For block and deny: for the model. For ask: for the approval prompt. For allow: for the user. */
  reason?: string;
  /** `continue: false`. */
  preventContinuation?: { stopReason: string };
  additionalContext?: string;
  /** For the user, not the model. */
  userMessages: string[];
}

/** The JSON a hook may print on exit 0. Unknown keys pass (newer fields, `updatedMCPToolOutput`). */
export const hookOutputSchema = lazySchema(() =>
  z.looseObject({
    continue: z.boolean().describe('false: stop the session after this hook (wins over any decision)').optional(),
    stopReason: z.string().describe('Shown to the user when continue is false').optional(),
    suppressOutput: z
      .boolean()
      .describe("Keep stdout out of the log; durable-agent never shows a JSON reply's stdout")
      .optional(),
    systemMessage: z.string().describe('A warning shown to the user').optional(),
    decision: z
      .enum(['block', 'approve'])
      .describe(
        '"block": Stop keeps going, PostToolUse tells the model; on PreToolUse, the deprecated deny ("approve" = allow)',
      )
      .optional(),
    reason: z.string().describe('Why, for the model, with decision "block"').optional(),
    hookSpecificOutput: z
      .looseObject({
        hookEventName: z.string().optional(),
        permissionDecision: z.enum(['allow', 'deny', 'ask', 'defer']).optional(),
        permissionDecisionReason: z.string().optional(),
        updatedInput: z.record(z.string(), z.unknown()).optional(),
        additionalContext: z.string().optional(),
      })
      .optional(),
  }),
);
type HookOutput = z.infer<typeof hookOutputSchema>;

/** At most HOOK_TEXT_CHARS characters, saying how many were cut. */
export function capHookText(text: string, limit = HOOK_TEXT_CHARS): string {
  if (text.length <= limit) return text;
  // Keep the start and the end: a test runner's summary of failures comes last.
  const head = Math.floor(limit * 0.4);
  const tail = limit - head;
  return `${text.slice(0, head)}\n... [hook output cut: ${text.length - limit} characters left out] ...\n${text.slice(-tail)}`;
}

const label = (event: RunHookEvent, command: string) =>
  `${event} hook ${JSON.stringify(command.length > 80 ? `${command.slice(0, 77)}...` : command)}`;

function firstLine(text: string): string {
  return text.split('\n').find((line) => line.trim() !== '') ?? '';
}

/** What one finished hook means for `event`. */
export function interpretHookRun(event: RunHookEvent, run: HookRun): HookOutcome {
  const name = label(event, run.command);
  const outcome: HookOutcome = { command: run.command, userMessages: [] };
  if (run.spawnError !== undefined) {
    outcome.userMessages.push(`${name} could not start: ${run.spawnError}`);
    return outcome;
  }
  if (run.timedOut) {
    outcome.userMessages.push(
      `${name} timed out after ${run.timeoutSec} s; it and every process it started were killed (raise its "timeout", in seconds, if it needs longer)`,
    );
    return outcome;
  }
  if (run.exitCode === 2) {
    const stderr = run.stderr.trim();
    outcome.decision = event === 'PreToolUse' ? 'deny' : 'block';
    outcome.reason = capHookText(stderr !== '' ? stderr : `${name} exited with code 2 and wrote no reason to stderr.`);
    return outcome;
  }
  if (run.exitCode !== 0) {
    const how =
      run.exitCode === null
        ? `was ended by signal ${run.signal ?? 'unknown'}`
        : `failed with exit code ${run.exitCode}`;
    const stderr = firstLine(run.stderr);
    outcome.userMessages.push(`${name} ${how}${stderr ? `: ${capHookText(stderr, 1_000)}` : ''}${sandboxHint(run)}`);
    return outcome;
  }
  const stdout = run.stdout.trim();
  if (stdout === '') return outcome;
  const json = parseJsonObject(stdout);
  if (json === undefined) {
    // Claude Code: for these events, plain stdout on exit 0 is for the user, never the model.
    outcome.userMessages.push(`${name}: ${capHookText(stdout)}`);
    return outcome;
  }
  const parsed = hookOutputSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(top level)'}: ${issue.message}`);
    outcome.userMessages.push(
      `${name} printed JSON that is not valid hook output (${problems.join('; ')}); it was ignored`,
    );
    return outcome;
  }
  applyOutput(event, name, parsed.data, outcome);
  return outcome;
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function applyOutput(event: RunHookEvent, name: string, output: HookOutput, outcome: HookOutcome): void {
  if (output.systemMessage !== undefined && output.systemMessage.trim() !== '') {
    outcome.userMessages.push(`${name}: ${capHookText(output.systemMessage)}`);
  }
  if (output.continue === false) {
    outcome.preventContinuation = { stopReason: capHookText(output.stopReason?.trim() || `${name} ended the session`) };
  }
  let specific = output.hookSpecificOutput;
  if (specific?.hookEventName !== undefined && specific.hookEventName !== event) {
    outcome.userMessages.push(
      `${name} returned hookSpecificOutput for ${specific.hookEventName}, not ${event}; that part was ignored`,
    );
    specific = undefined;
  }
  if (event !== 'Stop' && specific?.additionalContext !== undefined && specific.additionalContext.trim() !== '') {
    outcome.additionalContext = capHookText(specific.additionalContext);
  }
  if (event === 'PreToolUse') {
    applyPermissionDecision(name, output, specific, outcome);
    return;
  }
  if (output.decision === 'block') {
    outcome.decision = 'block';
    const reason = output.reason?.trim();
    if (reason) outcome.reason = capHookText(reason);
    else {
      // Claude Code requires a reason with a block; a block without one still blocks, since
      // ignoring it would undo what the hook asked for, but the model needs something to go on.
      outcome.reason =
        event === 'Stop'
          ? `${name} asked you to continue rather than stop, without saying why.`
          : `${name} flagged this tool result, without saying why.`;
      outcome.userMessages.push(`${name} returned decision "block" without a reason; give one in "reason"`);
    }
  }
}

function applyPermissionDecision(
  name: string,
  output: HookOutput,
  specific: HookOutput['hookSpecificOutput'],
  outcome: HookOutcome,
): void {
  // The top-level decision is PreToolUse's deprecated form: "approve" is allow, "block" is deny.
  const legacy = output.decision === 'approve' ? 'allow' : output.decision === 'block' ? 'deny' : undefined;
  const stated = specific?.permissionDecision ?? legacy;
  const reason = (specific?.permissionDecisionReason ?? output.reason)?.trim();
  if (specific?.updatedInput !== undefined && stated !== 'deny') {
    // durable-agent cannot run a call with input the model did not write (it would bypass the
    // input's validation and the permission decision already taken), and running the original
    // input would ignore what the hook asked for: so the call does not run.
    outcome.decision = 'deny';
    outcome.reason = `${name} asked to change this call's input (updatedInput), which durable-agent does not support, so the call was not run.`;
    outcome.userMessages.push(
      `${name} returned updatedInput, which durable-agent does not support; the call was denied`,
    );
    return;
  }
  if (stated === undefined) return;
  // "defer" pauses a headless Claude Code run for an outside caller to answer; a durable job
  // waits for a person the same way when it asks, so defer is an ask here (same precedence slot).
  outcome.decision = stated === 'defer' ? 'ask' : stated;
  if (reason) outcome.reason = capHookText(reason);
  else if (outcome.decision === 'deny') outcome.reason = `${name} denied this call.`;
}

function sandboxHint(run: HookRun): string {
  if (!run.sandboxed || (run.exitCode !== 126 && run.exitCode !== 127)) return '';
  return ' (hooks run in the same OS sandbox as Bash, where ~/.claude and the other credential places are hidden: keep hook scripts in the workspace, e.g. "$CLAUDE_PROJECT_DIR"/.claude/hooks/, or list their folder in sandbox.filesystem.allowRead of ~/.claude/settings.json)';
}

const joinTexts = (texts: Array<string | undefined>, separator = '\n\n') => {
  const present = texts.filter((text): text is string => text !== undefined && text !== '');
  return present.length > 0 ? capHookText(present.join(separator)) : undefined;
};

/**
 * The decision of all hooks of one event together, as Claude Code takes it: on PreToolUse the
 * most restrictive wins (deny > ask > allow); on Stop and PostToolUse any block blocks; a
 * `continue: false` anywhere ends the session and wins over every decision. Reasons of the
 * hooks that share the winning decision are joined; additional context of every hook is kept.
 */
export function combineHookOutcomes(
  event: RunHookEvent,
  outcomes: readonly HookOutcome[],
): Omit<RunHooksResult, 'ran'> {
  const userMessages = outcomes.flatMap((outcome) => outcome.userMessages);
  const stops = outcomes.flatMap((outcome) =>
    outcome.preventContinuation ? [outcome.preventContinuation.stopReason] : [],
  );
  const preventContinuation = stops.length > 0 ? { stopReason: joinTexts(stops, '\n') as string } : undefined;
  const additionalContext =
    event === 'Stop' ? undefined : joinTexts(outcomes.map((outcome) => outcome.additionalContext));
  const order: Array<Exclude<HookDecision, 'none'>> = event === 'PreToolUse' ? ['deny', 'ask', 'allow'] : ['block'];
  let outcome: HookDecision = 'none';
  let reason: string | undefined;
  for (const decision of order) {
    const deciding = outcomes.filter((o) => o.decision === decision);
    if (deciding.length === 0) continue;
    outcome = decision;
    reason = joinTexts(deciding.map((o) => o.reason));
    break;
  }
  if (outcome === 'allow' && reason !== undefined) {
    // Claude Code shows an allow's reason to the user, not to the model.
    userMessages.push(`PreToolUse hook allowed the call: ${reason}`);
    reason = undefined;
  }
  if (preventContinuation !== undefined) {
    if (event === 'Stop') {
      // Ending the session is stopping: a block's "keep going" cannot outrank it.
      outcome = 'none';
      reason = undefined;
    } else if (event === 'PreToolUse' && outcome !== 'deny') {
      outcome = 'deny';
      reason = 'A PreToolUse hook ended the session before this call could run.';
    }
  }
  return {
    outcome,
    ...(reason !== undefined ? { reason } : {}),
    ...(preventContinuation !== undefined ? { preventContinuation } : {}),
    ...(additionalContext !== undefined ? { additionalContext } : {}),
    userMessages,
  };
}
