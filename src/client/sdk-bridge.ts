/**
 * The Claude Agent SDK's side of durable-agent: invoked as the SDK invokes Claude Code (no
 * subcommand, `--output-format stream-json --verbose --input-format stream-json` and the flags of
 * its options), it reads the SDK's messages from stdin as JSON lines and answers on stdout:
 *
 * - `control_request` `initialize` gets a `control_response`; hook callbacks are refused by name,
 *   since this version does not run them (an app that registered one hears so at once);
 * - the first `user` message starts the job (its text is the prompt); later ones while it runs are
 *   queued into it as `send` does;
 * - the job's progress goes out as Claude Code's stream-json messages, then the `result`;
 * - a call the job's rules ask about becomes a `can_use_tool` control request when the SDK asked
 *   for `--permission-prompt-tool stdio`, and the app's answer is the durable approval;
 * - `interrupt` aborts the job; any other control request is answered with an error naming it.
 *
 * The job is durable: this process may die, and the job goes on in Temporal.
 */
import { randomUUID } from 'node:crypto';
import readline from 'node:readline';
import type { PendingApproval } from '../shared/session';
import { TOOL_DEFINITIONS } from '../shared/tools';
import { abortSignal, userMessageSignal } from '../workflows/definitions';
import type { Approver } from './jobs';
import { follow, newJobId, startOrAttach } from './jobs';
import { StreamJsonPrinter, storedToolResults } from './output-format';
import type { Output } from './render';
import { stdoutOutput } from './render';
import { buildSessionInput, parseBudgetUsd, parsePositiveInt } from './session-options';
import type { RunFlags } from './session-options';
import { openContentStore } from './store-config';

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
const BARE_FLAGS = new Set(['verbose']);

/** Whether `args` (after the program name) are the SDK's: no subcommand, stream-json in. */
export function isSdkInvocation(args: readonly string[]): boolean {
  return (
    args.length > 0 &&
    args[0]!.startsWith('--') &&
    args.some((arg) => arg === '--input-format' || arg.startsWith('--input-format='))
  );
}

export interface SdkFlags {
  values: Map<string, string>;
  verbose: boolean;
}

/** The SDK's flags; an unknown one is an error naming it, as the SDK's own CLI gives. */
export function parseSdkFlags(args: readonly string[]): SdkFlags {
  const values = new Map<string, string>();
  let verbose = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument '${arg}': the prompt comes on stdin`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (BARE_FLAGS.has(name)) {
      verbose = true;
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
  return { values, verbose };
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
  signal: (text: string) => Promise<void>;
  abort: () => Promise<void>;
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
  let job: JobControl | undefined;
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
        void answerControl(message, job, write, refuseSession);
      } else if (message.type === 'user') {
        const text = textOf(message);
        if (!started) {
          started = true;
          resolve(text);
        } else if (job) void job.signal(text).catch(() => undefined);
      }
    });
    lines.on('close', () => {
      if (!started) reject(new Error('stdin closed before a user message came'));
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
  const input = buildSessionInput(prompt, runFlags, process.env, approver ? undefined : 'the Agent SDK');
  const jobId = flags.values.get('resume') ?? newJobId();
  return connect(async (client) => {
    const outcome = await startOrAttach(client, jobId, input);
    const handle = outcome.handle;
    if (outcome.kind === 'finished') {
      // Claude Code would go on with the ended session; a job that ended stays ended here.
      write({
        type: 'result',
        subtype: 'error_during_execution',
        is_error: true,
        errors: [
          `job ${jobId} has ended (${outcome.status}): resuming an ended job from the Agent SDK is not supported yet; ` +
            'start a new query, or continue it with `durable-agent run --resume`',
        ],
        session_id: jobId,
        uuid: randomUUID(),
      });
      lines.close();
      return 1;
    }
    // Resumed while it runs (the process the SDK started before died, say): the job goes on, and
    // the new message is queued into it, as `send` does.
    if (outcome.kind === 'attached') await handle.signal(userMessageSignal, prompt);
    job = {
      signal: (text) => handle.signal(userMessageSignal, text),
      abort: () => handle.signal(abortSignal, 'interrupted by the Agent SDK'),
    };
    const printer = new StreamJsonPrinter(
      out,
      jobId,
      storedToolResults(() => openContentStore(process.env)),
    );
    printer.init({
      jobId,
      cwd: input.workspace,
      model: input.model,
      tools: input.tools ?? TOOL_DEFINITIONS.map((tool) => tool.name),
      permissionMode: input.permissions?.mode ?? 'default',
    });
    const progress = flags.verbose
      ? { write: (text: string) => process.stderr.write(`${text}\n`) }
      : { write: () => {} };
    const { printJobResult } = await import('./cli');
    const status = await printJobResult(
      jobId,
      handle,
      (h) => follow(h, progress, { printer, ...(approver ? { approver } : {}) }),
      printer,
    );
    await printer.drain();
    lines.close();
    return status;
  });
}

/** Control requests: `initialize`, `interrupt`; any other gets an error naming it. */
async function answerControl(
  message: ControlRequest,
  job: JobControl | undefined,
  write: (message: Record<string, unknown>) => void,
  refuseSession: (reason: string) => void,
): Promise<void> {
  const reply = (response: Record<string, unknown>) =>
    write({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response } });
  const refuse = (error: string) =>
    write({ type: 'control_response', response: { subtype: 'error', request_id: message.request_id, error } });
  const { subtype } = message.request;
  if (subtype === 'initialize') {
    const hooks = Object.keys(message.request.hooks ?? {});
    if (hooks.length > 0) {
      const reason = `durable-agent does not run the Agent SDK's hook callbacks yet (${hooks.join(', ')}): use command hooks in .claude/settings.json, or leave the hooks option out`;
      refuse(reason);
      return refuseSession(reason);
    }
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
  return refuse(`durable-agent does not support the control request '${subtype}' yet`);
}

/** An approver that asks the SDK app (its `canUseTool`) over the control channel. */
function canUseTool(
  write: (message: Record<string, unknown>) => void,
  answers: Map<string, (response: ControlResponse['response']) => void>,
): Approver {
  return (pending: PendingApproval, signal: AbortSignal) =>
    new Promise<Awaited<ReturnType<Approver>>>((resolve) => {
      const requestId = randomUUID();
      let input: unknown;
      try {
        input = JSON.parse(pending.input) as unknown;
      } catch {
        input = { truncated_input: pending.input };
      }
      answers.set(requestId, (response) => {
        if (response.subtype !== 'success') return resolve('skip');
        const answer = response.response as { behavior?: string; message?: string; updatedInput?: unknown } | undefined;
        if (answer?.behavior !== 'allow')
          return resolve({ decision: 'deny', reason: answer?.message || 'denied by the app (canUseTool)' });
        // The job runs the call as the model made it: a changed input cannot be honoured yet, so
        // the call is refused rather than run with what the app did not allow.
        if (answer.updatedInput !== undefined && JSON.stringify(answer.updatedInput) !== JSON.stringify(input))
          return resolve({
            decision: 'deny',
            reason: 'the app allowed this call only with a changed input, which durable-agent cannot apply yet',
          });
        resolve('allow');
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
}
