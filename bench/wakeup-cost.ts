/**
 * What waiting costs (`npm run bench:wakeup`): a job that sleeps on a ScheduleWakeup against its
 * twin that polls instead, side by side in one run, for the same stretch of real time.
 *
 *   - sleeper: asks for a wake-up BENCH_WAKEUP_S (600) seconds out, ends its turn and sleeps. A
 *     third of the way in, its worker is SIGKILLed and the dev server killed; both are started
 *     again. It must wake on time, with the prompt.
 *   - poller: runs `sleep BENCH_POLL_S (60); test -f done` in Bash, asks the model again, and so
 *     on until the same time has passed: what a job does without a durable timer.
 *
 * Each job has its own worker process (and model server), so each worker's memory is its job's.
 * Reported per hour of waiting: history events (each is a Temporal action or follows one), model
 * calls, and the worker's resident memory (sampled every 5 s: median and max), plus how late the
 * sleeper woke.
 */
import fs from 'node:fs';
import { Connection } from '@temporalio/client';
import type { ScriptedReply } from '../src/model-server';
import { DevServer } from '../test/support/chaos';
import { runCli } from '../test/support/cli';
import { makeWorkspace, ScriptedModelServer, spawnWorkerProcess, tempDir } from '../test/support/harness';
import type { WorkerProcess } from '../test/support/harness';

const WAIT_S = Number(process.env.BENCH_WAKEUP_S ?? 600);
const POLL_S = Number(process.env.BENCH_POLL_S ?? 60);
const say = (text: string): ScriptedReply => ({ content: [{ type: 'text', text }] });

