/**
 * Agent as a user meets it: the real CLI and worker processes on a dev server of the test's own;
 * each conversation (the job's, each subagent's) has its scripted model server behind one router,
 * which tells them apart by a tag in their first message. Subagents are child jobs: two run side by
 * side and survive their worker SIGKILLed mid-stream; an abort of the job stops its agents; what an
 * agent costs counts against the job's budget.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedReply } from '../src/model-server';
import { DevServer, ModelRouter } from './support/chaos';
import { describeExecution, lastUserText, processesWith } from './support/job-observation';
import { runCli } from './support/cli';
import { makeWorkspace, ScriptedModelServer, spawnWorkerProcess, tempDir, waitFor } from './support/harness';
import type { WorkerProcess } from './support/harness';

/** A stream-json line, as a script reads it: any field may be there. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type StreamLine = Record<string, any>;

const say = (text: string, usage?: ScriptedReply['usage']): ScriptedReply => ({
  content: [{ type: 'text', text }],
  ...(usage ? { usage } : {}),
});
const agent = (
  id: string,
  key: string,
  description: string,
  background: boolean,
): ScriptedReply['content'][number] => ({
  type: 'tool_use',
  id,
  name: 'Agent',
  input: { description, prompt: `[chaos:${key}] ${description}, then report.`, run_in_background: background },
});

describe('Agent: subagents as child jobs', () => {
  const dir = tempDir('agents');
  const home = tempDir('agents-home');
  const tag = `agenttest${process.pid}`;
  let server: DevServer;
  let router: ModelRouter;
  let worker: WorkerProcess | undefined;
  const models: ScriptedModelServer[] = [];
  const env = (): NodeJS.ProcessEnv => {
    const vars: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_HOME: home,
      TEMPORAL_ADDRESS: server.address,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: router.url,
    };
    delete vars.ANTHROPIC_MODEL;
    return vars;
  };
  const startWorker = async () => {
    worker = await spawnWorkerProcess({
      address: server.address,
      taskQueue: 'durable-agent',
      modelUrl: router.url,
      home,
    });
  };
  const conversation = async (key: string, replies: ScriptedReply[], chunkDelayMs = 0) => {
    const started = await ScriptedModelServer.start({ name: key, replies, chunkDelayMs });
    models.push(started);
    router.add(key, started.url);
    return started;
  };
  const status = async (id: string) => JSON.parse((await runCli(['status', id, '--json'], env())).stdout);
  const start = async (id: string, key: string, extra: string[] = [], files: Record<string, string> = {}) => {
    const workspace = makeWorkspace({ 'README.md': 'hello\n', ...files });
    const run = await runCli(
      [
        'run',
        `[chaos:${key}] Look into it`,
        '--cwd',
        workspace,
        '--job-id',
        id,
        '--detach',
        '--permission-mode',
        'bypassPermissions',
        ...extra,
      ],
      env(),
    );
    expect(run.code).toBe(0);
    return workspace;
  };

  beforeAll(async () => {
    server = await DevServer.start(dir);
    router = await ModelRouter.start();
  }, 90_000);
  afterEach(async () => {
    await worker?.kill('SIGKILL');
    worker = undefined;
  });
  afterAll(async () => {
    await server?.kill();
    await router?.close();
    for (const each of models) await each.close();
  });

  test('two agents in one turn run side by side, survive their worker SIGKILLed mid-stream, and report once each', async () => {
    const parent = await conversation('p1', [
      {
        content: [
          agent('toolu_a', 'a1', 'Count the A lines', false),
          agent('toolu_b', 'b1', 'Count the B lines', false),
        ],
      },
      say('Both agents reported.'),
    ]);
    // Each agent writes one line, then streams its report slowly enough to be cut.
    await conversation(
      'a1',
      [
        { content: [{ type: 'tool_use', id: 'ta', name: 'Bash', input: { command: 'echo a >> marks' } }] },
        say('A: one line, written.'),
      ],
      300,
    );
    await conversation(
      'b1',
      [
        { content: [{ type: 'tool_use', id: 'tb', name: 'Bash', input: { command: 'echo b >> marks' } }] },
        say('B: one line, written.'),
      ],
      300,
    );
    await startWorker();
    const workspace = await start('agents-kill', 'p1');
    // Both agents' second model calls are streaming: the worker dies under them.
    await waitFor(
      async () =>
        ['a1', 'b1'].every((key) => router.open().some((call) => call.job === key && call.turn === 1))
          ? true
          : undefined,
      60_000,
      'both agents streaming',
    );
    await worker!.kill('SIGKILL');
    worker = undefined;
    await startWorker();

    const result = await runCli(['result', 'agents-kill'], env());
    expect(result.stdout).toContain('Both agents reported.');
    const answers = lastUserText(parent.requests.at(-1)!);
    expect(answers.match(/A: one line, written\./g)).toHaveLength(1);
    expect(answers.match(/B: one line, written\./g)).toHaveLength(1);
    expect(answers).toMatch(
      /agentId: a[0-9a-z]{8} \(its job: agents-kill-agent-toolu_a\)\n<usage>subagent_tokens: \d+\nturns: 2\n/,
    );
    expect(fs.readFileSync(path.join(workspace, 'marks'), 'utf8').split('\n').filter(Boolean).sort()).toEqual([
      'a',
      'b',
    ]);
    const done = await status('agents-kill');
    expect(done.terminal.reason).toBe('completed');
    // The job's cost holds its agents' calls: three model servers' worth of usage.
    expect(done.backgroundTasks.map((task: { status: string }) => task.status)).toEqual(['completed', 'completed']);
    const child = await status('agents-kill-agent-toolu_a');
    expect(child.terminal.reason).toBe('completed');
    expect(done.totalCostUsd).toBeGreaterThan(child.terminal.totalCostUsd);
  }, 240_000);

  test('an agent in the background reports in a later turn; aborting the job stops a running agent', async () => {
    const parent = await conversation('p2', [
      { content: [agent('toolu_c', 'c2', 'Summarise the README', true)] },
      say('Launched; waiting for its report.'),
      { content: [agent('toolu_d', 'd2', 'Watch the slow job', true)] },
      say('Watching.'),
    ]);
    await conversation('c2', [say('The README says hello.')]);
    await conversation('d2', [
      { content: [{ type: 'tool_use', id: 'td', name: 'Bash', input: { command: `sleep 300 # ${tag}` } }] },
      say('never'),
    ]);
    await startWorker();
    await start('agents-abort', 'p2');
    await waitFor(
      async () => (processesWith(tag).length > 0 ? true : undefined),
      60_000,
      'the agent running its command',
    );
    const notice = lastUserText(parent.requests[2]!);
    expect(notice).toContain('<status>completed</status>');
    expect(notice).toContain('<result>The README says hello.</result>');

    expect((await runCli(['abort', 'agents-abort'], env())).code).toBe(0);
    await runCli(['result', 'agents-abort'], env());
    const ended = await status('agents-abort');
    expect(ended.terminal.reason).toMatch(/^aborted_/);
    expect(ended.backgroundTasks.map((task: { status: string }) => task.status)).toEqual(['completed', 'stopped']);
    expect(processesWith(tag)).toEqual([]);
    const described = await describeExecution(server.address, 'agents-abort-agent-toolu_d');
    expect(described.workflowExecutionInfo?.status).not.toBe(1); // not RUNNING
  }, 240_000);

  test("a subagent's approval shows in its parent's status and ls, and approve on the parent answers it", async () => {
    await conversation('p5', [
      { content: [agent('toolu_w', 'w5', 'Write the note', false)] },
      say('The agent wrote the note.'),
    ]);
    await conversation('w5', [
      {
        content: [{ type: 'tool_use', id: 'tw', name: 'Write', input: { file_path: 'note.txt', content: 'noted\n' } }],
      },
      say('Wrote note.txt.'),
    ]);
    await startWorker();
    const workspace = await start('agents-approve', 'p5', ['--permission-mode', 'default']);
    const child = 'agents-approve-agent-toolu_w';
    const waiting = await waitFor(
      async () => {
        const pending = (await status('agents-approve')).pendingApprovals;
        return pending.length > 0 ? pending : undefined;
      },
      60_000,
      "the agent's Write waiting for approval",
    );
    expect(waiting).toEqual([
      expect.objectContaining({ toolUseId: 'tw', toolName: 'Write', agent: { jobId: child, label: 'Write the note' } }),
    ]);
    const shown = await runCli(['status', 'agents-approve'], env());
    expect(shown.stdout).toContain(`waiting for approval (agent "Write the note", job ${child}): Write`);
    // ls shows the agent's job right under its parent, and the agent's call with the parent too.
    expect((await runCli(['ls'], env())).stdout).toMatch(
      new RegExp(
        `^agents-approve .*\\n +waiting for approval: Write .*\\[tw\\] \\(agent "Write the note"\\)\\n` +
          `${child} .*\\(agent of agents-approve\\)\\n +waiting for approval: Write`,
        'm',
      ),
    );

    const approved = await runCli(['approve', 'agents-approve'], env());
    expect(approved.stderr).toBe('');
    expect(approved.stdout).toContain(`(for agent "Write the note", job ${child})`);
    const result = await runCli(['result', 'agents-approve'], env());
    expect(result.stdout).toContain('The agent wrote the note.');
    expect(fs.readFileSync(path.join(workspace, 'note.txt'), 'utf8')).toBe('noted\n');
    // Nothing is left waiting: the answer reached the agent's own job.
    expect((await runCli(['approve', 'agents-approve'], env())).stderr).toContain('is not waiting for an approval');
  }, 240_000);

  test("stream-json carries an agent's work under its call, task events as Claude Code's, and subagent_stats", async () => {
    await conversation('p6', [
      {
        content: [
          agent('toolu_f', 'f6', 'Count the lines', false),
          {
            type: 'tool_use',
            id: 'toolu_bg',
            name: 'Bash',
            input: { command: 'echo built', run_in_background: true, description: 'build' },
          },
        ],
      },
      say('Done.'),
      say('Noted.'),
    ]);
    await conversation('f6', [
      { content: [{ type: 'tool_use', id: 'tf', name: 'Bash', input: { command: 'echo counted' } }] },
      say('Three lines.'),
    ]);
    await startWorker();
    const workspace = makeWorkspace({ 'README.md': 'hello\n' });
    const run = await runCli(
      [
        'run',
        '[chaos:p6] Look into it',
        '--cwd',
        workspace,
        '--job-id',
        'agents-stream',
        '--output-format',
        'stream-json',
        '--verbose',
        '--permission-mode',
        'bypassPermissions',
      ],
      env(),
    );
    expect(run.code).toBe(0);
    const lines = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as StreamLine);
    const at = (test: (line: StreamLine) => boolean, what: string) => {
      const index = lines.findIndex(test);
      if (index < 0) throw new Error(`no ${what} in:\n${run.stdout}`);
      return index;
    };
    const content = (line: StreamLine) => JSON.stringify(line.message?.content ?? '');
    const call = at(
      (l) => l.type === 'assistant' && l.parent_tool_use_id === null && content(l).includes('"toolu_f"'),
      'Agent call',
    );
    const started = at((l) => l.subtype === 'task_started' && l.tool_use_id === 'toolu_f', 'task_started');
    const childCall = at(
      (l) => l.type === 'assistant' && l.parent_tool_use_id === 'toolu_f' && content(l).includes('echo counted'),
      "the agent's Bash call",
    );
    const childResult = at(
      (l) => l.type === 'user' && l.parent_tool_use_id === 'toolu_f' && content(l).includes('counted'),
      "the agent's Bash result",
    );
    const childText = at(
      (l) => l.type === 'assistant' && l.parent_tool_use_id === 'toolu_f' && content(l).includes('Three lines.'),
      "the agent's report",
    );
    const ended = at((l) => l.subtype === 'task_notification' && l.tool_use_id === 'toolu_f', 'task_notification');
    const answer = at(
      (l) => l.type === 'user' && l.parent_tool_use_id === null && content(l).includes('"toolu_f"'),
      "the Agent call's result",
    );
    // Each once: the agent's three lines, and one start and one ending per task.
    expect(lines.filter((l) => l.parent_tool_use_id === 'toolu_f')).toHaveLength(3);
    expect(lines.filter((l) => l.subtype === 'task_started')).toHaveLength(2);
    expect(lines.filter((l) => l.subtype === 'task_notification')).toHaveLength(2);
    expect([call, started, childCall, childResult, childText, ended, answer]).toEqual(
      [call, started, childCall, childResult, childText, ended, answer].sort((a, b) => a - b),
    );
    expect(lines[started]).toMatchObject({
      type: 'system',
      task_type: 'local_agent',
      subagent_type: 'general-purpose',
      is_backgrounded: false,
      description: 'Count the lines',
      session_id: 'agents-stream',
    });
    expect(lines[ended]).toMatchObject({
      status: 'completed',
      summary: 'Three lines.',
      usage: { tool_uses: 1, total_tokens: expect.any(Number), duration_ms: expect.any(Number) },
    });
    // The background command, as Claude Code tells of one.
    const bashStarted =
      lines[at((l) => l.subtype === 'task_started' && l.tool_use_id === 'toolu_bg', 'command task_started')]!;
    expect(bashStarted).toMatchObject({ task_type: 'local_bash', is_backgrounded: true, description: 'build' });
    expect(
      lines[at((l) => l.subtype === 'task_notification' && l.tool_use_id === 'toolu_bg', 'command task_notification')],
    ).toMatchObject({
      task_id: bashStarted.task_id,
      status: 'completed',
      summary: 'Background command "build" completed (exit code 0)',
      output_file: `${workspace}/.durable-agent/tool-results/bash-${bashStarted.task_id}.output`,
    });
    const result = lines.at(-1)!;
    expect(result.type).toBe('result');
    expect(result.subagent_stats).toEqual({
      spawned: 1,
      requested: { background: 0, foreground: 1, unset: 0 },
      started_in_background: 0,
      max_depth: 1,
      spawned_by_subagents: 0,
      completed: 1,
      failed: 0,
      killed: { parent: 0, user: 0, system: 0 },
      refused: { depth_limit: 0, concurrency_limit: 0, budget: 0 },
      by_type: { 'general-purpose': 1 },
    });
  }, 240_000);

  test("an agent's cost counts against the job's budget", async () => {
    const parent = await conversation('p3', [
      { content: [agent('toolu_e', 'e3', 'Read everything', false)] },
      say('never sent'),
    ]);
    // A million input tokens: dollars, past the job's five cents of budget (its own call costs about 1.5 cents).
    await conversation('e3', [say('Read it all.', { input_tokens: 1_000_000 })]);
    await startWorker();
    await start('agents-budget', 'p3', ['--max-budget-usd', '0.05']);
    await runCli(['result', 'agents-budget'], env());
    const ended = await status('agents-budget');
    expect(ended.terminal.reason).toBe('budget_exhausted');
    expect(ended.terminal.totalCostUsd).toBeGreaterThan(1);
    expect(parent.requests).toHaveLength(1);
  }, 240_000);

  test('a type from .claude/agents gives the agent its prompt and only the tools it lists; an unknown type is named', async () => {
    const parent = await conversation('p4', [
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_r',
            name: 'Agent',
            input: {
              description: 'Read it',
              prompt: '[chaos:r4] Read the README.',
              subagent_type: 'reader',
              run_in_background: false,
            },
          },
          {
            type: 'tool_use',
            id: 'toolu_x',
            name: 'Agent',
            input: { description: 'x', prompt: 'x', subagent_type: 'nosuch' },
          },
        ],
      },
      say('Read.'),
    ]);
    const reader = await conversation('r4', [say('It says hello.')]);
    await startWorker();
    await start('agents-types', 'p4', [], {
      '.claude/agents/reader.md':
        '---\nname: reader\ndescription: Reads files and reports\ntools: Read, Grep\n---\nYou only read; you never change a file.\n',
    });
    await runCli(['result', 'agents-types'], env());
    const request = reader.requests[0]!.body as { tools: Array<{ name: string }>; system: unknown };
    expect(request.tools.map((tool) => tool.name).sort()).toEqual(['Grep', 'Read']);
    expect(JSON.stringify(request.system)).toContain('You only read; you never change a file.');
    // The job's own system prompt lists the type for its model.
    expect(JSON.stringify(parent.requests[0]!.body)).toContain('- reader: Reads files and reports');
    const answers = lastUserText(parent.requests[1]!);
    expect(answers).toContain('It says hello.');
    expect(answers).toContain("Agent type 'nosuch' not found. Available agents: general-purpose, reader");
    expect((await status('agents-types')).terminal.reason).toBe('completed');
  }, 240_000);
});
