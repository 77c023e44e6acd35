/**
 * `durable-agent batch` as its user meets it: the CLI and a worker in processes of their own
 * against a dev server, production timeouts, both SIGKILLed half-way through a batch of 20 tasks
 * and started again; then `batch status`, `batch export`, a rerun of the ended batch, and a tasks
 * file with mistakes in it. The embedded default's batch tests are in `batch-cli-embedded.test.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { formatUsd } from '../src/shared/pricing';
import { effectLines, scriptedBatch } from './support/batch';
import type { ScriptedBatch } from './support/batch';
import { runCli, startCli } from './support/cli';
import { makeWorkspace, spawnWorkerProcess, startTemporal, tempDir, uniqueTaskQueue, waitFor } from './support/harness';
import type { WorkerProcess } from './support/harness';

jest.setTimeout(300_000);

describe('durable-agent batch (CLI, worker and dev server in processes of their own)', () => {
  let env: TestWorkflowEnvironment;
  let batch: ScriptedBatch;
  const workers: WorkerProcess[] = [];
  let home: string;
  let dir: string;
  let cliEnv: NodeJS.ProcessEnv;
  const taskQueue = uniqueTaskQueue('cli-batch');
  let tasksFile = '';

  beforeAll(async () => {
    env = await startTemporal();
    const workspace = makeWorkspace({});
    batch = await scriptedBatch(workspace, 20, { prefix: 'cli-batch', chunkDelayMs: 60 });
    home = tempDir('batch-home');
    dir = tempDir('batch-tasks');
    tasksFile = path.join(dir, 'nightly.jsonl');
    // Workspaces relative to the tasks file, as a user writes them.
    fs.symlinkSync(workspace, path.join(dir, 'repo'));
    fs.writeFileSync(
      tasksFile,
      batch.tasks
        .map((task) => JSON.stringify({ id: task.id, prompt: task.input.prompt, workspace: 'repo' }))
        .join('\n') + '\n',
    );
    cliEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: 'default',
      DURABLE_AGENT_HOME: home,
    };
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill('SIGKILL');
    await batch?.close();
    await env?.teardown();
  });

  const spawnWorker = async () => {
    const worker = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: batch.router.url, home });
    workers.push(worker);
    return worker;
  };
  const args = () => [
    'batch',
    tasksFile,
    '--concurrency',
    '3',
    '--task-queue',
    taskQueue,
    '--permission-mode',
    'bypassPermissions',
  ];

  test('worker and client SIGKILLed half-way, started again: every task finishes once, no side effect repeated', async () => {
    const first = await spawnWorker();
    const client = startCli(args(), cliEnv);
    await waitFor(
      async () => (effectLines(batch.effects).length >= 8 ? true : undefined),
      120_000,
      '8 tasks to run',
    ).catch((error: Error) => {
      throw new Error(`${error.message}\nCLI: ${client.output()}\nworker: ${first.logs()}`);
    });
    client.child.kill('SIGKILL');
    await first.kill('SIGKILL');
    expect(client.output()).toContain('started batch nightly (20 tasks, 3 at a time)');
    const killedWith = effectLines(batch.effects).length;
    expect(killedWith).toBeLessThan(20);

    await spawnWorker();
    const again = await runCli(args(), cliEnv);
    expect(again.stderr).toContain('batch nightly is running');
    expect(again.code).toBe(0);
    // Each task's line exactly once: nothing lost, nothing run twice.
    expect(effectLines(batch.effects)).toEqual(batch.tasks.map((task) => `${task.id} 0`).sort());
    expect(again.stderr).toMatch(/batch nightly completed/);
    expect(again.stderr).toContain('tasks 20: completed 20');
    // The table on stdout: one row per task, in the file's order.
    const rows = again.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^task\s+outcome\s+turns\s+cost\s+duration$/);
    expect(rows.slice(1).map((row) => row.split(/\s+/).slice(0, 3))).toEqual(
      batch.tasks.map((task) => [task.id, 'completed', '2']),
    );
  });

  test('batch status --output-format json, batch export, and a rerun of the ended batch that runs nothing', async () => {
    const status = await runCli(['batch', 'status', 'nightly', '--output-format', 'json'], cliEnv);
    expect(status.code).toBe(0);
    const parsed = JSON.parse(status.stdout) as {
      reason: string;
      outcomes: Record<string, number>;
      task_rows: Array<{ task: string; outcome: string; turns: number }>;
    };
    expect(parsed).toMatchObject({ batch_id: 'nightly', reason: 'completed', outcomes: { completed: 20 } });
    expect(parsed.task_rows).toHaveLength(20);
    expect(parsed.task_rows.every((row) => row.outcome === 'completed' && row.turns === 2)).toBe(true);

    const out = path.join(dir, 'export');
    const exported = await runCli(['batch', 'export', 'nightly', '--output', out], cliEnv);
    expect(exported.stderr).toContain(`wrote 20 transcripts and results.jsonl (20 tasks) to ${out}`);
    expect(fs.readdirSync(out).sort()).toEqual(['results.jsonl', 'transcripts']);
    expect(fs.readdirSync(path.join(out, 'transcripts'))).toHaveLength(20);
    const results = fs.readFileSync(path.join(out, 'results.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(results[0]!)).toMatchObject({
      task: 't1',
      job: 'nightly/t1',
      outcome: 'completed',
      answer: 'done t1',
      detail: null,
    });
    const transcript = fs.readFileSync(path.join(out, 'transcripts', 't1.jsonl'), 'utf8');
    expect(transcript).toContain('[chaos:cli-batch-t1]');
    // The same batch again into its own export: written over.
    expect((await runCli(['batch', 'export', 'nightly', '--output', out], cliEnv)).code).toBe(0);
    // A folder holding somebody's files, or a file: refused, nothing written or mixed in.
    const busy = tempDir('busy-folder');
    fs.writeFileSync(path.join(busy, 'notes.txt'), 'mine\n');
    const intoBusy = await runCli(['batch', 'export', 'nightly', '--output', busy], cliEnv);
    expect(intoBusy.code).toBe(1);
    expect(intoBusy.stderr).toContain(`--output ${busy} already holds files that are not an export of batch nightly`);
    expect(fs.readdirSync(busy)).toEqual(['notes.txt']);
    const intoFile = await runCli(['batch', 'export', 'nightly', '--output', path.join(busy, 'notes.txt')], cliEnv);
    expect(intoFile.code).toBe(1);
    expect(intoFile.stderr).toContain('is a file, not a folder: name a new or empty folder with --output');
    expect(intoFile.stderr).not.toMatch(/\n\s+at /);

    const calls = batch.router.calls.length;
    const rerun = await runCli(args(), cliEnv);
    expect(rerun.code).toBe(0);
    expect(rerun.stderr).toContain('reran batch nightly');
    expect(rerun.stderr).toContain('finished by an earlier run 20');
    expect(batch.router.calls.length).toBe(calls);

    // Another file of the same name (so the same default batch id) is not taken for a rerun.
    const other = path.join(tempDir('other-tasks'), 'nightly.jsonl');
    fs.writeFileSync(other, JSON.stringify({ id: 't1', prompt: 'Something else', workspace: dir }) + '\n');
    const refused = await runCli(['batch', other, '--task-queue', taskQueue], cliEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'batch nightly (completed) was started with other tasks; this file has 1 with another prompt or workspace ' +
        '(t1); 19 of its tasks missing (t2, t3, t4, ...).',
    );
    expect(refused.stderr).toContain('--batch-id <another id>');
    expect(batch.router.calls.length).toBe(calls);
    // A job's id is not a batch's.
    const job = await runCli(['batch', 'status', 'nightly/t1'], cliEnv);
    expect(job.code).toBe(1);
    expect(job.stderr).toContain('nightly/t1 is a job, not a batch');
    // Nor is a typo.
    const unknown = await runCli(['batch', 'status', 'nightyl'], cliEnv);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no batch "nightyl" here');
  });

  test('a batch no worker runs (a task queue nobody polls): status and the follower say what to start; Ctrl-C leaves it running', async () => {
    const lonely = uniqueTaskQueue('nobody-polls');
    const file = path.join(tempDir('lonely-tasks'), 'lonely.jsonl');
    fs.writeFileSync(file, JSON.stringify({ id: 'x1', prompt: 'Never runs', workspace: dir }) + '\n');
    const follower = startCli(['batch', file, '--task-queue', lonely], cliEnv);
    try {
      await waitFor(
        async () => (follower.output().includes('no worker has answered batch lonely') ? true : undefined),
        60_000,
        'the follower to say no worker answers',
      );
      expect(follower.output()).toContain(
        `start one for task queue ${lonely} with \`durable-agent worker --task-queue ${lonely}\``,
      );
      const status = await runCli(['batch', 'status', 'lonely'], cliEnv);
      expect(status.stderr).toContain(`batch lonely is running, but no worker has answered batch lonely for 15 s`);
      expect(status.stderr).toContain(`durable-agent worker --task-queue ${lonely}`);
      follower.child.kill('SIGINT');
      const ended = await follower.done;
      expect(ended.code).toBe(130);
      expect(ended.stderr).toContain(
        'stopped following; batch lonely goes on running: `durable-agent batch status lonely`',
      );
      expect((await env.client.workflow.getHandle('lonely').describe()).status.name).toBe('RUNNING');
    } finally {
      follower.child.kill('SIGKILL');
      await env.client.workflow
        .getHandle('lonely')
        .terminate('test over')
        .catch(() => undefined);
    }
  });

  test('a batch budget: no task starts once it is spent, the running ones stop at their next call, exit status 4', async () => {
    if (!workers.some((worker) => worker.child.exitCode === null && worker.child.signalCode === null)) {
      await spawnWorker();
    }
    const workspace = makeWorkspace({});
    // Each call is 100,000 input tokens: $0.20 at the built-in price; each task would make 5.
    // Replies take about 200 ms, as a real model's take a while: with instant ones and instant
    // tools, a loaded machine (CI) let a task make all five calls before the batch's stop came back.
    const budget = await scriptedBatch(workspace, 5, {
      prefix: 'cli-budget',
      turns: 4,
      dollars: true,
      chunkDelayMs: 10,
      router: batch.router,
    });
    try {
      const file = path.join(dir, 'budget.jsonl');
      fs.writeFileSync(
        file,
        budget.tasks.map((task) => JSON.stringify({ id: task.id, prompt: task.input.prompt, workspace })).join('\n'),
      );
      const result = await runCli(
        [
          'batch',
          file,
          '--concurrency',
          '2',
          '--max-budget-usd',
          '0.5',
          '--task-queue',
          taskQueue,
          '--output-format',
          'json',
        ],
        cliEnv,
      );
      expect(result.code).toBe(4);
      const parsed = JSON.parse(result.stdout) as {
        reason: string;
        notStarted: number;
        costUsd: number;
        task_rows: Array<{ task: string; outcome: string }>;
      };
      expect(parsed).toMatchObject({ batch_id: 'budget', reason: 'budget_exhausted', notStarted: 3 });
      expect(parsed.task_rows.map((row) => row.outcome)).toEqual([
        'budget_exhausted',
        'budget_exhausted',
        'not started',
        'not started',
        'not started',
      ]);
      // The running tasks stop at their next call once the batch has counted their reports, sent as
      // each reply lands: usually four calls of $0.20 (the third reply spends the budget, and the
      // other task's call under way finishes), a call or two more on a loaded machine; never the
      // $2.00 the two tasks' ten calls would cost unstopped.
      expect(parsed.costUsd).toBeGreaterThanOrEqual(0.5);
      expect(parsed.costUsd).toBeLessThan(1.99);
      // Temporal's status (the UI's Status column): the exhausted batch and its stopped jobs failed.
      expect((await env.client.workflow.getHandle('budget').describe()).status.name).toBe('FAILED');
      for (const task of budget.tasks.slice(0, 2)) {
        expect((await env.client.workflow.getHandle(`budget/${task.id}`).describe()).status.name).toBe('FAILED');
      }
      // `batch status` still reads the batch's Terminal from its failure.
      const statusJson = await runCli(['batch', 'status', 'budget', '--output-format', 'json'], cliEnv);
      expect(statusJson.code).toBe(0);
      expect(JSON.parse(statusJson.stdout)).toMatchObject({
        status: 'ended',
        reason: 'budget_exhausted',
        notStarted: 3,
      });

      // Issue 26: the summary showed two figures ($0.60 in the detail, $0.80 as the cost "of $0.50")
      // with no word on which was which. Now: what had been spent when the budget stopped the batch,
      // and what the calls then running cost on top.
      const stoppedAt = (parsed as { stoppedAtUsd?: number }).stoppedAtUsd;
      expect(stoppedAt).toBeGreaterThanOrEqual(0.5);
      expect(stoppedAt).toBeLessThanOrEqual(parsed.costUsd);
      const status = await runCli(['batch', 'status', 'budget'], cliEnv);
      expect(status.code).toBe(0);
      expect(status.stderr).toContain(`cost ${formatUsd(parsed.costUsd)} in all, against a budget of $0.50`);
      expect(status.stderr).toContain(`the budget stopped the batch when ${formatUsd(stoppedAt ?? 0)} was spent`);
      if (parsed.costUsd > (stoppedAt ?? 0)) {
        expect(status.stderr).toContain(
          `the calls already running then cost ${formatUsd(parsed.costUsd - (stoppedAt ?? 0))} more as they finished`,
        );
      }
    } finally {
      await budget.close();
    }
  });

  test('a batch terminated while the CLI follows it ends the CLI with one clear line, no stack trace', async () => {
    if (!workers.some((worker) => worker.child.exitCode === null && worker.child.signalCode === null)) {
      await spawnWorker();
    }
    const batchId = `terminated-${Date.now()}`;
    const client = startCli([...args(), '--batch-id', batchId], cliEnv);
    await waitFor(async () => (client.output().includes(`batch ${batchId}`) ? true : undefined), 60_000, 'the batch');
    await env.client.workflow.getHandle(batchId).terminate('the operator needs the machine');
    const result = await client.done;
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(batchId);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  test('a tasks file with mistakes is refused whole, each mistake with its line, and nothing starts', async () => {
    const bad = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(
      bad,
      [
        '{"id":"a","prompt":"Fix it","workspace":"repo"}',
        '{"id":"a","prompt":"Again","workspace":"repo"}',
        'not json',
        '{"id":"b/c","prompt":"x","workspace":"repo"}',
        '{"id":"d","prompt":"x"}',
        '{"id":"f","prompt":"x","workspace":"repo","maxTurns":0}',
        '{"id":"g","workspace":"repo"}',
        '',
      ].join('\n'),
    );
    const result = await runCli(['batch', bad, '--task-queue', taskQueue], cliEnv);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the tasks file');
    expect(result.stderr).toContain('has 6 problems; nothing was started');
    expect(result.stderr).toContain('bad.jsonl:2: task id "a" is also on line 1');
    expect(result.stderr).toContain('bad.jsonl:3: not JSON');
    expect(result.stderr).toContain('bad.jsonl:4: "id"');
    expect(result.stderr).toContain('bad.jsonl:5: give either "workspace"');
    expect(result.stderr).toContain('bad.jsonl:6: "maxTurns"');
    expect(result.stderr).toContain('bad.jsonl:7: "prompt" is missing');
    const long = await runCli(['batch', tasksFile, '--batch-id', 'a'.repeat(150), '--task-queue', taskQueue], cliEnv);
    expect(long.code).toBe(1);
    expect(long.stderr).toContain('at most 100 characters');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const unknown = await runCli(['batch', 'status', 'no-such-batch'], cliEnv);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no-such-batch');
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
  });
});
