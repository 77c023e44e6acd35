/**
 * Issue 25, findings 4 and 7, as a CI job meets them: `Bash(rm:*)` denied, in a `CI=true` run of
 * the real CLI on the embedded default. On main, git's own configuration (an alias on the command
 * line, or one in the repository's .git/config) and a sourced file ran `rm` all the same.
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
        toolUse('b3', 'Bash', { command: 'source ./tidy.sh' }),
        toolUse('b4', 'Bash', { command: 'git status --short' }),
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

  /** A repository with three files to lose, an alias in its own config and a script that removes one. */
  function repository(): string {
    const workspace = makeWorkspace({
      'victim-1': 'keep\n',
      'victim-2': 'keep\n',
      'victim-3': 'keep\n',
      'tidy.sh': 'rm victim-3\n',
    });
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: workspace, env: { ...process.env, HOME: home } });
    git('init', '-q');
    // The repository's own config, as a pull request or a batch task's clone could bring it.
    git('config', 'alias.tidy', '!rm victim-2');
    return workspace;
  }

  async function tidy(workspace: string, flags: string[]): Promise<string[]> {
    const before = server.requests.length;
    const run = await cli(['run', 'Tidy up', '--cwd', workspace, ...flags, '--output-format', 'json'], env);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.code).toBe(0);
    for (const victim of ['victim-1', 'victim-2', 'victim-3']) {
      expect(fs.readFileSync(path.join(workspace, victim), 'utf8')).toBe('keep\n');
    }
    // `git status` ran, and the model was told why the others did not.
    const results = JSON.stringify(server.requests[before + 1]?.body);
    expect(results).toContain('?? victim-1');
    const result = JSON.parse(run.stdout) as { permission_denials: Array<{ tool_use_id: string }> };
    return result.permission_denials.map((denial) => denial.tool_use_id).sort();
  }

  test('with git allowed, an alias on the command line or in .git/config is refused', async () => {
    const denied = await tidy(repository(), ['--allowedTools', 'Bash(git:*)', '--disallowedTools', 'Bash(rm:*)']);
    // (`source` is not read-only, so CI refused it on main too.)
    expect(denied).toEqual(['b1', 'b2', 'b3']);
    const results = JSON.stringify(server.requests.at(-1)?.body);
    expect(results).toContain('names a program or command for git to run');
    expect(results).toContain("is not one of git's own commands");
  }, 180_000);

  test('in bypassPermissions the deny rule still holds for aliases and sourced files', async () => {
    // An explicit mode parks what the rules ask about; nobody answers here, so each is denied after 1 s.
    const denied = await tidy(repository(), [
      '--permission-mode',
      'bypassPermissions',
      '--approval-timeout',
      '1',
      '--disallowedTools',
      'Bash(rm:*)',
    ]);
    expect(denied).toEqual(['b1', 'b2', 'b3']);
    // Asked, as calls the deny rule cannot be ruled out for; nobody answered.
    expect(JSON.stringify(server.requests.at(-1)?.body)).toContain('No approval answer within 1 s');
  }, 180_000);
});
