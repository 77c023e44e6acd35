/**
 * `--max-budget-usd` as a user runs it: the real CLI process on the embedded Temporal server,
 * against the scripted model server playing the recorded demo session.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadScriptedSession } from '../src/model-server';
import { ScriptedModelServer, tempDir } from './support/harness';
import { runCli as cli } from './support/cli';

const root = path.join(__dirname, '..');

describe('durable-agent run --max-budget-usd', () => {
  const home = tempDir('home');
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;
  let workspace: string;

  beforeAll(async () => {
    const recorded = loadScriptedSession(path.join(root, 'examples/recorded/check-login.json'));
    server = await ScriptedModelServer.start({ ...recorded, chunkDelayMs: 0 });
    env = { ...process.env, DURABLE_AGENT_HOME: home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url };
    delete env.TEMPORAL_ADDRESS;
    delete env.ANTHROPIC_MODEL;
    workspace = tempDir('ws');
    fs.cpSync(path.join(root, 'examples/login-demo'), workspace, { recursive: true });
  });

  afterAll(async () => {
    await cli(['stop'], env);
    await server?.close();
  });

  test('a bad amount is refused with the fix, and nothing starts', async () => {
    for (const amount of ['abc', '0', '-1', '1e999']) {
      const result = await cli(['run', 'Check the login module', '--cwd', workspace, '--max-budget-usd', amount], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`--max-budget-usd must be a positive amount in USD written as a decimal`);
      expect(result.stderr).toContain(`(got "${amount}")`);
      expect(result.stderr).not.toMatch(/\n\s+at .*:\d+:\d+\)?\n/);
    }
    expect(server.requests).toHaveLength(0);
  });

  test('a job past its budget ends budget_exhausted before the next model call, and says what it cost', async () => {
    const run = await cli(
      ['run', 'Check the login module', '--cwd', workspace, '--job-id', 'cli-budget', '--max-budget-usd', '0.0001'],
      env,
    );
    const output = run.stdout + run.stderr;
    // The first call costs more than a hundredth of a cent: the second never starts.
    expect(server.requests).toHaveLength(1);
    expect(output).toContain('Terminal: budget_exhausted after 1 turn');
    expect(output).toContain("so turn 2's model call was not started");
    expect(output).toMatch(/cost \$0\.\d{4} of the \$0\.0001 budget/);
    expect(run.code).toBe(1);

    const status = JSON.parse((await cli(['status', 'cli-budget', '--json'], env)).stdout);
    expect(status.maxBudgetUsd).toBe(0.0001);
    expect(status.totalCostUsd).toBeGreaterThanOrEqual(0.0001);
    expect(status.modelUsage['claude-sonnet-5-5'].costUSD).toBe(status.totalCostUsd);
    expect(status.terminal).toMatchObject({ reason: 'budget_exhausted', totalCostUsd: status.totalCostUsd });

    const text = await cli(['status', 'cli-budget'], env);
    expect(text.stdout).toMatch(/Terminal: budget_exhausted[\s\S]*cost \$0\.\d{4} of the \$0\.0001 budget/);
  });
});
