/**
 * Saturation: how many concurrent sessions one worker carries before its own overhead shows.
 *
 * For each level (SATURATION_LEVELS, default 50,100,200,500,1000) a fresh worker process
 * (`src/worker/main.ts`, as in production, on a new task queue of one embedded-tuned dev server)
 * runs that many scripted sessions at once, their starts spread over SATURATION_SPREAD_MS. Each
 * session makes SATURATION_TURNS turns of one model call (streamed over MODEL_LATENCY_MS, 5 s)
 * and one Read, then a final answer. Per level it prints throughput (model turns per second of
 * the level's wall time), the added overhead per turn at p50 and p95, the worker's peak resident
 * memory and its CPU (mean over the level, and the busiest second; 100% = one core), the mean
 * CPU of the dev server and of this process (the scripted model servers and their router), and
 * the whole machine's (100% = every core).
 *
 * Added overhead of a turn = (when the next model request reached the model server) − (when this
 * turn's reply had been streamed, the model latency) − (the Read's own run time, from history).
 * What is left is the worker and the server: the reply's processing, the workflow tasks, the
 * waits for a slot or a poll on both queues.
 *
 *   npm run bench:saturation                                   # setup, then this
 *   SATURATION_LEVELS=50,100 npx ts-node bench/saturation.ts   # without setup
 *
 * Knobs: SATURATION_LEVELS, SATURATION_TURNS (default 3), SATURATION_SPREAD_MS (default 5000),
 * SATURATION_LEVEL_TIMEOUT_MS (default 15 min), SATURATION_PIN (1: worker alone on CPU 1). The worker takes its limits from the environment
 * as any worker does (DURABLE_AGENT_MODEL_CONCURRENCY, DURABLE_AGENT_TOOL_CONCURRENCY,
 * DURABLE_AGENT_MAX_CACHED_WORKFLOWS, ...); unset, model-call slots are the highest level, so
 * slots are not what is measured.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { terminalOf } from '../src/client/job-terminal';
import { EMBEDDED_SERVER_TUNING } from '../src/client/embedded';
import { ScriptedModelServer } from '../src/model-server';
import type { ScriptedReply, ScriptedSession } from '../src/model-server';
import { buildMessage } from '../src/model-server/reply';
import { planStream } from '../src/model-server/sse';
import { DEFAULT_SESSION_TIMEOUTS } from '../src/shared/session';
import type { Terminal } from '../src/shared/terminal';
import { bundleWorkflows, quietBundlerLogger } from '../src/worker/create-worker';
import type { Span } from './floor-activities';
import { ModelRouter } from '../test/support/chaos/router';
import type { RoutedCall } from '../test/support/chaos/router';
import {
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
} from '../test/support/harness';

const LEVELS = (process.env.SATURATION_LEVELS ?? '50,100,200,500,1000')
  .split(',')
  .map((level) => Number(level.trim()))
  .filter((level) => Number.isSafeInteger(level) && level > 0);
const TURNS = Number(process.env.SATURATION_TURNS ?? 3);
const SPREAD_MS = Number(process.env.SATURATION_SPREAD_MS ?? 5_000);
const LEVEL_TIMEOUT_MS = Number(process.env.SATURATION_LEVEL_TIMEOUT_MS ?? 15 * 60_000);
/**
 * SATURATION_PIN=1: the worker gets CPU 1 to itself (`taskset`), the dev server and this process
 * share CPU 0, so what the worker carries is not what the co-located server costs.
 */
const PIN = process.env.SATURATION_PIN === '1';
/**
 * Each level also runs as the floor (bare workflows, see `floorLevel`) right after the agent, so
 * the two are measured side by side; SATURATION_FLOOR=0 leaves it out.
 */
const FLOOR = process.env.SATURATION_FLOOR !== '0';
const MODEL_LATENCY_MS = 5_000;
/** The headline's bar: p95 added overhead under 10% of the model latency. */
const OVERHEAD_BAR_MS = MODEL_LATENCY_MS / 10;
const EventType = temporal.api.enums.v1.EventType;

const progress = (line: string) => process.stderr.write(`[saturation] ${line}\n`);

