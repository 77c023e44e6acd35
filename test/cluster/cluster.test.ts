/**
 * Two machines and a real cluster: a Temporal server on PostgreSQL (test/support/cluster.ts), two
 * `durable-agent worker` processes with data directories and host ids of their own, as two
 * machines would run them, one S3 content store between them (SeaweedFS), and a job started by
 * `durable-agent run` with TEMPORAL_ADDRESS set, as a user starts one.
 *
 * The workspace's host (host-a) is SIGKILLed while it streams a model call. The other machine
 * (host-b) takes the call over once its heartbeat times out, and can answer it only from the
 * transcript host-a wrote into the shared store; the job's next tool call waits for host-a, whose
 * journal and workspace it needs, and runs there when host-a is back. The job completes once:
 * one Terminal, each side effect applied once, and its transcript readable from a third machine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Client, Connection } from '@temporalio/client';
import type { ScriptedSession } from '../../src/model-server';
import { hostTaskQueue } from '../../src/shared/task-queues';
import { runCli, startCli } from '../support/cli';
import { startTemporalCluster } from '../support/cluster';
import type { TemporalCluster } from '../support/cluster';
import {
  ScriptedModelServer,
  makeWorkspace,
  spawnWorkerProcess,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from '../support/harness';
import type { WorkerProcess } from '../support/harness';
import { startS3Server } from '../support/s3-server';
import type { S3Server } from '../support/s3-server';
import { readCall, textReply, toolUse } from '../support/jobs';
import { activityRuns } from '../support/history';

jest.setTimeout(300_000);

const FINAL_TEXT = 'Done: config.yml is edited and the change is logged.';

const session: ScriptedSession = {
  name: 'cluster',
  // Turn 1 streams for a few seconds, long enough to kill its worker part-way.
  slowTurns: { 1: 150 },
  replies: [
    { content: [readCall('toolu_read', 'config.yml')] },
    {
      content: [
        {
          type: 'text',
          text: `Editing the version line now. ${'Checking every field of the file first. '.repeat(12)}`,
        },
        toolUse('toolu_edit', 'Edit', { file_path: 'config.yml', old_string: 'version: 1', new_string: 'version: 2' }),
      ],
    },
    { content: [toolUse('toolu_bash', 'Bash', { command: 'echo edited >> changes.log' })] },
    textReply(FINAL_TEXT),
  ],
};

/** The worker identity `src/worker/main.ts` gives itself. */
const identityOf = (worker: WorkerProcess) => new RegExp(`^durable-agent@.+:${worker.child.pid}$`);

/** Store objects a data directory holds of its own (none, when the store is S3). */
function localObjects(home: string): number {
  const objects = path.join(home, 'store', 'objects');
  if (!fs.existsSync(objects)) return 0;
  return fs.readdirSync(objects, { recursive: true }).length;
}

