/**
 * The Claude Agent SDK's side of durable-agent: invoked as the SDK invokes Claude Code (no
 * subcommand, `--output-format stream-json --verbose --input-format stream-json` and the flags of
 * its options), it reads the SDK's messages from stdin as JSON lines and answers on stdout:
 *
 * - `control_request` `initialize` gets a `control_response`; the app's hook callbacks for
 *   PreToolUse, PostToolUse and Stop become the job's (`SessionInput.appHooks`), and each time the
 *   job waits on one the app is asked with a `hook_callback` request; hooks on other events are
 *   refused by name, at once;
 * - the first `user` message starts the job (its text is the prompt), with its input open: each
 *   later one goes to the job once the one before has its `result`, and the end of stdin tells the
 *   job that no further message comes (see {@link InputQueue});
 * - the job's progress goes out as Claude Code's stream-json messages, and a `result` per message;
 * - a call the job's rules ask about becomes a `can_use_tool` control request when the SDK asked
 *   for `--permission-prompt-tool stdio`, and the app's answer is the durable approval;
 * - `interrupt` aborts the job; any other control request is answered with an error naming it.
 *
 * The job is durable: this process may die, and the job goes on in Temporal.
 */
import { randomUUID } from 'node:crypto';
import readline from 'node:readline';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { WorkflowClient } from '@temporalio/client';
import { InvalidArgumentError } from 'commander';
import type { PendingApproval, SessionInput } from '../shared/session';
import { TOOL_DEFINITIONS } from '../shared/tools';
import { RUN_HOOK_EVENTS } from '../shared/hooks';
import { isPermissionMode, PERMISSION_MODES } from '../shared/permissions';
import type { PermissionMode } from '../shared/permissions';
import type { HooksConfig } from '../shared/hooks';
import type { PendingHookCallback } from '../shared/session';
import type { HookCallbackAnswer } from '../shared/signal-payloads';
import {
  abortSignal,
  closeInputSignal,
  hookCallbackAnswerSignal,
  setModelSignal,
  setPermissionModeSignal,
  snapshotQuery,
  userMessageSignal,
} from '../workflows/definitions';
import type { Approver } from './jobs';
import { follow, newJobId, startOrAttach } from './jobs';
import type { FollowListener } from './live-events';
import { StreamJsonPrinter, storedToolResults } from './output-format';
import type { Output } from './render';
import { stdoutOutput } from './render';
import { buildSessionInput, parseBudgetUsd, parsePositiveInt } from './session-options';
import type { RunFlags } from './session-options';
import { openContentStore } from './store-config';
import { withResume } from './resume';
import { queuedMessage } from './send';
import { isInputFieldRef, withInputRefsResolved } from '../shared/tool-input-refs';

/** The flags the SDK passes, as `--name value` or `--name=value`; true for a flag without a value. */
const VALUE_FLAGS = new Set([
  'output-format',
  'input-format',
  'max-turns',
  'model',
  'fallback-model',
  'permission-prompt-tool',
  'permission-mode',
  'allowedTools',
  'disallowedTools',
  'tools',
  'resume',
  'setting-sources',
  'max-budget-usd',
  'append-system-prompt',
  'effort',
  'max-thinking-tokens',
]);
const BARE_FLAGS = new Set(['verbose', 'allow-dangerously-skip-permissions']);

export interface SdkFlags {
  values: Map<string, string>;
  verbose: boolean;
  /** `--allow-dangerously-skip-permissions`: set_permission_mode may switch to bypassPermissions. */
  allowBypass?: boolean;
}

