/**
 * Issue 26: a job against a model API nobody answers at (connection refused) retried for 905 s in
 * silence and ended "Model call failed: Connection error." with no address. Now such a call is
 * retried for about a minute (production timeouts here), `status` shows where it cannot reach
 * while it lasts, and the job ends with a detail naming the address and what to check.
 */
import { freePort } from '../src/client/free-port';
import { tempDir } from './support/harness';
import { runCli as cli } from './support/cli';

test('an unreachable model API ends the job in about a minute, naming the address', async () => {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DURABLE_AGENT_HOME: tempDir('home'),
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: endpoint,
  };
  delete env.TEMPORAL_ADDRESS;
  try {
    const startedAt = Date.now();
    const started = await cli(['run', 'Say done', '--cwd', tempDir('ws'), '--job-id', 'unreachable', '--detach'], env);
    expect(started.code).toBe(0);
    let shown = '';
    for (let i = 0; i < 60 && !shown.includes('cannot reach'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      shown = (await cli(['status', 'unreachable'], env)).stdout;
    }
    expect(shown).toContain(`cannot reach the model API at ${endpoint} (connection refused, ECONNREFUSED)`);
    const result = await cli(['result', 'unreachable', '--json'], env);
    const seconds = (Date.now() - startedAt) / 1000;
    console.log(`unreachable API: the job ended ${seconds.toFixed(0)} s after it started`);
    const parsed = JSON.parse(result.stdout) as { terminal_reason: string; detail: string };
    expect(parsed.terminal_reason).toBe('model_error');
    expect(parsed.detail).toContain(`cannot reach the model API at ${endpoint} (connection refused, ECONNREFUSED)`);
    expect(parsed.detail).toContain('Check ANTHROPIC_BASE_URL');
    expect(seconds).toBeLessThan(150);
  } finally {
    await cli(['stop'], env);
  }
}, 240_000);
