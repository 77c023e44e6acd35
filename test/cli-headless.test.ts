import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import { findTemporalBinary } from '../src/client/temporal-binary';
import { ScriptedModelServer, makeWorkspace, tempDir } from './support/harness';
import { textReply, toolUse } from './support/jobs';
import { runCli as cli } from './support/cli';

const root = path.join(__dirname, '..');

/** Longer than any progress preview: `run` once cut a 5,921-character answer to 2,000. */
const LONG_ANSWER = Array.from({ length: 99 }, (_, i) => `Line ${String(i).padStart(2, '0')}: ${'x'.repeat(50)}.`).join(
  '\n',
);

/** Every job of this file: try to write a file (a call that asks in the default mode), then answer at length. */
const session: ScriptedSession = {
  name: 'cli-headless',
  replies: [
    {
      content: [
        { type: 'text', text: 'Writing the notes.' },
        toolUse('w1', 'Write', { file_path: 'notes.txt', content: 'hi\n' }),
      ],
    },
    textReply(LONG_ANSWER),
  ],
};

type Body = {
  system?: string | Array<{ type: string; text: string }>;
  messages: Array<{ role: string; content: string | Array<Record<string, unknown>> }>;
};
const systemText = (body: Body): string =>
  typeof body.system === 'string' ? body.system : (body.system ?? []).map((block) => block.text).join('\n');
const firstUserText = (body: Body): string => {
  const content = body.messages[0]?.content;
  return typeof content === 'string' ? content : (content ?? []).map((b) => String(b.text ?? '')).join('');
};

const SHELL_SECRET = `postgres://app:hunter2@db-${process.pid}`;

