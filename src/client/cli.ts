import fs from 'node:fs';
import path from 'node:path';
import { asStreamProgress } from '../shared/stream-progress';
import { thinkingNotice } from '../shared/thinking';
import { Command, InvalidArgumentError } from 'commander';
import { WorkflowFailedError } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { CancelledFailure, TerminatedFailure, TimeoutFailure, WorkflowNotFoundError } from '@temporalio/common';
import { TOOL_DEFINITIONS } from '../shared/tools';
import { packageRoot } from '../worker/package-root';
import type { Terminal } from '../shared/terminal';
import {
  abortSignal,
  approvalSignal,
  DEFAULT_TASK_QUEUE,
  setMaxTurnsSignal,
  snapshotQuery,
  userMessageSignal,
} from '../workflows/definitions';
import { addBatchCommands } from './batch-command';
import { explainCliError } from './cli-errors';
import { approvalTarget, withAgentApprovals } from './agent-approvals';
import { agentNote, pendingApprovalFor } from './approvals';
import { listJobs, parseOutcome } from './job-list';
import type { OutcomeFilter } from './job-list';
import { dataHome } from './config';
import { withClient } from './connect';
import { stopEmbedded } from './embedded';
import { follow, newJobId, startOrAttach } from './jobs';
import { terminalOf, terminalOfFailure } from './job-terminal';
import { parseOlderThan, prune } from './prune';
import { exportTranscript, parseExportFormat } from './export';
import { messageText, queuedMessage } from './send';
import { openContentStore, storeAddressFromEnv } from './store-config';
import { withResume } from './resume';
import { isSdkInvocation } from './sdk-invocation';
import { describeWorkspaceHost, formatWorkspaceHost } from './workspace-host';
import { answerUnlessNoWorker, formatKnownWithoutWorker, knownWithoutWorker, NO_POLL_MS } from './worker-polls';
import type { ResumeFlags } from './resume';
import {
  endedOutsideExitCode,
  exitCodeFor,
  formatSnapshot,
  formatTerminal,
  parseExitStatusScheme,
  stdoutOutput,
} from './render';
import type { ExitStatusScheme } from './render';
import {
  chosenFormat,
  endedFromOutsideMessage,
  parseOutputFormat,
  resultMessage,
  stderrOutput,
  StreamJsonPrinter,
  storedToolResults,
} from './output-format';
import type { OutputFormat } from './output-format';
import type { FollowListener } from './live-events';
import { embeddedNoWorker, refuseBadBaseUrl, refuseWithoutCredentials } from './embedded';
import { pendingActivities } from './live-follower';
import { refuseBatchId } from './batch-id-guard';
import { signalJob } from './signal-job';
import { wakeJob } from './wake';
import {
  buildSessionInput,
  withThinkingOptions,
  collect,
  parseBudgetUsd,
  headlessReason,
  parkWarning,
  parsePositiveInt,
} from './session-options';
import type { RunFlags } from './session-options';

/** This package's version, from its package.json (the same file in a checkout and an install). */
function packageVersion(): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** `run`'s flags as commander hands them over. */
type RunCommandFlags = RunFlags & {
  jobId?: string;
  taskQueue: string;
  detach?: boolean;
  json?: boolean;
  outputFormat?: OutputFormat;
  verbose?: boolean;
  exitStatus: ExitStatusScheme;
} & ResumeFlags;

/** How long `status` waits for a worker to answer the job's query. */
const STATUS_QUERY_WAIT_MS = 15_000;

/** A prompt from stdin goes into the job's input, which Temporal keeps in its history. */
const MAX_STDIN_PROMPT_BYTES = 512 * 1024;

/** How long a prompt argument waits for piped input to begin before it goes alone. */
const STDIN_FIRST_BYTE_WAIT_MS = 2_000;

/**
 * The prompt: the argument, stdin when it is left out or "-" (`git diff | durable-agent run`), or
 * both, as `claude -p` takes them (`cat build.log | durable-agent run "Why did it fail?"`: the
 * argument, then the piped text). With an argument, stdin is read only when it is a pipe or a file,
 * and a pipe that sends nothing within 2 s is left alone, so an inherited, never-closed pipe
 * cannot hang a run.
 */
async function promptFrom(arg: string | undefined): Promise<string> {
  if (arg !== undefined && arg !== '-') {
    const piped = await pipedInput();
    return piped?.trim() ? `${arg}\n\n${piped}` : arg;
  }
  if (process.stdin.isTTY) {
    throw new InvalidArgumentError(
      'No prompt: give it as an argument, e.g. durable-agent run "Check the login module", or pipe it on stdin.',
    );
  }
  return readStdin();
}

