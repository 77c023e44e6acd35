/**
 * What the context benches (long-session, history-1890, cache-economics) share: their knobs, the
 * Temporal dev server, a worker in its own process with its memory sampled, in-process workers
 * on their own task queues, and the store's size on disk. See bench/README.md.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { AgentWorker } from '../src/worker/agent-worker';
import { findTemporalBinary } from '../src/client/temporal-binary';
import type { SessionInput } from '../src/shared/session';
import { createWorker } from '../src/worker/create-worker';
import { tempDir } from './scenario';

/** Progress goes to stderr; stdout holds only the report. */
export const progress = (text: string) => process.stderr.write(`[bench] ${text}\n`);

export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

export function nonNegativeInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** As in loop-overhead.ts: the dev server's default pacing hides what a turn costs (see README). */
const DEFAULT_SERVER_ARGS = '--dynamic-config-value history.transferProcessorMaxPollRPS=1000';
export const SERVER_ARGS = (process.env.BENCH_TEMPORAL_ARGS ?? DEFAULT_SERVER_ARGS)
  .split(' ')
  .filter((arg) => arg !== '');

/** The scripted model's name: unknown to the built-in table, so every job states its limits. */
export const MODEL = 'claude-sonnet-5-5';

export function modelLimits(contextWindow: number, maxOutputTokens = 32_000): SessionInput['modelLimits'] {
  return [{ prefix: MODEL, contextWindow, maxOutputTokens }];
}

/** A local dev server on a free port from the project's `temporal` binary, as loop-overhead.ts starts it. */
export async function startDevServer(): Promise<TestWorkflowEnvironment> {
  // Worker state changes at INFO would drown the report; warnings and errors still show.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: findTemporalBinary() },
      ip: '127.0.0.1',
      extraArgs: ['--log-level', 'error', ...SERVER_ARGS],
    },
  });
}

/** Write a workflow bundle to a file, so a worker process loads it instead of running webpack itself. */
export function writeBundle(bundle: WorkflowBundleWithSourceMap): string {
  const file = path.join(tempDir('bundle'), 'workflow-bundle.js');
  fs.writeFileSync(file, bundle.code);
  return file;
}

/** Memory of a process from /proc/<pid>/status, in bytes; undefined once it has exited. */
export function processMemory(pid: number): { rss: number; hwm: number } | undefined {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/**
 * A worker in its own process (`src/worker/main.ts`, as production runs it, its TypeScript
 * transpiled by ts-node), polling `taskQueue`, its model calls going to `modelUrl`. Its resident
 * memory is sampled every 250 ms; `memory()` reports the sampled peak, the kernel's high-water
 * mark (VmHWM) and the resident size once it was polling (before any job).
 */
export interface WorkerProcess {
  pid: number;
  memory(): { startRss: number; peakRss: number; hwm: number };
  stop(): Promise<void>;
  logs(): string;
}

export async function spawnWorkerProcess(options: {
  address: string;
  taskQueue: string;
  modelUrl: string;
  home: string;
  bundlePath: string;
}): Promise<WorkerProcess> {
  const root = path.join(__dirname, '..');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: options.address,
    TEMPORAL_NAMESPACE: 'default',
    DURABLE_AGENT_TASK_QUEUE: options.taskQueue,
    DURABLE_AGENT_HOME: options.home,
    DURABLE_AGENT_WORKFLOW_BUNDLE: options.bundlePath,
    ANTHROPIC_API_KEY: 'bench-key',
    ANTHROPIC_BASE_URL: options.modelUrl,
  };
  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', path.join(root, 'src', 'worker', 'main.ts')],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('bench: the worker process did not start');
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bench: worker process did not start:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('durable-agent worker polling')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`bench: worker process exited with ${code}:\n${output}`));
    });
  });
  const startRss = processMemory(pid)?.rss ?? NaN;
  let peakRss = startRss;
  let hwm = processMemory(pid)?.hwm ?? NaN;
  const sample = () => {
    const memory = processMemory(pid);
    if (!memory) return;
    peakRss = Math.max(peakRss, memory.rss);
    hwm = memory.hwm;
  };
  const sampler = setInterval(sample, 250);
  return {
    pid,
    memory: () => {
      sample();
      return { startRss, peakRss, hwm };
    },
    stop: async () => {
      clearInterval(sampler);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
    logs: () => output,
  };
}

/** An in-process worker on its own task queue whose model calls go through `anthropic`. */
export async function startInProcessWorker(options: {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  storeDir: string;
  bundle: WorkflowBundleWithSourceMap;
  anthropic: Anthropic;
}): Promise<{ worker: AgentWorker; done: Promise<void> }> {
  const worker = await createWorker({
    connection: options.env.nativeConnection,
    taskQueue: options.taskQueue,
    workflowBundle: options.bundle,
    activities: { anthropic: () => options.anthropic, storeDir: options.storeDir },
  });
  return { worker, done: worker.run() };
}

/** Files under `dir` and their bytes: apparent size, and what the file system allocated for them. */
export function directorySize(dir: string): { files: number; bytes: number; allocatedBytes: number } {
  let files = 0;
  let bytes = 0;
  let allocatedBytes = 0;
  const walk = (at: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(at, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const stat = fs.statSync(full);
        files++;
        bytes += stat.size;
        allocatedBytes += stat.blocks * 512;
      }
    }
  };
  walk(dir);
  return { files, bytes, allocatedBytes };
}

/** A run that takes longer than this is stuck: fail, don't hang. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`bench: ${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function mb(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(2)} MB`;
}

export function kb(bytes: number): string {
  return `${(bytes / 1000).toFixed(1)} KB`;
}

/** `12345678` as `12,345,678`. */
export function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
