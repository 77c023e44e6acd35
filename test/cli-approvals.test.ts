import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import type { SessionSnapshot } from '../src/shared/session';
import type { Terminal } from '../src/shared/terminal';
import { ScriptedModelServer, makeWorkspace, tempDir } from './support/harness';
import { readCall, editCall } from './support/jobs';
import { exitedWithOutput } from './support/cli';
import { TS_NODE_ARGS } from './support/ts-run';

const root = path.join(__dirname, '..');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function spawnCli(args: string[], env: NodeJS.ProcessEnv): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [...TS_NODE_ARGS, path.join(root, 'src/client/cli.ts'), ...args], {
    cwd: root,
    env,
  });
}

/** The CLI as a user runs it, with no TEMPORAL_ADDRESS: the embedded server and background worker. */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawnCli(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void exitedWithOutput(child).then((code) => resolve({ code, stdout, stderr }));
  });
}

const read = readCall;
const edit = (id: string, from: string, to: string) => editCall(id, 'app.txt', from, to);

/**
 * One script for every job of this file (the background worker talks to one model server): read
 * app.txt, edit it twice in two turns, answer. Jobs are told apart by their prompts.
 */
const twoEdits: ScriptedSession = {
  name: 'cli-two-edits',
  replies: [
    { content: [read('r1', 'app.txt')] },
    { content: [edit('e1', 'one', 'uno')] },
    { content: [edit('e2', 'two', 'dos')] },
    { content: [{ type: 'text', text: 'Both edits done.' }] },
  ],
};

type Block = Record<string, unknown>;
type Body = { messages: Array<{ role: string; content: string | Block[] }> };

const firstUserText = (body: Body): string => {
  const content = body.messages[0]?.content;
  if (typeof content === 'string') return content;
  return (content ?? []).map((b) => (b.type === 'text' ? String(b.text) : '')).join('');
};

/** The tool_result the model was sent for `toolUseId` in the job started with `prompt`. */
function toolResultSent(server: ScriptedModelServer, prompt: string, toolUseId: string): Block | undefined {
  for (const request of server.requests) {
    const body = request.body as Body;
    if (firstUserText(body) !== prompt) continue;
    for (const message of body.messages) {
      if (!Array.isArray(message.content)) continue;
      const found = message.content.find((b) => b.type === 'tool_result' && b.tool_use_id === toolUseId);
      if (found) return found;
    }
  }
  return undefined;
}

const resultText = (block: Block | undefined): string => {
  const content = block?.content;
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? (content as Block[]).map((b) => String(b.text ?? '')).join('') : '';
};

