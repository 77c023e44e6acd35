/**
 * The Claude Agent SDK drop-in, as an SDK app meets it: a program built on the pinned SDK from npm
 * (`test/support/sdk-app.mjs`, its own Node process) runs `query()` with
 * `pathToClaudeCodeExecutable` pointed at durable-agent, against a dev server and a worker of the
 * test's own and the scripted model server.
 *
 * With AGENT_SDK_REFERENCE=1 the same tests run against the real Claude Code binary too (installed
 * by scripts/install-claude-code.sh, as the parity suite's): proof that they ask only what the SDK
 * really does.
 */
import { execFileSync } from 'node:child_process';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedReply } from '../src/model-server';
import { temporal } from '@temporalio/proto';
import { agentSdkModule } from './support/agent-sdk';
import { DevServer } from './support/chaos';
import { makeWorkspace, ScriptedModelServer, spawnWorkerProcess, tempDir, waitFor } from './support/harness';
import type { WorkerProcess } from './support/harness';
import { describeExecution, lastUserText } from './support/job-observation';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Line = Record<string, any>;

const root = path.join(__dirname, '..');
const say = (text: string): ScriptedReply => ({ content: [{ type: 'text', text }] });
const write = (id: string, file: string, content: string): ScriptedReply => ({
  content: [{ type: 'tool_use', id, name: 'Write', input: { file_path: file, content } }],
});

const targets: Array<[string, () => string]> = [
  ['durable-agent', () => ''],
  ...(process.env.AGENT_SDK_REFERENCE
    ? [
        [
          'Claude Code',
          () => execFileSync('bash', [path.join(root, 'scripts/install-claude-code.sh')], { encoding: 'utf8' }).trim(),
        ] as [string, () => string],
      ]
    : []),
];

