import fs from 'node:fs';
import path from 'node:path';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { ActivityInterceptorsFactory, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { ActivityDeps } from '../activities';
import { DEFAULT_TASK_QUEUE } from '../workflows/definitions';
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
}

/** The prebuilt workflow bundle (`npm run build`), so a worker starts in a second, not ten. */
export function prebuiltBundlePath(): string {
  return path.join(packageRoot(), 'dist', 'workflow-bundle.js');
}

export function workflowsSourcePath(): string {
  return require.resolve('../workflows');
}

/** Bundle the workflow code once, for tests and tools that start many workers in one process. */
export async function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: workflowsSourcePath(), logger: quietBundlerLogger });
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
 * 32 activity slots busy sends at most 64 a second. On Temporal Cloud each heartbeat that reaches
 * the server is a billable action: about 2 per second of streamed reply.
 */
export const HEARTBEAT_THROTTLE_MS = 500;

/** A worker that runs `agentSession` workflows and their activities. */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  // Compiled code uses the bundle built beside it; TypeScript run from source (tests, ts-node)
  // bundles its own sources, so it never runs a stale build.
  const prebuilt = prebuiltBundlePath();
  const fromEnv = process.env.DURABLE_AGENT_WORKFLOW_BUNDLE;
  const runningCompiled = __filename.endsWith('.js');
  const workflowBundle =
    options.workflowBundle ??
    (fromEnv ? { codePath: fromEnv } : undefined) ??
    (runningCompiled && fs.existsSync(prebuilt) ? { codePath: prebuilt } : await (bundlePromise ??= bundleWorkflows()));
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowBundle,
    activities: createActivities(options.activities),
    ...(options.identity ? { identity: options.identity } : {}),
    ...(options.activityInterceptors ? { interceptors: { activity: options.activityInterceptors } } : {}),
    // Tools and model calls wait on the network and child processes, not the CPU.
    maxConcurrentActivityTaskExecutions: 32,
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
    defaultHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
    // On shutdown the worker stops polling at once and lets running tools finish within the grace
    // time; then it cancels them, and gives up on any that do not stop SHUTDOWN_FORCE_MARGIN_MS later.
    ...(options.shutdownGraceMs
      ? {
          shutdownGraceTime: options.shutdownGraceMs,
          shutdownForceTime: options.shutdownGraceMs + SHUTDOWN_FORCE_MARGIN_MS,
        }
      : {}),
  });
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