/** The SDK's flags; an unknown one is an error naming it, as the SDK's own CLI gives. */
export function parseSdkFlags(args: readonly string[]): SdkFlags {
  const values = new Map<string, string>();
  let verbose = false;
  let allowBypass = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument '${arg}': the prompt comes on stdin`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (BARE_FLAGS.has(name)) {
      if (name === 'verbose') verbose = true;
      else allowBypass = true;
      continue;
    }
    if (!VALUE_FLAGS.has(name))
      throw new Error(`unknown option '--${name}': durable-agent does not support it with the Agent SDK yet`);
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined) throw new Error(`option '--${name}' needs a value`);
    values.set(name, value);
  }
  for (const name of ['output-format', 'input-format']) {
    if (values.get(name) !== 'stream-json')
      throw new Error(`--${name} must be stream-json when durable-agent is driven by the Agent SDK`);
  }
  return { values, verbose, ...(allowBypass ? { allowBypass } : {}) };
}

/** The job's settings from the SDK's flags. */
export function runFlagsOf(flags: SdkFlags): RunFlags {
  const v = flags.values;
  const maxTurns = v.get('max-turns');
  const budget = v.get('max-budget-usd');
  const thinkingTokens = v.get('max-thinking-tokens');
  return {
    cwd: process.cwd(),
    ...(v.has('model') ? { model: v.get('model') } : {}),
    ...(v.has('fallback-model') ? { fallbackModel: v.get('fallback-model') } : {}),
    ...(maxTurns !== undefined ? { maxTurns: parsePositiveInt(maxTurns, '--max-turns') } : {}),
    ...(budget !== undefined ? { maxBudgetUsd: parseBudgetUsd(budget) } : {}),
    ...(thinkingTokens !== undefined ? { maxThinkingTokens: Number(thinkingTokens) } : {}),
    ...(v.has('effort') ? { effort: v.get('effort') } : {}),
    ...(v.has('append-system-prompt') ? { appendSystemPrompt: v.get('append-system-prompt') } : {}),
    ...(v.has('tools') ? { tools: v.get('tools') } : {}),
    ...(v.has('permission-mode') ? { permissionMode: v.get('permission-mode') } : {}),
    ...(v.has('setting-sources') ? { settingSources: v.get('setting-sources') } : {}),
    allowedTools: v.has('allowedTools') ? [v.get('allowedTools')!] : [],
    disallowedTools: v.has('disallowedTools') ? [v.get('disallowedTools')!] : [],
  };
}

/** What the bridge does to its running job. */
interface JobControl {
  abort: () => Promise<void>;
  setPermissionMode: (mode: PermissionMode) => Promise<void>;
  setModel: (model: string) => Promise<void>;
}

/**
 * How long a job whose input is open waits for the app's next message before it ends: long enough
 * for an app that thinks between messages, short enough that a job whose app died does not hold its
 * workspace for long (`resume` within that time picks it up).
 */
export const SDK_INPUT_IDLE_MS = 30 * 60_000;

/**
 * The app's messages, one at a time, as Claude Code takes them: the next goes to the job once the
 * one before was answered, each gets its own result, and the end of stdin tells the job that no
 * further message comes.
 */
class InputQueue {
  private readonly waiting: string[] = [];
  /** Messages handed to the job, and the last one answered. */
  private sent = 0;
  private answered = 0;
  private ended = false;
  private closed = false;
  /** Signals go out one after another: `closeInput` never overtakes the last message. */
  private chain: Promise<void> = Promise.resolve();
  private job: QueueTarget | undefined;

  /**
   * `refuse` answers a message that cannot go to the job with an error result of its own, so the
   * app's count of results stays right.
   */
  constructor(private readonly refuse: (why: string) => void) {}

  /** The job runs (its first message, or `answeredSoFar + 1` for a job resumed mid-way, is in it). */
  attach(job: QueueTarget, answeredSoFar: number): void {
    this.job = job;
    this.answered = answeredSoFar;
    this.sent = answeredSoFar + 1;
    this.pump();
  }

  push(text: string): void {
    if (!text.trim()) {
      this.refuse('durable-agent takes text messages: this one has no text, so it was not sent');
      return;
    }
    this.waiting.push(text);
    this.pump();
  }

  /** stdin ended: once what waits was sent, the job is told that nothing further comes. */
  end(): void {
    this.ended = true;
    this.pump();
  }

  /** The job's answer to message `query` is out. */
  onAnswered(query: number): void {
    this.answered = Math.max(this.answered, query);
    this.pump();
  }

  /** The answers so far cover every message sent: the job's own result would say nothing new. */
  get allAnswered(): boolean {
    return this.answered >= this.sent;
  }

  get baseline(): number {
    return this.job ? this.sent - 1 : 0;
  }

  private pump(): void {
    const job = this.job;
    if (!job) return;
    if (this.waiting.length > 0 && this.answered >= this.sent) {
      this.sent++;
      const text = this.waiting.shift()!;
      this.chain = this.chain.then(() =>
        job.signal(text).catch((error: unknown) => {
          // Not taken: that message gets its error result, and the next may go.
          this.refuse(`the message could not be sent to the job: ${(error as Error).message ?? String(error)}`);
          this.onAnswered(this.sent);
        }),
      );
    }
    if (this.ended && this.waiting.length === 0 && !this.closed) {
      this.closed = true;
      this.chain = this.chain.then(() => job.close().catch(() => undefined));
    }
  }
}

interface QueueTarget {
  signal: (text: string) => Promise<void>;
  close: () => Promise<void>;
}

interface ControlRequest {
  type: 'control_request';
  request_id: string;
  request: { subtype: string; hooks?: Record<string, unknown> } & Record<string, unknown>;
}
interface ControlResponse {
  type: 'control_response';
  response: { subtype: 'success' | 'error'; request_id: string; response?: Record<string, unknown>; error?: string };
}
interface UserMessage {
  type: 'user';
  message: { role: 'user'; content: string | Array<{ type: string; text?: string }> };
}

/** A user message's text: a string, or its text blocks joined. */
function textOf(message: UserMessage): string {
  const content = message.message?.content;
  if (typeof content === 'string') return content;
  return (content ?? [])
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text)
    .join('\n');
}

/**
 * Run the bridge: `connect` gives a Temporal client (starting the embedded default if need be);
 * resolves with the exit status.
 */
export async function runSdkBridge(
  args: readonly string[],
  connect: <T>(fn: (client: import('@temporalio/client').Client) => Promise<T>) => Promise<T>,
  out: Output = stdoutOutput,
): Promise<number> {
  const flags = parseSdkFlags(args);
  const write = (message: Record<string, unknown>) => out.write(JSON.stringify(message));
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  const answers = new Map<string, (response: ControlResponse['response']) => void>();
  const queue = new InputQueue((why) =>
    write({
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      errors: [why],
      session_id: currentJobId,
      uuid: randomUUID(),
    }),
  );
  let currentJobId = '';
  let job: JobControl | undefined;
  // The app's hook callbacks, from `initialize` (which comes before the first message).
  let appHooks: HooksConfig | undefined;
  // What `set_model` without a model goes back to: the job's first model.
  let startModel = '';
  // What the bridge cannot do for this app ends it before any job starts (see `answerControl`).
  let refuseSession: (reason: string) => void = () => undefined;
  const refused = new Promise<string>((resolve) => (refuseSession = resolve));
  const firstPrompt = new Promise<string>((resolve, reject) => {
    let started = false;
    lines.on('line', (line) => {
      if (!line.trim()) return;
      let message: ControlRequest | ControlResponse | UserMessage;
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        process.stderr.write(`durable-agent: a line on stdin is not JSON, ignored: ${line.slice(0, 200)}\n`);
        return;
      }
      if (message.type === 'control_response') {
        answers.get(message.response.request_id)?.(message.response);
        answers.delete(message.response.request_id);
      } else if (message.type === 'control_request') {
        // A request the job can no longer take (it ended meanwhile) gets an error, never silence.
        answerControl(message, job, write, refuseSession, (hooks) => (appHooks = hooks), startModel).catch(
          (error: unknown) =>
            write({
              type: 'control_response',
              response: {
                subtype: 'error',
                request_id: message.request_id,
                error: `${message.request.subtype}: ${(error as Error).message ?? String(error)}`,
              },
            }),
        );
      } else if (message.type === 'user') {
        const text = textOf(message);
        if (!started) {
          started = true;
          resolve(text);
        } else queue.push(text);
      }
    });
    lines.on('close', () => {
      if (!started) reject(new Error('stdin closed before a user message came'));
      queue.end();
    });
  });

  const approver: Approver | undefined =
    flags.values.get('permission-prompt-tool') === 'stdio' ? canUseTool(write, answers) : undefined;
  const first = await Promise.race([firstPrompt.then((text) => ({ text })), refused.then((reason) => ({ reason }))]);
  if ('reason' in first) {
    // As Claude Code ends a session it cannot run: a result that says why, and exit status 1.
    write({
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      errors: [first.reason],
      session_id: '',
      uuid: randomUUID(),
    });
    lines.close();
    return 1;
  }
  const prompt = first.text;
  const runFlags = runFlagsOf(flags);
  const input = {
    ...buildSessionInput(prompt, runFlags, process.env, approver ? undefined : 'the Agent SDK'),
    inputOpen: { idleMs: SDK_INPUT_IDLE_MS },
    ...(flags.allowBypass ? { allowBypassPermissions: true as const } : {}),
    ...(appHooks ? { appHooks } : {}),
  };
  startModel = input.model;
  const resumeId = flags.values.get('resume');
  const sessionError = (jobId: string, error: string) => {
    write({
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      errors: [error],
      session_id: jobId,
      uuid: randomUUID(),
    });
    lines.close();
    return 1;
  };
  return connect(async (client) => {
    let jobId = resumeId ?? newJobId();
    let jobInput: SessionInput = input;
    if (resumeId !== undefined) {
      const status = await client.workflow
        .getHandle(resumeId)
        .describe()
        .then((description) => description.status.name)
        .catch((error: unknown) => {
          if (error instanceof WorkflowNotFoundError) return undefined;
          throw error;
        });
      if (status === undefined)
        return sessionError(resumeId, `no job ${resumeId} to resume on this server: start a new query without resume`);
      if (status !== 'RUNNING') {
        // An ended job stays ended: a new job continues its conversation, as `run --resume` does,
        // and its id is the session_id from here on.
        try {
          const model = runFlags.model !== undefined ? { model: runFlags.model } : {};
          jobInput = await withResume(input, { resume: resumeId, ...model }, { cwd: false }, process.env, (line) =>
            process.stderr.write(`${line}\n`),
          );
        } catch (error) {
          if (!(error instanceof InvalidArgumentError)) throw error;
          return sessionError(resumeId, error.message);
        }
        jobId = newJobId();
      }
    }
    startModel = jobInput.model;
    const outcome = await startOrAttach(client, jobId, jobInput);
    const handle = outcome.handle;
    // Only a job that ended between the look above and the start gets here.
    if (outcome.kind === 'finished')
      return sessionError(jobId, `job ${jobId} ended (${outcome.status}) as it was resumed: resume it again`);
    // Resumed while it runs (the process the SDK started before died, say): the job goes on, and
    // the new message is queued into it, as `send` does; the answers it gave before are not told again.
    let answeredSoFar = 0;
    if (outcome.kind === 'attached') {
      answeredSoFar = (await handle.query(snapshotQuery).catch(() => undefined))?.turnResult?.query ?? 0;
      await handle.signal(userMessageSignal, await queuedMessage(prompt));
    }
    job = {
      abort: () => handle.signal(abortSignal, 'interrupted by the Agent SDK'),
      setPermissionMode: (mode) => handle.signal(setPermissionModeSignal, mode),
      setModel: (model) => handle.signal(setModelSignal, model),
    };
    currentJobId = jobId;
    queue.attach(
      {
        // A long message goes by store reference, as `send` sends it.
        signal: async (text) => handle.signal(userMessageSignal, await queuedMessage(text)),
        close: () => handle.signal(closeInputSignal),
      },
      answeredSoFar,
    );
    const printer = new StreamJsonPrinter(
      out,
      jobId,
      storedToolResults(() => openContentStore(process.env)),
    );
    printer.init({
      jobId,
      cwd: jobInput.workspace,
      model: jobInput.model,
      tools: jobInput.tools ?? TOOL_DEFINITIONS.map((tool) => tool.name),
      permissionMode: jobInput.permissions?.mode ?? 'default',
    });
    const progress = flags.verbose
      ? { write: (text: string) => process.stderr.write(`${text}\n`) }
      : { write: () => {} };
    const { printJobResult } = await import('./cli');
    const askHook = hookCallbackAsker(
      jobId,
      client.workflow,
      write,
      answers,
      storedToolResults(() => openContentStore(process.env)),
      lazyStore(),
    );
    // Each answer's result goes out as it comes, and lets the next message in; the job's questions
    // to the app's hook callbacks are asked.
    const listener: FollowListener = {
      onEvent: (event) => {
        if (event.kind === 'hook_callback') return askHook(event.pending);
        if (event.kind === 'answered' && event.query <= queue.baseline) return;
        printer.onEvent(event);
        if (event.kind === 'answered') queue.onAnswered(event.query);
      },
    };
    const status = await printJobResult(
      jobId,
      handle,
      (h) => follow(h, progress, { printer: listener, ...(approver ? { approver } : {}) }),
      printer,
      // A job that ended completed after answering every message has said all in those results.
      (terminal) => terminal.reason === 'completed' && queue.allAnswered,
    );
    await printer.drain();
    lines.close();
    return status;
  });
}

/** How the SDK registers an event's hook callbacks in `initialize`. */
interface RegisteredMatcher {
  matcher?: string;
  hookCallbackIds?: string[];
  timeout?: number;
  onFailure?: string;
}

/**
 * The app's hook callbacks as the job's hooks (one handler per callback id, named by it), or why
 * they cannot be run: an event durable-agent does not run is refused, never left out in silence.
 */
export function appHooksOf(registered: Record<string, unknown>): { hooks: HooksConfig } | { refused: string } {
  const hooks: HooksConfig = {};
  const unsupported = Object.keys(registered).filter(
    (event) => !(RUN_HOOK_EVENTS as readonly string[]).includes(event),
  );
  if (unsupported.length > 0)
    return {
      refused:
        `durable-agent runs the Agent SDK's PreToolUse, PostToolUse and Stop hook callbacks, not ${unsupported.join(', ')}: ` +
        'leave those out of the hooks option, or use command hooks in .claude/settings.json',
    };
  for (const [event, matchers] of Object.entries(registered)) {
    for (const matcher of (Array.isArray(matchers) ? matchers : []) as RegisteredMatcher[]) {
      const ids = (matcher.hookCallbackIds ?? []).filter((id) => typeof id === 'string' && id !== '');
      if (ids.length === 0) continue;
      (hooks[event] ??= []).push({
        ...(typeof matcher.matcher === 'string' && matcher.matcher !== '' ? { matcher: matcher.matcher } : {}),
        hooks: ids.map((id) => ({
          command: `the Agent SDK app's hook callback ${id}`,
          source: 'the Agent SDK app',
          callback: id,
          ...(typeof matcher.timeout === 'number' && matcher.timeout > 0 ? { timeoutSec: matcher.timeout } : {}),
          ...(matcher.onFailure === 'block' ? { onFailure: 'block' as const } : {}),
        })),
      });
    }
  }
  return { hooks };
}