describe.each(targets)('the Agent SDK drives %s', (target, reference) => {
  const dir = tempDir('agent-sdk');
  const home = tempDir('agent-sdk-home');
  // The reference binary's home, where it keeps its sessions for `resume`.
  const ccHome = tempDir('agent-sdk-cc-home');
  let server: DevServer;
  let worker: WorkerProcess | undefined;
  const models: ScriptedModelServer[] = [];
  let executable: string;
  let sdk: string;

  beforeAll(async () => {
    sdk = agentSdkModule();
    server = await DevServer.start(dir);
    // What an app names as pathToClaudeCodeExecutable: the durable-agent CLI.
    executable = reference() || path.join(tempDir('agent-sdk-bin'), 'durable-agent');
    if (target === 'durable-agent')
      fs.writeFileSync(
        executable,
        `#!/bin/sh\nexec "${process.execPath}" -r "${root}/test/support/ts-register.js" "${root}/src/client/cli.ts" "$@"\n`,
        { mode: 0o755 },
      );
  }, 180_000);
  afterEach(async () => {
    await worker?.kill('SIGKILL');
    worker = undefined;
  });
  afterAll(async () => {
    await server?.kill();
    for (const model of models) await model.close();
  });

  /** Run the SDK app to its end; its lines, parsed. */
  const app = async (model: ScriptedModelServer, config: Record<string, unknown>): Promise<Line[]> => {
    worker ??= await spawnWorkerProcess({
      address: server.address,
      taskQueue: 'durable-agent',
      modelUrl: model.url,
      home,
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_HOME: home,
      TEMPORAL_ADDRESS: server.address,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: model.url,
      // For the reference binary: a home of its own, and no calls but the model's.
      ...(target === 'durable-agent' ? {} : { HOME: ccHome, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' }),
    };
    delete env.ANTHROPIC_MODEL;
    const child = spawn(
      process.execPath,
      [path.join(root, 'test/support/sdk-app.mjs'), JSON.stringify({ sdk, executable, env, ...config })],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines = out
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Line);
    if (code !== 0 && !lines.some((line) => line.error)) throw new Error(`the app exited ${code}:\n${out}\n${err}`);
    return lines;
  };
  const model = async (replies: ScriptedReply[]) => {
    const started = await ScriptedModelServer.start({ replies, chunkDelayMs: 0 });
    models.push(started);
    return started;
  };

  test('a job with a Write that canUseTool allows runs to result/success, its messages in the SDK shapes', async () => {
    const llm = await model([write('toolu_w', 'note.txt', 'hi\n'), say('Wrote it.')]);
    const cwd = makeWorkspace({ 'README.md': 'hello\n' });
    const lines = await app(llm, { prompt: 'Write note.txt', cwd, permissionMode: 'default', answer: 'allow' });
    const init = lines.find((line) => line.type === 'system' && line.subtype === 'init');
    expect(init).toMatchObject({ cwd, model: expect.any(String), tools: expect.arrayContaining(['Write', 'Read']) });
    const jobId = init!.session_id as string;
    const asked = lines.find((line) => line.canUseTool)!;
    expect(asked).toMatchObject({ canUseTool: 'Write', input: { content: 'hi\n' } });
    expect(path.resolve(cwd, asked.input.file_path)).toBe(path.join(cwd, 'note.txt'));
    expect(
      lines.find((line) => line.type === 'user' && JSON.stringify(line.message.content).includes('toolu_w')),
    ).toMatchObject({ parent_tool_use_id: null, session_id: jobId });
    const result = lines.at(-1)!;
    expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'Wrote it.', session_id: jobId });
    expect(fs.readFileSync(path.join(cwd, 'note.txt'), 'utf8')).toBe('hi\n');
  }, 180_000);

  test('streaming input: a second message after the first result is answered in the same session', async () => {
    const llm = await model([write('toolu_w2', 'note.txt', 'hi\n'), say('Wrote it.'), say('Second answer.')]);
    const cwd = makeWorkspace({ 'README.md': 'hello\n' });
    const lines = await app(llm, {
      messages: ['Write note.txt', 'And again'],
      cwd,
      permissionMode: 'default',
      answer: 'allow',
      maxTurns: 2,
    });
    const results = lines.filter((line) => line.type === 'result');
    // One result per message, in one session; each counts its own turns (maxTurns 2 is per message).
    expect(results).toMatchObject([
      { subtype: 'success', result: 'Wrote it.', num_turns: 2 },
      { subtype: 'success', result: 'Second answer.', num_turns: 1 },
    ]);
    expect(results[1]!.session_id).toBe(results[0]!.session_id);
    // The second message went to the model with the whole conversation before it.
    expect(llm.requests).toHaveLength(3);
    const last = JSON.stringify(llm.requests[2]!.body);
    expect(last).toContain('And again');
    expect(last).toContain('Wrote it.');
    expect(fs.readFileSync(path.join(cwd, 'note.txt'), 'utf8')).toBe('hi\n');
    if (target === 'durable-agent') {
      // The input ended with the app's: the job is over, completed.
      const job = await describeExecution(server.address, results[0]!.session_id as string);
      expect(job.workflowExecutionInfo?.status).toBe(
        temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED,
      );
    }
  }, 180_000);

  test('set_permission_mode and set_model between two messages apply to the second', async () => {
    const llm = await model([say('Hi.'), write('toolu_m', 'note.txt', 'hi\n'), say('Wrote it.')]);
    const cwd = makeWorkspace({ 'README.md': 'hello\n' });
    const lines = await app(llm, {
      messages: ['Hello', 'Write note.txt'],
      cwd,
      permissionMode: 'default',
      // Were the Write asked about, it would be refused: acceptEdits must let it through unasked.
      answer: 'deny',
      afterFirst: { permissionMode: 'acceptEdits', model: 'claude-haiku-5-5' },
    });
    expect(lines.filter((line) => line.type === 'result').map((line) => line.result)).toEqual(['Hi.', 'Wrote it.']);
    expect(lines.some((line) => line.canUseTool)).toBe(false);
    expect(fs.readFileSync(path.join(cwd, 'note.txt'), 'utf8')).toBe('hi\n');
    const models = llm.requests.map((request) => (request.body as { model: string }).model);
    expect(models[0]).not.toBe('claude-haiku-5-5');
    // Every call after the change (Claude Code may make one more of its own) is on the new model.
    expect(models.length).toBeGreaterThanOrEqual(3);
    expect(new Set(models.slice(1))).toEqual(new Set(['claude-haiku-5-5']));
  }, 180_000);

  test('resume of a session that ended goes on with its conversation', async () => {
    const llm = await model([say('Noted.'), say('It was apricot.')]);
    const cwd = makeWorkspace({ 'README.md': 'hello\n' });
    const first = await app(llm, { prompt: 'Remember the word apricot.', cwd });
    const ended = first.at(-1)!;
    expect(ended).toMatchObject({ type: 'result', subtype: 'success', result: 'Noted.' });
    const lines = await app(llm, { prompt: 'What was the word?', cwd, resume: ended.session_id });
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'It was apricot.' });
    // The whole conversation went to the model; durable-agent continues it as a new job (a new
    // session_id, as `run --resume` does), where Claude Code keeps the id.
    const sent = JSON.stringify(llm.requests[1]!.body);
    for (const part of ['Remember the word apricot.', 'Noted.', 'What was the word?']) expect(sent).toContain(part);
    expect(lines.at(-1)!.session_id).toBe(lines.find((line) => line.subtype === 'init')!.session_id);
  }, 180_000);

  if (target === 'durable-agent')
    test('resume of a job this server does not know is an error result that says so; nothing starts', async () => {
      const llm = await model([say('never sent')]);
      const cwd = makeWorkspace({ 'README.md': 'hello\n' });
      const lines = await app(llm, { prompt: 'Go on.', cwd, resume: 'no-such-job' });
      // The SDK throws the error result at the app.
      expect(lines.at(-1)!.error).toContain(
        'no job no-such-job to resume on this server: start a new query without resume',
      );
      expect(llm.requests).toHaveLength(0);
    }, 180_000);

  test('canUseTool sees a large Write whole; echoed back as updatedInput, it is written whole', async () => {
    const big = `${'x'.repeat(79)}\n`.repeat(300); // 24,000 characters: stored by reference in the job
    const llm = await model([write('toolu_big', 'big.txt', big), say('Big written.')]);
    const cwd = makeWorkspace({ 'README.md': 'hello\n' });
    const lines = await app(llm, { prompt: 'Write big.txt', cwd, permissionMode: 'default', answer: 'allow' });
    expect(lines.find((line) => line.largeInput)).toMatchObject({ largeInput: 'Write' });
    expect(lines.find((line) => line.largeInput)!.chars).toBeGreaterThan(big.length);
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Big written.' });
    expect(fs.readFileSync(path.join(cwd, 'big.txt'), 'utf8')).toBe(big);
  }, 180_000);

  test('canUseTool that allows with a changed updatedInput: the changed input is what runs', async () => {
    const llm = await model([write('toolu_chg', 'changed.txt', 'as the model wrote it\n'), say('Written.')]);
    const cwd = makeWorkspace({ 'README.md': 'hello\n' });
    const lines = await app(llm, { prompt: 'Write changed.txt', cwd, permissionMode: 'default', answer: 'change' });
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Written.' });
    expect(fs.readFileSync(path.join(cwd, 'changed.txt'), 'utf8')).toBe('changed by the app\n');
  }, 180_000);

  test('interrupt stops the running command; the app gets a result and nothing of the command runs on', async () => {
    const llm = await model([
      {
        content: [
          { type: 'tool_use', id: 'toolu_i', name: 'Bash', input: { command: 'sleep 6; echo late > after.txt' } },
        ],
      },
      say('never sent'),
    ]);
    const cwd = makeWorkspace({ 'README.md': 'hello\n' });
    const lines = await app(llm, {
      prompt: 'Run it',
      cwd,
      permissionMode: 'acceptEdits',
      answer: 'allow',
      interruptOnTool: true,
    });
    expect(lines.some((line) => line.interruptError)).toBe(false);
    expect(lines.filter((line) => line.type === 'result')).toHaveLength(1);
    // Past the command's own end: it was stopped, not left to finish.
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    expect(fs.existsSync(path.join(cwd, 'after.txt'))).toBe(false);
    expect(llm.requests).toHaveLength(1);
  }, 180_000);

  test('a PreToolUse hook callback that blocks: the call is not made, and the model hears the reason', async () => {
    const llm = await model([write('toolu_h', 'blocked.txt', 'x\n'), say('The hook stopped me.')]);
    const cwd = makeWorkspace({ 'README.md': 'hello\n' });
    const lines = await app(llm, {
      prompt: 'Write blocked.txt',
      cwd,
      permissionMode: 'default',
      answer: 'allow',
      hook: 'PreToolUse',
    });
    const asked = lines.find((line) => line.hook);
    expect(asked).toMatchObject({
      hook: 'PreToolUse',
      input: { tool_name: 'Write', tool_use_id: 'toolu_h', tool_input: { content: 'x\n' } },
    });
    expect(asked!.input.session_id).toBe(lines.at(-1)!.session_id);
    // Denied before any permission question.
    expect(lines.some((line) => line.canUseTool)).toBe(false);
    expect(fs.existsSync(path.join(cwd, 'blocked.txt'))).toBe(false);
    expect(lastUserText(llm.requests[1]!)).toContain('blocked by the app');
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'The hook stopped me.' });
  }, 180_000);

  // What durable-agent does not do yet it says at once; Claude Code does these, so only ours.
  if (target === 'durable-agent')
    test('an app that registers a hook on an event durable-agent does not run hears so at once; no job starts', async () => {
      const llm = await model([say('never sent')]);
      const cwd = makeWorkspace({ 'README.md': 'hello\n' });
      const lines = await app(llm, { prompt: 'Hello', cwd, hook: 'UserPromptSubmit' });
      expect(JSON.stringify(lines.at(-1))).toContain(
        "durable-agent runs the Agent SDK's PreToolUse, PostToolUse and Stop hook callbacks, not UserPromptSubmit",
      );
      expect(llm.requests).toHaveLength(0);
    }, 180_000);

  if (target === 'durable-agent')
    test('the process the SDK started is SIGKILLed mid-job; the job goes on, and resume picks it up', async () => {
      const llm = await model([
        {
          content: [
            { type: 'tool_use', id: 'toolu_s', name: 'Bash', input: { command: 'echo step >> marks; sleep 8' } },
          ],
        },
        say('Went on.'),
      ]);
      const cwd = makeWorkspace({ 'README.md': 'hello\n' });
      worker ??= await spawnWorkerProcess({
        address: server.address,
        taskQueue: 'durable-agent',
        modelUrl: llm.url,
        home,
      });
      const env = {
        ...process.env,
        DURABLE_AGENT_HOME: home,
        TEMPORAL_ADDRESS: server.address,
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: llm.url,
      };
      const first = spawn(
        process.execPath,
        [
          path.join(root, 'test/support/sdk-app.mjs'),
          JSON.stringify({ sdk, executable, env, prompt: 'Run the step', cwd, permissionMode: 'bypassPermissions' }),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      first.stdout.on('data', (chunk) => (out += chunk));
      const firstExit = new Promise((resolve) => first.once('exit', resolve));
      await waitFor(
        async () => (fs.existsSync(path.join(cwd, 'marks')) ? true : undefined),
        60_000,
        'the step running',
      );
      const jobId = (JSON.parse(out.split('\n').find((line) => line.includes('"init"'))!) as Line).session_id as string;
      // The CLI the SDK spawned, and only it: its command line names this workspace's job.
      const cli = execFileSync('pgrep', ['-f', `${executable}|src/client/cli.ts --output-format`], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map(Number)
        .filter((pid) => {
          try {
            return fs.realpathSync(`/proc/${pid}/cwd`) === fs.realpathSync(cwd);
          } catch {
            return false; // gone meanwhile
          }
        });
      expect(cli.length).toBeGreaterThan(0);
      for (const pid of cli) process.kill(pid, 'SIGKILL');
      await firstExit;
      expect(out).not.toContain('"type":"result"');

      const lines = await app(llm, { prompt: 'Go on.', cwd, resume: jobId, permissionMode: 'bypassPermissions' });
      const result = lines.at(-1)!;
      expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'Went on.', session_id: jobId });
      // The step ran once: the job went on without the process, and nothing was done again.
      expect(fs.readFileSync(path.join(cwd, 'marks'), 'utf8')).toBe('step\n');
      // The message joined the job at its next turn boundary, with the step's result.
      expect(llm.requests.map((request) => JSON.stringify(request.body).includes('Go on.'))).toEqual([false, true]);
    }, 180_000);

  test('a Write that canUseTool denies is not made, and the model hears why', async () => {
    const llm = await model([write('toolu_d', 'secret.txt', 'x\n'), say('Understood.')]);
    const cwd = makeWorkspace({ 'README.md': 'hello\n' });
    const lines = await app(llm, { prompt: 'Write secret.txt', cwd, permissionMode: 'default', answer: 'deny' });
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Understood.' });
    expect(fs.existsSync(path.join(cwd, 'secret.txt'))).toBe(false);
    const denied = lines.find(
      (line) => line.type === 'user' && JSON.stringify(line.message.content).includes('toolu_d'),
    );
    expect(denied!.message.content[0].is_error).toBe(true);
    // The app's reason reaches the model.
    expect(JSON.stringify(denied!.message.content[0].content)).toContain('Not in this repository.');
  }, 180_000);
});