/** stdin's text when it is a pipe or a file that has some, else undefined. */
async function pipedInput(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  let stat: fs.Stats;
  try {
    stat = fs.fstatSync(0);
  } catch {
    return undefined;
  }
  if (stat.isFile()) return readStdin();
  if (!stat.isFIFO() && !stat.isSocket()) return undefined;
  const began = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => done(false), STDIN_FIRST_BYTE_WAIT_MS);
    const done = (value: boolean) => {
      clearTimeout(timer);
      process.stdin.off('readable', onReadable);
      process.stdin.off('end', onEnd);
      resolve(value);
    };
    const onReadable = () => done(true);
    const onEnd = () => done(false);
    process.stdin.once('readable', onReadable);
    process.stdin.once('end', onEnd);
  });
  if (!began) {
    process.stdin.pause();
    process.stdin.unref?.();
    return undefined;
  }
  return readStdin();
}

/** All of stdin, decoded as UTF-8 across chunk boundaries, within the size limit. */
async function readStdin(): Promise<string> {
  process.stdin.setEncoding('utf8');
  let text = '';
  for await (const chunk of process.stdin) {
    text += chunk as string;
    if (Buffer.byteLength(text) > MAX_STDIN_PROMPT_BYTES) {
      throw new InvalidArgumentError(
        `The prompt on stdin is over ${MAX_STDIN_PROMPT_BYTES / 1024} KiB: put the material in a file in the workspace and ask the agent to read it.`,
      );
    }
  }
  return text;
}

/** What a quiet (json) run still writes to stderr: what someone may have to act on. */
function attentionListener(jobId: string): FollowListener {
  return {
    onEvent: (event) => {
      if (event.kind === 'notice') stderrOutput.write(`· ${event.text}`);
      else if (event.kind === 'no_worker') {
        stderrOutput.write(
          event.text
            ? `· ${event.text}`
            : `· no worker has answered for ${Math.round(event.afterMs / 1000)} s; is \`durable-agent worker\` running?`,
        );
      } else if (event.kind === 'approval_needed') {
        stderrOutput.write(
          `· ${event.pending.toolName} waits for approval (${event.pending.reason}): durable-agent approve ${jobId}, or deny ${jobId}`,
        );
      }
    },
  };
}

/** How a job ended: its Terminal, or what Temporal says when it was ended from outside. */
type Ended = { kind: 'terminal'; terminal: Terminal } | { kind: 'outside'; status: string; detail: string };

/**
 * Wait for a job's end (by `wait`, e.g. following it, else its result). A job terminated, timed
 * out or cancelled with `temporal` or the UI has no Terminal; that is an ending too, not a crash.
 */
async function jobResult(
  handle: WorkflowHandle,
  wait: (handle: WorkflowHandle) => Promise<Terminal> = (h) => terminalOf(h),
): Promise<Ended> {
  try {
    return { kind: 'terminal', terminal: await wait(handle) };
  } catch (error) {
    // A job that did not complete fails with its Terminal: that is its ending, as a completed one's.
    const terminal = terminalOfFailure(error);
    if (terminal) return { kind: 'terminal', terminal };
    if (!(error instanceof WorkflowFailedError)) throw error;
    const status = (await handle.describe().catch(() => undefined))?.status.name ?? 'FAILED';
    const cause = error.cause;
    const detail =
      cause instanceof TerminatedFailure
        ? cause.message || 'terminated'
        : cause instanceof TimeoutFailure
          ? `timed out (${cause.timeoutType})`
          : cause instanceof CancelledFailure
            ? 'cancelled'
            : (cause?.message ?? error.message);
    return { kind: 'outside', status, detail };
  }
}

/** For the Agent SDK bridge: wait for the job's end (by `wait`), print its stream-json result, return the exit status. */
export async function printJobResult(
  jobId: string,
  handle: WorkflowHandle,
  wait: (handle: WorkflowHandle) => Promise<Terminal>,
  printer: StreamJsonPrinter,
  told: (terminal: Terminal) => boolean = () => false,
): Promise<number> {
  const ended = await jobResult(handle, wait);
  if (ended.kind === 'terminal' && told(ended.terminal)) {
    if (ended.terminal.detail) process.stderr.write(`durable-agent: job ${jobId}: ${ended.terminal.detail}\n`);
    return 0;
  }
  printResult(jobId, ended, 'stream-json', 'simple', printer);
  return typeof process.exitCode === 'number' ? process.exitCode : 0;
}

