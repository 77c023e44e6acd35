import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { ScriptedModelServer } from '../../src/model-server';
import type { ScriptedSession } from '../../src/model-server';
import { findTemporalBinary } from '../../src/client/temporal-binary';
import { createWorker } from '../../src/worker/create-worker';
import type { SessionInput } from '../../src/shared/session';

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
): Promise<{ worker: Worker; done: Promise<void> }> {
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
  return { prompt: 'Check the login module', workspace, model: 'claude-sonnet-5-5', timeouts: TEST_TIMEOUTS, ...overrides };
}

export { ScriptedModelServer, type ScriptedSession };