describe('approvals through the CLI on the embedded default', () => {
  const home = tempDir('home');
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await ScriptedModelServer.start({ ...twoEdits, chunkDelayMs: 0 });
    env = { ...process.env, DURABLE_AGENT_HOME: home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url };
    delete env.TEMPORAL_ADDRESS;
  });

  afterAll(async () => {
    await cli(['stop'], env);
    await server?.close();
  });

  async function status(id: string): Promise<SessionSnapshot & { status: string }> {
    const result = await cli(['status', id, '--json'], env);
    if (result.code !== 0) throw new Error(`status ${id} failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as SessionSnapshot & { status: string };
  }

  /** Poll `status --json` until `check` accepts the snapshot. */
  async function waitForStatus(
    id: string,
    check: (snapshot: SessionSnapshot & { status: string }) => boolean,
    what: string,
    timeoutMs = 60_000,
  ): Promise<SessionSnapshot & { status: string }> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      try {
        const snapshot = await status(id);
        if (check(snapshot)) return snapshot;
        last = snapshot;
      } catch (error) {
        last = error;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  const parkedOn = (toolUseId: string) => (s: SessionSnapshot) =>
    s.pendingApprovals.some((p) => p.toolUseId === toolUseId);

  test('a parked Edit shows in ls and status; approve --always adds the rule and the next Edit does not park', async () => {
    const workspace = makeWorkspace({ 'app.txt': 'one two\n' });
    const prompt = 'Edit app.txt twice (approve --always)';
    const started = await cli(
      ['run', prompt, '--cwd', workspace, '--job-id', 'cli-always', '--permission-mode', 'default', '--detach'],
      env,
    );
    expect(started.stderr).toContain('started job cli-always');
    expect(started.stdout.trim()).toBe('cli-always');
    expect(started.code).toBe(0);

    const parked = await waitForStatus('cli-always', parkedOn('e1'), 'the first Edit to park');
    expect(parked).toMatchObject({ status: 'RUNNING', phase: 'waiting_for_approval', permissionMode: 'default' });
    expect(parked.pendingApprovals).toEqual([
      expect.objectContaining({ toolUseId: 'e1', toolName: 'Edit', suggestedRule: 'Edit(./app.txt)' }),
    ]);

    // `ls` names the job and what it wants to run (visibility can lag a moment behind the start).
    let listing = '';
    const deadline = Date.now() + 30_000;
    while (!listing.includes('cli-always') && Date.now() < deadline) listing = (await cli(['ls'], env)).stdout;
    const jobLine = listing.split('\n').findIndex((line) => line.startsWith('cli-always'));
    expect(jobLine).toBeGreaterThanOrEqual(0);
    const jobLines = listing
      .split('\n')
      .slice(jobLine, jobLine + 2)
      .join('\n');
    expect(jobLines).toMatch(/^cli-always\s+running\s/);
    expect(jobLines).toContain('waiting_for_approval');
    expect(jobLines).toContain(
      'waiting for approval: Edit {"file_path":"app.txt","old_string":"one","new_string":"uno"} [e1]',
    );

    // `status` shows the pending call and why it waits.
    const human = await cli(['status', 'cli-always'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('job cli-always: waiting_for_approval');
    expect(human.stdout).toMatch(
      /waiting for approval: Edit \{"file_path":"app\.txt".*\} \[e1\] — Needs the user's approval: no rule in permissions\.allow covers Edit of app\.txt; mode default asks before changing files\./,
    );
    expect(human.stdout).toContain('permission mode: default');
    // A detached user sees the job's notices (here: the call parking) without following it.
    expect(human.stdout).toMatch(/recent notices:\n +· waiting for approval: Edit /);

    const approved = await cli(['approve', 'cli-always', '--always'], env);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('approved Edit {"file_path":"app.txt","old_string":"one","new_string":"uno"}');
    expect(approved.stdout).toContain('rule added for this job: Edit(./app.txt)');

    // The second Edit matches the added rule: the job finishes without parking again.
    const end = await waitForStatus(
      'cli-always',
      (s) => s.phase === 'finished' || s.pendingApprovals.length > 0,
      'the job to finish',
    );
    expect(end.pendingApprovals).toEqual([]);
    expect(end.phase).toBe('finished');

    const result = await cli(['result', 'cli-always', '--json'], env);
    expect(result.code).toBe(0);
    const terminal = (JSON.parse(result.stdout) as { terminal: Terminal }).terminal;
    expect(terminal).toMatchObject({ reason: 'completed', turnCount: 4, finalText: 'Both edits done.', denials: [] });
    expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('uno dos\n');
    expect(resultText(toolResultSent(server, prompt, 'e2'))).toContain('has been updated');
    expect(toolResultSent(server, prompt, 'e2')?.is_error).toBeFalsy();

    // Not waiting any more: approve says so and fails.
    const late = await cli(['approve', 'cli-always'], env);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain('Job cli-always is not waiting for an approval (phase: finished)');
    expect(late.stdout).toBe('');
  }, 240_000);

  test('deny tells the model why (is_error) and the Terminal lists the denial; a wrong --tool names the pending ids', async () => {
    const workspace = makeWorkspace({ 'app.txt': 'one two\n' });
    const prompt = 'Edit app.txt twice (deny the first)';
    const started = await cli(
      ['run', prompt, '--cwd', workspace, '--job-id', 'cli-deny', '--permission-mode', 'default', '--detach'],
      env,
    );
    expect(started.code).toBe(0);
    await waitForStatus('cli-deny', parkedOn('e1'), 'the first Edit to park');

    const wrong = await cli(['approve', 'cli-deny', '--tool', 'toolu_nope'], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('Job cli-deny has no pending call toolu_nope; pending: e1 (Edit).');
    // The failed approve changed nothing: the call still waits.
    expect((await status('cli-deny')).pendingApprovals.map((p) => p.toolUseId)).toEqual(['e1']);

    const denied = await cli(['deny', 'cli-deny', '--reason', 'not in prod'], env);
    expect(denied.code).toBe(0);
    expect(denied.stdout).toContain('denied Edit {"file_path":"app.txt","old_string":"one","new_string":"uno"}');

    // The job goes on: the second Edit parks too, and is approved by name.
    await waitForStatus('cli-deny', parkedOn('e2'), 'the second Edit to park');
    const approved = await cli(['approve', 'cli-deny', '--tool', 'e2'], env);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('approved Edit');
    expect(approved.stdout).not.toContain('rule added');

    const result = await cli(['result', 'cli-deny', '--json'], env);
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as { terminal: Terminal; permission_denials: unknown[] };
    const terminal = output.terminal;
    expect(terminal.reason).toBe('completed');
    const toolInput = { file_path: 'app.txt', old_string: 'one', new_string: 'uno' };
    expect(terminal.denials).toEqual([
      { toolUseId: 'e1', toolName: 'Edit', toolInput, reason: 'Denied by the user: not in prod' },
    ]);
    // As claude -p lists them.
    expect(output.permission_denials).toEqual([
      { tool_name: 'Edit', tool_use_id: 'e1', tool_input: toolInput, reason: 'Denied by the user: not in prod' },
    ]);
    expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('one dos\n');

    const human = await cli(['result', 'cli-deny'], env);
    expect(human.stderr).toContain('denied: Edit [e1] — Denied by the user: not in prod');

    // What the model was told.
    const sent = toolResultSent(server, prompt, 'e1');
    expect(sent?.is_error).toBe(true);
    expect(resultText(sent)).toContain('Permission to use Edit was denied');
    expect(resultText(sent)).toContain('not in prod');
    expect(toolResultSent(server, prompt, 'e2')?.is_error).toBeFalsy();
  }, 240_000);

  test('bad permission flags get a clear error and start nothing', async () => {
    const workspace = makeWorkspace({ 'app.txt': 'one two\n' });
    const requestsBefore = server.requests.length;

    const mode = await cli(
      ['run', 'hello', '--cwd', workspace, '--job-id', 'cli-bad-mode', '--permission-mode', 'sometimes'],
      env,
    );
    expect(mode.code).toBe(1);
    expect(mode.stderr).toContain(
      '--permission-mode "sometimes" is not one of default, acceptEdits, plan, bypassPermissions, dontAsk',
    );

    const rule = await cli(
      ['run', 'hello', '--cwd', workspace, '--job-id', 'cli-bad-rule', '--allow', 'Bash(npm test:*'],
      env,
    );
    expect(rule.code).toBe(1);
    expect(rule.stderr).toContain('Invalid permission rule(s)');
    expect(rule.stderr).toContain('permissions.allow[0] "Bash(npm test:*"');
    expect(rule.stderr).toContain('unbalanced parentheses');

    expect(server.requests.length).toBe(requestsBefore);
    const listing = (await cli(['ls'], env)).stdout;
    expect(listing).not.toContain('cli-bad-mode');
    expect(listing).not.toContain('cli-bad-rule');
  }, 120_000);

  test('run in the foreground prints how to approve or deny, and ends once approved from another shell', async () => {
    const workspace = makeWorkspace({ 'app.txt': 'one two\n' });
    const child = spawnCli(
      [
        'run',
        'Edit app.txt twice (foreground)',
        '--cwd',
        workspace,
        '--job-id',
        'cli-fg',
        '--permission-mode',
        'default',
      ],
      env,
    );
    let stdout = '';
    let stderr = '';
    const waiters: Array<() => void> = [];
    // Text mode: the progress, the approval hints among it, goes to stderr; the answer to stdout.
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      for (const wake of waiters.splice(0)) wake();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const hints = () => stderr.split('needs approval').length - 1;
    const waitForHints = async (n: number) => {
      const deadline = Date.now() + 60_000;
      while (hints() < n) {
        if (child.exitCode !== null) throw new Error(`run exited early (${child.exitCode}):\n${stdout}\n${stderr}`);
        if (Date.now() > deadline) throw new Error(`no approval hint ${n} on stderr:\n${stdout}\n${stderr}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 500);
        });
      }
    };

    try {
      await waitForHints(1);
      expect(stderr).toContain(
        "⏸ Edit needs approval (Needs the user's approval: no rule in permissions.allow covers Edit of app.txt",
      );
      expect(stderr).toContain('durable-agent approve cli-fg            # or --always to add Edit(./app.txt)');
      expect(stderr).toContain('durable-agent deny cli-fg --reason "..."');
      // Nobody can answer at this run's (piped) stdin, and the mode can park: it said so first.
      expect(stderr).toContain('nobody can answer an approval here (');

      expect((await cli(['approve', 'cli-fg'], env)).code).toBe(0);
      // A plain approve covers one call: the second Edit parks and gets its own hint.
      await waitForHints(2);
      expect((await cli(['approve', 'cli-fg'], env)).code).toBe(0);

      expect(await exited).toBe(0);
      expect(stderr).toContain('started job cli-fg');
      expect(stderr).toContain('→ Edit {"file_path":"app.txt","old_string":"one","new_string":"uno"}');
      expect(stderr).toContain('· approved: Edit');
      expect(stdout).toBe('Both edits done.\n');
      expect(stderr).toContain('Terminal: completed after 4 turns');
      expect(hints()).toBe(2);
      expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('uno dos\n');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    }
  }, 240_000);
});
