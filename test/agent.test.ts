/**
 * Agent as a user meets it: the real CLI and worker processes on a dev server of the test's own;
 * each conversation (the job's, each subagent's) has its scripted model server behind one router,
 * which tells them apart by a tag in their first message. Subagents are child jobs: two run side by
 * side and survive their worker SIGKILLed mid-stream; an abort of the job stops its agents; what an
 * agent costs counts against the job's budget.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { ScriptedReply } from '../src/model-server';
import { DevServer, ModelRouter } from './support/chaos';
import { lastUserText, processesWith } from './support/job-observation';
import { runCli } from './support/cli';
import { makeWorkspace, ScriptedModelServer, spawnWorkerProcess, tempDir, waitFor } from './support/harness';
import type { WorkerProcess } from './support/harness';

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
    const connection = await Connection.connect({ address: server.address });
    try {
      const described = await connection.workflowService.describeWorkflowExecution({
        namespace: 'default',
        execution: { workflowId: 'agents-abort-agent-toolu_d' },
      });
      expect(described.workflowExecutionInfo?.status).not.toBe(1); // not RUNNING
    } finally {
      await connection.close();
    }
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