describe('a job on a real Temporal cluster, two worker machines sharing an S3 store', () => {
  let cluster: TemporalCluster;
  let s3: S3Server;
  let server: ScriptedModelServer;
  let connection: Connection;
  let client: Client;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    // Both start at once; when one fails, the other is stopped before the failure is reported.
    const [started, store] = await Promise.allSettled([startTemporalCluster(), startS3Server()]);
    if (started.status === 'rejected' || store.status === 'rejected') {
      if (started.status === 'fulfilled') await started.value.stop();
      if (store.status === 'fulfilled') await store.value.stop();
      throw started.status === 'rejected' ? started.reason : (store as PromiseRejectedResult).reason;
    }
    [cluster, s3] = [started.value, store.value];
    server = await ScriptedModelServer.start(session);
    connection = await Connection.connect({ address: cluster.address });
    client = new Client({ connection, namespace: cluster.namespace });
  });

  afterAll(async () => {
    for (const worker of workers) await worker.kill('SIGKILL');
    await connection?.close();
    await server?.close();
    await s3?.stop();
    await cluster?.stop();
  });

  test('host-a dies mid-stream: host-b answers from the shared store, the tools wait for host-a, the job completes once', async () => {
    const taskQueue = uniqueTaskQueue('cluster');
    const homes = { a: tempDir('cluster-home-a'), b: tempDir('cluster-home-b'), cli: tempDir('cluster-home-cli') };
    const workspace = makeWorkspace({ 'config.yml': 'name: demo\nversion: 1\n' });
    const jobId = `cluster-${Date.now()}`;
    const common = { TEMPORAL_ADDRESS: cluster.address, TEMPORAL_NAMESPACE: cluster.namespace, ...s3.env() };
    const startWorkerOn = async (host: 'a' | 'b') => {
      const worker = await spawnWorkerProcess({
        address: cluster.address,
        taskQueue,
        modelUrl: server.url,
        home: homes[host],
        extraEnv: { ...s3.env(), DURABLE_AGENT_HOST_ID: `host-${host}` },
      });
      workers.push(worker);
      return worker;
    };
    // The client's machine: no model credentials, a data directory of its own.
    const cliEnv: NodeJS.ProcessEnv = { ...process.env, ...common, DURABLE_AGENT_HOME: homes.cli };
    delete cliEnv.ANTHROPIC_API_KEY;
    delete cliEnv.CI;

    // host-a alone at first, so the workspace is claimed by it.
    const a1 = await startWorkerOn('a');
    const run = startCli(
      [
        'run',
        'Bump the version',
        '--cwd',
        workspace,
        '--job-id',
        jobId,
        '--task-queue',
        taskQueue,
        '--permission-mode',
        'bypassPermissions',
      ],
      cliEnv,
    );
    const diagnose = (error: Error) =>
      new Error(
        `${error.message}\nCLI: ${run.output()}\n` +
          workers.map((worker) => `worker ${worker.child.pid}: ${worker.logs()}`).join('\n') +
          `\n${cluster.logs()}`,
        { cause: error },
      );
    try {
      await server.waitForStreamStarted(1, 120_000);
      await a1.kill('SIGKILL');
      const b = await startWorkerOn('b');

      // host-b takes the model call over at its heartbeat timeout, with what host-a stored.
      await waitFor(
        async () => (server.requests.filter((r) => r.turn === 1).length >= 2 ? true : undefined),
        120_000,
        'the model call of turn 1 to be retried',
      );
      // Its Edit needs host-a: it waits, and `status` shows it waiting.
      await waitFor(
        async () => {
          const status = await runCli(['status', jobId], cliEnv);
          return status.stdout.includes('running: Edit (toolu_edit)') ? true : undefined;
        },
        60_000,
        'status to show the Edit waiting for host-a',
      );
      expect(fs.readFileSync(path.join(workspace, 'config.yml'), 'utf8')).toBe('name: demo\nversion: 1\n');

      const a2 = await startWorkerOn('a');
      const done = await run.done;
      expect(done.code).toBe(0);
      expect(done.stdout).toBe(`${FINAL_TEXT}\n`);
      expect(done.stderr.match(/Terminal: /g)).toHaveLength(1);
      expect(done.stderr).toContain('Terminal: completed after 4 turns');

      // Each side effect once.
      expect(fs.readFileSync(path.join(workspace, 'config.yml'), 'utf8')).toBe('name: demo\nversion: 2\n');
      expect(fs.readFileSync(path.join(workspace, 'changes.log'), 'utf8')).toBe('edited\n');
      // Every turn but the cut one was asked for once.
      expect(server.requests.map((request) => request.turn)).toEqual([0, 1, 1, 2, 3]);

      const description = await client.workflow.getHandle(jobId).describe();
      expect(description.status.name).toBe('COMPLETED');
      const ran = await activityRuns(client, jobId);
      // The model call host-a was streaming was answered by host-b, on a later attempt.
      const modelCalls = ran.filter((activity) => activity.type === 'callModel');
      expect(modelCalls).toHaveLength(4);
      expect(modelCalls[1]!.identity).toMatch(identityOf(b));
      expect(modelCalls[1]!.attempt).toBeGreaterThanOrEqual(2);
      // Every tool call ran on host-a's queue, by host-a (before or after its restart).
      const tools = ran.filter((activity) => activity.type === 'runTool');
      expect(tools).toHaveLength(3);
      for (const tool of tools) {
        expect(tool.queue).toBe(hostTaskQueue(taskQueue, 'host-a'));
        expect(tool.identity).toMatch(tool === tools[0] ? identityOf(a1) : identityOf(a2));
      }

      // The content went to the bucket, not to either machine's data directory, and a third
      // machine reads the transcript from there.
      expect(localObjects(homes.a) + localObjects(homes.b) + localObjects(homes.cli)).toBe(0);
      const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'objects/' }));
      expect(listed.KeyCount).toBeGreaterThan(0);
      const exported = await runCli(['export', jobId], cliEnv);
      expect(exported.code).toBe(0);
      expect(exported.stdout).toContain(FINAL_TEXT);
      expect(exported.stdout).toContain('version: 2');
    } catch (error) {
      throw diagnose(error as Error);
    }
  });
});