/** One tool turn per `turn`, then the answer; every reply streams over MODEL_LATENCY_MS. */
function sessionScript(key: string): ScriptedSession {
  const replies: ScriptedReply[] = [
    ...Array.from({ length: TURNS }, (_, turn) => ({
      content: [
        { type: 'text' as const, text: `Turn ${turn}: reading the file.` },
        { type: 'tool_use' as const, id: `toolu_${turn}`, name: 'Read', input: { file_path: 'a.txt' } },
      ],
    })),
    { content: [{ type: 'text' as const, text: `Done: a.txt says hello (${key}).` }] },
  ];
  // The server sleeps its per-chunk delay before each frame after message_start: spread the
  // latency over the frames each reply has.
  const slowTurns = Object.fromEntries(
    replies.map((reply, turn) => [turn, MODEL_LATENCY_MS / planStream(buildMessage(reply, {})).body.length]),
  );
  return { name: `saturation-${key}`, replies, slowTurns };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? NaN;
}

/** CPU seconds a process has used (user + system), from /proc. */
function processCpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function processRssBytes(pid: number): number {
  return Number(fs.readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;
}

/** Busy and total jiffies of the whole machine, from /proc/stat. */
function machineJiffies(): { busy: number; total: number } {
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((sum, value) => sum + value, 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return { busy: total - idle, total };
}

/** The Temporal dev server this process started: its child named `temporal`. */
function devServerPid(): number | undefined {
  for (const task of fs.readdirSync(`/proc/${process.pid}/task`)) {
    const children = fs.readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').trim().split(/\s+/);
    for (const child of children.filter(Boolean).map(Number)) {
      if (fs.readFileSync(`/proc/${child}/comm`, 'utf8').trim() === 'temporal') return child;
    }
  }
  return undefined;
}

/**
 * Samples the worker once a second (peak RSS, busiest second's CPU); at the end also the mean CPU
 * of the worker, the dev server and this process (the model servers), and the machine's.
 */
function sampleWorker(pid: number, serverPid: number | undefined) {
  let peakRss = 0;
  let peakCpu = 0;
  let last = { at: Date.now(), cpu: processCpuSeconds(pid) };
  const first = {
    ...last,
    machine: machineJiffies(),
    server: serverPid ? processCpuSeconds(serverPid) : NaN,
    bench: process.cpuUsage(),
  };
  const timer = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, processRssBytes(pid));
      const now = { at: Date.now(), cpu: processCpuSeconds(pid) };
      peakCpu = Math.max(peakCpu, (now.cpu - last.cpu) / ((now.at - last.at) / 1000));
      last = now;
    } catch {
      // The worker exited; the level reports what was seen.
    }
  }, 1_000);
  return {
    stop() {
      clearInterval(timer);
      const cpu = processCpuSeconds(pid);
      const machine = machineJiffies();
      const seconds = (Date.now() - first.at) / 1000;
      const bench = process.cpuUsage(first.bench);
      return {
        peakRss: Math.max(peakRss, processRssBytes(pid)),
        peakCpu,
        meanCpu: (cpu - first.cpu) / seconds,
        serverCpu: serverPid ? (processCpuSeconds(serverPid) - first.server) / seconds : NaN,
        benchCpu: (bench.user + bench.system) / 1e6 / seconds,
        machineBusy: (machine.busy - first.machine.busy) / (machine.total - first.machine.total),
      };
    },
  };
}

interface LevelResult {
  /** The agent's sessions, or the floor's bare workflows under the same load. */
  run?: 'agent' | 'floor';
  sessions: number;
  turns: number;
  wallMs: number;
  overheads: number[];
  modelLatencies: number[];
  peakRss: number;
  peakCpu: number;
  meanCpu: number;
  serverCpu: number;
  benchCpu: number;
  machineBusy: number;
  failed: number;
}

/** The Read's run time in each turn of a job, from its history (ActivityTaskStarted → Completed). */
async function toolRunTimes(handle: WorkflowHandle): Promise<number[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const millis = (event: (typeof events)[number]) =>
    Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6);
  const started = new Map<string, number>();
  const runTool = new Set<string>();
  for (const event of events) {
    const id = String(event.eventId);
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool') runTool.add(id);
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
      started.set(String(event.activityTaskStartedEventAttributes?.scheduledEventId), millis(event));
    }
  }
  const times: number[] = [];
  for (const event of events) {
    if (event.eventType !== EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) continue;
    const scheduled = String(event.activityTaskCompletedEventAttributes?.scheduledEventId);
    if (runTool.has(scheduled)) times.push(millis(event) - (started.get(scheduled) ?? millis(event)));
  }
  return times;
}