describe('headless runs, as a CI pipeline meets them', () => {
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
      // A variable of the shell that starts the embedded worker, not named as a secret (a database URL).
      DURABLE_AGENT_TEST_DATABASE_URL: SHELL_SECRET,
    };
    delete env.TEMPORAL_ADDRESS;
    delete env.CI;
  });

  afterAll(async () => {
    await cli(['stop'], env);
    await server?.close();
  });

  test("CI=true in the default mode never parks: the call is refused, and the json result is claude -p's", async () => {
    const workspace = makeWorkspace({});
    const run = await cli(
      ['run', 'Write the notes (ci json)', '--cwd', workspace, '--job-id', 'ci-json', '--output-format', 'json'],
      { ...env, CI: 'true' },
    );
    expect(run.stderr).not.toContain('nobody can answer an approval');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as Record<string, unknown> & { terminal: Record<string, unknown> };
    expect(result).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      num_turns: 2,
      result: LONG_ANSWER,
      session_id: 'ci-json',
      job_id: 'ci-json',
      terminal_reason: 'completed',
      permission_denials: [
        {
          tool_name: 'Write',
          tool_use_id: 'w1',
          tool_input: { file_path: 'notes.txt', content: 'hi\n' },
          reason: expect.stringContaining('the mode is dontAsk'),
        },
      ],
    });
    for (const field of [
      'duration_ms',
      'duration_api_ms',
      'total_cost_usd',
      'usage',
      'modelUsage',
      'transcript_head',
    ]) {
      expect(result).toHaveProperty(field);
    }
    expect(JSON.stringify(result.terminal)).toContain('the headless default (CI is set');
    expect(fs.existsSync(path.join(workspace, 'notes.txt'))).toBe(false);
  }, 120_000);

  test('the prompt comes from stdin, and text mode prints the whole answer, alone, on stdout', async () => {
    const workspace = makeWorkspace({});
    const prompt = 'Write the notes (from stdin)\nwith a second line';
    const run = await cli(['run', '--cwd', workspace, '--job-id', 'stdin-text'], env, prompt);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${LONG_ANSWER}\n`);
    expect(run.stderr).toContain('Terminal: completed after 2 turns');
    expect(run.stderr).toContain('→ Write');
    expect(run.stderr).toContain('permission mode: dontAsk (from the headless default (no terminal on stdin');
    expect(server.requests.some((r) => firstUserText(r.body as Body) === prompt)).toBe(true);

    // With a prompt argument, piped input follows it, as claude -p takes `cat build.log | claude -p "..."`.
    const both = await cli(
      ['run', 'Write the notes (argument and pipe)', '--cwd', workspace],
      env,
      'piped: ünïcode line\n',
    );
    expect(both.code).toBe(0);
    expect(
      server.requests.some(
        (r) => firstUserText(r.body as Body) === 'Write the notes (argument and pipe)\n\npiped: ünïcode line\n',
      ),
    ).toBe(true);
  }, 180_000);

  test('stream-json prints one message per line: init, assistant blocks, tool results, the result', async () => {
    const workspace = makeWorkspace({});
    const run = await cli(
      ['run', 'Write the notes (stream)', '--cwd', workspace, '--job-id', 'stream', '--output-format', 'stream-json'],
      env,
    );
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as Record<string, unknown> & { message?: { content: Array<Record<string, unknown>> } },
      );
    expect(lines[0]).toMatchObject({
      type: 'system',
      subtype: 'init',
      session_id: 'stream',
      permissionMode: 'dontAsk',
    });
    expect(lines.at(-1)).toMatchObject({
      type: 'result',
      subtype: 'success',
      result: LONG_ANSWER,
      session_id: 'stream',
    });
    const blocks = lines.flatMap((line) => (line.message?.content ?? []).map((block) => ({ type: line.type, block })));
    expect(blocks).toContainEqual({ type: 'assistant', block: { type: 'text', text: 'Writing the notes.' } });
    expect(blocks).toContainEqual({
      type: 'assistant',
      block: { type: 'tool_use', id: 'w1', name: 'Write', input: { file_path: 'notes.txt', content: 'hi\n' } },
    });
    expect(blocks).toContainEqual({
      type: 'user',
      block: expect.objectContaining({ type: 'tool_result', tool_use_id: 'w1', is_error: true }),
    });
    for (const line of lines) expect(line.session_id).toBe('stream');
  }, 120_000);

  test("an explicit mode that can park says so before it starts; --allowedTools is claude -p's allow list", async () => {
    const parked = makeWorkspace({});
    const warned = await cli(
      [
        'run',
        'Write the notes (explicit default)',
        '--cwd',
        parked,
        '--permission-mode',
        'default',
        '--approval-timeout',
        '1',
      ],
      { ...env, CI: '1' },
    );
    expect(warned.stderr.split('\n')[0]).toBe(
      'durable-agent: nobody can answer an approval here (CI is set), and --permission-mode default parks a call ' +
        'the rules ask about until `durable-agent approve <id>` or `deny <id>` from another shell; after 1 s it is ' +
        'denied (--approval-timeout), and --permission-mode dontAsk refuses such calls instead.',
    );
    expect(warned.code).toBe(0);
    expect(fs.existsSync(path.join(parked, 'notes.txt'))).toBe(false);
    const allowed = makeWorkspace({});
    const run = await cli(
      [
        'run',
        'Write the notes (allowed)',
        '--cwd',
        allowed,
        '--allowedTools',
        'Read Write',
        '--disallowedTools',
        'Bash(rm:*),Bash(curl:*)',
        '--output-format',
        'json',
      ],
      { ...env, CI: 'true' },
    );
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as {
      permission_denials: unknown[];
      terminal: { permissions: { rules: unknown[] } };
    };
    expect(result.permission_denials).toEqual([]);
    expect(fs.readFileSync(path.join(allowed, 'notes.txt'), 'utf8')).toBe('hi\n');
    expect(result.terminal.permissions.rules).toEqual(
      expect.arrayContaining([
        { list: 'allow', rule: 'Write', source: '--allow' },
        { list: 'deny', rule: 'Bash(rm:*)', source: '--deny' },
        { list: 'deny', rule: 'Bash(curl:*)', source: '--deny' },
      ]),
    );
  }, 180_000);

  test('a job terminated from outside is reported as such, in text and json', async () => {
    const workspace = makeWorkspace({});
    const started = await cli(
      [
        'run',
        'Write the notes (terminated)',
        '--cwd',
        workspace,
        '--job-id',
        'terminated',
        '--permission-mode',
        'default',
        '--detach',
      ],
      env,
    );
    expect(started.code).toBe(0);
    expect(started.stderr).toContain('nobody can answer an approval here (no terminal on stdin)');
    const record = JSON.parse(fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8')) as { port: number };
    const terminate = spawnSync(
      findTemporalBinary(),
      [
        'workflow',
        'terminate',
        '--address',
        `127.0.0.1:${record.port}`,
        '-w',
        'terminated',
        '--reason',
        'ops said stop',
      ],
      { encoding: 'utf8' },
    );
    expect(terminate.status).toBe(0);

    // Ended from outside: 1 as any failed ending, 5 with --exit-status detailed.
    const json = await cli(['result', 'terminated', '--output-format', 'json'], env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      terminal_reason: 'terminated',
      detail: expect.stringContaining('ops said stop'),
      job_id: 'terminated',
    });
    const text = await cli(['result', 'terminated', '--exit-status', 'detailed'], env);
    expect(text.code).toBe(5);
    expect(text.stderr).toContain('job terminated was terminated from outside durable-agent: ops said stop');
    expect(text.stderr).not.toMatch(/\n\s+at /);
  }, 120_000);

  test("a repository's CLAUDE.md that links out of it (to a key, to the worker's environment) stays out of the prompt", async () => {
    const outside = fs.realpathSync(tempDir('outside'));
    fs.writeFileSync(path.join(outside, 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n');
    for (const [job, target] of [
      ['memory-key', path.join(outside, 'id_rsa')],
      ['memory-environ', '/proc/self/environ'],
    ] as const) {
      const workspace = makeWorkspace({ 'README.md': 'the project\n' });
      fs.symlinkSync(target, path.join(workspace, 'CLAUDE.md'));
      const prompt = `Write the notes (${job})`;
      const run = await cli(['run', prompt, '--cwd', workspace, '--job-id', job, '--output-format', 'json'], {
        ...env,
        CI: 'true',
      });
      expect(run.code).toBe(0);
      const requests = server.requests.filter((r) => firstUserText(r.body as Body) === prompt);
      expect(requests.length).toBeGreaterThan(0);
      for (const request of requests) {
        const system = systemText(request.body as Body);
        expect(system).toContain(`Workspace: ${workspace}`);
        expect(system).not.toContain('PRIVATE KEY');
        expect(system).not.toContain(SHELL_SECRET);
        expect(system).not.toContain('ANTHROPIC_API_KEY');
        expect(system).not.toContain('Project instructions (CLAUDE.md)');
      }
    }
  }, 120_000);

  test('--version, an unknown job and a missing prompt get one clear line each', async () => {
    const version = await cli(['--version'], env);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(
      (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version,
    );
    for (const command of [
      ['result', 'no-such-job'],
      ['status', 'no-such-job'],
    ]) {
      const unknown = await cli(command, env);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain(
        'no job "no-such-job" on the embedded server: `durable-agent ls` lists the jobs',
      );
      expect(unknown.stderr).not.toMatch(/\n\s+at /);
    }
    const empty = await cli(['run', '--cwd', makeWorkspace({})], env, '   \n');
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('The prompt is empty');
    // A pipeline without the key would wait, silently, for a worker that has one: refused at once.
    const noKey: NodeJS.ProcessEnv = { ...env, DURABLE_AGENT_HOME: tempDir('no-key-home') };
    delete noKey.ANTHROPIC_API_KEY;
    const refused = await cli(['run', 'x', '--cwd', makeWorkspace({}), '--output-format', 'json'], noKey);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) is not set');
    expect(refused.stdout).toBe('');
    const format = await cli(['run', 'x', '--output-format', 'yaml'], env);
    expect(format.code).toBe(1);
    expect(format.stderr).toContain('--output-format "yaml" is not one of text, json, stream-json');
  }, 120_000);
});