/**
 * Asks the app's hook callback each time the job waits on one (once per callback, also when a
 * resumed CLI finds it waiting), gives it the hook's timeout, and signals its answer to the job.
 */
function hookCallbackAsker(
  jobId: string,
  client: WorkflowClient,
  write: (message: Record<string, unknown>) => void,
  answers: Map<string, (response: ControlResponse['response']) => void>,
  lookup: (ref: string) => Promise<string | undefined>,
  store: () => Promise<{ get<T>(ref: string): Promise<T> }>,
): (pending: PendingHookCallback) => void {
  const asked = new Set<string>();
  return (pending) => {
    const target = pending.jobId ?? jobId;
    const key = `${target}/${pending.id}`;
    if (asked.has(key)) return;
    asked.add(key);
    void (async () => {
      const toolResponse = pending.toolResponseRef
        ? await lookup(pending.toolResponseRef).catch(() => undefined)
        : undefined;
      // A large Write's content is in the store: the app's hook reads it whole, as a command hook does.
      const toolUseId = pending.toolUseId;
      const toolInput =
        pending.input.tool_input !== undefined && toolUseId
          ? await store()
              .then((opened) => withInputRefsResolved(opened, pending.input.tool_input, toolUseId))
              .catch(() => pending.input.tool_input)
          : undefined;
      const input = {
        ...pending.input,
        session_id: jobId,
        ...(toolInput !== undefined ? { tool_input: toolInput } : {}),
        ...(toolResponse !== undefined ? { tool_response: toolResponse } : {}),
      };
      const requestId = randomUUID();
      const response = await new Promise<ControlResponse['response'] | undefined>((resolve) => {
        const timer = setTimeout(() => {
          answers.delete(requestId);
          write({ type: 'control_cancel_request', request_id: requestId });
          resolve(undefined);
        }, pending.timeoutSec * 1000);
        // The CLI ends with its job, whatever callback it still waits on.
        timer.unref();
        answers.set(requestId, (answer) => {
          clearTimeout(timer);
          resolve(answer);
        });
        write({
          type: 'control_request',
          request_id: requestId,
          request: {
            subtype: 'hook_callback',
            callback_id: pending.callbackId,
            input,
            ...(toolUseId ? { tool_use_id: toolUseId } : {}),
          },
        });
      });
      const answer: HookCallbackAnswer =
        response === undefined
          ? { id: pending.id, timedOut: true }
          : response.subtype === 'success'
            ? { id: pending.id, output: response.response ?? {} }
            : { id: pending.id, error: (response.error || 'the hook callback failed').slice(0, 9_000) };
      try {
        await client.getHandle(target).signal(hookCallbackAnswerSignal, answer);
      } catch (error) {
        // Asked again by the next CLI that follows the job (a resume).
        asked.delete(key);
        process.stderr.write(
          `durable-agent: the answer of hook callback ${pending.callbackId} could not reach job ${target}: ${(error as Error).message}\n`,
        );
      }
    })();
  };
}

