import Anthropic from '@anthropic-ai/sdk';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { modelTaskQueue } from '../src/shared/task-queues';
import { createActivities } from '../src/activities';
import { runTool } from '../src/activities/run-tool';
import { SandboxEngine } from '../src/activities/sandbox/engine';
import { FileContentStore } from '../src/activities/store/content-store';
import { executeTool } from '../src/activities/tools';
import type { ToolContext } from '../src/activities/tools';
import { DEFAULT_SESSION_TIMEOUTS } from '../src/shared/session';
import type { Terminal } from '../src/shared/terminal';
import { bundleWorkflows, HEARTBEAT_THROTTLE_MS } from '../src/worker/create-worker';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';

/** Longer than the production heartbeat timeout of a tool call. */
const SILENT_MS = DEFAULT_SESSION_TIMEOUTS.toolHeartbeatMs + 8_000;

describe('a tool that reports nothing for longer than the heartbeat timeout', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  test('is kept alive by runTool and runs once, under production timeouts', async () => {
    const server = await ScriptedModelServer.start({
      name: 'silent-tool',
      replies: [
        { content: [{ type: 'tool_use', id: 'toolu_glob', name: 'Glob', input: { pattern: '*.txt' } }] },
        { content: [{ type: 'text', text: 'Found it.' }] },
      ],
    });
    const storeDir = tempDir('heartbeat-store');
    const workspace = makeWorkspace({ 'a.txt': 'a\n' });
    const taskQueue = uniqueTaskQueue('heartbeat');
    let calls = 0;
    // A Glob whose listing takes long and says nothing meanwhile: a huge tree, a slow network mount.
    const silentGlob = async (name: string, input: unknown, ctx: ToolContext) => {
      calls += 1;
      await new Promise((resolve) => setTimeout(resolve, SILENT_MS));
      return executeTool(name, input, ctx);
    };
    const activityDeps = {
      anthropic: () => new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 }),
      storeDir,
    };
    const activities = createActivities(activityDeps);
    // Model calls go to the job's model queue, which a worker of createWorker's polls beside the job's.
    const modelWorker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: modelTaskQueue(taskQueue),
      activities: { callModel: activities.callModel, compactConversation: activities.compactConversation },
      maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
      defaultHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
    });
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await bundleWorkflows(),
      activities: {
        ...activities,
        runTool: (input: Parameters<typeof runTool>[1]) =>
          runTool(
            {
              store: new FileContentStore(storeDir),
              dataDir: storeDir,
              toolEnv: { PATH: process.env.PATH },
              sandbox: new SandboxEngine({ workerPrivatePaths: [storeDir] }),
              execute: silentGlob,
            },
            input,
          ),
      },
      maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
      defaultHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_MS,
    });
    try {
      const terminal = (await worker.runUntil(
        modelWorker.runUntil(
          env.client.workflow.execute('agentSession', {
            taskQueue,
            workflowId: `silent-tool-${Date.now()}`,
            args: [sessionInput(workspace, { timeouts: DEFAULT_SESSION_TIMEOUTS })],
          }),
        ),
      )) as Terminal;
      expect(terminal.reason).toBe('completed');
      expect(calls).toBe(1);
      const last = server.requests.at(-1)?.body as { messages: Array<{ content: unknown }> };
      expect(JSON.stringify(last.messages)).toContain('a.txt');
      expect(JSON.stringify(last.messages)).not.toContain('is_error');
    } finally {
      await server.close();
    }
  }, 180_000);
});
