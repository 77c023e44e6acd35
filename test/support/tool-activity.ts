import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { runTool, type RunToolDeps } from '../../src/activities/run-tool';
import { SandboxEngine } from '../../src/activities/sandbox/engine';
import { FileContentStore } from '../../src/activities/store/content-store';
import type { ReadFileStates } from '../../src/shared/file-state';
import type { RunToolInput, ToolRunResult } from '../../src/shared/activity-types';
import type { ToolResultBlock } from '../../src/shared/messages';

/** One attempt of the runTool activity, outside a worker, with what it heartbeated. */
export interface ToolAttempt {
  result: ToolRunResult;
  block: ToolResultBlock;
  heartbeats: unknown[];
}

/**
 * Run the runTool activity once as attempt `attempt` of call `id`, the way a worker would (a real
 * activity context, the real journal and store), with Bash unsandboxed. `deps` replaces parts of
 * the activity's dependencies (a test's own `execute`).
 */
export async function runToolAttempt(options: {
  storeDir: string;
  workspace: string;
  id: string;
  name: string;
  input: unknown;
  attempt?: number;
  sessionKey?: string;
  readState?: ReadFileStates;
  deps?: Partial<RunToolDeps>;
}): Promise<ToolAttempt> {
  const store = new FileContentStore(options.storeDir);
  const deps: RunToolDeps = {
    store,
    dataDir: options.storeDir,
    toolEnv: { PATH: process.env.PATH },
    sandbox: new SandboxEngine({ workerPrivatePaths: [options.storeDir] }),
    ...options.deps,
  };
  const input: RunToolInput = {
    sessionKey: options.sessionKey ?? 'job-1/run-1',
    workspace: options.workspace,
    toolUse: { type: 'tool_use', id: options.id, name: options.name, input: options.input },
    readState: options.readState ?? {},
    sandbox: { enabled: false, source: '--no-sandbox' },
  };
  const env = new MockActivityEnvironment(
    {
      activityType: 'runTool',
      activityId: `tool-${options.id}`,
      attempt: options.attempt ?? 1,
      heartbeatTimeoutMs: 30_000,
      startToCloseTimeoutMs: 20 * 60_000,
    },
    // An attempt a test makes fail on purpose is no news.
    { logger: new DefaultLogger('ERROR') },
  );
  const heartbeats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => heartbeats.push(details));
  const result = (await env.run((value: RunToolInput) => runTool(deps, value), input)) as ToolRunResult;
  return { result, block: await store.get<ToolResultBlock>(result.ref), heartbeats };
}
