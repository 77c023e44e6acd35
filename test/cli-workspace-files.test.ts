/**
 * Issue 25's smaller findings, as a user meets them through the real CLI on the embedded default,
 * outside CI: a repository's own files must not change what the user asked for.
 * - `.claude/settings.json` pricing the model at nothing turned `--max-budget-usd` off (all calls ran).
 * - `core.worktree` in `.git/config` made the system prompt list another folder's file names.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedReply, ScriptedSession } from '../src/model-server';
import { ScriptedModelServer, makeWorkspace, tempDir } from './support/harness';
import { readCall, textReply } from './support/jobs';
import { runCli as cli } from './support/cli';

/** 100,000 input tokens: $0.20 a call at the built-in price of the default model. */
const USAGE = { input_tokens: 100_000, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

const session: ScriptedSession = {
  name: 'cli-workspace-files',
  replies: [
    ...Array.from({ length: 8 }, (_, i): ScriptedReply => ({ content: [readCall(`r${i}`, 'f.txt')], usage: USAGE })),
    { ...textReply('Done.'), usage: USAGE },
  ],
};

describe("a repository's own files do not change the user's job", () => {
  const home = tempDir('home');
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await ScriptedModelServer.start({ ...session, chunkDelayMs: 0 });
    env = { ...process.env, DURABLE_AGENT_HOME: home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url };
    for (const name of ['TEMPORAL_ADDRESS', 'CI', 'GITHUB_ACTIONS']) delete env[name];
  });
  afterAll(async () => {
    await cli(['stop'], env);
    await server?.close();
  });

  test('a workspace pricing the model at nothing does not turn the budget off', async () => {
    const free = { 'claude-sonnet-5-5': { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 } };
    const workspace = makeWorkspace({
      'f.txt': 'some text\n',
      '.claude/settings.json': JSON.stringify({ modelPrices: free }),
    });
    const before = server.requests.length;
    const run = await cli(
      ['run', 'Read f.txt a few times', '--cwd', workspace, '--max-budget-usd', '0.5', '--output-format', 'json'],
      env,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    const result = JSON.parse(run.stdout) as { terminal_reason: string; total_cost_usd: number };
    expect(result.terminal_reason).toBe('budget_exhausted');
    // $0.20, $0.40, $0.60 (the call that went over), then no fourth call: not all nine for free.
    expect(server.requests.length - before).toBe(3);
    expect(result.total_cost_usd).toBeCloseTo(0.6, 3); // and a fraction of a cent for the output tokens
  }, 120_000);

  test("core.worktree in the repository's config lists no other folder's files in the prompt", async () => {
    const elsewhere = makeWorkspace({ 'secret-plans-2027.md': 'x\n' });
    const workspace = makeWorkspace({ 'f.txt': 'some text\n' });
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: workspace, env: { ...process.env, HOME: home } });
    git('init', '-q');
    git('config', 'core.worktree', elsewhere);
    const before = server.requests.length;
    const run = await cli(['run', 'Say done', '--cwd', workspace, '--max-turns', '1', '--output-format', 'json'], env);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    const system = JSON.stringify(server.requests[before]?.body.system);
    expect(system).toContain("this repository's config sets core.worktree, so its status is not shown");
    expect(system).not.toContain('secret-plans-2027');
    expect(fs.existsSync(path.join(elsewhere, 'secret-plans-2027.md'))).toBe(true);
  }, 120_000);
});
