/**
 * One phase of the chaos harness: the jobs on one worker, uninterrupted (control) or under the kill
 * loop (chaos), which SIGKILLs the worker at random moments and starts the next one at once (and,
 * once, the dev server); and what the phase leaves behind to compare.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import type { RecordedRequest } from '../../../src/model-server';
import { DEFAULT_SESSION_TIMEOUTS } from '../../../src/shared/session';
import type { Terminal } from '../../../src/shared/terminal';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  tempDir,
  uniqueTaskQueue,
  type WorkerProcess,
} from '../harness';
import type { DevServer } from './dev-server';
import { CHAOS_MODEL, type ChaosJob } from './jobs';
import { commandLines, untilCommandRuns, waitForProcesses } from './processes';
import { ModelRouter, type RoutedCall } from './router';
import { sleep } from './sleep';
import { terminalOf } from '../jobs';

export interface KillPlan {
  /** Worker SIGKILLs to make while any job runs. */
  workerKills: number;
  /** Random delay between a worker being up and its SIGKILL. */
  minDelayMs: number;
  maxDelayMs: number;
  /** SIGKILL and restart the dev server once, after this many worker kills (none when unset). */
  serverKillAfter?: number;
  /** How long the dev server stays down. */
  serverDownMs?: number;
  /**
   * Every this many worker kills, wait (up to 15 s) for one of the jobs' side-effecting Bash
   * commands to be running, and kill 0 to `bashJitterMs` (default 1,000) into it: random moments
   * alone rarely land there.
   */
  bashKillEvery?: number;
  bashJitterMs?: number;
  /**
   * Likewise for model calls: every this many worker kills (a Bash aim first), wait (up to 15 s)
   * for a model call to be in flight and kill 0 to `modelJitterMs` (default 300) into it. On a
   * loaded machine workers start slowly, and ten random kills once all landed between calls.
   */
  modelKillEvery?: number;
  modelJitterMs?: number;
  random: () => number;
}

export interface KillRecord {
  kind: 'worker' | 'server';
  at: number;
  /** The next worker (or the restarted server) was up at this time. */
  upAt: number;
  /** Model calls in flight at the kill. */
  openCalls: RoutedCall[];
  /** Command lines of the jobs' side-effecting Bash processes alive at the kill (they carry the run's tag). */
  commands: string[];
  /** Jobs that had not finished at the kill. */
  running: string[];
}

export interface JobRun {
  job: ChaosJob;
  workflowId: string;
  workspace: string;
  terminal: Terminal;
  /** What the job's scripted model server received, in order. */
  requests: RecordedRequest[];
  /** The workspace at the end (`.durable-agent/` left out), path → content; folders as `path/`. */
  files: Record<string, string>;
  finishedAt: number;
}

export interface PhaseResult {
  name: string;
  home: string;
  runs: JobRun[];
  kills: KillRecord[];
  calls: RoutedCall[];
  startedAt: number;
  endedAt: number;
  /** Workers that exited without being killed, with their last output. */
  workerDeaths: string[];
  /** Everything each worker printed, in the order they ran. */
  workerLogs: string[];
}

export interface PhaseOptions {
  name: string;
  server: DevServer;
  jobs: ChaosJob[];
  /** Marker in every command the jobs run: their processes are waited for (then killed) at the end. */
  tag: string;
  chaos?: KillPlan;
  /** The whole phase must end within this. */
  timeoutMs: number;
  log?: (line: string) => void;
}

