import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { ActivityInterceptorsFactory, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { ActivityDeps } from '../activities';
import { DEFAULT_TASK_QUEUE } from '../workflows/definitions';
import { hostTaskQueue, modelTaskQueue } from '../shared/task-queues';
import { AgentWorker } from './agent-worker';
import { packageRoot } from './package-root';
import { SHUTDOWN_FORCE_MARGIN_MS } from './shutdown-grace';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  activities: ActivityDeps;
  /** Identity shown in Temporal's UI and history. */
  identity?: string;
  /** Workflow code to run; the prebuilt bundle, else a fresh bundle of `src/workflows`. */
  workflowBundle?: { codePath: string } | WorkflowBundleWithSourceMap;
  /**
   * How long `shutdown()` (SIGTERM, SIGINT) lets running activities finish before it cancels them.
   * `runWorker` passes `DURABLE_AGENT_SHUTDOWN_GRACE` (default 11 minutes, see `shutdown-grace.ts`);
   * unset, as for the in-process workers of tests and the demo, running activities are cancelled at once.
   */
  shutdownGraceMs?: number;
  /** Activity interceptors, e.g. the in-flight record of `inflight.ts`. */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** Slots for tools, hooks and set-up activities on the job's queue (default {@link DEFAULT_TOOL_CONCURRENCY}). */
  toolConcurrency?: number;
  /** Slots for model calls on the model queue (default {@link DEFAULT_MODEL_CONCURRENCY}). */
  modelConcurrency?: number;
  /**
   * Model calls started per second on the model queue, across every worker that polls it: the
   * server enforces it (`maxTaskQueueActivitiesPerSecond`). Unset: no limit. Workers of one queue
   * should agree; the last one to poll sets it.
   */
  modelRatePerSecond?: number;
  /**
   * The longest the heartbeat of a streaming model call waits in the worker before it is sent
   * (default {@link HEARTBEAT_THROTTLE_MS}). Longer spares the server a write per heartbeat, at the
   * price of `tail` showing text that much later and an abort reaching a stream that much later.
   */
  modelHeartbeatMs?: number;
  /** Workflow-side knobs for many concurrent jobs on one worker; Temporal's defaults when unset. */
  workflowTuning?: WorkflowTuning;
  /**
   * This worker's host, whose queue (`hostTaskQueue`) it polls besides the job's: jobs whose
   * workspace it holds send their tools there. Default `DURABLE_AGENT_HOST_ID`, else the host name;
   * workers that see the same files (one machine, one shared file system) may share it.
   */
  hostId?: string;
}

/** The host id of a worker: `DURABLE_AGENT_HOST_ID`, else the machine's host name. */
export function defaultHostId(env: NodeJS.ProcessEnv = process.env): string {
  return env.DURABLE_AGENT_HOST_ID?.trim() || os.hostname();
}

/** Passed to the main worker as they are (see the Temporal worker options of the same names). */
export interface WorkflowTuning {
  maxCachedWorkflows?: number;
  maxConcurrentWorkflowTaskExecutions?: number;
  /** The most workflow task polls at once (`maxConcurrentWorkflowTaskPolls`). */
  workflowTaskPollers?: number;
}

/**
 * Slots for tools and hooks: they use the CPU and child processes, so a worker runs a few dozen
 * at once, whatever the model calls are doing.
 */
export const DEFAULT_TOOL_CONCURRENCY = 32;

/**
 * Slots for model calls: each waits on the network for its whole reply (a minute, often), using
 * next to no CPU, so a worker holds many; the API's own limits are better kept with
 * `modelRatePerSecond`, which holds across all workers.
 */
export const DEFAULT_MODEL_CONCURRENCY = 200;

/** The activities the model queue's worker runs: the ones that call the model. */
export const MODEL_ACTIVITY_NAMES = ['callModel', 'compactConversation'] as const;

/** The payload converter of the workflows and activities (`src/shared/payload-converter.ts`). */
const PAYLOAD_CONVERTER_PATH = require.resolve('../shared/payload-converter');

/** The prebuilt workflow bundle (`npm run build`), so a worker starts in a second, not ten. */
export function prebuiltBundlePath(): string {
  return path.join(packageRoot(), 'dist', 'workflow-bundle.js');
}

export function workflowsSourcePath(): string {
  return require.resolve('../workflows');
}

/** Bundle the workflow code once, for tests and tools that start many workers in one process. */
export async function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: workflowsSourcePath(),
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    logger: quietBundlerLogger,
  });
}

let bundlePromise: Promise<WorkflowBundleWithSourceMap> | undefined;

