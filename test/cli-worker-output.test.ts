/**
 * Issue 26: `durable-agent worker` printed about 20 lines of the SDK's own logging at start
 * (multi-line "Worker state changed" and "No workflows registered" blocks). Its output is now one
 * line per thing a person needs.
 */
import { startCli, runCli as cli } from './support/cli';
import { tempDir } from './support/harness';

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
