/**
 * Issue 25, findings 4, 5 and 7, as a CI job meets them: `Bash(rm:*)` and `Read(./secrets/**)`
 * denied, in a `CI=true` run of the real CLI on the embedded default. On main, git's own
 * configuration (an alias on the command line, or one in the repository's .git/config) and a
 * sourced file ran `rm` all the same, as did a `core.sshCommand` in .git/config on `git fetch`, and git's history and links (one outside the workspace,
 * one inside it into the denied folder) printed the secret.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import { ScriptedModelServer, makeWorkspace, tempDir } from './support/harness';
import { textReply, toolUse } from './support/jobs';
import { runCli as cli } from './support/cli';

const KEY = 'sk-the-key-a-read-deny-rule-protects';
/**
 * A key outside the workspace, as a deploy key or a cloud credential would be; not under /tmp,
 * which the sandbox replaces with the job's own.
 */
const keyHome = fs.mkdtempSync('/var/tmp/durable-agent-keys-');
afterAll(() => fs.rmSync(keyHome, { recursive: true, force: true }));
fs.writeFileSync(path.join(keyHome, 'deploy.key'), `${KEY}\n`);
const DENY = `Bash(rm:*),Read(./secrets/**),Read(/${keyHome}/**)`;

const session: ScriptedSession = {
  name: 'cli-git-config',
  replies: [
    {
      content: [
        // First: a failing Bash cancels the calls after it, as in Claude Code.
        toolUse('b7', 'Write', { file_path: '.mcp.json', content: '{"mcpServers":{"x":{"command":"./x"}}}' }),
        toolUse('b1', 'Bash', { command: "git -c alias.x='!rm victim-1' x" }),
        toolUse('b2', 'Bash', { command: 'git tidy' }),
        toolUse('b3', 'Bash', { command: 'source ./tidy.sh' }),
        toolUse('b4', 'Bash', { command: 'git status --short' }),
        toolUse('b5', 'Bash', { command: 'git show HEAD:secrets/key' }),
        toolUse('b6', 'Bash', { command: 'cat s' }),
        // A link inside the workspace, into the denied folder: last, as its refusal is an error.
        toolUse('b8', 'Bash', { command: 'cat t' }),
      ],
    },
    // A program the repository's own config names (core.sshCommand), on a command the rules allow.
    // ...and the same around the worker's git, through a PATH without it.
    {
      content: [
        toolUse('b10', 'Bash', { command: 'PATH=/usr/bin:/bin git fetch origin' }),
        toolUse('b9', 'Bash', { command: 'git fetch origin' }),
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
      'victim-4': 'keep\n',
      'tidy.sh': 'rm victim-3\n',
      'secrets/key': `${KEY}\n`,
    });
    fs.symlinkSync(path.join(keyHome, 'deploy.key'), path.join(workspace, 's'));
    fs.symlinkSync('secrets/key', path.join(workspace, 't'));
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: workspace, env: { ...process.env, HOME: home } });
    git('init', '-q');
    git('add', 'secrets/key');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'keys');
    // The repository's own config, as a pull request or a batch task's clone could bring it.
    git('config', 'alias.tidy', '!rm victim-2');
    git('remote', 'add', 'origin', 'ssh://git.example.invalid/repo.git');
    git('config', 'core.sshCommand', 'rm victim-4');
    return workspace;
  }

  async function tidy(workspace: string, flags: string[]): Promise<string[]> {
    const before = server.requests.length;
    const run = await cli(['run', 'Tidy up', '--cwd', workspace, ...flags, '--output-format', 'json'], env);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.code).toBe(0);
    for (const victim of ['victim-1', 'victim-2', 'victim-3', 'victim-4']) {
      expect(fs.readFileSync(path.join(workspace, victim), 'utf8')).toBe('keep\n');
    }
    // `git status` ran, and the model was told why the others did not.
    const results = JSON.stringify(server.requests[before + 1]?.body);
    expect(results).toContain('?? victim-1');
    // Neither git's history nor the links gave the secret away.
    expect(results).not.toContain(KEY);
    expect(results).toContain('reads t, which leads (through a symbolic link) to a place the rule Read(./secrets/**)');
    const result = JSON.parse(run.stdout) as { permission_denials: Array<{ tool_use_id: string }> };
    return result.permission_denials.map((denial) => denial.tool_use_id).sort();
  }

  test('with git allowed, an alias, .git/config, a sourced file, git history and a link are all refused', async () => {
    const denied = await tidy(repository(), ['--allowedTools', 'Bash(git:*)', '--disallowedTools', DENY]);
    // (`source` is not read-only, so CI refused it on main too; `cat s` is read-only and ran, in a
    // sandbox that hides secrets/.)
    expect(denied).toEqual(['b1', 'b10', 'b2', 'b3', 'b5', 'b7']);
    const results = JSON.stringify(server.requests.at(-1)?.body);
    expect(results).toContain('names a program or command for git to run');
    expect(results).toContain("is not one of git's own commands");
    expect(results).toContain("git: not run: this repository's own config sets core.sshcommand");
  }, 180_000);

  test('in bypassPermissions the deny rules still hold', async () => {
    // An explicit mode parks what the rules ask about; nobody answers here, so each is denied after 1 s.
    const denied = await tidy(repository(), [
      '--permission-mode',
      'bypassPermissions',
      '--approval-timeout',
      '1',
      '--disallowedTools',
      DENY,
    ]);
    expect(denied).toEqual(['b1', 'b10', 'b2', 'b3', 'b5']);
    expect(JSON.stringify(server.requests.at(-1)?.body)).toContain("this repository's own config sets core.sshcommand");
    // Asked, as calls the deny rule cannot be ruled out for; nobody answered.
    expect(JSON.stringify(server.requests.at(-1)?.body)).toContain('No approval answer within 1 s');
  }, 180_000);

  test('in acceptEdits, Write asks before .mcp.json as Bash is kept from it', async () => {
    const workspace = repository();
    const denied = await tidy(workspace, [
      '--permission-mode',
      'acceptEdits',
      '--approval-timeout',
      '1',
      '--disallowedTools',
      DENY,
    ]);
    expect(denied).toEqual(['b1', 'b10', 'b2', 'b3', 'b5', 'b7', 'b9']);
    expect(fs.existsSync(path.join(workspace, '.mcp.json'))).toBe(false);
  }, 180_000);
});