/**
 * What a level runs on: a worker process started for it, how a session starts and whether it
 * ended as it should, and the turns' overheads once every session has ended.
 */
interface LevelRun {
  workerPid: number;
  startSession(index: number): Promise<WorkflowHandle>;
  succeeded(result: unknown): boolean;
  /** `outcomes[i]` is what session i's workflow returned, or 'failed' (timed out, or threw). */
  measure(
    handles: WorkflowHandle[],
    outcomes: unknown[],
  ): Promise<Pick<LevelResult, 'turns' | 'overheads' | 'modelLatencies'>>;
  close(): Promise<void>;
}

/** The agent: `agentSession` jobs on a production worker, each talking to its own scripted model. */
async function agentLevel(
  sessions: number,
  env: Awaited<ReturnType<typeof startTemporal>>,
  workspace: string,
): Promise<LevelRun> {
  const tag = `s${sessions}t${Date.now().toString(36)}`;
  const router = await ModelRouter.start();
  const servers = await Promise.all(
    Array.from({ length: sessions }, async (_, i) => {
      const key = `${tag}-${i}`;
      const server = await ScriptedModelServer.start(sessionScript(key));
      router.add(key, server.url);
      return { key, server };
    }),
  );
  const taskQueue = uniqueTaskQueue(`saturation-${sessions}`);
  const close = async () => {
    await router.close();
    await Promise.all(servers.map(({ server }) => server.close()));
  };
  let worker: Awaited<ReturnType<typeof spawnWorkerProcess>>;
  try {
    worker = await spawnWorkerProcess({
      address: env.address,
      taskQueue,
      modelUrl: router.url,
      home: tempDir('saturation-home'),
      extraEnv: { DURABLE_AGENT_STREAM_IDLE_MS: '60000' },
    });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    workerPid: worker.child.pid!,
    startSession: (i) =>
      env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `saturation-${servers[i]!.key}`,
        args: [
          sessionInput(workspace, {
            prompt: `[chaos:${servers[i]!.key}] Read a.txt ${TURNS} times, then say what it says.`,
            timeouts: DEFAULT_SESSION_TIMEOUTS,
          }),
        ],
      }),
    succeeded: (result) => (result as Terminal).reason === 'completed',
    async measure(handles) {
      const byJob = new Map<string, RoutedCall[]>();
      for (const call of router.calls) byJob.set(call.job, [...(byJob.get(call.job) ?? []), call]);
      const overheads: number[] = [];
      const modelLatencies: number[] = [];
      for (let i = 0; i < handles.length; i += 25) {
        await Promise.all(
          handles.slice(i, i + 25).map(async (handle, j) => {
            const calls = (byJob.get(servers[i + j]!.key) ?? []).sort((a, b) => a.arrivedAt - b.arrivedAt);
            const tools = await toolRunTimes(handle);
            for (const [turn, call] of calls.entries()) {
              if (call.endedAt !== undefined) modelLatencies.push(call.endedAt - call.arrivedAt);
              const next = calls[turn + 1];
              if (next && call.endedAt !== undefined) {
                overheads.push(next.arrivedAt - call.endedAt - (tools[turn] ?? 0));
              }
            }
          }),
        );
      }
      return { turns: router.calls.filter((call) => call.completed).length, overheads, modelLatencies };
    },
    close: async () => {
      await worker.kill('SIGTERM');
      await close();
    },
  };
}

/**
 * The floor: the same sessions as bare workflows (`floorSession`) on a worker of their own, whose
 * "model call" only waits out the latency and whose tool does nothing. What Temporal alone costs
 * for this load on this machine. Its overhead is the gap between one model call's end and the next
 * one's start, less the tool's run, all by the activities' own clocks (the agent's tool run is
 * taken from history, started -> completed, which also holds its dispatch: if anything, that
 * flatters the agent).
 */
