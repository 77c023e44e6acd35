/**
 * A job whose workspace host is gone parks, `status` says so and what to do, and the job goes on
 * where it stopped when a worker of that host is back. Workers, the CLI and the dev server run in
 * processes of their own, as on two machines (one host id each).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScriptedSession } from '../src/model-server';
import { hostTaskQueue } from '../src/shared/task-queues';
import { snapshotQuery } from '../src/workflows/definitions';
import { runCli } from './support/cli';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from './support/harness';
import type { WorkerProcess } from './support/harness';
import { textReply, toolUse, terminalOf } from './support/jobs';

jest.setTimeout(180_000);

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

const session: ScriptedSession = {
  replies: [
    // Held until the test has seen the healthy status and sent host-a away.
    {
      content: [
        toolUse('toolu_one', 'Bash', { command: 'until [ -e go ]; do sleep 0.1; done; echo one >> effects.log' }),
      ],
    },
    { content: [toolUse('toolu_two', 'Bash', { command: 'echo two >> effects.log' })] },
    textReply('Done.'),
  ],
};

test('a job whose workspace host left parks, says so in status, and goes on when the host is back', async () => {
  const server = await ScriptedModelServer.start(session);
  const taskQueue = uniqueTaskQueue('parking');
  const home = tempDir('parking-home');
  const workers: WorkerProcess[] = [];
  const worker = async (hostId: string) => {
    const started = await spawnWorkerProcess({
      address: env.address,
      taskQueue,
      modelUrl: server.url,
      home,
      extraEnv: { DURABLE_AGENT_HOST_ID: hostId },
    });
    workers.push(started);
    return started;
  };
  const cliEnv = { ...process.env, TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: 'default' };
  const status = async (id: string, ...flags: string[]) => {
    const result = await runCli(['status', id, ...flags], cliEnv);
    if (result.code !== 0) throw new Error(`status exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  };
  try {
    // Only host-a runs when the job starts, so host-a claims its workspace.
    const hostA = await worker('host-a');
    const workspace = makeWorkspace({});
    const handle = await env.client.workflow.start('agentSession', {
      taskQueue,
      workflowId: `parking-${Date.now()}`,
      args: [sessionInput(workspace)],
    });
    await waitFor(
      async () => ((await handle.query(snapshotQuery, 0)).runningTools.length > 0 ? true : undefined),
      60_000,
      'the first Bash to run',
    );
    await worker('host-b');
    const healthy = await status(handle.workflowId);
    expect(healthy).toContain('  workspace host: host-a\n');
    expect(healthy).not.toContain('parked');

    // host-a drains (its Bash finishes) and leaves; the next call for its workspace waits for it.
    hostA.child.kill('SIGTERM');
    await waitFor(async () => (hostA.logs().includes('SIGTERM: taking no new work') ? true : undefined));
    fs.writeFileSync(path.join(workspace, 'go'), '');
    await hostA.kill('SIGTERM');
    const parked = await waitFor(
      async () => {
        const text = await status(handle.workflowId);
        return text.includes('parked:') ? text : undefined;
      },
      60_000,
      'status to say the job is parked',
    );
    expect(parked).toMatch(/parked: waiting for the workspace host host-a — a runTool call has waited \d+ s for it/);
    expect(parked).toContain(`DURABLE_AGENT_HOST_ID=host-a, --task-queue ${taskQueue}`);
    const json = JSON.parse(await status(handle.workflowId, '--json')) as {
      hostQueue: string;
      workspaceHost: { id: string; taskQueue: string; parked?: { activity: string } };
    };
    expect(json.hostQueue).toBe(hostTaskQueue(taskQueue, 'host-a'));
    expect(json.workspaceHost).toMatchObject({ id: 'host-a', parked: { activity: 'runTool' } });
    // host-b runs the model calls but not the workspace's tools: the second Bash has not run.
    expect(fs.readFileSync(path.join(workspace, 'effects.log'), 'utf8')).toBe('one\n');

    await worker('host-a');
    const terminal = await terminalOf(handle);
    expect(terminal).toMatchObject({ reason: 'completed', finalText: 'Done.' });
    expect(fs.readFileSync(path.join(workspace, 'effects.log'), 'utf8')).toBe('one\ntwo\n');
  } finally {
    for (const started of workers) await started.kill('SIGKILL');
    await server.close();
  }
});