/**
 * Print how a job ended in the chosen format and set the exit status. In text, the answer goes
 * whole to stdout and the summary to stderr, so `durable-agent run ... > answer.md` keeps only it.
 */
function printResult(
  jobId: string,
  ended: Ended,
  format: OutputFormat,
  exitStatus: ExitStatusScheme,
  streamJson?: StreamJsonPrinter,
  followed = false,
): void {
  const message =
    ended.kind === 'terminal'
      ? resultMessage(jobId, ended.terminal)
      : endedFromOutsideMessage(jobId, ended.status, ended.detail);
  process.exitCode =
    ended.kind === 'terminal' ? exitCodeFor(ended.terminal, exitStatus) : endedOutsideExitCode(exitStatus);
  if (format === 'stream-json') {
    (streamJson ?? new StreamJsonPrinter(stdoutOutput, jobId)).result(message);
  } else if (format === 'json') {
    stdoutOutput.write(JSON.stringify(ended.kind === 'terminal' ? { ...message, terminal: ended.terminal } : message));
  } else if (ended.kind === 'terminal') {
    // At a terminal the answer already streamed on stderr, to the same screen: once is enough.
    const shown = followed && Boolean(process.stdout.isTTY && process.stderr.isTTY);
    if (ended.terminal.finalText && !shown) {
      process.stdout.write(`${ended.terminal.finalText.replace(/\n*$/, '')}\n`);
    }
    stderrOutput.write(`\n${formatTerminal(ended.terminal)}`);
  } else {
    stderrOutput.write(
      `job ${jobId} was ${message.detail ?? ended.status}; it has no Terminal (see its history: temporal workflow show -w ${jobId})`,
    );
  }
}