async function floorLevel(
  sessions: number,
  env: Awaited<ReturnType<typeof startTemporal>>,
  floorBundle: string,
): Promise<LevelRun> {
  const taskQueue = uniqueTaskQueue(`saturation-floor-${sessions}`);
  const tag = `s${sessions}t${Date.now().toString(36)}`;
  const child = spawn(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      path.join(__dirname, 'floor-worker.ts'),
      env.address,
      taskQueue,
      floorBundle,
      String(sessions + 32),
    ],
    { cwd: path.join(__dirname, '..'), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`floor worker did not start:\n${output}`)), 60_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('floor worker polling')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => reject(new Error(`floor worker exited (${code}):\n${output}`)));
    });
    // Once it runs, its output is not kept (the pipes are still read, so it never blocks).
    child.stdout.removeAllListeners('data').resume();
    child.stderr.removeAllListeners('data').resume();
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
  type Spans = Array<{ model: Span; tool?: Span }>;
  return {
    workerPid: child.pid!,
    startSession: (i) =>
      env.client.workflow.start('floorSession', {
        taskQueue,
        workflowId: `saturation-floor-${tag}-${i}`,
        args: [TURNS, MODEL_LATENCY_MS],
      }),
    succeeded: (result) => Array.isArray(result) && result.length === TURNS + 1,
    async measure(_handles, outcomes) {
      const overheads: number[] = [];
      const modelLatencies: number[] = [];
      let turns = 0;
      for (const outcome of outcomes) {
        if (!Array.isArray(outcome)) continue;
        const spans = outcome as Spans;
        for (const [turn, { model, tool }] of spans.entries()) {
          turns++;
          modelLatencies.push(model.endedAt - model.startedAt);
          const next = spans[turn + 1];
          if (next && tool) overheads.push(next.model.startedAt - model.endedAt - (tool.endedAt - tool.startedAt));
        }
      }
      return { turns, overheads, modelLatencies };
    },
    close: async () => {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** Runs one level on what `setUp` starts, and always stops it again. */
async function runLevel(
  sessions: number,
  env: Awaited<ReturnType<typeof startTemporal>>,
  setUp: () => Promise<LevelRun>,
): Promise<LevelResult> {
  const level = await setUp();
  try {
    const serverPid = devServerPid();
    if (PIN) {
      execFileSync('taskset', ['-a', '-p', '-c', '1', String(level.workerPid)], { stdio: 'ignore' });
      for (const pid of [process.pid, serverPid]) {
        if (pid) execFileSync('taskset', ['-a', '-p', '-c', '0', String(pid)], { stdio: 'ignore' });
      }
    }
    const sampler = sampleWorker(level.workerPid, serverPid);
    const start = Date.now();
    const handles = await Promise.all(
      Array.from({ length: sessions }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, (SPREAD_MS * i) / sessions));
        return level.startSession(i);
      }),
    );
    const deadline = new Promise<'failed'>((resolve) => setTimeout(() => resolve('failed'), LEVEL_TIMEOUT_MS).unref());
    const outcomes = await Promise.all(
      handles.map((handle) =>
        Promise.race([(terminalOf(handle) as Promise<unknown>).catch(() => 'failed' as const), deadline]),
      ),
    );
    const failed = outcomes.filter((outcome) => outcome === 'failed' || !level.succeeded(outcome)).length;
    const wallMs = Date.now() - start;
    const usage = sampler.stop();
    progress(`${sessions} sessions done in ${(wallMs / 1000).toFixed(1)} s; reading their times...`);
    return { sessions, wallMs, ...(await level.measure(handles, outcomes)), ...usage, failed };
  } finally {
    await level.close();
  }
}

