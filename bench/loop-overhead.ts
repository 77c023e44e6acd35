/**
 * The cost of durability, side by side in one run (`npm run bench`):
 *   (a) the agent loop in process, without Temporal (bench/in-process-loop.ts);
 *   (b) the same job as an `agentSession` workflow on a local Temporal dev server;
 *   (c) the floor: a bare workflow with the same number of empty activities per turn.
 * See bench/README.md for how to read the output.
 *
 * Knobs (environment): BENCH_RUNS (timed runs per variant, default 3; the median is reported),
 * BENCH_TURNS (turns per job, default 100), BENCH_TEMPORAL_ARGS (extra `temporal server start-dev`
 * arguments, split on spaces; by default those `durable-agent run` starts its embedded server with,
 * so the numbers are what users get; an empty string measures the bare dev server).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import Anthropic from '@anthropic-ai/sdk';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { terminalOf } from '../src/client/job-terminal';
import { createActivities } from '../src/activities';
import { EMBEDDED_SERVER_TUNING } from '../src/client/embedded';
import { findTemporalBinary } from '../src/client/temporal-binary';
import { ScriptedModelServer } from '../src/model-server';
import type { Terminal } from '../src/shared/terminal';
import { bundleWorkflows, createWorker, quietBundlerLogger } from '../src/worker/create-worker';
import { createFloorActivities } from './floor-activities';
import { runInProcessLoop } from './in-process-loop';
import type { InProcessResult } from './in-process-loop';
import { WORKFLOW_TASK_RUN, WORKFLOW_TASK_WAIT, historyTiming, mean, mergeTimings } from './history-timing';
import type { PhaseSamples } from './history-timing';
import { FINAL_TEXT, benchScript, makeWorkspace, removeTempDirs, sessionInputFor, tempDir } from './scenario';

const TURNS = positiveInt('BENCH_TURNS', 100);
const RUNS = positiveInt('BENCH_RUNS', 3);
/**
 * The dev server's default `history.transferProcessorMaxPollRPS` (20) paces a workflow at about one
 * activity per 50 ms whatever it does; the embedded server raises it (EMBEDDED_SERVER_TUNING), and
 * so does this bench unless BENCH_TEMPORAL_ARGS says otherwise.
 */
const DEFAULT_SERVER_ARGS = EMBEDDED_SERVER_TUNING.join(' ');
const SERVER_ARGS = (process.env.BENCH_TEMPORAL_ARGS ?? DEFAULT_SERVER_ARGS).split(' ').filter((arg) => arg !== '');
/** A run that takes longer than this is stuck (e.g. a tool call waiting for approval): fail, don't hang. */
const RUN_TIMEOUT_MS = 5 * 60_000;
const AGENT_QUEUE = `bench-agent-${process.pid}`;
const FLOOR_QUEUE = `bench-floor-${process.pid}`;

type Variant = 'a' | 'b' | 'c' | 'd';
const VARIANTS: readonly Variant[] = ['a', 'b', 'c', 'd'];
interface RunResult {
  ms: number;
  historyBytes?: number;
  /** (b), (c), (d): the run's phases as its event history recorded them. */
  timing?: PhaseSamples;
}

/** Progress goes to stderr; stdout holds only the report. */
const progress = (text: string) => process.stderr.write(`[bench] ${text}\n`);

/** The model endpoint of the current run: a fresh scripted server (and client) per run. */
const model: { server?: ScriptedModelServer; client?: Anthropic } = {};
const anthropic = (): Anthropic => {
  if (!model.client) throw new Error('bench: no model server is running');
  return model.client;
};

async function withModelServer<T>(runTag: string, fn: (server: ScriptedModelServer) => Promise<T>): Promise<T> {
  const server = await ScriptedModelServer.start(benchScript(TURNS, runTag));
  model.server = server;
  model.client = new Anthropic({ apiKey: 'bench-key', baseURL: server.url, maxRetries: 0 });
  try {
    return await fn(server);
  } finally {
    model.server = undefined;
    model.client = undefined;
    await server.close();
  }
}