/** Control requests: `initialize`, `interrupt`; any other gets an error naming it. */
async function answerControl(
  message: ControlRequest,
  job: JobControl | undefined,
  write: (message: Record<string, unknown>) => void,
  refuseSession: (reason: string) => void,
  registerHooks: (hooks: HooksConfig) => void,
  defaultModel: string,
): Promise<void> {
  const reply = (response: Record<string, unknown>) =>
    write({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response } });
  const refuse = (error: string) =>
    write({ type: 'control_response', response: { subtype: 'error', request_id: message.request_id, error } });
  const { subtype } = message.request;
  if (subtype === 'initialize') {
    const hooks = appHooksOf(message.request.hooks ?? {});
    if ('refused' in hooks) {
      refuse(hooks.refused);
      return refuseSession(hooks.refused);
    }
    if (Object.keys(hooks.hooks).length > 0) registerHooks(hooks.hooks);
    return reply({
      commands: [],
      agents: [],
      output_style: 'default',
      available_output_styles: ['default'],
      models: [],
    });
  }
  if (subtype === 'interrupt') {
    if (!job) return refuse('interrupt: no job is running yet');
    await job.abort();
    return reply({});
  }
  if (subtype === 'set_permission_mode' || subtype === 'set_model') {
    if (!job) return refuse(`${subtype}: no job is running yet; give it as an option of query() instead`);
    const value = subtype === 'set_permission_mode' ? message.request.mode : (message.request.model ?? defaultModel);
    if (subtype === 'set_permission_mode' && !isPermissionMode(value))
      return refuse(
        `set_permission_mode: ${JSON.stringify(value)} is not a permission mode (${PERMISSION_MODES.join(', ')})`,
      );
    if (typeof value !== 'string' || value.trim() === '')
      return refuse(`${subtype}: no ${subtype === 'set_model' ? 'model' : 'mode'} given`);
    await (subtype === 'set_permission_mode' ? job.setPermissionMode(value as PermissionMode) : job.setModel(value));
    // The job takes it at its next turn: a turn under way finishes as it began.
    return reply({});
  }
  return refuse(`durable-agent does not support the control request '${subtype}' yet`);
}

