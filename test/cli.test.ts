import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadScriptedSession } from '../src/model-server';
import { isProcessAlive } from '../src/client/free-port';
import { ScriptedModelServer, tempDir, waitFor } from './support/harness';
import { exitedWithOutput, runCli, startCli } from './support/cli';
import { TS_NODE_ARGS } from './support/ts-run';

const root = path.join(__dirname, '..');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The CLI as a user runs it, with no TEMPORAL_ADDRESS: it starts the embedded Temporal server and
 * a background worker under DURABLE_AGENT_HOME.
 */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...TS_NODE_ARGS, path.join(root, 'src/client/cli.ts'), ...args], {
      cwd: root,
      env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void exitedWithOutput(child).then((code) => resolve({ code, stdout, stderr }));
  });
}

describe('durable-agent CLI on the embedded default', () => {
  const home = tempDir('home');
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;
  let workspace: string;

  beforeAll(async () => {
    const recorded = loadScriptedSession(path.join(root, 'examples/recorded/check-login.json'));
    server = await ScriptedModelServer.start({
      ...recorded,
      chunkDelayMs: 0,
      // A second job, "cli-abort", hangs on its first model call; the first job never reaches turn 3.
      faults: [{ turn: 0, attempt: 2, kind: 'hang' }],
    });
    env = { ...process.env, DURABLE_AGENT_HOME: home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url };
    delete env.TEMPORAL_ADDRESS;
    workspace = tempDir('ws');
    fs.cpSync(path.join(root, 'examples/login-demo'), workspace, { recursive: true });
  });

  afterAll(async () => {
    await cli(['stop'], env);
    await server?.close();
  });

  test('run follows the job to its Terminal; a second run with the same id does not start another', async () => {
    const first = await cli(['run', 'Check the login module', '--cwd', workspace, '--job-id', 'cli-job'], env);
    expect(first.stderr).toContain('started job cli-job on embedded Temporal server');
    // Text mode: the progress and the Terminal on stderr, only the answer on stdout.
    expect(first.stderr).toContain('→ Grep {"pattern":"login|auth"');
    expect(first.stderr).toContain('← Read:');
    expect(first.stderr).toContain('Terminal: completed after 3 turns');
    // Once: the job's own "terminal" notice is not printed before the Terminal line.
    expect(first.stderr).not.toContain('· terminal:');
    expect(first.stdout).not.toContain('Terminal:');
    expect(first.stdout).not.toContain('→ Grep');
    expect(first.stdout.trim().length).toBeGreaterThan(0);
    expect(first.code).toBe(0);
    expect(server.requests).toHaveLength(3);

    const again = await cli(['run', 'Check the login module', '--cwd', workspace, '--job-id', 'cli-job'], env);
    expect(again.stderr).toContain('job cli-job already ended (COMPLETED)');
    expect(again.stderr).toContain('Terminal: completed after 3 turns');
    expect(again.stdout).toBe(first.stdout);
    expect(again.code).toBe(0);
    expect(server.requests).toHaveLength(3);

    const status = await cli(['status', 'cli-job', '--json'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ status: 'COMPLETED', phase: 'finished', turnCount: 3 });

    const result = await cli(['result', 'cli-job', '--json'], env);
    expect(JSON.parse(result.stdout)).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      num_turns: 3,
      session_id: 'cli-job',
      job_id: 'cli-job',
      terminal_reason: 'completed',
      terminal: { reason: 'completed', turnCount: 3 },
    });
  });

  test('a detached job can be inspected and aborted from another shell', async () => {
    const started = await cli(
      ['run', 'Check the login module', '--cwd', workspace, '--job-id', 'cli-abort', '--detach'],
      env,
    );
    expect(started.code).toBe(0);
    expect(started.stdout.trim()).toBe('cli-abort');
    await server.waitForRequest(0, 2, 30_000);

    expect((await cli(['max-turns', 'cli-abort', '5'], env)).stdout).toContain('maxTurns of cli-abort set to 5');
    expect((await cli(['send', 'cli-abort', 'Also check the session module'], env)).code).toBe(0);
    // A long message goes by reference: the job's history and status hold its start only.
    const notes = path.join(tempDir('notes'), 'review-notes.md');
    fs.writeFileSync(notes, `Review notes\n${'- a finding worth reading\n'.repeat(4_000)}`);
    const long = await cli(['send', 'cli-abort', '--file', notes], env);
    expect(long.stderr).toBe('');
    expect(long.code).toBe(0);
    const status = JSON.parse((await cli(['status', 'cli-abort', '--json'], env)).stdout);
    expect(status).toMatchObject({ status: 'RUNNING', phase: 'calling_model', maxTurns: 5, queuedUserMessages: 2 });

    // Issue 26: `result` of a running job waited in silence, and Ctrl-C left a newcomer unsure
    // whether the job was gone too.
    const waiting = startCli(['result', 'cli-abort'], env);
    await waitFor(
      async () => waiting.output().includes('waiting for job cli-abort to end') || undefined,
      20_000,
      'result',
    );
    waiting.child.kill('SIGINT');
    const stopped = await waiting.done;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain('stopped waiting; job cli-abort keeps running (durable-agent result cli-abort');
    expect(JSON.parse((await cli(['status', 'cli-abort', '--json'], env)).stdout)).toMatchObject({ status: 'RUNNING' });

    expect((await cli(['abort', 'cli-abort', '--reason', 'changed my mind'], env)).code).toBe(0);
    const result = await cli(['result', 'cli-abort', '--json', '--exit-status', 'detailed'], env);
    expect(JSON.parse(result.stdout)).toMatchObject({
      subtype: 'error_during_execution',
      is_error: true,
      terminal_reason: 'aborted_streaming',
      detail: 'changed my mind; 2 queued user message(s) were not sent',
    });
    expect(result.code).toBe(3);

    // Issue 26: to an ended job, send, max-turns and abort said there was no such job.
    const send = await cli(['send', 'cli-abort', 'One more thing'], env);
    expect(send.code).toBe(1);
    expect(send.stderr.trim()).toBe(
      'durable-agent: job cli-abort has ended (aborted_streaming), so it takes no more messages: go on from ' +
        'its conversation with `durable-agent run --resume cli-abort "<text>"`.',
    );
    const limit = await cli(['max-turns', 'cli-abort', '9'], env);
    expect(limit.code).toBe(1);
    expect(limit.stderr).toContain('job cli-abort has ended (aborted_streaming): a turn limit no longer applies');
    // Aborting what has ended anyway is no mistake (a cleanup step may do it).
    const again = await cli(['abort', 'cli-abort'], env);
    expect(again).toMatchObject({
      code: 0,
      stdout: 'job cli-abort had already ended (aborted_streaming); nothing to abort\n',
    });
    // A job that never was is still one.
    expect((await cli(['send', 'cli-never', 'hello'], env)).stderr).toContain('no job "cli-never"');
  });

  test('bad input gets a clear error and starts nothing', async () => {
    const empty = await cli(['run', '  ', '--cwd', workspace], env);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('The prompt is empty');
    // A tired person's `run --cwd .` with no prompt at all: it is missing, not empty.
    const none = await runCli(['run', '--cwd', workspace], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('No prompt was given: say what the agent should do');
    const missing = await cli(['run', 'hello', '--cwd', path.join(workspace, 'nope')], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('is not a directory');
    const turns = await cli(['max-turns', 'cli-job', 'many'], env);
    expect(turns.code).toBe(1);
    expect(turns.stderr).toContain('the turn limit must be a whole number');
    const chain = await cli(['run', 'hello', '--cwd', workspace, '--fallback-model', 'a,b,c,d'], env);
    expect(chain.code).toBe(1);
    expect(chain.stderr).toContain('--fallback-model names 4 models; at most 3 are allowed');
    const blank = await cli(['run', 'hello', '--cwd', workspace, '--fallback-model', 'a,,b'], env);
    expect(blank.stderr).toContain('has an empty name');
    const own = await cli(['run', 'hello', '--cwd', workspace, '--model', 'm1', '--fallback-model', 'm2,m1'], env);
    expect(own.stderr).toContain("lists m1 which is the job's own model: each fallback");
    // Issue 26: an empty model was accepted, and a missing key hid a wrong --cwd.
    const noModel = await cli(['run', 'hello', '--cwd', workspace, '--model', ''], env);
    expect(noModel.stderr).toContain('--model is empty: name a model (e.g. --model claude-sonnet-5-5)');
    const { ANTHROPIC_API_KEY: _key, ...keyless } = env;
    const wrongCwd = await cli(['run', 'hello', '--cwd', path.join(workspace, 'nope'), '--json'], keyless);
    expect(wrongCwd.stderr).toContain('is not a directory');
    expect(wrongCwd.stderr).not.toContain('ANTHROPIC_API_KEY');
    const noMessage = await cli(['send', 'cli-job'], env);
    expect(noMessage.stderr).toContain('No message: give it as an argument, or with --file <path>');
    const noFile = await cli(['send', 'cli-job', '--file', path.join(workspace, 'nope.md')], env);
    expect(noFile.stderr).toContain(`Cannot read the message from ${path.join(workspace, 'nope.md')} (ENOENT)`);
    const hugeFile = path.join(tempDir('notes'), 'huge.md');
    fs.writeFileSync(hugeFile, 'z'.repeat(400_001));
    const huge = await cli(['send', 'cli-job', '--file', hugeFile], env);
    expect(huge.stderr).toContain('The message is 400,001 characters; at most 400,000 can be sent');
    for (const result of [chain, blank, own, noModel, wrongCwd, noMessage, noFile, huge]) {
      expect(result.code).toBe(1);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  test('stop ends the embedded server and worker', async () => {
    const records = ['embedded-server.json', 'embedded-worker.json'].map(
      (name) => JSON.parse(fs.readFileSync(path.join(home, name), 'utf8')) as { pid: number },
    );
    const stopped = await cli(['stop'], env);
    expect(stopped.stdout).toContain('stopped worker');
    for (const record of records) expect(isProcessAlive(record.pid)).toBe(false);
  });
});
