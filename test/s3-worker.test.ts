/**
 * A worker whose content store is an S3 bucket (a real SeaweedFS S3 gateway), as production runs
 * one: the worker and the CLI in processes of their own against a dev server, each with its own
 * DURABLE_AGENT_HOME. The job's transcript and tool results are in the bucket, not in any data
 * folder; `export` from a third home reads them from there; `prune` sweeps them once the job is old.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { prune } from '../src/client/prune';
import type { Output } from '../src/client/render';
import { runCli } from './support/cli';
import {
  ScriptedModelServer,
  makeWorkspace,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';
import type { WorkerProcess } from './support/harness';
import { readCall, textReply, toolUse } from './support/jobs';
import { startS3Server } from './support/s3-server';
import type { S3Server } from './support/s3-server';

jest.setTimeout(240_000);

const DAY = 24 * 60 * 60_000;
const PREFIX = 'team/agents';

describe('a worker with DURABLE_AGENT_STORE=s3://...', () => {
  let temporal: TestWorkflowEnvironment;
  let s3: S3Server;
  let model: ScriptedModelServer;
  let worker: WorkerProcess | undefined;
  const taskQueue = uniqueTaskQueue('s3-store');
  const workerHome = tempDir('s3-worker-home');
  const clientHome = tempDir('s3-client-home');
  const jobId = `s3-job-${process.pid}`;

  beforeAll(async () => {
    [temporal, s3, model] = await Promise.all([
      startTemporal(),
      startS3Server(),
      ScriptedModelServer.start({
        name: 's3-store',
        chunkDelayMs: 0,
        replies: [
          {
            content: [
              { type: 'text', text: 'Writing the notes.' },
              toolUse('w1', 'Write', { file_path: 'notes.txt', content: 'kept in S3\n' }),
            ],
          },
          { content: [readCall('r1', 'notes.txt')] },
          textReply('The notes say: kept in S3.'),
        ],
      }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await worker?.kill('SIGTERM');
    await model?.close();
    await s3?.stop();
    await temporal?.teardown();
  });

  const storeEnv = () => s3.env(PREFIX);
  const cliEnv = (home: string, extra: NodeJS.ProcessEnv = storeEnv()): NodeJS.ProcessEnv => ({
    ...process.env,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: 'default',
    DURABLE_AGENT_HOME: home,
    ...extra,
  });
  const objectsInBucket = async () => {
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${PREFIX}/objects/` }));
    return listed.KeyCount ?? 0;
  };

  test('the transcript goes to the bucket, and export from another home reads it', async () => {
    worker = await spawnWorkerProcess({
      address: temporal.address,
      taskQueue,
      modelUrl: model.url,
      home: workerHome,
      extraEnv: storeEnv(),
    });
    expect(worker.logs()).toContain(`content store s3://${s3.bucket}/${PREFIX} (at ${s3.endpoint})`);
    const workspace = makeWorkspace({});
    const run = await runCli(
      [
        'run',
        'Write notes.txt and read it back',
        '--cwd',
        workspace,
        '--job-id',
        jobId,
        '--task-queue',
        taskQueue,
        '--permission-mode',
        'bypassPermissions',
      ],
      cliEnv(clientHome),
    );
    expect(run.stderr).toContain('Terminal: completed after 3 turns');
    expect(run.code).toBe(0);
    expect(fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8')).toBe('kept in S3\n');

    // Segments, tool results and the system prompt are all in the bucket; no data folder holds one.
    expect(await objectsInBucket()).toBeGreaterThanOrEqual(6);
    for (const home of [workerHome, clientHome]) {
      expect(fs.existsSync(path.join(home, 'store', 'objects'))).toBe(false);
    }

    const exportHome = tempDir('s3-export-home');
    const exported = await runCli(['export', jobId], cliEnv(exportHome));
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; message?: { content: unknown } });
    const text = JSON.stringify(lines.map((line) => line.message?.content));
    expect(text).toContain('Write notes.txt and read it back');
    expect(text).toContain('kept in S3');
    expect(text).toContain('The notes say: kept in S3.');

    // Without the store, the same export says where it looked and what to set.
    const elsewhere = await runCli(['export', jobId], cliEnv(exportHome, {}));
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain(
      `the transcript of job ${jobId} is not in the store at ${path.join(exportHome, 'store')}`,
    );
    expect(elsewhere.stderr).toContain('the same DURABLE_AGENT_STORE');
  });

  test('prune keeps the job while it is young, and sweeps the bucket once it is old', async () => {
    const before = await objectsInBucket();
    const young = await runCli(['prune', '--older-than', '1d'], cliEnv(tempDir('s3-prune-home')));
    expect(young.code).toBe(0);
    expect(young.stdout).toContain(`store s3://${s3.bucket}/${PREFIX} (at ${s3.endpoint}): removed 0 objects (0 B)`);
    expect(await objectsInBucket()).toBe(before);

    const lines: string[] = [];
    const out: Output = { write: (line: string) => lines.push(line) };
    const env = cliEnv(tempDir('s3-prune-home'));
    // Two days on, the job closed longer ago than the age: nothing reaches its content.
    const now = new Date(Date.now() + 2 * DAY);
    const dry = await prune({ olderThanMs: DAY, dryRun: true, now, env }, out);
    expect(dry.store.removed.count).toBe(before);
    expect(await objectsInBucket()).toBe(before);
    const real = await prune({ olderThanMs: DAY, dryRun: false, now, env }, out);
    expect(real.store.removed.count).toBe(before);
    expect(await objectsInBucket()).toBe(0);
    expect(lines.join('\n')).toContain(
      `store s3://${s3.bucket}/${PREFIX} (at ${s3.endpoint}): removed ${before} objects`,
    );
  });
});
