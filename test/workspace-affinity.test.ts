/**
 * Workspace affinity on a real dev server: two workers of one task queue on different hosts
 * (their own host ids, identities and host queues). A job finds the host of its workspace at
 * start, and every tool call, hook and workspace read of it runs there; model calls may run on
 * either. A workspace that no worker has ends the job at start, saying so.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import type { ScriptedSession } from '../src/model-server';
import type { BatchInput, BatchTerminal } from '../src/shared/batch';
import { taskJobId } from '../src/shared/batch';
import { hostTaskQueue } from '../src/shared/task-queues';
import type { Terminal } from '../src/shared/terminal';
import type { AgentWorker } from '../src/worker/agent-worker';
import { createWorker } from '../src/worker/create-worker';
import { WORKSPACE_AFFINITY_PATCH } from '../src/workflows/activity-proxies';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';
import { scriptedBatch } from './support/batch';
import { activityRuns } from './support/history';
import { readCall, textReply, toolUse, terminalOf } from './support/jobs';

jest.setTimeout(120_000);

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

const session: ScriptedSession = {
  replies: [
    { content: [toolUse('toolu_bash', 'Bash', { command: 'echo one >> effects.log' })] },
    { content: [readCall('toolu_read', 'effects.log')] },
    { content: [toolUse('toolu_bash2', 'Bash', { command: 'echo two >> effects.log' })] },
    textReply('Done.'),
  ],
};

async function twoHosts(name: string, server: ScriptedModelServer, worktreeRoots?: Record<string, string>) {
  const taskQueue = uniqueTaskQueue(name);
  const storeDir = tempDir('affinity-store');
  const workers: AgentWorker[] = [];
  const connections: NativeConnection[] = [];
  for (const host of ['host-a', 'host-b']) {
    // As two machines would: one connection each (one process may not poll a queue twice on one).
    const connection = await NativeConnection.connect({ address: env.address });
    connections.push(connection);
    workers.push(
      await createWorker({
        connection,
        taskQueue,
        hostId: host,
        identity: `worker-${host}`,
        activities: {
          anthropic: () => new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 }),
          storeDir,
          streamIdleMs: 5_000,
          ...(worktreeRoots ? { worktreeRoot: worktreeRoots[host] } : {}),
        },
      }),
    );
  }
  const running = workers.map((worker) => worker.run());
  return {
    taskQueue,
    stop: async () => {
      for (const worker of workers) worker.shutdown();
      await Promise.all(running);
      for (const connection of connections) await connection.close();
    },
  };
}

/** Each activity of the job's history (type, queue, the worker that ran it) and its patch markers. */
async function activitiesOf(workflowId: string) {
  const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const ran = (await activityRuns(env.client, workflowId)).map(({ attempt: _attempt, ...run }) => run);
  const markers = events
    .map((event) => event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data)
    .filter((data): data is Uint8Array => data instanceof Uint8Array)
    .map((data) => Buffer.from(data).toString('utf8'));
  return { ran, markers };
}

const WORKSPACE_ACTIVITIES = ['runTool', 'buildSystemPrompt', 'loadSettings', 'loadPermissionSettings'];

