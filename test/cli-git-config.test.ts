/**
 * Issue 25, finding 4, as a CI job meets it: `Bash(git:*)` allowed and `Bash(rm:*)` denied, in a
 * `CI=true` run of the real CLI on the embedded default. On main, git's own configuration (an
 * alias on the command line, or one in the repository's .git/config) ran `rm` all the same.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import { ScriptedModelServer, makeWorkspace, tempDir } from './support/harness';
import { textReply, toolUse } from './support/jobs';
import { runCli as cli } from './support/cli';

const session: ScriptedSession = {
  name: 'cli-git-config',
  replies: [
    {
      content: [
        toolUse('b1', 'Bash', { command: "git -c alias.x='!rm victim-1' x" }),
        toolUse('b2', 'Bash', { command: 'git tidy' }),
        toolUse('b3', 'Bash', { command: 'git status --short' }),
      ],
    },
    textReply('Done.'),
  ],
};

describe("git's configuration cannot walk around a deny rule", () => {
  const home = tempDir('home');
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await ScriptedModelServer.start({ ...session, chunkDelayMs: 0 });
    env = {
      ...process.env,
      DURABLE_AGENT_HOME: home,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: server.url,
      CI: 'true',
    };
    delete env.TEMPORAL_ADDRESS;
  });

  afterAll(async () => {
    await cli(['stop'], env);
    await server?.close();
  });

  test('an alias on the command line or in .git/config is refused; plain git still runs', async () => {
    const workspace = makeWorkspace({ 'victim-1': 'keep\n', 'victim-2': 'keep\n' });
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: workspace, env: { ...process.env, HOME: home } });
    git('init', '-q');
    // The repository's own config, as a pull request or a batch task's clone could bring it.
    git('config', 'alias.tidy', '!rm victim-2');
    const run = await cli(
      [
        'run',
        'Tidy up',
        '--cwd',
        workspace,
        '--allowedTools',
        'Bash(git:*)',
        '--disallowedTools',
        'Bash(rm:*)',
        '--output-format',
        'json',
      ],
      env,
    );
    expect(run.code).toBe(0);
    expect(fs.readFileSync(path.join(workspace, 'victim-1'), 'utf8')).toBe('keep\n');
    expect(fs.readFileSync(path.join(workspace, 'victim-2'), 'utf8')).toBe('keep\n');
    const result = JSON.parse(run.stdout) as { permission_denials: Array<{ tool_use_id: string }> };
    expect(result.permission_denials.map((denial) => denial.tool_use_id).sort()).toEqual(['b1', 'b2']);
    // What the model was told, and that `git status` ran.
    const results = JSON.stringify(server.requests[1]?.body);
    expect(results).toContain('names a program or command for git to run');
    expect(results).toContain("is not one of git's own commands");
    expect(results).toContain('?? victim-1');
  }, 180_000);
});