export function buildProgram(): Command {
  const program = new Command('durable-agent')
    .description("Claude Code's agent loop as a durable Temporal workflow")
    .version(packageVersion(), '-v, --version', 'print the version')
    .showHelpAfterError('(add --help to see the options)');

  const runCommand = program
    .command('run')
    .description('start a job (or attach to the running job with the same --job-id) and follow it')
    .argument('[prompt]', 'what the agent should do; read from stdin when left out or "-"')
    .option('--cwd <dir>', 'workspace the agent works in', process.cwd())
    .option('--job-id <id>', 'name of the job (its workflow id); a running job with this id is attached to')
    .option('--model <model>', 'model (default: $ANTHROPIC_MODEL or claude-sonnet-5-5)')
    .option(
      '--fallback-model <models>',
      'model(s) to switch to after repeated overload, tried in order (comma-separated, at most 3)',
    )
    .option('--max-turns <n>', 'stop before turn n+1', (v) => parsePositiveInt(v, '--max-turns'))
    .option('--max-budget-usd <usd>', 'start no model call once the job has cost this much (USD)', parseBudgetUsd)
    .option('--max-tokens <n>', "output tokens per model call (default: Claude Code's for the model)", (v) =>
      parsePositiveInt(v, '--max-tokens'),
    );
  withThinkingOptions(runCommand)
    .option('--append-system-prompt <text>', 'text added to the system prompt')
    .option('--tools <names>', 'comma-separated tools to offer (default: all)')
    .option(
      '--permission-mode <mode>',
      'default | acceptEdits | plan | bypassPermissions | dontAsk (default dontAsk under CI=true or without a terminal)',
    )
    .option('--allow <rule>', 'allow rule, Claude Code syntax, e.g. "Bash(npm test:*)"; repeatable', collect, [])
    .option('--deny <rule>', 'deny rule, e.g. "Read(./secrets/**)"; repeatable', collect, [])
    .option('--ask <rule>', 'ask rule: always park for approval; repeatable', collect, [])
    .option('--allowedTools <rules>', 'allow rules as claude -p takes them, comma- or space-separated', collect, [])
    .option('--disallowedTools <rules>', 'deny rules as claude -p takes them, comma- or space-separated', collect, [])
    .option(
      '--add-dir <dir>',
      'another directory Read, Glob, Grep and read-only Bash may reach; repeatable',
      collect,
      [],
    )
    .option(
      '--stop-hook <command>',
      'run this shell command when the agent wants to stop (in the sandbox, in the workspace); exit 2 or ' +
        '{"decision":"block","reason":...} sends it back to work; repeatable',
      collect,
      [],
    )
    .option('--stop-hook-timeout <seconds>', 'how long each --stop-hook command may run (default 600)', (v) =>
      parsePositiveInt(v, '--stop-hook-timeout'),
    )
    .option('--no-sandbox', 'run Bash without the OS sandbox (it can then read what the worker user can read)')
    .option(
      '--setting-sources <list>',
      'settings files to read: comma-separated user, project, local (default all; CI: workspace files only add deny/ask)',
    )
    .option('--approval-timeout <seconds>', 'give up waiting for approve/deny after this long', (v) =>
      parsePositiveInt(v, '--approval-timeout'),
    )
    .option('--on-approval-timeout <deny|allow>', 'what an unanswered approval becomes (default deny)')
    .option('--task-queue <name>', 'task queue of the workers', DEFAULT_TASK_QUEUE)
    .option('--detach', 'start the job and return without following it (prints the job id)')
    .option(
      '--output-format <format>',
      'text (progress on stderr, the answer on stdout) | json (one result object) | stream-json (one JSON message per line)',
      parseOutputFormat,
    )
    .option('--json', 'same as --output-format json')
    .option('--verbose', 'with json: print the progress on stderr too')
    .option(
      '--exit-status <scheme>',
      'simple (0 when the job completed, else 1, as claude -p) | detailed (2 max_turns, 3 aborted, 4 budget, 5 ended from outside)',
      parseExitStatusScheme,
      'simple',
    )
    .option('--resume <id>', "start a new job that continues a finished job's conversation (its workspace and model)")
    .option('--resume-from <file>', 'start a new job that continues a Claude Code session JSONL file')
    .action(async (promptArg: string | undefined, flags: RunCommandFlags, command: Command) => {
      const format = chosenFormat(flags);
      const prompt = await promptFrom(promptArg);
      // A machine-readable run is read by a program, which cannot answer an approval either.
      const headless = headlessReason(process.env) ?? (format !== 'text' ? `--output-format ${format}` : undefined);
      const input = await withResume(buildSessionInput(prompt, flags, process.env, headless), flags, {
        cwd: command.getOptionValueSource('cwd') === 'cli',
      });
      // After the flags are checked: a wrong --cwd is worth hearing first, key or no key.
      if (headless !== undefined && !flags.detach) refuseWithoutCredentials(process.env);
      refuseBadBaseUrl(process.env);
      const warning = parkWarning(input, headless);
      if (warning) process.stderr.write(`${warning}\n`);
      const thinkingNote = input.thinking && thinkingNotice(input.model, input.thinking, input.effort);
      if (thinkingNote) process.stderr.write(`· ${thinkingNote}\n`);
      const jobId = flags.jobId ?? newJobId();
      await withClient(true, async ({ client, description, embedded }) => {
        const outcome = await startOrAttach(client, jobId, input, flags.taskQueue);
        if (outcome.kind === 'finished') {
          process.stderr.write(`job ${jobId} already ended (${outcome.status}); its result:\n`);
          printResult(jobId, await jobResult(outcome.handle), format, flags.exitStatus);
          return;
        }
        process.stderr.write(
          `${outcome.kind === 'started' ? 'started' : 'attached to running'} job ${jobId} on ${description}\n`,
        );
        if (flags.detach) {
          stdoutOutput.write(jobId);
          return;
        }
        const streamJson =
          format === 'stream-json'
            ? new StreamJsonPrinter(
                stdoutOutput,
                jobId,
                storedToolResults(() => openContentStore(process.env)),
              )
            : undefined;
        streamJson?.init({
          jobId,
          cwd: input.workspace,
          model: input.model,
          tools: input.tools ?? TOOL_DEFINITIONS.map((tool) => tool.name),
          permissionMode: input.permissions?.mode ?? 'default',
        });
        // At an interactive terminal a parked call is asked about here, as Claude Code asks.
        const interactive = format === 'text' && headless === undefined && Boolean(process.stderr.isTTY);
        const approver = interactive ? (await import('./tty-approver')).ttyApprover : undefined;
        const progress = format === 'text' || flags.verbose ? stderrOutput : { write: () => undefined };
        // json without --verbose still says on stderr what needs someone: a parked call, a
        // notice (waiting for credentials, a recovery), no worker answering.
        const printer = streamJson ?? (format === 'json' && !flags.verbose ? attentionListener(jobId) : undefined);
        const ended = await jobResult(outcome.handle, (handle) =>
          follow(handle, progress, {
            ...(approver ? { approver } : {}),
            ...(printer ? { printer } : {}),
            ...(embedded ? { noWorker: embeddedNoWorker() } : {}),
          }),
        );
        printResult(jobId, ended, format, flags.exitStatus, streamJson, format === 'text');
        await streamJson?.drain();
      });
    });

  addBatchCommands(program);

  program
    .command('approve')
    .description('allow the tool call a job is waiting on')
    .argument('<id>', 'job id')
    .option('--tool <toolUseId>', 'which call, when several wait')
    .option('--always', 'also allow calls like it for the rest of the job (adds the suggested rule)')
    .action(async (id: string, flags: { tool?: string; always?: boolean }) => {
      // The job's state is asked first: a worker must answer, so one is started if none runs.
      await withClient(true, async ({ client }) => {
        await refuseBatchId(client, id, 'approve one of its jobs');
        const handle = client.workflow.getHandle(id);
        const pending = await pendingApprovalFor(handle, flags.tool);
        await client.workflow.getHandle(approvalTarget(pending, id)).signal(approvalSignal, {
          toolUseId: pending.toolUseId,
          decision: 'allow',
          always: flags.always ?? false,
        });
        stdoutOutput.write(
          `approved ${pending.toolName} ${pending.input}${agentNote(pending)}` +
            (flags.always ? `\n  rule added for this job: ${pending.suggestedRule}` : ''),
        );
      });
    });

  program
    .command('deny')
    .description('refuse the tool call a job is waiting on; the model is told why')
    .argument('<id>', 'job id')
    .option('--tool <toolUseId>', 'which call, when several wait')
    .option('--reason <text>', 'told to the model')
    .action(async (id: string, flags: { tool?: string; reason?: string }) => {
      // The job's state is asked first: a worker must answer, so one is started if none runs.
      await withClient(true, async ({ client }) => {
        await refuseBatchId(client, id, 'deny a call of one of its jobs');
        const handle = client.workflow.getHandle(id);
        const pending = await pendingApprovalFor(handle, flags.tool);
        await client.workflow.getHandle(approvalTarget(pending, id)).signal(approvalSignal, {
          toolUseId: pending.toolUseId,
          decision: 'deny',
          ...(flags.reason ? { reason: flags.reason } : {}),
        });
        stdoutOutput.write(`denied ${pending.toolName} ${pending.input}${agentNote(pending)}`);
      });
    });

  program
    .command('ls')
    .description('list recent jobs: outcome, turns, cost, model, age; parked ones with what they want to run')
    .option('--limit <n>', 'how many', (v) => parsePositiveInt(v, '--limit'), 20)
    .option(
      '--outcome <outcome>',
      'only jobs that ended so (a Terminal reason, running, terminated, timed_out, cancelled) or a group: failed, aborted',
      parseOutcome,
    )
    .action(async (flags: { limit: number; outcome?: OutcomeFilter }) => {
      await withClient(true, async ({ client }) => {
        for (const line of await listJobs(client, flags.limit, flags.outcome)) stdoutOutput.write(line);
      });
    });

  program
    .command('status')
    .description("show a job's live state: phase, turn, running tools, usage")
    .argument('<id>', 'job id')
    .option('--json', 'print the snapshot as JSON')
    .action(async (id: string, flags: { json?: boolean }) => {
      await withClient(true, async ({ client, startedWorker }) => {
        await refuseBatchId(client, id, 'see it with `durable-agent batch status <id>`');
        const handle = client.workflow.getHandle(id);
        const description = await handle.describe();
        // Only a worker answers the query: when none polls the job's queue (or the one this
        // command just started is not polling yet), what the server knows is shown at once.
        const answer =
          startedWorker !== undefined
            ? ({ noWorker: true } as const)
            : await answerUnlessNoWorker(
                client,
                description.taskQueue,
                () => handle.query(snapshotQuery, 0),
                STATUS_QUERY_WAIT_MS,
              ).catch((error: unknown) => {
                if (error instanceof WorkflowNotFoundError) throw error;
                return undefined;
              });
        if (answer && 'noWorker' in answer) {
          const known = await knownWithoutWorker(client, id, description, pendingActivities(description));
          const queue = description.taskQueue;
          const hint =
            startedWorker !== undefined
              ? `the background worker had stopped: started it again (pid ${startedWorker}); the job goes on, and ` +
                `\`durable-agent status ${id}\` shows its live state once that worker polls, in a few seconds`
              : `no worker polls task queue ${queue} (none has for over ${NO_POLL_MS / 1000} s), so the job's live ` +
                `state is unknown and it does not go on: start one with \`durable-agent worker --task-queue ${queue}\``;
          stdoutOutput.write(
            flags.json ? JSON.stringify({ ...known, noWorker: hint }, null, 2) : formatKnownWithoutWorker(id, known),
          );
          process.stderr.write(`· ${hint}\n`);
          return;
        }
        const snapshot = answer?.answer && (await withAgentApprovals(client.workflow, answer.answer));
        if (!snapshot) {
          throw new Error(
            `job ${id} is ${description.status.name}, but no worker answered its query within ${STATUS_QUERY_WAIT_MS / 1000} s: ` +
              `start one for task queue ${description.taskQueue} with \`durable-agent worker --task-queue ${description.taskQueue}\`.`,
          );
        }
        // A running job's tools wait on its workspace host: whether that host is there to run them.
        const host =
          snapshot.hostQueue && !snapshot.terminal && description.status.name === 'RUNNING'
            ? await describeWorkspaceHost(client, snapshot.hostQueue, description)
            : undefined;
        // A call that failed and is tried again (a model API it cannot reach): what went wrong, while it lasts.
        const pending = pendingActivities(description);
        const retrying = pending
          .filter((activity) => activity.attempt > 1 && activity.lastFailure)
          .map((activity) => ({
            activity: activity.activityType,
            attempt: activity.attempt,
            maximumAttempts: activity.maximumAttempts,
            lastFailure: activity.lastFailure as string,
          }));
        // The model call streaming now, when it is in a thinking block: how much it has thought.
        const thinkingChars = pending
          .filter((activity) => activity.activityType === 'callModel')
          .map((activity) => asStreamProgress(activity.details))
          .find((progress) => progress?.thinking !== undefined)?.thinking;
        if (flags.json) {
          const workspaceHost = host ? { workspaceHost: host } : {};
          stdoutOutput.write(
            JSON.stringify(
              {
                status: description.status.name,
                ...snapshot,
                ...workspaceHost,
                ...(retrying.length ? { retrying } : {}),
                ...(thinkingChars !== undefined ? { modelThinkingChars: thinkingChars } : {}),
              },
              null,
              2,
            ),
          );
        } else {
          const hostLines = host
            ? formatWorkspaceHost(host)
                .map((line) => `\n${line}`)
                .join('')
            : '';
          const retryLines = retrying
            .map(
              (call) =>
                `\n  retrying ${call.activity} (attempt ${call.attempt}${call.maximumAttempts ? ` of at most ${call.maximumAttempts}` : ''}): ${call.lastFailure}`,
            )
            .join('');
          const thinkingLine =
            thinkingChars !== undefined
              ? `\n  the model is thinking (${thinkingChars} characters of thought so far)`
              : '';
          stdoutOutput.write(
            `${formatSnapshot(id, snapshot)}${thinkingLine}${hostLines}${retryLines}\n  workflow status: ${description.status.name}`,
          );
        }
      });
    });

  program
    .command('tail')
    .description(
      'show what a job did so far, then follow it live to its end: turns, tool calls, retries, the reply as it ' +
        'streams (Ctrl-C stops watching; the job keeps running)',
    )
    .argument('<id>', 'job id')
    .option(
      '--exit-status <scheme>',
      'simple (0 when the job completed, else 1, as claude -p) | detailed (2 max_turns, 3 aborted, 4 budget, 5 ended from outside)',
      parseExitStatusScheme,
      'simple',
    )
    .action(async (id: string, flags: { exitStatus: ExitStatusScheme }) => {
      const { tailJob } = await import('./tail');
      await withClient(true, async ({ client, embedded }) => {
        await refuseBatchId(
          client,
          id,
          'follow it with `durable-agent batch status <id>` (or by running its tasks file again)',
        );
        const stop = new AbortController();
        // The first Ctrl-C stops watching; a second one, handled by Node again, ends the process at once.
        const onInterrupt = () => stop.abort();
        process.once('SIGINT', onInterrupt);
        try {
          process.exitCode = await tailJob(client, id, stdoutOutput, {
            signal: stop.signal,
            notes: { write: (line) => process.stderr.write(`${line}\n`) },
            exitStatus: flags.exitStatus,
            ...(embedded ? { noWorker: embeddedNoWorker() } : {}),
          });
        } finally {
          process.off('SIGINT', onInterrupt);
        }
      });
    });

  program
    .command('abort')
    .description('stop a job: cancels its model call or tools')
    .argument('<id>', 'job id')
    .option('--reason <text>', 'recorded in the Terminal')
    .action(async (id: string, flags: { reason?: string }) => {
      await withClient(false, async ({ client }) => {
        const ended = await signalJob(
          client,
          id,
          (handle) => handle.signal(abortSignal, flags.reason),
          (ending) => ({ say: `job ${id} had already ended (${ending}); nothing to abort` }),
        );
        stdoutOutput.write(ended ?? `abort sent to ${id}`);
      });
    });

  program
    .command('wake')
    .description('wake a job that sleeps on a wake-up it scheduled (ScheduleWakeup) now, not at its time')
    .argument('<id>', 'job id')
    .action(async (id: string) => {
      // The job's state is asked first: a worker must answer, so one is started if none runs.
      await withClient(true, async ({ client }) => {
        await refuseBatchId(client, id, 'wake one of its jobs');
        stdoutOutput.write(await wakeJob(client, id));
      });
    });

  program
    .command('max-turns')
    .description("change a running job's turn limit")
    .argument('<id>', 'job id')
    .argument('<n>', 'new limit', (v) => parsePositiveInt(v, 'the turn limit'))
    .action(async (id: string, n: number) => {
      await withClient(false, async ({ client }) => {
        await refuseBatchId(
          client,
          id,
          'its tasks take --max-turns when the batch starts; a running job takes max-turns',
        );
        await signalJob(
          client,
          id,
          (handle) => handle.signal(setMaxTurnsSignal, n),
          (ending) => ({ refuse: `job ${id} has ended (${ending}): a turn limit no longer applies to it.` }),
        );
        stdoutOutput.write(`maxTurns of ${id} set to ${n}`);
      });
    });

  program
    .command('send')
    .description('queue more instructions; they join the conversation at the next turn boundary')
    .argument('<id>', 'job id')
    .argument('[text]', 'the message')
    .option('--file <path>', 'send the text of this file (- for stdin); long text is kept by reference')
    .action(async (id: string, arg: string | undefined, flags: { file?: string }) => {
      const message = await queuedMessage(messageText(arg, flags.file));
      await withClient(false, async ({ client }) => {
        await refuseBatchId(client, id, 'send the message to one of its jobs');
        await signalJob(
          client,
          id,
          (handle) => handle.signal(userMessageSignal, message),
          (ending) => ({
            refuse:
              `job ${id} has ended (${ending}), so it takes no more messages: go on from its conversation ` +
              `with \`durable-agent run --resume ${id} "<text>"\`.`,
          }),
        );
        stdoutOutput.write(`message queued for ${id}`);
      });
    });

  program
    .command('export')
    .description("write a finished job's transcript as Claude Code session JSONL (stdout by default)")
    .argument('<id>', 'job id')
    .option('--format <format>', 'jsonl (the only one)', parseExportFormat, 'jsonl')
    .option('--output <file>', 'write to this file instead of stdout')
    .action(async (id: string, flags: { output?: string }) => {
      // A malformed DURABLE_AGENT_STORE is refused before Temporal is reached.
      storeAddressFromEnv();
      await withClient(false, async ({ client }) => {
        await refuseBatchId(client, id, 'export its transcripts with `durable-agent batch export <id>`');
        const { text, lines } = await exportTranscript(client, id);
        if (flags.output === undefined) {
          process.stdout.write(text);
          return;
        }
        fs.writeFileSync(flags.output, text);
        process.stderr.write(`wrote ${lines} lines to ${flags.output}\n`);
      });
    });

  program
    .command('result')
    .description("wait for a job's end and print its result: the answer on stdout, the Terminal on stderr")
    .argument('<id>', 'job id')
    .option('--output-format <format>', 'text | json | stream-json (the result line only)', parseOutputFormat)
    .option('--json', 'same as --output-format json')
    .option(
      '--exit-status <scheme>',
      'simple (0 when the job completed, else 1, as claude -p) | detailed (2 max_turns, 3 aborted, 4 budget, 5 ended from outside)',
      parseExitStatusScheme,
      'simple',
    )
    .action(
      async (id: string, flags: { json?: boolean; outputFormat?: OutputFormat; exitStatus: ExitStatusScheme }) => {
        await withClient(true, async ({ client }) => {
          await refuseBatchId(client, id, 'see its results with `durable-agent batch status <id>`');
          const handle = client.workflow.getHandle(id);
          // A running job may take hours: say that this waits, and what Ctrl-C does (and does not).
          if ((await handle.describe()).status.name === 'RUNNING') {
            process.stderr.write(`waiting for job ${id} to end; Ctrl-C stops waiting, not the job\n`);
          }
          const onInterrupt = () => {
            process.stderr.write(
              `stopped waiting; job ${id} keeps running (durable-agent result ${id} to wait again)\n`,
            );
            process.exit(130);
          };
          process.once('SIGINT', onInterrupt);
          try {
            printResult(id, await jobResult(handle), chosenFormat(flags), flags.exitStatus);
          } finally {
            process.off('SIGINT', onInterrupt);
          }
        });
      },
    );

  program
    .command('worker')
    .description('run a worker in the foreground (needs TEMPORAL_ADDRESS, or uses the embedded server)')
    .option('--task-queue <name>', `task queue to poll (default: DURABLE_AGENT_TASK_QUEUE, else ${DEFAULT_TASK_QUEUE})`)
    .action(async (flags: { taskQueue?: string }) => {
      // A supervisor (systemd's EnvironmentFile, a pod's env) sets the queue in the environment.
      const taskQueue = flags.taskQueue ?? (process.env.DURABLE_AGENT_TASK_QUEUE?.trim() || DEFAULT_TASK_QUEUE);
      const env: NodeJS.ProcessEnv = { ...process.env, DURABLE_AGENT_TASK_QUEUE: taskQueue };
      if (!env.TEMPORAL_ADDRESS) {
        const { ensureEmbeddedServer } = await import('./embedded');
        env.TEMPORAL_ADDRESS = (await ensureEmbeddedServer()).address;
      }
      const { runWorker } = await import('../worker/main');
      await runWorker(env);
    });

  program
    .command('prune')
    .description(
      'delete what only jobs closed longer ago than the age still use: store objects, journals, result files',
    )
    .requiredOption(
      '--older-than <age>',
      'remove what was written, and whose job closed, longer ago than this: 30m, 12h, 7d',
      parseOlderThan,
    )
    .option('--dry-run', 'print what would go and remove nothing')
    .option('--workspace <dir>', "also clean this workspace's journal and result files; repeatable", collect, [])
    .action(async (flags: { olderThan: number; dryRun?: boolean; workspace: string[] }) => {
      await prune(
        { olderThanMs: flags.olderThan, dryRun: flags.dryRun ?? false, workspaces: flags.workspace },
        stdoutOutput,
      );
    });

  program
    .command('stop')
    .description('stop the embedded Temporal server and background worker (jobs stay on disk)')
    .action(async () => {
      const stopped = await stopEmbedded();
      stdoutOutput.write(stopped.length ? `stopped ${stopped.join(', ')}` : `nothing running under ${dataHome()}`);
    });

  program
    .command('tool')
    .description('run one tool call outside Temporal, through the permission rules, and print its tool_result')
    .argument('<name>', 'tool name: Read, Write, Edit, MultiEdit, Glob, Grep, Bash')
    .argument('<json>', 'the tool\'s input as JSON, e.g. \'{"file_path":"README.md"}\'')
    .option('--cwd <dir>', 'workspace', process.cwd())
    .option('--permission-mode <mode>', 'default | acceptEdits | plan | bypassPermissions | dontAsk')
    .option('--allow <rule>', 'allow rule; repeatable', collect, [])
    .option('--deny <rule>', 'deny rule; repeatable', collect, [])
    .option('--ask <rule>', 'ask rule; repeatable', collect, [])
    .option('--yes', 'run a call the rules would ask about')
    .option('--no-sandbox', 'run Bash without the OS sandbox')
    .action(async (name: string, json: string, flags: RunFlags & { cwd: string; yes?: boolean }) => {
      const { permissions } = buildSessionInput('tool', flags);
      const { runToolCommand } = await import('./tool-command');
      process.exitCode = await runToolCommand(
        name,
        json,
        {
          cwd: flags.cwd,
          ...(permissions?.mode ? { permissionMode: permissions.mode } : {}),
          allow: permissions?.allow ?? [],
          deny: permissions?.deny ?? [],
          ask: permissions?.ask ?? [],
          yes: flags.yes ?? false,
          ...(permissions?.restrictWorkspace ? { restrictWorkspace: true } : {}),
          ...(flags.sandbox === false ? { noSandbox: true } : {}),
        },
        stdoutOutput,
        { write: (line) => process.stderr.write(`${line}\n`) },
      );
    });

  program
    .command('demo')
    .description('run the bundled example: check the login module of a small repository')
    .action(async () => {
      // Loaded here: the demo brings the worker and the model server, which no other command needs.
      const { runDemo } = await import('./demo');
      process.exitCode = exitCodeFor(await runDemo(stdoutOutput), 'simple');
    });

  return program;
}

export async function main(argv: string[]): Promise<void> {
  // A reader that stopped reading (`ls | head`) is not an error: stop quietly, as other tools do.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  try {
    // Invoked as the Agent SDK invokes Claude Code: no subcommand, stream-json in and out.
    const args = argv.slice(2);
    if (isSdkInvocation(args)) {
      const { runSdkBridge } = await import('./sdk-bridge');
      process.exitCode = await runSdkBridge(args, (fn) => withClient(true, ({ client }) => fn(client)));
      return;
    }
    await buildProgram().parseAsync(argv);
  } catch (error) {
    process.stderr.write(`durable-agent: ${explainCliError(error)}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main(process.argv);
