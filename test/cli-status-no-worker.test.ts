/**
 * Issue "never stranded": `status` of a job whose worker is gone waited 15 s for a query no worker
 * would answer, then said only that. It now asks the server whether a worker polls the job's task
 * queue; when none has for over a minute, it shows at once what the server knows (an ended job's
 * Terminal, a running one's pending calls) and which worker to start. With a worker there, it
 * answers as fast as before.
 */
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NO_POLL_MS, noWorkerPolls } from '../src/client/worker-polls';
import { ScriptedModelServer, startTemporal, tempDir, uniqueTaskQueue, waitFor } from './support/harness';
import { textReply } from './support/jobs';
import { runCli as cli, startCli } from './support/cli';

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const startedAt = Date.now();
  const value = await fn();
  return { value, seconds: (Date.now() - startedAt) / 1000 };
}

describe('status of a job whose worker is gone', () => {
  let temporal: TestWorkflowEnvironment;
  let model: ScriptedModelServer;

  beforeAll(async () => {
    temporal = await startTemporal();
    // The first job's model call hangs until its worker is killed; the second job's call answers.
    model = await ScriptedModelServer.start({
      name: 'status-no-worker',
      replies: [textReply('Done.')],
      chunkDelayMs: 0,
      faults: [{ turn: 0, attempt: 1, kind: 'hang' }],
    });
  });

  afterAll(async () => {
    await model?.close();
    await temporal?.teardown();
  });

  test('answers at once with what the server knows, and names the worker to start', async () => {
    const taskQueue = uniqueTaskQueue('status-no-worker');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: temporal.address,
      DURABLE_AGENT_HOME: tempDir('home'),
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: model.url,
    };
    const worker = startCli(['worker', '--task-queue', taskQueue], env);
    try {
      await waitFor(
        async () => (worker.output().includes('durable-agent worker polling') ? true : undefined),
        60_000,
        'the worker to poll',
      );
      const run = (id: string) =>
        cli(['run', 'Say done', '--cwd', tempDir('ws'), '--job-id', id, '--task-queue', taskQueue, '--detach'], env);
      expect((await run('gone-running')).code).toBe(0);
      await model.waitForRequest(0, 1, 60_000);
      expect((await run('gone-done')).code).toBe(0);
      expect((await cli(['result', 'gone-done'], env)).code).toBe(0);

      const live = await timed(() => cli(['status', 'gone-done'], env));
      console.log(`status with its worker there: ${live.seconds.toFixed(1)} s`);
      expect(live.value.code).toBe(0);
      expect(live.value.stdout).toContain('job gone-done: finished');
      expect(live.value.stderr).toBe('');

      worker.child.kill('SIGKILL');
      await worker.done;
      // The server remembers the killed worker's last poll: a minute on, it is known to be gone.
      const client = new Client({ connection: temporal.connection });
      await waitFor(
        async () => ((await noWorkerPolls(client, taskQueue)) ? true : undefined),
        NO_POLL_MS + 30_000,
        'the server to see no poll',
      );

      const ended = await timed(() => cli(['status', 'gone-done'], env));
      console.log(`status of an ended job whose worker is gone: ${ended.seconds.toFixed(1)} s`);
      expect(ended.value.code).toBe(0);
      expect(ended.value.stdout).toContain(
        'job gone-done: finished (what the server knows; its live state needs a worker)',
      );
      expect(ended.value.stdout).toContain('Terminal: completed after 1 turn');
      expect(ended.value.stderr.trim()).toBe(
        `· no worker polls task queue ${taskQueue} (none has for over 70 s), so the job's live state is unknown ` +
          `and it does not go on: start one with \`durable-agent worker --task-queue ${taskQueue}\``,
      );

      const running = await timed(() => cli(['status', 'gone-running', '--json'], env));
      console.log(`status --json of a running job whose worker is gone: ${running.seconds.toFixed(1)} s`);
      expect(running.value.code).toBe(0);
      expect(JSON.parse(running.value.stdout)).toMatchObject({
        status: 'RUNNING',
        taskQueue,
        pending: [{ activity: 'callModel' }],
        noWorker: expect.stringContaining(`no worker polls task queue ${taskQueue}`),
      });

      const listed = await timed(() => cli(['ls'], env));
      console.log(`ls with a running job whose worker is gone: ${listed.seconds.toFixed(1)} s`);
      expect(listed.value.stdout).toMatch(/gone-running\s+running\s.*\(no worker answered; approvals unknown\)/);

      // The CLI's own start-up is most of these; the answers themselves are immediate. What this
      // guards against is the 15 s wait for a query no worker answers: a margin of 8 s over the
      // live answer still catches it, and leaves room for a loaded machine's jitter (CI saw 4.4 s).
      expect(ended.seconds).toBeLessThan(live.seconds + 8);
      expect(running.seconds).toBeLessThan(live.seconds + 8);
      expect(listed.seconds).toBeLessThan(live.seconds + 8);
    } finally {
      worker.child.kill('SIGKILL');
    }
  }, 240_000);
});
