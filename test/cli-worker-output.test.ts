/**
 * Issue 26: `durable-agent worker` printed about 20 lines of the SDK's own logging at start
 * (multi-line "Worker state changed" and "No workflows registered" blocks). Its output is now one
 * line per thing a person needs.
 */
import { startCli, runCli as cli } from './support/cli';
import { ScriptedModelServer, makeWorkspace, tempDir } from './support/harness';
import { readCall } from './support/jobs';

test('a worker says what it does in a few lines, without the SDK logging', async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, DURABLE_AGENT_HOME: tempDir('home'), ANTHROPIC_API_KEY: 'test-key' };
  delete env.TEMPORAL_ADDRESS;
  const worker = startCli(['worker'], env);
  try {
    for (let i = 0; i < 600 && !worker.output().includes('durable-agent worker polling'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Time for the SDK's start-up lines, which came after ours.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    worker.child.kill('SIGTERM');
    const { stderr } = await worker.done;
    expect(stderr).toContain('durable-agent worker polling');
    expect(stderr).not.toMatch(/Worker state changed|No workflows registered|No Nexus services|sdkComponent/);
    expect(stderr.trim().split('\n').length).toBeLessThanOrEqual(6);
  } finally {
    worker.child.kill('SIGKILL');
    await cli(['stop'], env);
  }
}, 120_000);

test('a job that ends max_turns is not a worker warning (its workflow fails on purpose, for the UI)', async () => {
  const server = await ScriptedModelServer.start({
    replies: [{ content: [readCall('r1', 'a.txt')] }, { content: [{ type: 'text', text: 'never asked' }] }],
  });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DURABLE_AGENT_HOME: tempDir('home'),
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: server.url,
  };
  delete env.TEMPORAL_ADDRESS;
  // A queue of its own, so the job is this worker's, not the background one's.
  const taskQueue = `worker-output-${process.pid}`;
  const worker = startCli(['worker', '--task-queue', taskQueue], env);
  try {
    const run = await cli(
      ['run', 'Read a.txt', '--cwd', makeWorkspace({ 'a.txt': 'a\n' }), '--max-turns', '1', '--task-queue', taskQueue],
      env,
    );
    // Any ending but completed exits 1, as claude -p does.
    expect(run.code).toBe(1);
    // Time for the worker to log the workflow's end.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    worker.child.kill('SIGTERM');
    const { stderr } = await worker.done;
    expect(stderr).toContain('durable-agent worker polling');
    expect(stderr).not.toMatch(/Workflow failed|max_turns/);
  } finally {
    worker.child.kill('SIGKILL');
    await cli(['stop'], env);
    await server.close();
  }
}, 120_000);