function checkTerminal(variant: string, terminal: Terminal | InProcessResult, server: ScriptedModelServer): void {
  const problems: string[] = [];
  if (terminal.reason !== 'completed')
    problems.push(`reason ${terminal.reason}${terminal.detail ? ` (${terminal.detail})` : ''}`);
  if (terminal.turnCount !== TURNS) problems.push(`turnCount ${terminal.turnCount}, expected ${TURNS}`);
  if (terminal.finalText !== FINAL_TEXT) problems.push(`finalText ${JSON.stringify(terminal.finalText)}`);
  // The prompt, then an assistant message per turn and a tool-result message per tool turn.
  if (terminal.messageCount !== 2 * TURNS)
    problems.push(`messageCount ${terminal.messageCount}, expected ${2 * TURNS}`);
  if (terminal.denials.length > 0) problems.push(`${terminal.denials.length} tool call(s) denied`);
  if (server.requests.length !== TURNS) problems.push(`${server.requests.length} model requests, expected ${TURNS}`);
  if (problems.length > 0)
    throw new Error(`bench: the ${variant} run did not do the scripted job: ${problems.join('; ')}`);
}

async function main(): Promise<void> {
  // Worker state changes at INFO would drown the report; warnings and errors still show.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const workspace = makeWorkspace();

  progress('bundling workflow code (agentSession, floor)...');
  const agentBundle = await bundleWorkflows();
  const floorBundle: WorkflowBundleWithSourceMap = await bundleWorkflowCode({
    workflowsPath: require.resolve('./floor-workflow'),
    logger: quietBundlerLogger,
  });

  progress('starting the Temporal dev server...');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: findTemporalBinary() },
      ip: '127.0.0.1',
      extraArgs: ['--log-level', 'error', ...SERVER_ARGS],
    },
  });
  const workers: Array<{ worker: { shutdown(): void }; done: Promise<void> }> = [];
  try {
    const agentWorker = await createWorker({
      connection: env.nativeConnection,
      taskQueue: AGENT_QUEUE,
      workflowBundle: agentBundle,
      activities: { anthropic, storeDir: tempDir('store-durable') },
    });
    workers.push({ worker: agentWorker, done: agentWorker.run() });
    const floorWorker = await Worker.create({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue: FLOOR_QUEUE,
      workflowBundle: floorBundle,
      activities: createFloorActivities(),
      // As createWorker sets it for agentSession's worker.
      maxConcurrentActivityTaskExecutions: 32,
    });
    workers.push({ worker: floorWorker, done: floorWorker.run() });

    // (a) One set of activities for every in-process run, as the worker keeps one for every job.
    const inProcessActivities = createActivities({ anthropic, storeDir: tempDir('store-in-process') });
    let jobNumber = 0;
    const nextJob = () => {
      const runTag = `job${++jobNumber}`;
      return { runTag, input: sessionInputFor(workspace, runTag) };
    };

    const runners: Record<Variant, () => Promise<RunResult>> = {
      a: () => {
        const { runTag, input } = nextJob();
        return withModelServer(runTag, async (server) => {
          const sessionKey = `bench-in-process-${runTag}/${randomUUID()}`;
          const start = performance.now();
          const terminal = await withTimeout(
            runInProcessLoop(inProcessActivities, input, sessionKey),
            'in-process run',
          );
          const ms = performance.now() - start;
          checkTerminal('in-process', terminal, server);
          return { ms };
        });
      },
      b: () => {
        const { runTag, input } = nextJob();
        return withModelServer(runTag, async (server) => {
          const start = performance.now();
          const handle = await env.client.workflow.start('agentSession', {
            taskQueue: AGENT_QUEUE,
            workflowId: `bench-durable-${runTag}-${randomUUID()}`,
            args: [input],
          });
          const terminal = await withTimeout(terminalOf(handle), `workflow ${handle.workflowId}`);
          const ms = performance.now() - start;
          checkTerminal('durable', terminal, server);
          const history = await handle.fetchHistory();
          return {
            ms,
            historyBytes: temporal.api.history.v1.History.encode(history).finish().length,
            timing: historyTiming(history),
          };
        });
      },
      c: () => runFloor(true),
      d: () => runFloor(false),
    };
    async function runFloor(eager: boolean): Promise<RunResult> {
      const { runTag } = nextJob();
      const start = performance.now();
      const handle = await env.client.workflow.start('floorWorkflow', {
        taskQueue: FLOOR_QUEUE,
        workflowId: `bench-floor-${runTag}-${randomUUID()}`,
        args: [TURNS, eager],
      });
      const iterations = (await withTimeout(handle.result(), `workflow ${handle.workflowId}`)) as number;
      const ms = performance.now() - start;
      if (iterations !== TURNS) throw new Error(`bench: the floor ran ${iterations} iterations, expected ${TURNS}`);
      return { ms, timing: historyTiming(await handle.fetchHistory()) };
    }
    const names: Record<Variant, string> = { a: 'in-process', b: 'durable', c: 'floor', d: 'floor, no eager dispatch' };

    // Warm-up, then RUNS rounds; each round runs a, b, c one after another (never in parallel), so
    // drift in the machine's speed over the run touches every variant alike.
    for (const variant of VARIANTS) {
      progress(`warm-up: ${names[variant]}...`);
      await runners[variant]();
    }
    const results: Record<Variant, RunResult[]> = { a: [], b: [], c: [], d: [] };
    for (let round = 1; round <= RUNS; round++) {
      for (const variant of VARIANTS) {
        const result = await runners[variant]();
        results[variant].push(result);
        progress(`run ${round}/${RUNS}: ${names[variant]} ${result.ms.toFixed(0)} ms`);
      }
    }

    report(results);
  } finally {
    for (const { worker } of workers) worker.shutdown();
    await Promise.allSettled(workers.map(({ done }) => done));
    await env.teardown();
    removeTempDirs();
  }
}