/** Run `jobs` concurrently on one worker process (replaced after each kill) and collect what they did. */
export async function runPhase(options: PhaseOptions): Promise<PhaseResult> {
  const { server, jobs, chaos } = options;
  const log = options.log ?? (() => undefined);
  const router = await ModelRouter.start();
  const models = new Map<string, ScriptedModelServer>();
  const home = tempDir(`chaos-${options.name}-home`);
  const taskQueue = uniqueTaskQueue(`chaos-${options.name}`);
  const workers: WorkerProcess[] = [];
  const startWorker = async () => {
    const started = await spawnWorkerProcess({ address: server.address, taskQueue, modelUrl: router.url, home });
    workers.push(started);
    return started;
  };
  let worker: WorkerProcess | undefined;
  let connection: Connection | undefined;
  const workerDeaths: string[] = [];
  const kills: KillRecord[] = [];
  try {
    for (const job of jobs) {
      const model = await ScriptedModelServer.start(job.session);
      models.set(job.key, model);
      router.add(job.key, model.url);
    }
    worker = await startWorker();
    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection });
    const startedAt = Date.now();
    const deadline = startedAt + options.timeoutMs;
    const finished = new Map<string, { terminal: Terminal; at: number }>();
    const failures: string[] = [];
    const results = await Promise.all(
      jobs.map(async (job) => {
        const workspace = makeWorkspace(job.files);
        const workflowId = `chaos-${options.name}-${job.key}-${process.pid}-${startedAt}`;
        await client.workflow.start('agentSession', {
          taskQueue,
          workflowId,
          args: [
            sessionInput(workspace, { prompt: job.prompt, model: CHAOS_MODEL, timeouts: DEFAULT_SESSION_TIMEOUTS }),
          ],
        });
        return { job, workflowId, workspace };
      }),
    );
    const waiting = results.map(async ({ job, workflowId }) => {
      try {
        const terminal = await resultOf(client, workflowId, deadline);
        finished.set(job.key, { terminal, at: Date.now() });
        log(`${options.name}: ${job.key} ended ${terminal.reason} after ${terminal.turnCount} turns`);
      } catch (error) {
        const last = router.calls.filter((c) => c.job === job.key).at(-1);
        const seenLast = last ? `its last model request was for turn ${last.turn}` : 'it made no model request';
        failures.push(`${job.key}: ${String(error)} (${seenLast})`);
      }
    });
    const allSettled = Promise.all(waiting);
    const running = () => jobs.filter((j) => !finished.has(j.key)).map((j) => j.key);

    if (chaos) {
      let workerKills = 0;
      let serverKilled = false;
      while (workerKills < chaos.workerKills && running().length > 0 && Date.now() < deadline) {
        const aimAtBash = chaos.bashKillEvery !== undefined && (workerKills + 1) % chaos.bashKillEvery === 0;
        const aimAtModel =
          !aimAtBash && chaos.modelKillEvery !== undefined && (workerKills + 1) % chaos.modelKillEvery === 0;
        // Drawn either way, so a seed gives the same delays whatever the jobs do.
        const jitter = chaos.random();
        const wait = new AbortController();
        const delay = aimAtBash
          ? untilCommandRuns(options.tag, 15_000, wait.signal).then(() =>
              sleep(jitter * (chaos.bashJitterMs ?? 1_000), wait.signal),
            )
          : aimAtModel
            ? untilModelCall(router, 15_000, wait.signal).then(() =>
                sleep(jitter * (chaos.modelJitterMs ?? 300), wait.signal),
              )
            : sleep(chaos.minDelayMs + jitter * (chaos.maxDelayMs - chaos.minDelayMs), wait.signal);
        const settledEarly = await Promise.race([delay.then(() => false), allSettled.then(() => true)]);
        wait.abort();
        if (settledEarly) break;
        if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
          // It died of something other than our kill: say so, and carry on with a new one.
          workerDeaths.push(worker.logs().slice(-2_000));
          worker = await startWorker();
          continue;
        }
        if (!serverKilled && chaos.serverKillAfter !== undefined && workerKills >= chaos.serverKillAfter) {
          serverKilled = true;
          const at = Date.now();
          const openCalls = router.open();
          const commands = commandLines(options.tag);
          const before = running();
          await server.kill();
          await sleep(chaos.serverDownMs ?? 2_000);
          await server.launch();
          kills.push({ kind: 'server', at, upAt: Date.now(), openCalls, commands, running: before });
          log(`${options.name}: dev server SIGKILLed and restarted (${Date.now() - at} ms down)`);
          continue;
        }
        const at = Date.now();
        const openCalls = router.open();
        const commands = commandLines(options.tag);
        const before = running();
        await worker.kill('SIGKILL');
        worker = await startWorker();
        workerKills++;
        kills.push({ kind: 'worker', at, upAt: Date.now(), openCalls, commands, running: before });
        log(
          `${options.name}: worker kill ${workerKills}/${chaos.workerKills} (${openCalls.length} model calls and ` +
            `${commands.length} side-effecting Bash cut, ${before.length} jobs running; next worker up in ${Date.now() - at} ms)`,
        );
      }
    }

    await allSettled;
    if (failures.length > 0) throw new Error(`${options.name}: jobs did not finish:\n${failures.join('\n')}`);
    // A Bash cut off by a kill may still be running, unsupervised: let it end before the files are read.
    await waitForProcesses(options.tag, 60_000);
    const endedAt = Date.now();
    const runs = results.map(({ job, workflowId, workspace }): JobRun => {
      const done = finished.get(job.key)!;
      return {
        job,
        workflowId,
        workspace,
        terminal: done.terminal,
        requests: [...models.get(job.key)!.requests],
        files: workspaceFiles(workspace),
        finishedAt: done.at,
      };
    });
    return {
      name: options.name,
      home,
      runs,
      kills,
      calls: router.calls,
      startedAt,
      endedAt,
      workerDeaths,
      workerLogs: workers.map((w) => w.logs()),
    };
  } finally {
    await worker?.kill('SIGKILL');
    await connection?.close();
    await router.close();
    await Promise.all([...models.values()].map((m) => m.close()));
    // Whatever a killed worker left running is ours to stop.
    await waitForProcesses(options.tag, 0);
  }
}

/** Remove the phase's data directory and workspaces. */
export function removePhaseFiles(phase: PhaseResult): void {
  for (const dir of [phase.home, ...phase.runs.map((r) => r.workspace)]) {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The job's Terminal; a lost connection (the dev server restarting) is retried until `deadline`. */
async function resultOf(client: Client, workflowId: string, deadline: number): Promise<Terminal> {
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()));
    });
    try {
      const outcome = await Promise.race([terminalOf(client.workflow.getHandle(workflowId)), late]);
      if (outcome === 'late') throw new Error(`${workflowId} had no Terminal within the phase's time`);
      return outcome;
    } catch (error) {
      if (error instanceof WorkflowFailedError || Date.now() >= deadline) throw error;
      await sleep(500);
    } finally {
      clearTimeout(timer);
    }
  }
}

function workspaceFiles(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const rel = path.relative(root, full);
      if (rel === '.durable-agent') continue;
      if (entry.isDirectory()) {
        // Folders count too: an empty one left behind is as visible to the user as a file.
        files[`${rel}/`] = '(folder)';
        walk(full);
      } else if (entry.isFile()) files[rel] = fs.readFileSync(full, 'utf8');
      else files[rel] = '(not a file)';
    }
  };
  walk(root);
  return files;
}

/** Resolves once a model call is in flight through `router`, or after `timeoutMs` (or on abort). */
async function untilModelCall(router: ModelRouter, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (router.open().length === 0 && Date.now() < deadline && !signal.aborted) await sleep(20, signal);
}
