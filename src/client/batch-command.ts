import path from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { BATCH_ID_PATTERN, batchExitCode, MAX_CONCURRENCY } from '../shared/batch';
import { DEFAULT_TASK_QUEUE } from '../workflows/definitions';
import {
  abortBatch,
  batchState,
  batchTasks,
  exportBatch,
  followBatch,
  formatBatchSummary,
  paidAgainNote,
  formatRows,
  noWorkerAdvice,
  startBatch,
  taskRows,
} from './batch';
import { readBatchTasks } from './batch-tasks';
import { withClient } from './connect';
import { ensureEmbeddedServer, ensureEmbeddedWorker, refuseBadBaseUrl, refuseWithoutCredentials } from './embedded';
import type { Connected } from './connect';
import { chosenFormat, parseOutputFormat } from './output-format';
import type { OutputFormat } from './output-format';
import { collect, parseBudgetUsd, parsePositiveInt, withThinkingOptions } from './session-options';
import type { RunFlags } from './session-options';

/** `batch`'s own flags; the rest are the tasks' defaults, as `run` takes them. */
type BatchFlags = Omit<RunFlags, 'maxBudgetUsd' | 'cwd'> & {
  concurrency: number;
  maxBudgetUsd?: number;
  taskMaxBudgetUsd?: number;
  batchId?: string;
  taskQueue: string;
  detach?: boolean;
  json?: boolean;
  outputFormat?: OutputFormat;
};

const say = (line: string) => process.stderr.write(`${line}\n`);

/** A batch id from the tasks file's name: `tasks.jsonl` → `tasks`. */
function defaultBatchId(file: string): string {
  const name = path.basename(file).replace(/\.[^.]*$/, '');
  const id = name
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 100);
  if (!id) throw new InvalidArgumentError(`cannot make a batch id from ${file}: give one with --batch-id`);
  return id;
}