function report(results: Record<Variant, RunResult[]>): void {
  const median = (variant: Variant) => medianRun(results[variant]);
  const a = median('a');
  const b = median('b');
  const c = median('c');
  const d = median('d');
  const perTurn = (run: RunResult) => run.ms / TURNS;
  const label = (text: string) => text.padEnd(49);
  const line = (text: string, run: RunResult) =>
    `${label(text)}${String(TURNS).padStart(4)} turns ${run.ms.toFixed(0).padStart(7)} ms ${perTurn(run).toFixed(1).padStart(7)} ms/turn`;
  const runs = (variant: Variant) => results[variant].map((run) => run.ms.toFixed(0)).join(', ');
  const historyBytes = b.historyBytes ?? 0;
  const historySizes = [...new Set(results.b.map((run) => run.historyBytes))];

  const lines = [
    `durable-agent bench: ${TURNS}-turn scripted job (${TURNS - 1} Read calls, then a text answer)`,
    `node ${process.version}, ${os.cpus().length} cpus; median of ${RUNS} timed run(s) per variant after 1 warm-up each`,
    `temporal dev server: ${
      SERVER_ARGS.join(' ') === DEFAULT_SERVER_ARGS
        ? `as durable-agent run starts it (${DEFAULT_SERVER_ARGS})`
        : SERVER_ARGS.length > 0
          ? `extra args ${SERVER_ARGS.join(' ')}`
          : 'default configuration'
    }`,
    '',
    line('in-process loop (no Temporal):', a),
    line('durable (agentSession):', b),
    line('floor (bare workflow, 2 empty activities/turn):', c),
    line('floor without eager activity dispatch:', d),
    '',
    `durable vs in-process: ${signed(perTurn(b) - perTurn(a))} ms/turn, ratio ${(b.ms / a.ms).toFixed(2)}x`,
    `durable vs floor:      ${signed(perTurn(b) - perTurn(c))} ms/turn, ratio ${(b.ms / c.ms).toFixed(2)}x`,
    // The work itself plus Temporal's unavoidable per-activity cost: what durable can at best be.
    `durable vs (in-process + floor): ${signed(perTurn(b) - perTurn(a) - perTurn(c))} ms/turn, ratio ${(b.ms / (a.ms + c.ms)).toFixed(2)}x`,
    // The agent's activities are on other queues than its workflow, so none is dispatched eagerly.
    `durable vs (in-process + floor without eager dispatch): ${signed(perTurn(b) - perTurn(a) - perTurn(d))} ms/turn, ratio ${(b.ms / (a.ms + d.ms)).toFixed(2)}x`,
    `history: ${historyBytes} bytes, ${Math.round(historyBytes / TURNS)} bytes/turn` +
      (historySizes.length > 1
        ? ` (median run; all runs: ${results.b.map((run) => run.historyBytes).join(', ')})`
        : ''),
    '',
    ...turnPhases(results),
    '',
    `all timed runs (ms): in-process [${runs('a')}], durable [${runs('b')}], floor [${runs('c')}], floor without eager [${runs('d')}]`,
  ];
  console.log(lines.join('\n'));
}