/**
 * The longest a heartbeat waits in the worker before it is sent to the server. Temporal's default
 * holds heartbeats back for 0.8 x the heartbeat timeout (48 s for a model call), so the server,
 * and anyone watching the job, would see a streaming reply only when it ended, and a cancellation
 * (abort) would reach a running Bash only with its next heartbeat that got through.
 *
 * At 0.5 s a streamed reply shows in `durable-agent tail` within about a second, and an abort
 * reaches Bash (which heartbeats every second; the cancellation comes back in the heartbeat's
 * answer) within about a second. The cost: an activity that heartbeats often
 * sends at most 2 RecordActivityTaskHeartbeat calls a second (a streaming model call: 2 a second
 * while text arrives, 1 every 5 s while the model thinks; Bash: 1 a second), so a worker with all
 * its slots busy (32 tool slots, 200 model-call slots by default) sends at most 464 a second. On
 * Temporal Cloud each heartbeat that reaches the server is a billable action: about 2 per second
 * of streamed reply. A worker's Temporal Workers all use this throttle, but the model worker's can
 * be set longer (`DURABLE_AGENT_MODEL_HEARTBEAT`): on one dev server heartbeats are a large share
 * of the server's work (bench/README.md, saturation).
 */
export const HEARTBEAT_THROTTLE_MS = 500;

/**
 * A worker that runs `agentSession` workflows and their activities: two Temporal Workers on one
 * connection, started and stopped together (`AgentWorker`). The main one polls `taskQueue` for
 * workflow tasks, tools, hooks and set-up activities (and the model calls of jobs that started
 * before `MODEL_TASK_QUEUE_PATCH`); the other polls `modelTaskQueue(taskQueue)` for model calls,
 * so a streaming reply never holds a tool slot.
 */
export async function createWorker(options: WorkerOptions): Promise<AgentWorker> {
  // Compiled code uses the bundle built beside it; TypeScript run from source (tests, ts-node)
  // bundles its own sources, so it never runs a stale build.
  const prebuilt = prebuiltBundlePath();
  const fromEnv = process.env.DURABLE_AGENT_WORKFLOW_BUNDLE;
  const runningCompiled = __filename.endsWith('.js');
  const workflowBundle =
    options.workflowBundle ??
    (fromEnv ? { codePath: fromEnv } : undefined) ??
    (runningCompiled && fs.existsSync(prebuilt) ? { codePath: prebuilt } : await (bundlePromise ??= bundleWorkflows()));
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  const hostQueue = hostTaskQueue(taskQueue, options.hostId ?? defaultHostId());
  const activities = createActivities({ ...options.activities, hostQueue });
  const modelActivities = Object.fromEntries(MODEL_ACTIVITY_NAMES.map((name) => [name, activities[name]]));
  const common = {
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    ...(options.identity ? { identity: options.identity } : {}),
    ...(options.activityInterceptors ? { interceptors: { activity: options.activityInterceptors } } : {}),
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
    defaultHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
    // The bundle is built with the same converter (`bundleWorkflows`): workflows and activities decode alike.
    dataConverter: { payloadConverterPath: PAYLOAD_CONVERTER_PATH },
    // On shutdown the worker stops polling at once and lets running calls finish within the grace
    // time; then it cancels them, and gives up on any that do not stop SHUTDOWN_FORCE_MARGIN_MS later.
    ...(options.shutdownGraceMs
      ? {
          shutdownGraceTime: options.shutdownGraceMs,
          shutdownForceTime: options.shutdownGraceMs + SHUTDOWN_FORCE_MARGIN_MS,
        }
      : {}),
  };
  const tuning = options.workflowTuning ?? {};
  const main = await Worker.create({
    ...common,
    taskQueue,
    workflowBundle,
    activities,
    maxConcurrentActivityTaskExecutions: options.toolConcurrency ?? DEFAULT_TOOL_CONCURRENCY,
    ...(tuning.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: tuning.maxCachedWorkflows } : {}),
    ...(tuning.maxConcurrentWorkflowTaskExecutions !== undefined
      ? { maxConcurrentWorkflowTaskExecutions: tuning.maxConcurrentWorkflowTaskExecutions }
      : {}),
    ...(tuning.workflowTaskPollers !== undefined ? { maxConcurrentWorkflowTaskPolls: tuning.workflowTaskPollers } : {}),
  });
  const model = await Worker.create({
    ...common,
    taskQueue: modelTaskQueue(taskQueue),
    activities: modelActivities,
    ...(options.modelHeartbeatMs !== undefined
      ? {
          maxHeartbeatThrottleInterval: options.modelHeartbeatMs,
          defaultHeartbeatThrottleInterval: options.modelHeartbeatMs,
        }
      : {}),
    maxConcurrentActivityTaskExecutions: options.modelConcurrency ?? DEFAULT_MODEL_CONCURRENCY,
    ...(options.modelRatePerSecond !== undefined
      ? { maxTaskQueueActivitiesPerSecond: options.modelRatePerSecond }
      : {}),
  });
  const host = await Worker.create({
    ...common,
    taskQueue: hostQueue,
    activities: Object.fromEntries(
      Object.entries(activities).filter(([name]) => !(MODEL_ACTIVITY_NAMES as readonly string[]).includes(name)),
    ),
    maxConcurrentActivityTaskExecutions: options.toolConcurrency ?? DEFAULT_TOOL_CONCURRENCY,
  });
  return new AgentWorker(main, model, host);
}

/** Webpack's progress is noise; its warnings and errors are not. */
export const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};