/**
 * The input a call's approval shows a program: the whole of it, its large fields read from the
 * content store; the clipped preview only for jobs from before the whole input was kept.
 */
async function wholeInput(
  pending: PendingApproval,
  store: () => Promise<{ get<T>(ref: string): Promise<T> }>,
): Promise<{ input: unknown; whole: boolean }> {
  if (pending.toolInput !== undefined) {
    const resolved = await store()
      .then((opened) => withInputRefsResolved(opened, pending.toolInput, pending.toolUseId))
      .catch(() => undefined);
    if (resolved !== undefined) return { input: resolved, whole: true };
  }
  try {
    return { input: JSON.parse(pending.input) as unknown, whole: !pending.input.endsWith('…') };
  } catch {
    return { input: { truncated_input: pending.input }, whole: false };
  }
}

/**
 * What the app's `updatedInput` asks to run, as the job takes it: fields it left as they were keep
 * their store reference, so a large Write travels by reference still. Undefined when nothing changed.
 */
export function changedInput(updated: unknown, shown: unknown, original: unknown): Record<string, unknown> | undefined {
  if (typeof updated !== 'object' || updated === null || Array.isArray(updated)) return undefined;
  if (JSON.stringify(updated) === JSON.stringify(shown)) return undefined;
  const before = (typeof original === 'object' && original !== null ? original : {}) as Record<string, unknown>;
  const seen = (typeof shown === 'object' && shown !== null ? shown : {}) as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(updated)) {
    result[key] = isInputFieldRef(before[key]) && value === seen[key] ? before[key] : value;
  }
  return result;
}