function format(results: LevelResult[]): string {
  const rows = [
    [
      'run',
      'sessions',
      'turns/s',
      'overhead p50',
      'overhead p95',
      'model p50',
      'worker peak RSS',
      'worker CPU mean',
      'worker CPU peak',
      'server CPU',
      'model servers CPU',
      'machine busy',
      'failed',
    ],
    ...results.map((r) => [
      r.run ?? 'agent',
      String(r.sessions),
      (r.turns / (r.wallMs / 1000)).toFixed(1),
      `${Math.round(percentile(r.overheads, 50))} ms`,
      `${Math.round(percentile(r.overheads, 95))} ms`,
      `${Math.round(percentile(r.modelLatencies, 50))} ms`,
      `${Math.round(r.peakRss / 2 ** 20)} MiB`,
      `${Math.round(r.meanCpu * 100)}%`,
      `${Math.round(r.peakCpu * 100)}%`,
      `${Math.round(r.serverCpu * 100)}%`,
      `${Math.round(r.benchCpu * 100)}%`,
      `${Math.round(r.machineBusy * 100)}%`,
      String(r.failed),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(rows[0]!), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.slice(1).map(line)].join('\n');
}

async function main(): Promise<void> {
  if (LEVELS.length === 0) throw new Error('SATURATION_LEVELS names no level (e.g. 50,100,200)');
  // Slots are not what this measures: unless told otherwise, every session's model call gets one.
  process.env.DURABLE_AGENT_MODEL_CONCURRENCY ??= String(Math.max(...LEVELS));
  // Everything the bench and the processes it starts write to a temp folder goes into one folder
  // of its own (TMPDIR), removed at the end: the bundle, the workspace, the workers' homes.
  const runTmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-saturation-')));
  process.env.TMPDIR = runTmp;
  let env: Awaited<ReturnType<typeof startTemporal>> | undefined;
  const results: LevelResult[] = [];
  try {
    // Every worker process loads this one bundle instead of bundling the workflows itself.
    const bundle = path.join(runTmp, 'workflow-bundle.js');
    fs.writeFileSync(bundle, (await bundleWorkflows()).code);
    process.env.DURABLE_AGENT_WORKFLOW_BUNDLE = bundle;
    const floorBundle = path.join(runTmp, 'floor-bundle.js');
    if (FLOOR) {
      const { code } = await bundleWorkflowCode({
        workflowsPath: require.resolve('./floor-workflow'),
        logger: quietBundlerLogger,
      });
      fs.writeFileSync(floorBundle, code);
    }
    const server = await startTemporal([...EMBEDDED_SERVER_TUNING]);
    env = server;
    const workspace = makeWorkspace({ 'a.txt': 'hello\n' });
    for (const sessions of LEVELS) {
      progress(`level ${sessions}: starting ${sessions} sessions over ${SPREAD_MS} ms...`);
      results.push({
        run: 'agent',
        ...(await runLevel(sessions, server, () => agentLevel(sessions, server, workspace))),
      });
      progress(format(results.slice(-1)).split('\n').at(-1)!);
      if (!FLOOR) continue;
      progress(`level ${sessions}, floor: starting ${sessions} bare workflows over ${SPREAD_MS} ms...`);
      results.push({
        run: 'floor',
        ...(await runLevel(sessions, server, () => floorLevel(sessions, server, floorBundle))),
      });
      progress(format(results.slice(-1)).split('\n').at(-1)!);
    }
  } finally {
    await env?.teardown();
    fs.rmSync(runTmp, { recursive: true, force: true });
  }
  const workerEnv = Object.entries(process.env)
    .filter(([name]) => /^DURABLE_AGENT_(MODEL|TOOL|MAX_CACHED|WORKFLOW_TASK)/.test(name))
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  console.log(
    `saturation: ${TURNS} tool turns + 1 answer per session, model latency ${MODEL_LATENCY_MS} ms, one Read per turn, ` +
      `starts spread over ${SPREAD_MS} ms; node ${process.version}, ${os.cpus().length} cpus; ` +
      `dev server ${EMBEDDED_SERVER_TUNING.join(' ')}; worker env: ${workerEnv || '(defaults)'}` +
      (PIN ? '; worker pinned to CPU 1, server and model servers to CPU 0' : ''),
  );
  console.log(format(results));
  console.log(
    headline(
      'headline',
      results.filter((r) => r.run === 'agent'),
    ),
  );
  if (FLOOR)
    console.log(
      headline(
        'floor (bare workflows, same load)',
        results.filter((r) => r.run === 'floor'),
      ),
    );
}

/** The highest level whose p95 added overhead stayed under the bar, with nothing failed. */
function headline(label: string, results: LevelResult[]): string {
  const passing = results.filter(
    (r) =>
      r.failed === 0 && percentile(r.overheads, 95) < OVERHEAD_BAR_MS && Number.isFinite(percentile(r.overheads, 95)),
  );
  const best = passing.length > 0 ? Math.max(...passing.map((r) => r.sessions)) : undefined;
  return best === undefined
    ? `${label}: no level kept p95 added overhead under ${OVERHEAD_BAR_MS} ms (10% of the model latency)`
    : `${label}: up to ${best} concurrent sessions, p95 added overhead stays under ${OVERHEAD_BAR_MS} ms (10% of the model latency)`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