describe('what durable-agent does not do for the Agent SDK yet is said, never ignored', () => {
  test('unknown flags and hook events are refused by name', () => {
    // Pure: the bridge's own answers, as the SDK receives them.
    const { appHooksOf, parseSdkFlags } = jest.requireActual(
      '../src/client/sdk-bridge',
    ) as typeof import('../src/client/sdk-bridge');
    expect(appHooksOf({ PreToolUse: [], SessionStart: [{ hookCallbackIds: ['hook_0'] }] })).toEqual({
      refused: expect.stringContaining('not SessionStart'),
    });
    // As the SDK registers them: each callback a handler of its own, with the matcher's timeout.
    expect(
      appHooksOf({
        PreToolUse: [{ matcher: 'Write|Edit', hookCallbackIds: ['hook_0', 'hook_1'], timeout: 5, onFailure: 'block' }],
        Stop: [{ hookCallbackIds: ['hook_2'] }],
      }),
    ).toEqual({
      hooks: {
        PreToolUse: [
          {
            matcher: 'Write|Edit',
            hooks: [
              expect.objectContaining({ callback: 'hook_0', timeoutSec: 5, onFailure: 'block' }),
              expect.objectContaining({ callback: 'hook_1', timeoutSec: 5, onFailure: 'block' }),
            ],
          },
        ],
        Stop: [{ hooks: [expect.objectContaining({ callback: 'hook_2', source: 'the Agent SDK app' })] }],
      },
    });
    expect(() =>
      parseSdkFlags(['--output-format', 'stream-json', '--input-format', 'stream-json', '--mcp-config', '{}']),
    ).toThrow("unknown option '--mcp-config': durable-agent does not support it with the Agent SDK yet");
    expect(() => parseSdkFlags(['--output-format', 'text', '--input-format', 'stream-json'])).toThrow(
      '--output-format must be stream-json',
    );
  });
});
