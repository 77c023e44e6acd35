/**
 * The batch workflow against a real dev server and worker: concurrency, deterministic job ids,
 * the batch budget, abort, a rerun that skips finished tasks and continues stopped ones from their
 * conversation, and continue-as-new with jobs still running.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { BatchInput, BatchSnapshot, BatchTerminal } from '../src/shared/batch';
import { BATCH_BUDGET_DETAIL, taskJobId } from '../src/shared/batch';
import { findTemporalBinary } from '../src/client/temporal-binary';
import { exportBatch, taskRows } from '../src/client/batch';
import { batchSnapshotQuery, taskCostSignal } from '../src/workflows/batch-definitions';
import { effectLines, peakConcurrentTasks, scriptedBatch } from './support/batch';
import {
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from './support/harness';
import type { ScriptedModelServer } from './support/harness';
import { terminalOf } from './support/jobs';

const run = promisify(execFile);

jest.setTimeout(180_000);

describe('workflow: batch', () => {
  let env: TestWorkflowEnvironment;
  const cleanups: Array<() => Promise<void>> = [];

  const worktrees = tempDir('worktrees');
  const savedWorktrees = process.env.DURABLE_AGENT_WORKTREES;

  beforeAll(async () => {
    // The in-process worker makes its clones here, not in the home directory.
    process.env.DURABLE_AGENT_WORKTREES = worktrees;
    env = await startTemporal();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await env?.teardown();
    if (savedWorktrees === undefined) delete process.env.DURABLE_AGENT_WORKTREES;
    else process.env.DURABLE_AGENT_WORKTREES = savedWorktrees;
  });

  async function withBatch(name: string, count: number, options: Parameters<typeof scriptedBatch>[2] = {}) {
    const workspace = makeWorkspace({});
    const batch = await scriptedBatch(workspace, count, { prefix: name, ...options });
    const taskQueue = uniqueTaskQueue(name);
    // The worker's DURABLE_AGENT_HOME, for commands that read its store (export).
    const home = tempDir('home');
    // The router stands in for one model server: the worker only needs its URL.
    const { worker, done } = await startWorker(env, batch.router as unknown as ScriptedModelServer, {
      taskQueue,
      storeDir: path.join(home, 'store'),
    });
    cleanups.push(async () => {
      worker.shutdown();
      await done;
      await batch.close();
    });
    const batchId = `${name}-${Date.now()}`;
    const start = (input: Omit<BatchInput, 'tasks'> & Partial<Pick<BatchInput, 'tasks'>>) =>
      env.client.workflow.start('agentBatch', {
        workflowId: batchId,
        taskQueue,
        args: [{ tasks: { inline: batch.tasks }, ...input } satisfies BatchInput],
      });
    return { batch, batchId, home, start, taskQueue };
  }

  const jobResult = (batchId: string, taskId: string) =>
    terminalOf(env.client.workflow.getHandle(taskJobId(batchId, taskId)));

  test('runs every task once as a child job <batch>/<task>, never more than the concurrency at a time', async () => {
    const { batch, batchId, start } = await withBatch('batch-run', 6, { chunkDelayMs: 40 });
    const handle = await start({ concurrency: 2 });
    const terminal = await terminalOf<BatchTerminal>(handle);

    expect(terminal).toMatchObject({ reason: 'completed', tasks: 6, notStarted: 0, skipped: 0, continued: 0 });
    expect(terminal.outcomes).toEqual({ completed: 6 });
    expect(terminal.turns).toBe(12);
    expect(effectLines(batch.effects)).toEqual(['t1 0', 't2 0', 't3 0', 't4 0', 't5 0', 't6 0']);
    expect(peakConcurrentTasks(batch.router)).toBe(2);
    for (const id of ['t1', 't6']) {
      expect(await jobResult(batchId, id)).toMatchObject({ reason: 'completed', finalText: `done ${id}` });
    }
  });

  test('a batch budget starts no further task once spent and stops the running ones at their next model call', async () => {
    // Replies that take a while (about 200 ms), as a real model's do. The tools here take
    // milliseconds, so a job's next call can start before the batch's stop comes back by signal:
    // with instant replies a loaded machine (CI on Node 24) let the jobs make a call more than the
    // bound below meanwhile.
    const { batch, batchId, start } = await withBatch('batch-budget', 5, { turns: 4, dollars: true, chunkDelayMs: 10 });
    const handle = await start({ concurrency: 2, maxBudgetUsd: 2.5 });
    const terminal = await terminalOf<BatchTerminal>(handle);

    expect(terminal.reason).toBe('budget_exhausted');
    expect(terminal.detail).toContain(BATCH_BUDGET_DETAIL);
    expect(terminal.notStarted).toBe(3);
    expect(terminal.outcomes).toEqual({ budget_exhausted: 2 });
    // Each call costs $1: the batch goes over by at most the calls already under way when it noticed.
    expect(terminal.costUsd).toBeGreaterThanOrEqual(2.5);
    expect(terminal.costUsd).toBeLessThanOrEqual(6);
    const first = await jobResult(batchId, 't1');
    expect(first.reason).toBe('budget_exhausted');
    expect(first.detail).toMatch(new RegExp(`^${BATCH_BUDGET_DETAIL}`));
    // Never the fifth call (the answer): stopped part-way.
    expect(first.turnCount).toBeLessThan(5);

    // The same batch and budget again: what the stopped jobs spent stays spent, so nothing runs.
    const calls = batch.router.calls.length;
    const again = await terminalOf<BatchTerminal>(await start({ concurrency: 2, maxBudgetUsd: 2.5, rerun: true }));
    expect(again).toMatchObject({ reason: 'budget_exhausted', notStarted: 5, continued: 0 });
    expect(again.costUsd).toBeCloseTo(terminal.costUsd, 6);
    expect(batch.router.calls.length).toBe(calls);

    // With more budget the two stopped tasks go on from their conversations and the rest start;
    // the batch's cost is what all its jobs cost, the first run's included.
    const more = await terminalOf<BatchTerminal>(await start({ concurrency: 2, maxBudgetUsd: 100, rerun: true }));
    expect(more).toMatchObject({ reason: 'completed', notStarted: 0, continued: 2, outcomes: { completed: 5 } });
    const paidCalls = batch.router.calls.filter((call) => call.completed).length;
    expect(more.costUsd).toBeCloseTo(paidCalls, 0);
    // `batch status` counts a continued task's earlier jobs too: its rows add up to the Terminal.
    const rows = await taskRows(env.client, batchId, batch.tasks);
    const rowsCost = rows.reduce((sum, row) => sum + (row.costUsd ?? 0), 0);
    expect(rowsCost).toBeCloseTo(more.costUsd, 6);
    // And their turns: a task's row counts the turns of all its jobs, as its cost does.
    const rowsTurns = rows.reduce((sum, row) => sum + (row.turns ?? 0), 0);
    expect(rowsTurns).toBe(more.turns);
    expect(rows.find((row) => row.task === 't1')?.turns).toBe(
      first.turnCount + (await jobResult(batchId, 't1')).turnCount,
    );
  });

  test('a job tells its batch what a reply cost while its tools run, so the stop comes before its next call', async () => {
    // Two jobs, $1 a call, a $2.50 budget: the third reply spends it. Each job reports a reply's
    // cost as it lands, and its tools take two seconds, so the stop is back before either job's
    // third call. Reporting only before the next call, as jobs did before, let that call go ahead: $5 or $6.
    const { batch, start } = await withBatch('batch-budget-reply', 2, { turns: 4, dollars: true, toolSeconds: 2 });
    const terminal = await terminalOf<BatchTerminal>(await start({ concurrency: 2, maxBudgetUsd: 2.5 }));

    expect(terminal).toMatchObject({ reason: 'budget_exhausted', outcomes: { budget_exhausted: 2 } });
    expect(terminal.costUsd).toBeGreaterThanOrEqual(3);
    expect(terminal.costUsd).toBeLessThanOrEqual(4);
    expect(batch.router.calls.length).toBeLessThanOrEqual(4);
  });

  test('a rerun whose budget is already spent still counts the finished tasks, and starts none', async () => {
    // Two calls a task at $1 each: t1 and t2 finish ($4), then the $3.50 is spent.
    const { batch, start } = await withBatch('batch-spent-rerun', 4, { dollars: true });
    const first = await terminalOf<BatchTerminal>(await start({ concurrency: 1, maxBudgetUsd: 3.5 }));
    expect(first).toMatchObject({ reason: 'budget_exhausted', notStarted: 2, outcomes: { completed: 2 } });

    const calls = batch.router.calls.length;
    const again = await terminalOf<BatchTerminal>(
      await start({ concurrency: 1, maxBudgetUsd: 3.5, rerun: true, earlierRunTook: first.tasks - first.notStarted }),
    );
    expect(batch.router.calls.length).toBe(calls);
    expect(again).toMatchObject({
      reason: 'budget_exhausted',
      tasks: 4,
      notStarted: 2,
      skipped: 2,
      outcomes: { completed: 2 },
      reached: 2,
    });
    expect(again.costUsd).toBeCloseTo(4, 6);
    expect(effectLines(batch.effects)).toEqual(['t1 0', 't2 0']);
  });

  test('a rerun skipping finished tasks continues as new when its history is full, and counts each once', async () => {
    const { batch, batchId, start } = await withBatch('batch-skip-can', 4);
    expect(((await (await start({ concurrency: 4 })).result()) as BatchTerminal).outcomes).toEqual({ completed: 4 });
    const calls = batch.router.calls.length;
    const rerun = await start({ concurrency: 4, rerun: true, historyEventLimit: 10 });
    const terminal = await terminalOf<BatchTerminal>(rerun);
    expect(terminal).toMatchObject({ reason: 'completed', skipped: 4, notStarted: 0, outcomes: { completed: 4 } });
    expect(batch.router.calls.length).toBe(calls);
    const first = await env.client.workflow.getHandle(batchId, rerun.firstExecutionRunId).describe();
    expect(first.status.name).toBe('CONTINUED_AS_NEW');
  });

  test("a rerun adopts at once every job an earlier run left running, whatever the task's place", async () => {
    const { batch, batchId, start } = await withBatch('batch-adopt-all', 3, { chunkDelayMs: 250, dollars: true });
    const firstRun = await start({ concurrency: 2 });
    await waitFor(async () => (batch.router.calls.length >= 2 ? true : undefined), 30_000, 'two tasks streaming');
    // The batch dies; its jobs run on (they outlive it).
    await firstRun.terminate('the batch alone');
    const rerun = await start({ concurrency: 1, maxBudgetUsd: 100, rerun: true });
    // With one slot, only t1's turn has come; t2's job runs all the same and is watched and counted.
    const snapshot: BatchSnapshot = await waitFor(
      async () => {
        const seen: BatchSnapshot = await rerun.query(batchSnapshotQuery);
        return seen.running.length > 0 ? seen : undefined;
      },
      30_000,
      'the rerun to adopt the running jobs',
    );
    expect(snapshot.running.map((task) => task.id).sort()).toEqual(['t1', 't2']);
    expect(snapshot.ahead).toBeGreaterThanOrEqual(1);
    const terminal = await terminalOf<BatchTerminal>(rerun);
    expect(terminal).toMatchObject({ reason: 'completed', notStarted: 0, outcomes: { completed: 3 } });
    // Every call of every task is in the batch's cost, once.
    expect(terminal.costUsd).toBeCloseTo(batch.router.calls.filter((call) => call.completed).length, 6);
    expect(effectLines(batch.effects)).toEqual(['t1 0', 't2 0', 't3 0']);
    expect((await jobResult(batchId, 't2')).reason).toBe('completed');
  });

  test("a rerun does not start again a task whose finished job the server's retention deleted", async () => {
    const { batch, batchId, start } = await withBatch('batch-retention', 3);
    const first = await terminalOf<BatchTerminal>(await start({ concurrency: 3 }));
    expect(first.outcomes).toEqual({ completed: 3 });
    // What retention does to a closed job.
    const job = await env.client.workflow.getHandle(taskJobId(batchId, 't2')).describe();
    await env.client.workflowService.deleteWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: job.workflowId, runId: job.runId },
    });
    await waitFor(
      async () =>
        (await env.client.workflow
          .getHandle(job.workflowId)
          .describe()
          .then(
            () => undefined,
            () => true,
          )) ?? undefined,
      120_000,
      'the job to be deleted',
    );
    const calls = batch.router.calls.length;
    const again = await terminalOf<BatchTerminal>(
      await start({ concurrency: 3, rerun: true, earlierRunTook: first.tasks - first.notStarted }),
    );
    expect(batch.router.calls.length).toBe(calls);
    expect(again).toMatchObject({ skipped: 2, notStarted: 0, outcomes: { completed: 2, failed: 1 } });
    expect(effectLines(batch.effects)).toEqual(['t1 0', 't2 0', 't3 0']);
  });

  test('a job terminated from outside keeps what it spent in the batch budget', async () => {
    const { batchId, start } = await withBatch('batch-terminated', 2, { turns: 6, dollars: true, chunkDelayMs: 60 });
    const handle = await start({ concurrency: 1, maxBudgetUsd: 100 });
    // Each call costs $1: t1 has reported two of them.
    const spent = await waitFor(
      async () => {
        const snapshot: BatchSnapshot = await handle.query(batchSnapshotQuery);
        return snapshot.spentUsd >= 2 ? snapshot.spentUsd : undefined;
      },
      60_000,
      't1 to report $2',
    );
    await env.client.workflow.getHandle(taskJobId(batchId, 't1')).terminate('runaway');
    const terminal = await terminalOf<BatchTerminal>(handle);
    expect(terminal.outcomes).toEqual({ terminated: 1, completed: 1 });
    // t2's seven calls, and what t1 reported before it was ended.
    expect(terminal.costUsd).toBeGreaterThanOrEqual(7 + spent);
  });

  test('abort stops the running jobs and starts no more; a rerun skips nothing finished and continues the stopped ones', async () => {
    const { batch, batchId, start } = await withBatch('batch-abort', 4, { chunkDelayMs: 300 });
    const handle = await start({ concurrency: 2 });
    await waitFor(async () => (batch.router.calls.length >= 2 ? true : undefined), 30_000, 'two tasks streaming');
    const running: BatchSnapshot = await handle.query(batchSnapshotQuery);
    expect(running).toMatchObject({ tasks: 4, next: 2, concurrency: 2 });
    expect(running.running.map((task) => task.id).sort()).toEqual(['t1', 't2']);
    await handle.signal('abort', 'enough for tonight');
    const aborted = await terminalOf<BatchTerminal>(handle);
    expect(aborted).toMatchObject({ reason: 'aborted', detail: 'enough for tonight', notStarted: 2 });
    expect(Object.keys(aborted.outcomes).every((outcome) => outcome.startsWith('aborted'))).toBe(true);
    expect(Object.values(aborted.outcomes).reduce((sum, count) => sum + count, 0)).toBe(2);
    const stopped = await jobResult(batchId, 't1');
    expect(stopped.detail).toContain(`batch ${batchId} aborted`);

    // The same batch again: the two stopped tasks go on from their conversation, the rest start.
    const rerun = await start({ concurrency: 2, rerun: true });
    const terminal = await terminalOf<BatchTerminal>(rerun);
    expect(terminal).toMatchObject({ reason: 'completed', notStarted: 0, continued: 2, skipped: 0 });
    expect(terminal.outcomes).toEqual({ completed: 4 });
    expect(effectLines(batch.effects)).toEqual(['t1 0', 't2 0', 't3 0', 't4 0']);
    const continued = await jobResult(batchId, 't1');
    expect(continued).toMatchObject({ reason: 'completed', finalText: 'done t1' });
    // t1's row counts both its jobs' turns, as its cost; the rows add up to the batch's sums.
    const rows = await taskRows(env.client, batchId, batch.tasks);
    expect(rows.find((row) => row.task === 't1')?.turns).toBe(stopped.turnCount + continued.turnCount);
    expect(rows.reduce((sum, row) => sum + (row.turns ?? 0), 0)).toBe(terminal.turns);
    // A third run finds every task finished and runs nothing.
    const callsBefore = batch.router.calls.length;
    const third = await terminalOf<BatchTerminal>(await start({ concurrency: 2, rerun: true }));
    expect(third).toMatchObject({ reason: 'completed', skipped: 4, continued: 0, outcomes: { completed: 4 } });
    expect(batch.router.calls.length).toBe(callsBefore);
  });

  test('continues as new while jobs run, and still sees each one end', async () => {
    const { batch, batchId, start } = await withBatch('batch-can', 6, { chunkDelayMs: 60 });
    const handle = await start({ concurrency: 2, historyEventLimit: 20 });
    const terminal = await terminalOf<BatchTerminal>(handle);
    expect(terminal).toMatchObject({ reason: 'completed', tasks: 6, notStarted: 0 });
    expect(terminal.outcomes).toEqual({ completed: 6 });
    expect(effectLines(batch.effects)).toEqual(['t1 0', 't2 0', 't3 0', 't4 0', 't5 0', 't6 0']);
    const first = await env.client.workflow.getHandle(batchId, handle.firstExecutionRunId).describe();
    expect(first.status.name).toBe('CONTINUED_AS_NEW');
  });

  test('a task from a repo and ref runs in a fresh clone at that ref; a ref that does not exist ends the task, not the batch', async () => {
    const repo = makeWorkspace({ VERSION: 'one\n' });
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', repo, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
        encoding: 'utf8',
      });
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'one');
    git('tag', 'v1');
    fs.writeFileSync(path.join(repo, 'VERSION'), 'two\n');
    git('commit', '-qam', 'two');
    const { batch, batchId, start } = await withBatch('batch-repo', 2);
    const [first, second] = batch.tasks;
    const tasks = [
      { ...first!, input: { ...first!.input, workspace: '' }, worktree: { repo, ref: 'v1' } },
      { ...second!, input: { ...second!.input, workspace: '' }, worktree: { repo, ref: 'no-such-ref' } },
    ];
    const terminal = await terminalOf<BatchTerminal>(await start({ concurrency: 2, tasks: { inline: tasks } }));
    expect(terminal.outcomes).toEqual({ completed: 1, setup_failed: 1 });
    const clone = path.join(worktrees, batchId, 't1');
    // The task's Bash ran in the clone, at the tag, and the source repository is untouched.
    expect(fs.readFileSync(path.join(clone, 'VERSION'), 'utf8')).toBe('one\n');
    expect(fs.readFileSync(path.join(clone, 'effects.log'), 'utf8')).toBe('t1 0\n');
    expect(fs.existsSync(path.join(repo, 'effects.log'))).toBe(false);
    expect(fs.existsSync(path.join(worktrees, batchId, 't2'))).toBe(false);
    // The task whose clone failed still has its job, which says why: status and reruns see it.
    expect(await jobResult(batchId, 't2')).toMatchObject({
      reason: 'setup_failed',
      detail: expect.stringContaining('has no branch, tag or commit "no-such-ref"'),
    });
    // A rerun starts the failed task again from its prompt (it never talked): nothing is continued.
    const again = await terminalOf<BatchTerminal>(
      await start({ concurrency: 2, tasks: { inline: tasks }, rerun: true }),
    );
    expect(again).toMatchObject({ skipped: 1, continued: 0, outcomes: { completed: 1, setup_failed: 1 } });
  });

  test('prune keeps the stored task list of a running batch (and of one closed within the retention)', async () => {
    const { FileContentStore } = await import('../src/activities/store/content-store');
    const { jobReferences } = await import('../src/client/prune-jobs');
    const ref = await new FileContentStore(tempDir('batch-store')).put([
      { id: 'only', input: sessionInput('/nowhere') },
    ]);
    const batchId = `batch-prune-${Date.now()}`;
    // No worker polls this queue: the batch stays running, as a large batch does for hours.
    const handle = await env.client.workflow.start('agentBatch', {
      workflowId: batchId,
      taskQueue: uniqueTaskQueue('batch-prune'),
      args: [{ tasks: { ref, count: 1 }, concurrency: 1 } satisfies BatchInput],
    });
    try {
      const roots = await waitFor(
        async () => {
          const refs = await jobReferences(env.client, { cutoffMs: Date.now(), queryTimeoutMs: 2_000 });
          return refs.roots.has(ref) ? refs.roots : undefined;
        },
        20_000,
        'prune to see the running batch',
      );
      expect(roots.has(ref)).toBe(true);
    } finally {
      await handle.terminate('test over');
    }
    // Closed now: kept while the close is within the retention, not once it is older.
    const closedRoots = async (cutoffMs: number) =>
      (await jobReferences(env.client, { cutoffMs, queryTimeoutMs: 2_000 })).roots.has(ref);
    await waitFor(async () => ((await closedRoots(Date.now() - 60 * 60_000)) ? true : undefined), 20_000, 'closed');
    expect(await closedRoots(Date.now() + 60 * 60_000)).toBe(false);
  });

  test("a job's cost report that comes with the batch's first workflow task is counted, not a failed task", async () => {
    // A running job's report lands in a run's first workflow task when the batch continues as new
    // or is rerun while its jobs run; signal-with-start puts one there every time. Its handler ran
    // before the budget check it calls was defined, and every attempt of the task failed.
    const { batch, batchId, taskQueue } = await withBatch('batch-first-task-report', 2, { dollars: true });
    const handle = await env.client.workflow.signalWithStart('agentBatch', {
      workflowId: batchId,
      taskQueue,
      args: [{ tasks: { inline: batch.tasks }, concurrency: 2, maxBudgetUsd: 100 } satisfies BatchInput],
      signal: taskCostSignal,
      signalArgs: [{ taskId: 't1', costUsd: 0.5 }],
    });
    // Before, the batch never ended: wait a bounded time, then say so.
    const ended = await Promise.race([
      terminalOf<BatchTerminal>(handle),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000).unref()),
    ]);
    const { events } = await handle.fetchHistory();
    expect(events?.filter((event) => event.workflowTaskFailedEventAttributes)).toEqual([]);
    expect(ended).toMatchObject({ reason: 'completed', outcomes: { completed: 2 } });
  });

  test('export reads each answer and transcript from the run its row was listed from, never waiting for a newer run', async () => {
    const { batchId, home, start, taskQueue } = await withBatch('batch-export-run', 2);
    await terminalOf<BatchTerminal>(await start({ concurrency: 2 }));
    // The listing as it was a moment ago (visibility lags behind a start)...
    const listed: WorkflowExecutionInfo[] = [];
    for await (const info of env.client.workflow.list({ query: `WorkflowId STARTS_WITH "${batchId}/"` })) {
      listed.push(info);
    }
    const list = jest.spyOn(env.client.workflow, 'list').mockImplementation(
      () =>
        (async function* () {
          yield* listed;
        })() as unknown as ReturnType<typeof env.client.workflow.list>,
    );
    cleanups.push(async () => list.mockRestore());
    // ...and t1's job id has a newer run since, which no worker runs (a rerun going on with it).
    await env.client.workflow.start('agentSession', {
      workflowId: taskJobId(batchId, 't1'),
      taskQueue: `${taskQueue}-nobody`,
      args: [sessionInput('/nowhere')],
    });
    const dir = tempDir('batch-export');
    const exported = await Promise.race([
      exportBatch(env.client, batchId, dir, { ...process.env, DURABLE_AGENT_HOME: home }),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000).unref()),
    ]);
    expect(exported?.rows.map((row) => [row.task, row.outcome, row.answer])).toEqual([
      ['t1', 'completed', 'done t1'],
      ['t2', 'completed', 'done t2'],
    ]);
    // Its transcript too comes from the listed run, not from the newer one (which has none yet).
    expect(exported?.skipped).toEqual([]);
    for (const task of ['t1', 't2']) {
      const lines = fs
        .readFileSync(path.join(dir, 'transcripts', `${task}.jsonl`), 'utf8')
        .trim()
        .split('\n');
      expect(lines.at(-1)).toContain(`done ${task}`);
    }
    await env.client.workflow.getHandle(taskJobId(batchId, 't1')).terminate('test over');
  });

  test('malformed signals from the temporal CLI leave a running batch running; a garbled abort still stops it', async () => {
    const { batch, start } = await withBatch('batch-signals', 3, { chunkDelayMs: 300 });
    const handle = await start({ concurrency: 1, maxBudgetUsd: 100 });
    await waitFor(async () => (batch.router.calls.length >= 1 ? true : undefined), 30_000, 'the first task streaming');
    const signal = (name: string, ...inputs: string[]) =>
      run(
        findTemporalBinary(),
        ['workflow', 'signal', '--address', env.address, '--workflow-id', handle.workflowId, '--name', name].concat(
          inputs.flatMap((input) => ['--input', input]),
        ),
        { timeout: 30_000 },
      );
    // Garbage for a job's cost report, a cost that would spend the budget at once but names no
    // task, a negative cost, and two arguments where one is taken.
    await signal('taskCost', '"garbage"');
    await signal('taskCost', '{"taskId":"nobody","costUsd":1000}');
    await signal('taskCost', '{"taskId":"t1","costUsd":-5}');
    await signal('taskCost', '{"taskId":"t1","costUsd":0.5}', '"two"');
    const after: BatchSnapshot = await handle.query(batchSnapshotQuery);
    expect(after.stop).toBeUndefined();
    expect(after.spentUsd).toBeLessThan(100);
    expect(after.running.map((task) => task.id)).toEqual(['t1']);
    // An abort whose reason is not text still stops the batch, as it stops a job: stopping is
    // what the sender wanted.
    await signal('abort', '{"why":1}');
    const terminal = await terminalOf<BatchTerminal>(handle);
    expect(terminal).toMatchObject({ reason: 'aborted', detail: 'aborted by request', notStarted: 2 });
  });
});