/** `durable-agent batch FILE` and `batch status|abort|export <id>`. */
export function addBatchCommands(program: Command): void {
  const batch = program
    .command('batch')
    .description('run the tasks of a JSONL file as one batch of jobs; batch status|abort|export <id>');

  const batchRun = batch
    .command('run', { isDefault: true })
    .description('start the batch (or follow it if it runs; a rerun of an ended one skips finished tasks)')
    .argument('<tasks-file>', 'JSONL, one task per line: {"id","prompt","workspace"} or {"id","prompt","repo","ref"}')
    .option('--concurrency <n>', 'tasks running at once (default 4)', (v) => parsePositiveInt(v, '--concurrency'), 4)
    .option('--max-budget-usd <usd>', 'budget of the whole batch (USD), earlier runs of it included', parseBudgetUsd)
    .option('--task-max-budget-usd <usd>', 'budget of each task unless its line gives one', parseBudgetUsd)
    .option('--batch-id <id>', "the batch's id; its jobs are <id>/<task> (default: the file's name)")
    .option('--model <model>', 'model of tasks that name none')
    .option('--max-turns <n>', 'turn limit of tasks that give none', (v) => parsePositiveInt(v, '--max-turns'));
  withThinkingOptions(batchRun)
    .option('--tools <names>', 'comma-separated tools to offer (default: all)')
    .option(
      '--permission-mode <mode>',
      'permission mode of tasks that give none (default dontAsk: nobody answers approvals)',
    )
    .option('--allow <rule>', 'allow rule for every task; repeatable', collect, [])
    .option('--deny <rule>', 'deny rule for every task; repeatable', collect, [])
    .option('--no-sandbox', 'run Bash without the OS sandbox')
    .option('--task-queue <name>', 'task queue of the workers', DEFAULT_TASK_QUEUE)
    .option('--detach', 'start the batch and return (prints its id)')
    .option('--output-format <format>', 'text | json (the batch Terminal and every task row)', parseOutputFormat)
    .option('--json', 'same as --output-format json')
    .action(async (file: string, flags: BatchFlags) => {
      const format = chosenFormat(flags);
      const batchId = flags.batchId ?? defaultBatchId(file);
      if (!BATCH_ID_PATTERN.test(batchId)) {
        throw new InvalidArgumentError(
          `batch id "${batchId}" is not usable: letters, digits, ".", "_" and "-" only, starting with a letter or digit, ` +
            `at most 100 characters ` +
            `(its jobs are <id>/<task>, and a task from a repo gets the folder <id>/<task>); give one with --batch-id.`,
        );
      }
      if (flags.concurrency > MAX_CONCURRENCY) {
        throw new InvalidArgumentError(
          `--concurrency ${flags.concurrency} is over the ${MAX_CONCURRENCY} tasks a batch may run at once.`,
        );
      }
      // Nobody watches a batch: one that could only wait for credentials is refused at once.
      if (!flags.detach) refuseWithoutCredentials(process.env, 'batch');
      refuseBadBaseUrl(process.env);
      const { concurrency, maxBudgetUsd, taskMaxBudgetUsd, ...taskFlags } = flags;
      const tasks = readBatchTasks(
        file,
        { ...taskFlags, ...(taskMaxBudgetUsd !== undefined ? { maxBudgetUsd: taskMaxBudgetUsd } : {}) },
        process.env,
      );
      await withClient(true, async ({ client, description, embedded }) => {
        const started = await startBatch(
          client,
          batchId,
          tasks,
          {
            concurrency,
            ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}),
            taskQueue: flags.taskQueue,
            tasksFile: file,
          },
          process.env,
          say,
        );
        say(
          started.kind === 'attached'
            ? `batch ${batchId} is running on ${description}: following it (its own options stand)`
            : `${started.kind === 'rerun' ? 'reran' : 'started'} batch ${batchId} (${tasks.length} tasks, ${concurrency} at a time) on ${description}`,
        );
        if (flags.detach) {
          process.stdout.write(`${batchId}\n`);
          return;
        }
        // Ctrl-C stops following, not the batch: say so, and how to see it or stop it.
        const onInterrupt = () => {
          say(
            `\nstopped following; batch ${batchId} goes on running: \`durable-agent batch status ${batchId}\` shows it, ` +
              `\`durable-agent batch abort ${batchId}\` stops it`,
          );
          process.exit(130);
        };
        process.once('SIGINT', onInterrupt);
        try {
          const terminal = await followBatch(started.handle, format === 'text' ? say : () => undefined, {
            warn: say,
            ...(embedded ? { noAnswer: (taskQueue: string) => restartEmbeddedWorker(batchId, taskQueue) } : {}),
          });
          await printBatch(client, batchId, { ended: true, terminal }, format);
          process.exitCode = batchExitCode(terminal);
        } finally {
          process.off('SIGINT', onInterrupt);
        }
      });
    });

  batch
    .command('status')
    .description("a batch's tasks: outcome, turns, cost, duration")
    .argument('<id>', 'batch id')
    .option('--output-format <format>', 'text | json', parseOutputFormat)
    .option('--json', 'same as --output-format json')
    .action(async (id: string, flags: { json?: boolean; outputFormat?: OutputFormat }) => {
      await withClient(false, async ({ client }) => {
        await printBatch(client, id, await batchState(client, id), chosenFormat(flags));
      });
    });

  batch
    .command('abort')
    .description('stop a batch: no more tasks start, the running ones are aborted')
    .argument('<id>', 'batch id')
    .option('--reason <text>', 'why (shown in the batch and its jobs)')
    .action(async (id: string, flags: { reason?: string }) => {
      await withClient(false, async ({ client }) => {
        await abortBatch(client, id, flags.reason);
        say(`abort sent to batch ${id}; its running tasks stop, and \`durable-agent batch status ${id}\` shows them`);
      });
    });

  batch
    .command('export')
    .description("write every task's transcript (transcripts/<task>.jsonl) and results.jsonl into a folder")
    .argument('<id>', 'batch id')
    .option('--output <dir>', 'folder to write into (default: ./<id>-export)')
    .action(async (id: string, flags: { output?: string }) => {
      await withClient(false, async ({ client }) => {
        const dir = flags.output ?? `${id}-export`;
        const { transcripts, rows, skipped } = await exportBatch(client, id, dir, process.env);
        say(`wrote ${transcripts} transcripts and results.jsonl (${rows.length} tasks) to ${dir}`);
        for (const line of skipped) say(`· no transcript for ${line}`);
      });
    });
}

/**
 * The embedded server's background worker runs the default task queue: when a batch there gets
 * no answer because that worker died (killed, out of memory), the follower starts it again, as
 * running the command again would; anything else gets the advice of what to start.
 */
async function restartEmbeddedWorker(batchId: string, taskQueue: string): Promise<string> {
  if (taskQueue !== (process.env.DURABLE_AGENT_TASK_QUEUE || DEFAULT_TASK_QUEUE))
    return noWorkerAdvice(batchId, taskQueue);
  const worker = await ensureEmbeddedWorker(await ensureEmbeddedServer());
  return worker.started
    ? `the background worker had stopped: started it again (pid ${worker.pid}); batch ${batchId} goes on`
    : noWorkerAdvice(batchId, taskQueue);
}

async function printBatch(
  client: Connected['client'],
  id: string,
  state: Awaited<ReturnType<typeof batchState>>,
  format: OutputFormat,
): Promise<void> {
  const tasks = await batchTasks(client, id, process.env);
  const rows = await taskRows(client, id, tasks);
  if (format === 'json') {
    const batch = state.ended
      ? { status: 'ended', ...state.terminal }
      : { status: state.status.toLowerCase(), ...(state.snapshot ?? {}) };
    process.stdout.write(`${JSON.stringify({ batch_id: id, ...batch, task_rows: rows })}\n`);
    return;
  }
  process.stdout.write(`${formatRows(rows)}\n`);
  // The table alone on stdout, for scripts; what a person reads about it on stderr.
  const note = paidAgainNote(rows);
  process.stderr.write(`${note ? `${note}\n` : ''}\n${formatBatchSummary(id, state)}\n`);
}
