/**
 * What waiting costs (`npm run bench:wakeup`): a job that sleeps on a ScheduleWakeup against its
 * twin that polls instead, side by side in one run, for the same stretch of real time.
 *
 *   - sleeper: asks for a wake-up BENCH_WAKEUP_S (600) seconds out, ends its turn and sleeps. A
 *     third of the way in, its worker is SIGKILLed and the dev server killed; both are started
 *     again. It must wake on time, with the prompt.
 *   - background: starts `sleep BENCH_WAKEUP_S; echo built` with Bash `run_in_background`, ends its
 *     turn and waits for the command's notification. Its worker is SIGKILLed at the same moment;
 *     the next worker adopts the running command.
 *   - poller: runs `sleep BENCH_POLL_S (60); test -f done` in Bash, asks the model again, and so
 *     on until the same time has passed: what a job does without a durable timer.
 *
 * Each job has its own namespace, worker process and model server, so the server's `action`
 * counters (what Temporal Cloud bills: activity heartbeats among them, which are in no history) and
 * each worker's memory are its job's. Reported per hour of waiting: Temporal actions, history
 * events, model calls, and the worker's resident memory (sampled every 5 s: median and max), plus
 * how late the sleeper and the background command's notification came.
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
  const kinds = ['sleeper', 'background', 'poller'] as const;
  type Kind = (typeof kinds)[number];
  const server = await DevServer.start(dir, { namespaces: kinds.map((kind) => `bench-${kind}`), metrics: true });
  const polls = Math.max(1, Math.round(WAIT_S / POLL_S));
  const models: Record<Kind, ScriptedModelServer> = {
    sleeper: await ScriptedModelServer.start({
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
    }),
    background: await ScriptedModelServer.start({
      chunkDelayMs: 0,
      replies: [
        {
          content: [
            {
              type: 'tool_use',
              id: 'toolu_build',
              name: 'Bash',
              // The command's own start, to the millisecond: when its end is due.
              input: {
                command: `date +%s%3N > command-started; sleep ${WAIT_S}; echo built`,
                run_in_background: true,
                description: 'nightly build',
              },
            },
          ],
        },
        say('The build runs in the background.'),
        say('The build is done.'),
      ],
    }),
    poller: await ScriptedModelServer.start({
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
    }),
  };
  const workers: Partial<Record<Kind, WorkerProcess>> = {};
  const start = async (kind: Kind) => {
    workers[kind] = await spawnWorkerProcess({
      address: server.address,
      taskQueue: `bench-${kind}`,
      modelUrl: models[kind].url,
      home,
      extraEnv: { TEMPORAL_NAMESPACE: `bench-${kind}` },
    });
  };
  for (const kind of kinds) await start(kind);
  const env = (kind: Kind): NodeJS.ProcessEnv => ({
    ...process.env,
    DURABLE_AGENT_HOME: home,
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: `bench-${kind}`,
    ANTHROPIC_API_KEY: 'bench-key',
    ANTHROPIC_BASE_URL: models[kind].url,
  });
  const workspace = makeWorkspace({ 'README.md': 'hello\n' });
  const launch = async (kind: Kind) => {
    const run = await runCli(
      [
        'run',
        'Wait for the nightly build',
        '--cwd',
        workspace,
        '--job-id',
        `bench-${kind}`,
        '--task-queue',
        `bench-${kind}`,
        '--detach',
        '--permission-mode',
        'bypassPermissions',
      ],
      env(kind),
    );
    if (run.code !== 0) throw new Error(`${kind} did not start: ${run.stderr}`);
  };
  const events = async (kind: Kind) => {
    const connection = await Connection.connect({ address: server.address });
    try {
      const described = await connection.workflowService.describeWorkflowExecution({
        namespace: `bench-${kind}`,
        execution: { workflowId: `bench-${kind}` },
      });
      return Number(described.workflowExecutionInfo?.historyLength ?? 0);
    } finally {
      await connection.close();
    }
  };
  // The server's counters start again from zero when it restarts: so what they said before the
  // kill is kept and added.
  type Counts = Map<string, number>;
  const actionsOf = async (kind: Kind): Promise<Counts> => (await server.actions()).get(`bench_${kind}`) ?? new Map();
  const add = (a: Counts, b: Counts, sign = 1): Counts => {
    const sum = new Map(a);
    for (const [type, n] of b) sum.set(type, (sum.get(type) ?? 0) + sign * n);
    return sum;
  };
  const total = (counts: Counts) => [...counts.values()].reduce((a, b) => a + b, 0);
  const heartbeats = (counts: Counts) =>
    [...counts].filter(([type]) => /Heartbeat/.test(type)).reduce((a, [, n]) => a + n, 0);

  for (const kind of kinds) await launch(kind);
  const startedCommand = () => Number(fs.readFileSync(`${workspace}/command-started`, 'utf8').trim());
  // Each wait starts (a little after) the sleeper's and the background job's second requests.
  const started: Partial<Record<Kind, number>> = {};
  while (started.sleeper === undefined || started.background === undefined) {
    for (const kind of ['sleeper', 'background'] as const)
      if (started[kind] === undefined && models[kind].requests.length >= 2) started[kind] = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const waitStart = Math.max(started.sleeper, started.background);
  while (!fs.existsSync(`${workspace}/command-started`)) await new Promise((resolve) => setTimeout(resolve, 50));
  const wakeupAt = Date.parse(
    (
      JSON.parse((await runCli(['status', 'bench-sleeper', '--json'], env('sleeper'))).stdout) as {
        wakeup: { at: string };
      }
    ).wakeup.at,
  );
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const before: Record<Kind, number> = { sleeper: 0, background: 0, poller: 0 };
  const actionsBefore: Record<Kind, Counts> = { sleeper: new Map(), background: new Map(), poller: new Map() };
  for (const kind of kinds) {
    before[kind] = await events(kind);
    actionsBefore[kind] = await actionsOf(kind);
  }
  const pollerCallsBefore = models.poller.requests.length;
  const samples: Record<Kind, number[]> = { sleeper: [], background: [], poller: [] };
  const sample = setInterval(() => {
    for (const kind of kinds) {
      const rss = rssMiB(workers[kind]?.child.pid);
      if (rss !== undefined) samples[kind].push(rss);
    }
  }, 5_000);

  // A third of the way in: every worker SIGKILLed, the server killed, all started again.
  await new Promise((resolve) => setTimeout(resolve, (WAIT_S * 1000) / 3));
  const beforeRestart = await events('sleeper');
  const actionsUntilKill: Record<Kind, Counts> = { sleeper: new Map(), background: new Map(), poller: new Map() };
  for (const kind of kinds) actionsUntilKill[kind] = add(await actionsOf(kind), actionsBefore[kind], -1);
  for (const kind of kinds) await workers[kind]!.kill('SIGKILL');
  await server.kill();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await server.launch();
  for (const kind of kinds) await start(kind);
  const restartedAtS = Math.round((Date.now() - waitStart) / 1000);

  // Just before the first of the two is due: what the waiting itself cost, apart from waking.
  const firstDue = Math.min(wakeupAt, startedCommand() + WAIT_S * 1000);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstDue - 2_000 - Date.now())));
  const asleep = await events('sleeper');
  const waitedS = (Date.now() - waitStart) / 1000;
  const actions: Record<Kind, Counts> = { sleeper: new Map(), background: new Map(), poller: new Map() };
  for (const kind of kinds) actions[kind] = add(actionsUntilKill[kind], await actionsOf(kind));
  const after: Record<Kind, number> = { sleeper: asleep, background: 0, poller: 0 };
  for (const kind of ['background', 'poller'] as const) after[kind] = await events(kind);
  const pollerCalls = models.poller.requests.length - pollerCallsBefore;
  // Both watched in one loop, so neither waits on the other.
  let wokeAt: number | undefined;
  let notifiedAt: number | undefined;
  while (wokeAt === undefined || notifiedAt === undefined) {
    if (wokeAt === undefined && models.sleeper.requests.length >= 3) wokeAt = Date.now();
    if (notifiedAt === undefined && models.background.requests.length >= 3) notifiedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  clearInterval(sample);
  const woken = await events('sleeper');
  const commandStarted = startedCommand();
  const result = await runCli(['result', 'bench-sleeper'], env('sleeper'));
  const backgroundResult = await runCli(['result', 'bench-background'], env('background'));
  const perHour = (n: number) => Math.round((n * 3600) / waitedS);
  const calls: Record<Kind, number> = { sleeper: 0, background: 0, poller: pollerCalls };
  const row = (kind: Kind) =>
    `    ${kind.padEnd(12)}${String(perHour(total(actions[kind]))).padStart(8)} (${perHour(heartbeats(actions[kind]))} heartbeats)`.padEnd(
      42,
    ) +
    `${String(perHour(after[kind] - before[kind])).padStart(8)}   ${String(perHour(calls[kind])).padStart(11)}   ` +
    `${median(samples[kind]).toFixed(0)} / ${Math.max(...samples[kind]).toFixed(0)} MiB`;
  console.log(
    [
      `wait cost, ${Math.round(waitedS)} s of waiting (ScheduleWakeup ${WAIT_S} s, a background \`sleep ${WAIT_S}\`, a Bash poll every ${POLL_S} s):`,
      `  every worker SIGKILLed and the server killed ${Math.round(WAIT_S / 3)} s in, all back ${restartedAtS} s in`,
      `  sleeper woke ${((wokeAt - wakeupAt) / 1000).toFixed(1)} s after its time; answer: ${result.stdout.trim()}`,
      `  background command's notification reached the model ${((notifiedAt - commandStarted) / 1000 - WAIT_S).toFixed(1)} s after the command's end was due; answer: ${backgroundResult.stdout.trim()}`,
      `  history events while waiting: sleeper ${asleep - before.sleeper} (${beforeRestart - before.sleeper} before the restart), then ${woken - asleep} to wake and answer`,
      `  per hour of waiting:   Temporal actions                 history events   model calls   worker RSS median / max`,
      ...kinds.map(row),
    ].join('\n'),
  );
  await runCli(['abort', 'bench-poller'], env('poller'));
  for (const worker of Object.values(workers)) await worker.kill('SIGKILL');
  await server.kill();
  for (const model of Object.values(models)) await model.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