/** An approver that asks the SDK app (its `canUseTool`) over the control channel. */
function canUseTool(
  write: (message: Record<string, unknown>) => void,
  answers: Map<string, (response: ControlResponse['response']) => void>,
): Approver {
  const store = lazyStore();
  return async (pending: PendingApproval, signal: AbortSignal) => {
    const { input, whole } = await wholeInput(pending, store);
    // Answered elsewhere, or the job ended, while the input was read.
    if (signal.aborted) return 'skip';
    return new Promise<Awaited<ReturnType<Approver>>>((resolve) => {
      const requestId = randomUUID();
      answers.set(requestId, (response) => {
        if (response.subtype !== 'success') return resolve('skip');
        const answer = response.response as { behavior?: string; message?: string; updatedInput?: unknown } | undefined;
        if (answer?.behavior !== 'allow')
          return resolve({ decision: 'deny', reason: answer?.message || 'denied by the app (canUseTool)' });
        // Allowed as the app changed it: that input runs (and the job checks its deny rules again).
        const updated = changedInput(answer.updatedInput, input, pending.toolInput);
        if (updated && !whole)
          return resolve({
            decision: 'deny',
            reason: 'the app changed an input it was shown only in part, so the change cannot be applied',
          });
        resolve(updated ? { decision: 'allow', updatedInput: updated } : 'allow');
      });
      signal.addEventListener('abort', () => {
        answers.delete(requestId);
        write({ type: 'control_cancel_request', request_id: requestId });
        resolve('skip');
      });
      write({
        type: 'control_request',
        request_id: requestId,
        request: {
          subtype: 'can_use_tool',
          tool_name: pending.toolName,
          input,
          tool_use_id: pending.toolUseId,
          permission_suggestions: [],
          description: pending.reason,
        },
      });
    });
  };
}

/** The content store, opened once when first needed. */
function lazyStore(): () => Promise<{ get<T>(ref: string): Promise<T> }> {
  let opened: ReturnType<typeof openContentStore> | undefined;
  return () => (opened ??= openContentStore(process.env));
}