function rssMiB(pid: number | undefined): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : undefined;
  } catch {
    return undefined;
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const dir = tempDir('bench-wakeup');
  const home = tempDir('bench-wakeup-home');
  const server = await DevServer.start(dir);
  const polls = Math.max(1, Math.round(WAIT_S / POLL_S));
  const sleeperModel = await ScriptedModelServer.start({
    chunkDelayMs: 0,
    replies: [
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_wake',
            name: 'ScheduleWakeup',
            input: { delaySeconds: WAIT_S, reason: 'the nightly build takes a while', prompt: 'Check the build.' },
          },
        ],
      },
      say('Sleeping until the build is done.'),
      say('The build is done.'),
    ],
  });
  const pollerModel = await ScriptedModelServer.start({
    chunkDelayMs: 0,
    replies: [
      ...Array.from({ length: polls }, (_, i) => ({
        content: [
          {
            type: 'tool_use' as const,
            id: `toolu_poll${i}`,
            name: 'Bash',
            input: { command: `sleep ${POLL_S}; test -f done || echo not yet`, timeout: (POLL_S + 30) * 1000 },
          },
        ],
      })),
      say('The build is done.'),
    ],
  });
  const queues = { sleeper: 'bench-sleeper', poller: 'bench-poller' };
  const workers: Record<string, WorkerProcess> = {};
  const start = async (which: 'sleeper' | 'poller') => {
    workers[which] = await spawnWorkerProcess({
      address: server.address,
      taskQueue: queues[which],
      modelUrl: (which === 'sleeper' ? sleeperModel : pollerModel).url,
      home,
    });
  };
  await start('sleeper');
  await start('poller');
  const env = (which: 'sleeper' | 'poller'): NodeJS.ProcessEnv => ({
    ...process.env,
    DURABLE_AGENT_HOME: home,
    TEMPORAL_ADDRESS: server.address,
    ANTHROPIC_API_KEY: 'bench-key',
    ANTHROPIC_BASE_URL: (which === 'sleeper' ? sleeperModel : pollerModel).url,
  });
  const workspace = makeWorkspace({ 'README.md': 'hello\n' });
  const launch = async (which: 'sleeper' | 'poller') => {
    const run = await runCli(
      [
        'run',
        'Wait for the nightly build',
        '--cwd',
        workspace,
        '--job-id',
        `bench-${which}`,
        '--task-queue',
        queues[which],
        '--detach',
        '--permission-mode',
        'bypassPermissions',
      ],
      env(which),
    );
    if (run.code !== 0) throw new Error(`${which} did not start: ${run.stderr}`);
  };
  const events = async (id: string) => {
    const connection = await Connection.connect({ address: server.address });
    try {
      const described = await connection.workflowService.describeWorkflowExecution({
        namespace: 'default',
        execution: { workflowId: id },
      });
      return Number(described.workflowExecutionInfo?.historyLength ?? 0);
    } finally {
      await connection.close();
    }
  };

  await launch('sleeper');
  await launch('poller');
  // The sleeper's wait starts once its second reply is in.
  while (sleeperModel.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 200));
  const waitStart = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const before = { sleeper: await events('bench-sleeper'), poller: await events('bench-poller') };
  const pollerCallsBefore = pollerModel.requests.length;
  const samples: Record<string, number[]> = { sleeper: [], poller: [] };
  const sample = setInterval(() => {
    for (const which of ['sleeper', 'poller'] as const) {
      const rss = rssMiB(workers[which]?.child.pid);
      if (rss !== undefined) samples[which]!.push(rss);
    }
  }, 5_000);

  // A third of the way in: the sleeper's worker SIGKILLed, the server killed, both started again.
  await new Promise((resolve) => setTimeout(resolve, (WAIT_S * 1000) / 3));
  const beforeRestart = await events('bench-sleeper');
  await workers.sleeper!.kill('SIGKILL');
  await workers.poller!.kill('SIGKILL');
  await server.kill();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await server.launch();
  await start('sleeper');
  await start('poller');
  const restartedAtS = Math.round((Date.now() - waitStart) / 1000);

  // Just before its time: what the sleep itself cost, apart from waking.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, waitStart + WAIT_S * 1000 - 2_000 - Date.now())));
  const asleep = await events('bench-sleeper');
  while (sleeperModel.requests.length < 3) await new Promise((resolve) => setTimeout(resolve, 100));
  const wokeAt = Date.now();
  clearInterval(sample);
  const after = { sleeper: await events('bench-sleeper'), poller: await events('bench-poller') };
  const waitedS = (wokeAt - waitStart) / 1000;
  const pollerCalls = pollerModel.requests.length - pollerCallsBefore;
  const result = await runCli(['result', 'bench-sleeper'], env('sleeper'));
  const perHour = (n: number) => Math.round((n * 3600) / waitedS);
  const sleeperEvents = asleep - before.sleeper;
  const pollerEvents = after.poller - before.poller;
  console.log(
    [
      `wake-up cost, ${Math.round(waitedS)} s of waiting (ScheduleWakeup ${WAIT_S} s against a Bash poll every ${POLL_S} s):`,
      `  sleeper woke ${((wokeAt - waitStart) / 1000 - WAIT_S).toFixed(1)} s after its time (its worker SIGKILLed and the server killed ${Math.round(WAIT_S / 3)} s in, both back ${restartedAtS} s in); answer: ${result.stdout.trim()}`,
      `  history events while waiting: sleeper ${sleeperEvents} (${beforeRestart - before.sleeper} before the restart), then ${after.sleeper - asleep} to wake and answer; poller ${pollerEvents}`,
      `  per hour of waiting:   history events   model calls   worker RSS median / max`,
      `    sleeper             ${String(perHour(sleeperEvents)).padStart(14)}   ${String(0).padStart(11)}   ${median(samples.sleeper!).toFixed(0)} / ${Math.max(...samples.sleeper!).toFixed(0)} MiB`,
      `    poller              ${String(perHour(pollerEvents)).padStart(14)}   ${String(perHour(pollerCalls)).padStart(11)}   ${median(samples.poller!).toFixed(0)} / ${Math.max(...samples.poller!).toFixed(0)} MiB`,
    ].join('\n'),
  );
  await runCli(['abort', 'bench-poller'], env('poller'));
  for (const worker of Object.values(workers)) await worker.kill('SIGKILL');
  await server.kill();
  await sleeperModel.close();
  await pollerModel.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
