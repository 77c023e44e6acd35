import { Command, InvalidArgumentError } from 'commander';
import type { Terminal } from '../shared/terminal';
import {
  abortSignal,
  approvalSignal,
  DEFAULT_TASK_QUEUE,
  setMaxTurnsSignal,
  snapshotQuery,
  userMessageSignal,
} from '../workflows/definitions';
import { listJobs, pendingApprovalFor } from './approvals';
import { dataHome } from './config';
import { connect } from './connect';
import type { Connected } from './connect';
import { runDemo } from './demo';
import { stopEmbedded } from './embedded';
import { follow, newJobId, startOrAttach } from './jobs';
import { parseOlderThan, prune } from './prune';
import { exitCodeFor, formatSnapshot, formatTerminal, stdoutOutput } from './render';
import { buildSessionInput, parsePositiveInt } from './session-options';
import type { RunFlags } from './session-options';

/** Runs `fn` with a Temporal connection and closes it afterwards. */
async function withClient<T>(withWorker: boolean, fn: (connected: Connected) => Promise<T>): Promise<T> {
  const connected = await connect({ withWorker });
  try {
    return await fn(connected);
  } finally {
    await connected.connection.close();
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `followed`: the reply text was already printed as the job ran, so only the Terminal follows. */
function printTerminal(terminal: Terminal, json: boolean, followed = false): void {
  if (json) stdoutOutput.write(JSON.stringify(terminal, null, 2));
  else {
    if (terminal.finalText && !followed) stdoutOutput.write(`\n${terminal.finalText}`);
    stdoutOutput.write(`\n${formatTerminal(terminal)}`);
  }
  process.exitCode = exitCodeFor(terminal);
}

export function buildProgram(): Command {
  const program = new Command('durable-agent')
    .description("Claude Code's agent loop as a durable Temporal workflow")
    .showHelpAfterError();

  program
    .command('run')
    .description('start a job (or attach to the running job with the same --job-id) and follow it')
    .argument('<prompt>', 'what the agent should do')
    .option('--cwd <dir>', 'workspace the agent works in', process.cwd())
    .option('--job-id <id>', 'name of the job (its workflow id); a running job with this id is attached to')
    .option('--model <model>', 'model (default: $ANTHROPIC_MODEL or claude-sonnet-5-5)')
    .option(
      '--fallback-model <models>',
      'model(s) to switch to after repeated overload, tried in order (comma-separated, at most 3)',
    )
    .option('--max-turns <n>', 'stop before turn n+1', (v) => parsePositiveInt(v, '--max-turns'))
    .option('--max-tokens <n>', 'output tokens per model call', (v) => parsePositiveInt(v, '--max-tokens'))
    .option('--append-system-prompt <text>', 'text added to the system prompt')
    .option('--tools <names>', 'comma-separated tools to offer (default: all)')
    .option('--permission-mode <mode>', 'default | acceptEdits | plan | bypassPermissions | dontAsk (CI: dontAsk)')
    .option('--allow <rule>', 'allow rule, Claude Code syntax, e.g. "Bash(npm test:*)"; repeatable', collect, [])
    .option('--deny <rule>', 'deny rule, e.g. "Read(./secrets/**)"; repeatable', collect, [])
    .option('--ask <rule>', 'ask rule: always park for approval; repeatable', collect, [])
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
    .option('--detach', 'start the job and return without following it')
    .option('--json', 'print the Terminal as JSON')
    .action(
      async (
        prompt: string,
        flags: RunFlags & { jobId?: string; taskQueue: string; detach?: boolean; json?: boolean },
      ) => {
        const input = buildSessionInput(prompt, flags);
        const jobId = flags.jobId ?? newJobId();
        await withClient(true, async ({ client, description }) => {
          const outcome = await startOrAttach(client, jobId, input, flags.taskQueue);
          if (outcome.kind === 'finished') {
            process.stderr.write(`job ${jobId} already ended (${outcome.status}); its result:\n`);
            printTerminal(await outcome.handle.result(), flags.json ?? false);
            return;
          }
          process.stderr.write(
            `${outcome.kind === 'started' ? 'started' : 'attached to running'} job ${jobId} on ${description}\n`,
          );
          if (flags.detach) {
            stdoutOutput.write(jobId);
            return;
          }
          // At an interactive terminal a parked call is asked about here, as Claude Code asks.
          const interactive = !flags.json && Boolean(process.stdin.isTTY && process.stdout.isTTY);
          const approver = interactive ? (await import('./tty-approver')).ttyApprover : undefined;
          const out = flags.json ? { write: () => undefined } : stdoutOutput;
          printTerminal(await follow(outcome.handle, out, approver ? { approver } : {}), flags.json ?? false, true);
        });
      },
    );

  program
    .command('approve')
    .description('allow the tool call a job is waiting on')
    .argument('<id>', 'job id')
    .option('--tool <toolUseId>', 'which call, when several wait')
    .option('--always', 'also allow calls like it for the rest of the job (adds the suggested rule)')
    .action(async (id: string, flags: { tool?: string; always?: boolean }) => {
      // The job's state is asked first: a worker must answer, so one is started if none runs.
      await withClient(true, async ({ client }) => {
        const handle = client.workflow.getHandle(id);
        const pending = await pendingApprovalFor(handle, flags.tool);
        await handle.signal(approvalSignal, {
          toolUseId: pending.toolUseId,
          decision: 'allow',
          always: flags.always ?? false,
        });
        stdoutOutput.write(
          `approved ${pending.toolName} ${pending.input}` +
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
        const handle = client.workflow.getHandle(id);
        const pending = await pendingApprovalFor(handle, flags.tool);
        await handle.signal(approvalSignal, {
          toolUseId: pending.toolUseId,
          decision: 'deny',
          ...(flags.reason ? { reason: flags.reason } : {}),
        });
        stdoutOutput.write(`denied ${pending.toolName} ${pending.input}`);
      });
    });

  program
    .command('ls')
    .description('list recent jobs, with those waiting for approval and what they want to run')
    .option('--limit <n>', 'how many', (v) => parsePositiveInt(v, '--limit'), 20)
    .action(async (flags: { limit: number }) => {
      await withClient(true, async ({ client }) => {
        for (const line of await listJobs(client, flags.limit)) stdoutOutput.write(line);
      });
    });

  program
    .command('status')
    .description("show a job's live state: phase, turn, running tools, usage")
    .argument('<id>', 'job id')
    .option('--json', 'print the snapshot as JSON')
    .action(async (id: string, flags: { json?: boolean }) => {
      await withClient(true, async ({ client }) => {
        const handle = client.workflow.getHandle(id);
        const description = await handle.describe();
        const snapshot = await handle.query(snapshotQuery, 0);
        if (flags.json) stdoutOutput.write(JSON.stringify({ status: description.status.name, ...snapshot }, null, 2));
        else stdoutOutput.write(`${formatSnapshot(id, snapshot)}\n  workflow status: ${description.status.name}`);
      });
    });

  program
    .command('abort')
    .description('stop a job: cancels its model call or tools')
    .argument('<id>', 'job id')
    .option('--reason <text>', 'recorded in the Terminal')
    .action(async (id: string, flags: { reason?: string }) => {
      await withClient(false, async ({ client }) => {
        await client.workflow.getHandle(id).signal(abortSignal, flags.reason);
        stdoutOutput.write(`abort sent to ${id}`);
      });
    });

  program
    .command('max-turns')
    .description("change a running job's turn limit")
    .argument('<id>', 'job id')
    .argument('<n>', 'new limit', (v) => parsePositiveInt(v, 'the turn limit'))
    .action(async (id: string, n: number) => {
      await withClient(false, async ({ client }) => {
        await client.workflow.getHandle(id).signal(setMaxTurnsSignal, n);
        stdoutOutput.write(`maxTurns of ${id} set to ${n}`);
      });
    });

  program
    .command('send')
    .description('queue more instructions; they join the conversation at the next turn boundary')
    .argument('<id>', 'job id')
    .argument('<text>', 'the message')
    .action(async (id: string, text: string) => {
      if (!text.trim()) throw new InvalidArgumentError('The message is empty.');
      await withClient(false, async ({ client }) => {
        await client.workflow.getHandle(id).signal(userMessageSignal, text);
        stdoutOutput.write(`message queued for ${id}`);
      });
    });

  program
    .command('result')
    .description("wait for a job's end and print its Terminal")
    .argument('<id>', 'job id')
    .option('--json', 'print the Terminal as JSON')
    .action(async (id: string, flags: { json?: boolean }) => {
      await withClient(true, async ({ client }) => {
        printTerminal(await client.workflow.getHandle<() => Promise<Terminal>>(id).result(), flags.json ?? false);
      });
    });

  program
    .command('worker')
    .description('run a worker in the foreground (needs TEMPORAL_ADDRESS, or uses the embedded server)')
    .option('--task-queue <name>', 'task queue to poll', DEFAULT_TASK_QUEUE)
    .action(async (flags: { taskQueue: string }) => {
      const env: NodeJS.ProcessEnv = { ...process.env, DURABLE_AGENT_TASK_QUEUE: flags.taskQueue };
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
      process.exitCode = exitCodeFor(await runDemo(stdoutOutput));
    });

  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    process.stderr.write(`durable-agent: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main(process.argv);