/**
 * A turn's phases, the mean over every timed run's event history: a turn is two workflow tasks, a
 * model call and a tool call, each first waiting (scheduled -> started) and then running
 * (started -> completed, the worker's side). Means, so that the phases add up to a turn; server
 * timestamps, so the client's side is not in them.
 */
function turnPhases(results: Record<Variant, RunResult[]>): string[] {
  const activities: Record<'b' | 'c' | 'd', { model: string; tool: string }> = {
    b: { model: 'callModel', tool: 'runTool' },
    c: { model: 'floorModelCall', tool: 'floorTool' },
    d: { model: 'floorModelCall', tool: 'floorTool' },
  };
  const columns = (['b', 'c', 'd'] as const).map((variant) => {
    const timing = mergeTimings(results[variant].flatMap((run) => (run.timing ? [run.timing] : [])));
    const average = (phase: string) => mean(timing.get(phase) ?? []);
    const { model, tool } = activities[variant];
    const rows = [
      average(WORKFLOW_TASK_WAIT),
      average(WORKFLOW_TASK_RUN),
      average(`activity ${model}, scheduled -> started`),
      average(`activity ${model}, started -> completed`),
      average(`activity ${tool}, scheduled -> started`),
      average(`activity ${tool}, started -> completed`),
    ];
    // A phase missing from the histories leaves the sum unknown rather than quietly short.
    const [wftWait, wftRun, ...rest] = rows;
    const tasksPerTurn = (timing.get(WORKFLOW_TASK_RUN)?.length ?? 0) / (results[variant].length * TURNS);
    const turn = tasksPerTurn * (wftWait! + wftRun!) + rest.reduce((sum, value) => sum + value, 0);
    return [...rows, turn, tasksPerTurn];
  });
  const names = [
    'workflow task wait',
    'workflow task run',
    'model call wait',
    'model call run',
    'tool call wait',
    'tool call run',
    'a turn, summed',
    'workflow tasks per turn',
  ];
  const cell = (value: number | undefined, row: number) =>
    (value === undefined || Number.isNaN(value)
      ? '-'
      : row === names.length - 1
        ? value.toFixed(2)
        : `${value.toFixed(1)} ms`
    ).padStart(12);
  return [
    `a turn's phases from the event histories (mean over all timed runs; wait = scheduled -> started, run = started -> completed):`,
    `${''.padEnd(34)}${'durable'.padStart(12)}${'floor'.padStart(12)}${'no eager'.padStart(12)}`,
    ...names.map((name, row) => `${name.padEnd(34)}${columns.map((column) => cell(column[row], row)).join('')}`),
  ];
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`bench: ${what} did not finish within ${RUN_TIMEOUT_MS / 1000} s`)),
      RUN_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The run with the median time (the lower middle one for an even count). */
function medianRun(runs: RunResult[]): RunResult {
  const sorted = [...runs].sort((x, y) => x.ms - y.ms);
  const middle = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!middle) throw new Error('bench: no timed runs');
  return middle;
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;
}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