test('every tool call and workspace read of a job runs on the host that claimed its workspace', async () => {
  const servers = await Promise.all([0, 1, 2, 3].map(() => ScriptedModelServer.start(session)));
  // One model server per job would need a router; jobs of one script against one server each.
  const hosts = await Promise.all(servers.map((server, i) => twoHosts(`affinity-${i}`, server)));
  try {
    const jobs = await Promise.all(
      hosts.map(async ({ taskQueue }, i) => {
        const workspace = makeWorkspace({});
        const handle = await env.client.workflow.start('agentSession', {
          taskQueue,
          workflowId: `affinity-${i}-${Date.now()}`,
          args: [sessionInput(workspace)],
        });
        return { handle, taskQueue };
      }),
    );
    for (const { handle, taskQueue } of jobs) {
      expect(((await handle.result()) as Terminal).reason).toBe('completed');
      const { ran, markers } = await activitiesOf(handle.workflowId);
      expect(markers.some((marker) => marker.includes(WORKSPACE_AFFINITY_PATCH))).toBe(true);
      const claim = ran.find((activity) => activity.type === 'claimWorkspace');
      expect(claim?.queue).toBe(taskQueue);
      const host = claim!.identity.replace('worker-', '');
      const onWorkspace = ran.filter((activity) => WORKSPACE_ACTIVITIES.includes(activity.type));
      // Three tool calls and the three set-up reads, all on the claimer's host queue, run by it.
      expect(onWorkspace.filter((activity) => activity.type === 'runTool')).toHaveLength(3);
      for (const activity of onWorkspace) {
        expect(activity).toEqual({
          type: activity.type,
          queue: hostTaskQueue(taskQueue, host),
          identity: `worker-${host}`,
        });
      }
      // Model calls are on the model queue, for any worker.
      expect(
        ran.filter((activity) => activity.type === 'callModel').every((a) => a.queue === `${taskQueue}@model`),
      ).toBe(true);
    }
  } finally {
    for (const host of hosts) await host.stop();
    for (const server of servers) await server.close();
  }
});

test('a workspace that no worker has ends the job at start, saying what to do', async () => {
  const server = await ScriptedModelServer.start(session);
  const { taskQueue, stop } = await twoHosts('affinity-missing', server);
  try {
    const handle = await env.client.workflow.start('agentSession', {
      taskQueue,
      workflowId: `affinity-missing-${Date.now()}`,
      args: [sessionInput('/nowhere/at/all')],
    });
    const terminal = await terminalOf(handle);
    expect(terminal.reason).toBe('setup_failed');
    expect(terminal.detail).toContain("no worker of this job's task queue has the workspace /nowhere/at/all");
    expect(terminal.detail).toContain('start a worker on the machine that holds it');
    expect(server.requests).toHaveLength(0);
  } finally {
    await stop();
    await server.close();
  }
});

test("a batch task's clone is claimed on the host that made it, and its tools run there", async () => {
  const repo = makeWorkspace({ VERSION: 'one\n' });
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args]);
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'one');
  const batch = await scriptedBatch(makeWorkspace({}), 4, { prefix: 'affinity-batch' });
  // Each host makes its clones in a folder of its own, which the other cannot see.
  const roots = { 'host-a': tempDir('worktrees-a'), 'host-b': tempDir('worktrees-b') };
  const { taskQueue, stop } = await twoHosts('affinity-batch', batch.router as unknown as ScriptedModelServer, roots);
  try {
    const batchId = `affinity-batch-${Date.now()}`;
    const tasks = batch.tasks.map((task) => ({
      ...task,
      input: { ...task.input, workspace: '' },
      worktree: { repo, ref: 'HEAD' },
    }));
    const handle = await env.client.workflow.start('agentBatch', {
      workflowId: batchId,
      taskQueue,
      args: [{ tasks: { inline: tasks }, concurrency: 4 } satisfies BatchInput],
    });
    expect(((await handle.result()) as BatchTerminal).outcomes).toEqual({ completed: 4 });
    for (const task of tasks) {
      const host = Object.entries(roots).find(([, root]) => fs.existsSync(path.join(root, batchId, task.id)))?.[0];
      expect(host).toBeDefined();
      const { ran } = await activitiesOf(taskJobId(batchId, task.id));
      // The claim goes to the host that made the clone, and is taken there at once.
      const claims = ran.filter((activity) => activity.type === 'claimWorkspace');
      expect(claims).toEqual([
        { type: 'claimWorkspace', queue: hostTaskQueue(taskQueue, host!), identity: `worker-${host}` },
      ]);
      const onWorkspace = ran.filter((activity) => WORKSPACE_ACTIVITIES.includes(activity.type));
      expect(onWorkspace.length).toBeGreaterThan(0);
      for (const activity of onWorkspace) expect(activity.identity).toBe(`worker-${host}`);
      expect(
        fs.readFileSync(path.join(roots[host as keyof typeof roots], batchId, task.id, 'effects.log'), 'utf8'),
      ).toBe(`${task.id} 0\n`);
    }
  } finally {
    await stop();
    await batch.close();
  }
});
