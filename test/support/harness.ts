import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ScriptedModelServer } from '../../src/model-server';
import type { ScriptedSession } from '../../src/model-server';
import { findTemporalBinary } from '../../src/client/temporal-binary';
import { createWorker } from '../../src/worker/create-worker';
import type { AgentWorker } from '../../src/worker/agent-worker';
import type { SessionInput } from '../../src/shared/session';
import { TS_NODE_ARGS } from './ts-run';

/** Short timeouts so a lost worker is noticed in seconds, not minutes. */
export const TEST_TIMEOUTS: SessionInput['timeouts'] = {
  modelHeartbeatMs: 3_000,
  modelRetryInitialMs: 100,
  modelRetryMaxAttempts: 6,
  toolHeartbeatMs: 3_000,
};

/** A local Temporal dev server on a free port, from the project's own binary. */
export function startTemporal(extraArgs: string[] = []): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: findTemporalBinary() },
      ip: '127.0.0.1',
      extraArgs: ['--log-level', 'error', ...extraArgs],
    },
  });
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `durable-agent-${prefix}-`));
}

/** A workspace made of the given files. */
export function makeWorkspace(files: Record<string, string>): string {
  const dir = fs.realpathSync(tempDir('ws'));
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

let queueCounter = 0;
export function uniqueTaskQueue(name: string): string {
  return `test-${name}-${process.pid}-${++queueCounter}`;
}

/** An in-process worker whose model calls go to `server` through the real Anthropic SDK. */
export async function startWorker(
  env: TestWorkflowEnvironment,
  server: ScriptedModelServer,
  options: { taskQueue: string; storeDir: string },
): Promise<{ worker: AgentWorker; done: Promise<void> }> {
  const worker = await createWorker({
    connection: env.nativeConnection,
    taskQueue: options.taskQueue,
    activities: {
      anthropic: () => new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 }),
      storeDir: options.storeDir,
      streamIdleMs: 5_000,
    },
  });
  const done = worker.run();
  return { worker, done };
}

export function sessionInput(workspace: string, overrides: Partial<SessionInput> = {}): SessionInput {
  // Most tests are about the loop, not approvals: they run with permissions out of the way.
  return {
    prompt: 'Check the login module',
    workspace,
    model: 'claude-sonnet-5-5',
    timeouts: TEST_TIMEOUTS,
    permissions: { mode: 'bypassPermissions' },
    ...overrides,
  };
}

export { ScriptedModelServer, type ScriptedSession };

/** A worker in a separate process, as in production: `src/worker/main.ts`, killable with SIGKILL. */
export interface WorkerProcess {
  child: import('node:child_process').ChildProcess;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Everything the worker printed so far, stdout and stderr. */
  logs(): string;
}

export async function spawnWorkerProcess(options: {
  address: string;
  taskQueue: string;
  modelUrl: string;
  home: string;
  extraEnv?: NodeJS.ProcessEnv;
  /**
   * Credentials to hand over a pipe, as `durable-agent` starts its embedded worker
   * (`src/worker/secret-handoff.ts`), instead of the default `ANTHROPIC_API_KEY` in the environment.
   */
  secrets?: Record<string, string>;
  /** A descriptor the worker inherits as fd 250, as from a shell's `250<file`. */
  inheritFd?: number;
}): Promise<WorkerProcess> {
  const { spawn } = await import('node:child_process');
  const { handOverSecrets, secretHandoffSpawn } = await import('../../src/worker/secret-handoff');
  const root = path.join(__dirname, '..', '..');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: options.address,
    TEMPORAL_NAMESPACE: 'default',
    DURABLE_AGENT_TASK_QUEUE: options.taskQueue,
    DURABLE_AGENT_HOME: options.home,
    DURABLE_AGENT_STREAM_IDLE_MS: '5000',
    // A test's clean-up SIGTERM must not wait the production 11 minutes for a tool it left running.
    DURABLE_AGENT_SHUTDOWN_GRACE: '5s',
    ...(options.secrets ? {} : { ANTHROPIC_API_KEY: 'test-key' }),
    ANTHROPIC_BASE_URL: options.modelUrl,
    ...options.extraEnv,
  };
  const handoff = options.secrets
    ? secretHandoffSpawn({ ...env, ...options.secrets }, ['ignore', 'pipe', 'pipe'])
    : undefined;
  const child = spawn(
    process.execPath,
    [
      // e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile the worker of a bench (Node refuses it in NODE_OPTIONS).
      ...(process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
      ...TS_NODE_ARGS,
      path.join(root, 'src', 'worker', 'main.ts'),
    ],
    {
      cwd: root,
      stdio: withInherited(handoff ? handoff.stdio : ['ignore', 'pipe', 'pipe'], options.inheritFd),
      env: handoff ? handoff.env : env,
    },
  );
  if (handoff) await handOverSecrets(child, handoff.secrets);
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker process did not start:\n${output}`)), 60_000);
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
      reject(new Error(`worker process exited with ${code}:\n${output}`));
    });
  });
  // The start-up listeners stay attached, so `output` keeps growing with everything printed.
  return {
    child,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
    logs: () => output,
  };
}

/** `stdio` with `fd` at position 250 (nothing between), or as it is. */
function withInherited(
  stdio: Array<'ignore' | 'pipe' | number>,
  fd: number | undefined,
): Array<'ignore' | 'pipe' | number> {
  if (fd === undefined) return stdio;
  const all = [...stdio];
  while (all.length < 250) all.push('ignore');
  all.push(fd);
  return all;
}

/** Poll `check` until it returns a value, or fail after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
