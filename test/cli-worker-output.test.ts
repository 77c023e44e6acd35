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
    await waitForPolling(worker);
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
    // The job is queued for this worker alone: started before the worker polls (or after it failed
    // to start), `run` would wait for it forever instead of failing this test with its output.
    await waitForPolling(worker);
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

/** Until the worker says it polls; fails with its output if it exits first or takes a minute. */
async function waitForPolling(worker: ReturnType<typeof startCli>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!worker.output().includes('durable-agent worker polling')) {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null || Date.now() > deadline) {
      throw new Error(`the worker did not start polling:\n${worker.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
