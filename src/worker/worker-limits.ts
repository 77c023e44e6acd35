import { DEFAULT_MODEL_CONCURRENCY, DEFAULT_TOOL_CONCURRENCY, HEARTBEAT_THROTTLE_MS } from './create-worker';
import type { WorkflowTuning } from './create-worker';

/** A worker's slot counts, model rate and workflow knobs, as `createWorker` takes them. */
export interface WorkerLimits {
  toolConcurrency: number;
  modelConcurrency: number;
  modelRatePerSecond?: number;
  /** The longest a streaming model call's heartbeat waits in the worker (unset: {@link HEARTBEAT_THROTTLE_MS}). */
  modelHeartbeatMs?: number;
  workflowTuning: WorkflowTuning;
}

export const TOOL_CONCURRENCY_VAR = 'DURABLE_AGENT_TOOL_CONCURRENCY';
export const MODEL_CONCURRENCY_VAR = 'DURABLE_AGENT_MODEL_CONCURRENCY';
export const MODEL_RATE_VAR = 'DURABLE_AGENT_MODEL_RATE';
export const MODEL_HEARTBEAT_VAR = 'DURABLE_AGENT_MODEL_HEARTBEAT';
export const MAX_CACHED_WORKFLOWS_VAR = 'DURABLE_AGENT_MAX_CACHED_WORKFLOWS';
export const WORKFLOW_TASK_CONCURRENCY_VAR = 'DURABLE_AGENT_WORKFLOW_TASK_CONCURRENCY';
export const WORKFLOW_TASK_POLLERS_VAR = 'DURABLE_AGENT_WORKFLOW_TASK_POLLERS';

/**
 * The longest a model call's heartbeat may be held back: well inside its 60 s heartbeat timeout,
 * and the keep-alive a silent stream sends every 5 s still gets through.
 */
const MAX_MODEL_HEARTBEAT_MS = 30_000;

/** The most slots of one kind a worker may be given: far past what one process can feed. */
const MAX_SLOTS = 10_000;

/** A bad worker limit in the environment: said in one line, naming the variable and what it takes. */
export class WorkerLimitError extends Error {
  override name = 'WorkerLimitError';
}

/**
 * The worker's limits from the environment: `DURABLE_AGENT_TOOL_CONCURRENCY` (tool and hook
 * slots, default 32), `DURABLE_AGENT_MODEL_CONCURRENCY` (model-call slots, default 200),
 * `DURABLE_AGENT_MODEL_RATE` (model calls started per second across all workers of the model
 * queue; unset: no limit), `DURABLE_AGENT_MODEL_HEARTBEAT` (how long a streaming reply's heartbeat
 * may wait before it is sent: `500ms`, `5s`; unset: 0.5 s), and the workflow knobs `DURABLE_AGENT_MAX_CACHED_WORKFLOWS`,
 * `DURABLE_AGENT_WORKFLOW_TASK_CONCURRENCY`, `DURABLE_AGENT_WORKFLOW_TASK_POLLERS` (Temporal's
 * defaults when unset). Throws {@link WorkerLimitError} for a value it cannot take.
 */
export function workerLimitsFromEnv(env: NodeJS.ProcessEnv): WorkerLimits {
  const modelRatePerSecond = positiveNumber(env, MODEL_RATE_VAR);
  const modelHeartbeatMs = milliseconds(env, MODEL_HEARTBEAT_VAR, HEARTBEAT_THROTTLE_MS, MAX_MODEL_HEARTBEAT_MS);
  const maxCachedWorkflows = wholeNumber(env, MAX_CACHED_WORKFLOWS_VAR, "Temporal's default", 0);
  const maxConcurrentWorkflowTaskExecutions = wholeNumber(env, WORKFLOW_TASK_CONCURRENCY_VAR, "Temporal's default");
  const workflowTaskPollers = wholeNumber(env, WORKFLOW_TASK_POLLERS_VAR, "Temporal's default");
  return {
    toolConcurrency:
      wholeNumber(env, TOOL_CONCURRENCY_VAR, String(DEFAULT_TOOL_CONCURRENCY)) ?? DEFAULT_TOOL_CONCURRENCY,
    modelConcurrency:
      wholeNumber(env, MODEL_CONCURRENCY_VAR, String(DEFAULT_MODEL_CONCURRENCY)) ?? DEFAULT_MODEL_CONCURRENCY,
    ...(modelRatePerSecond !== undefined ? { modelRatePerSecond } : {}),
    ...(modelHeartbeatMs !== undefined ? { modelHeartbeatMs } : {}),
    workflowTuning: {
      ...(maxCachedWorkflows !== undefined ? { maxCachedWorkflows } : {}),
      ...(maxConcurrentWorkflowTaskExecutions !== undefined ? { maxConcurrentWorkflowTaskExecutions } : {}),
      ...(workflowTaskPollers !== undefined ? { workflowTaskPollers } : {}),
    },
  };
}

/** How the worker names its limits on its start-up line. */
export function describeLimits(limits: WorkerLimits): string {
  const rate =
    limits.modelRatePerSecond === undefined
      ? 'no rate limit'
      : `at most ${limits.modelRatePerSecond} started per second across all workers`;
  const heartbeat =
    limits.modelHeartbeatMs === undefined
      ? ''
      : `, a streaming reply's heartbeat held at most ${limits.modelHeartbeatMs} ms`;
  return `${limits.toolConcurrency} tool slots; ${limits.modelConcurrency} model-call slots, ${rate}${heartbeat}`;
}

function raw(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: string, min = 1): number | undefined {
  const value = raw(env, name);
  if (value === undefined) return undefined;
  const number = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < min || number > MAX_SLOTS) {
    throw new WorkerLimitError(
      `${name}=${JSON.stringify(env[name])} is not allowed: use a whole number from ${min} to ${MAX_SLOTS} ` +
        `(unset: ${fallback}).`,
    );
  }
  return number;
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = raw(env, name);
  if (value === undefined) return undefined;
  const number = /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(number) || number <= 0) {
    throw new WorkerLimitError(
      `${name}=${JSON.stringify(env[name])} is not allowed: use a number of model calls per second greater than 0, ` +
        'e.g. 5 or 0.5 (unset: no limit).',
    );
  }
  return number;
}

/** A duration in `ms` or whole `s`, from `min` to `max` milliseconds. */
function milliseconds(env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | undefined {
  const value = raw(env, name);
  if (value === undefined) return undefined;
  const match = /^(\d+)\s*(ms|s)$/.exec(value);
  const ms = match?.[1] && match[2] ? Number(match[1]) * (match[2] === 's' ? 1_000 : 1) : NaN;
  if (!Number.isSafeInteger(ms) || ms < min || ms > max) {
    throw new WorkerLimitError(
      `${name}=${JSON.stringify(env[name])} is not allowed: use a duration from ${min}ms to ${max / 1_000}s, ` +
        `e.g. 5s or 2000ms (unset: ${min}ms).`,
    );
  }
  return ms;
}
