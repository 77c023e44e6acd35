import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScriptedSession } from '../src/model-server';
import type { SessionSnapshot } from '../src/shared/session';
import { approvalSignal, snapshotQuery } from '../src/workflows/definitions';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from './support/harness';
import {
  editCall,
  readCall,
  resultText,
  terminalOf,
  toolResultFor,
  toolResultsOf,
  withScriptedJob,
} from './support/jobs';

const read = readCall;
const edit = (id: string, from: string, to: string) => editCall(id, 'app.txt', from, to);
const text = (value: string) => ({ type: 'text' as const, text: value });

/** Read app.txt, then edit it twice in two turns, then answer. */
const twoEdits: ScriptedSession = {
  name: 'two-edits',
  replies: [
    { content: [read('r1', 'app.txt')] },
    { content: [edit('e1', 'one', 'uno')] },
    { content: [edit('e2', 'two', 'dos')] },
    { content: [text('Both edits done.')] },
  ],
};

describe('permissions and durable approvals', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  /** Run one job to its end; `drive` acts on it while it runs. */
  async function withJob(
    session: ScriptedSession,
    input: Parameters<typeof sessionInput>[1],
    files: Record<string, string>,
    drive: (ids: { jobId: string; server: ScriptedModelServer; workspace: string }) => Promise<void> = async () =>
      undefined,
  ) {
    return withScriptedJob(env, 'perm', { session, input, files }, async ({ server, handle, workspace }) => {
      await drive({ jobId: handle.workflowId, server, workspace });
      const terminal = await terminalOf(handle);
      return { terminal, server, workspace, handle };
    });
  }

  const pendingOf = async (jobId: string) => {
    const snapshot = (await env.client.workflow.getHandle(jobId).query(snapshotQuery)) as SessionSnapshot;
    return snapshot.pendingApprovals.length > 0 ? snapshot : undefined;
  };

  test('default mode parks an Edit until approved; --always allows the next one without asking', async () => {
    const run = await withJob(
      twoEdits,
      { permissions: { mode: 'default' } },
      { 'app.txt': 'one two\n' },
      async ({ jobId }) => {
        const parked = await waitFor(() => pendingOf(jobId), 30_000, 'the first approval request');
        expect(parked.phase).toBe('waiting_for_approval');
        expect(parked.pendingApprovals[0]).toMatchObject({
          toolUseId: 'e1',
          toolName: 'Edit',
          suggestedRule: 'Edit(./app.txt)',
        });
        await env.client.workflow.getHandle(jobId).signal(approvalSignal, { decision: 'allow', always: true });
      },
    );
    expect(run.terminal.reason).toBe('completed');
    expect(fs.readFileSync(path.join(run.workspace, 'app.txt'), 'utf8')).toBe('uno dos\n');
    expect(run.terminal.denials).toEqual([]);
  });

  test('a denied call becomes an is_error result with the reason, and the Terminal lists it', async () => {
    const run = await withJob(
      twoEdits,
      { permissions: { mode: 'default' } },
      { 'app.txt': 'one two\n' },
      async ({ jobId }) => {
        for (const id of ['e1', 'e2']) {
          await waitFor(
            async () => ((await pendingOf(jobId))?.pendingApprovals[0]?.toolUseId === id ? true : undefined),
            30_000,
            id,
          );
          await env.client.workflow
            .getHandle(jobId)
            .signal(approvalSignal, { toolUseId: id, decision: 'deny', reason: 'not today' });
        }
      },
    );
    expect(run.terminal.reason).toBe('completed');
    expect(fs.readFileSync(path.join(run.workspace, 'app.txt'), 'utf8')).toBe('one two\n');
    expect(toolResultFor(run.server, 'e1')).toContain('Denied by the user: not today');
    expect(toolResultFor(run.server, 'e1')).toContain('"is_error":true');
    expect(run.terminal.denials.map((d) => d.toolUseId)).toEqual(['e1', 'e2']);
  });

  test('an approval with updatedInput runs the changed input; one a deny rule matches is denied', async () => {
    const run = await withJob(
      twoEdits,
      { permissions: { mode: 'default', deny: ['Edit(./secret.txt)'] } },
      { 'app.txt': 'one two\n', 'secret.txt': 'two\n' },
      async ({ jobId }) => {
        const handle = env.client.workflow.getHandle(jobId);
        const first = await waitFor(() => pendingOf(jobId), 30_000, 'the first approval request');
        // The whole input is there for a program to answer, not only the clipped preview.
        expect(first.pendingApprovals[0]!.toolInput).toEqual({
          file_path: 'app.txt',
          old_string: 'one',
          new_string: 'uno',
        });
        await handle.signal(approvalSignal, {
          toolUseId: 'e1',
          decision: 'allow',
          updatedInput: { file_path: 'app.txt', old_string: 'one', new_string: 'eins' },
        });
        await waitFor(
          async () => ((await pendingOf(jobId))?.pendingApprovals[0]?.toolUseId === 'e2' ? true : undefined),
          30_000,
          'e2',
        );
        await handle.signal(approvalSignal, {
          toolUseId: 'e2',
          decision: 'allow',
          updatedInput: { file_path: 'secret.txt', old_string: 'two', new_string: 'leaked' },
        });
      },
    );
    expect(run.terminal.reason).toBe('completed');
    expect(fs.readFileSync(path.join(run.workspace, 'app.txt'), 'utf8')).toBe('eins two\n');
    expect(fs.readFileSync(path.join(run.workspace, 'secret.txt'), 'utf8')).toBe('two\n');
    expect(toolResultFor(run.server, 'e2')).toContain('The input the approver changed it to is not allowed');
    expect(run.terminal.denials.map((d) => d.toolUseId)).toEqual(['e2']);
  });

  test('an unanswered approval takes the configured default when its timeout passes', async () => {
    const run = await withJob(
      { ...twoEdits, replies: [twoEdits.replies[0]!, twoEdits.replies[1]!, { content: [text('Gave up.')] }] },
      { permissions: { mode: 'default', approvalTimeoutMs: 1_000 } },
      { 'app.txt': 'one two\n' },
    );
    expect(run.terminal.reason).toBe('completed');
    expect(toolResultFor(run.server, 'e1')).toMatch(/No approval answer within 1 s/);
    expect(run.terminal.denials).toHaveLength(1);
  });

  test('dontAsk denies what no rule allows, without parking; an allow rule lets a command through', async () => {
    const session: ScriptedSession = {
      replies: [
        {
          content: [
            { type: 'tool_use', id: 'b1', name: 'Bash', input: { command: 'npm --version && touch made-by-npm' } },
            { type: 'tool_use', id: 'b2', name: 'Bash', input: { command: 'touch allowed' } },
          ],
        },
        { content: [text('ok')] },
      ],
    };
    const run = await withJob(
      session,
      { permissions: { mode: 'dontAsk', allow: ['Bash(npm --version)', 'Bash(touch allowed)'] } },
      {},
    );
    expect(run.terminal.reason).toBe('completed');
    expect(toolResultFor(run.server, 'b1')).toContain('Permission to use Bash was denied');
    expect(fs.existsSync(path.join(run.workspace, 'made-by-npm'))).toBe(false);
    expect(fs.existsSync(path.join(run.workspace, 'allowed'))).toBe(true);
    expect(run.terminal.denials.map((d) => d.toolUseId)).toEqual(['b1']);
  });

  test("the workspace's .claude/settings.json rules apply: a deny rule on secrets wins", async () => {
    const session: ScriptedSession = {
      replies: [{ content: [read('s1', 'secrets/key.txt'), read('s2', 'app.txt')] }, { content: [text('ok')] }],
    };
    const settings = JSON.stringify({ permissions: { deny: ['Read(./secrets/**)'] } });
    const run = await withJob(
      session,
      { permissions: { mode: 'bypassPermissions' } },
      {
        'app.txt': 'hello\n',
        'secrets/key.txt': 'TOP SECRET\n',
        '.claude/settings.json': settings,
      },
    );
    expect(toolResultFor(run.server, 's1')).toContain('denied');
    expect(toolResultFor(run.server, 's1')).not.toContain('TOP SECRET');
    expect(toolResultFor(run.server, 's2')).toContain('hello');
  });

  test('a broken settings file ends the job with setup_failed saying what to fix', async () => {
    const run = await withJob({ replies: [] }, {}, { '.claude/settings.json': '{"permissions": {"allow": "Bash"}}' });
    expect(run.terminal.reason).toBe('setup_failed');
    expect(run.terminal.detail).toContain('settings.json');
    expect(run.server.requests).toHaveLength(0);
  });

  test('TodoWrite keeps its list in the State and the Terminal shows it; a bad list is an error', async () => {
    const todos = [
      { content: 'Read the code', status: 'completed', activeForm: 'Reading the code' },
      { content: 'Write the fix', status: 'in_progress', activeForm: 'Writing the fix' },
    ];
    const session: ScriptedSession = {
      replies: [
        { content: [{ type: 'tool_use', id: 'td1', name: 'TodoWrite', input: { todos } }] },
        {
          content: [
            { type: 'tool_use', id: 'td2', name: 'TodoWrite', input: { todos: [{ content: 'x', status: 'doing' }] } },
          ],
        },
        { content: [text('done')] },
      ],
    };
    const run = await withJob(session, {}, {});
    expect(run.terminal.todos).toEqual(todos);
    expect(toolResultFor(run.server, 'td1')).not.toContain('is_error');
    expect(toolResultFor(run.server, 'td2')).toContain('"is_error":true');
    // Worded as Claude Code words a bad input.
    expect(resultText(toolResultsOf(run.server, 2).find((block) => block.tool_use_id === 'td2'))).toBe(
      '<tool_use_error>InputValidationError: TodoWrite failed due to the following issues:\n' +
        'The required parameter `todos[0].activeForm` is missing\n' +
        'The parameter `todos[0].status` is invalid: Invalid option: expected one of "pending"|"in_progress"|"completed"</tool_use_error>',
    );
    // The model is offered the tool.
    const offered = (run.server.requests[0]?.body as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(offered).toContain('TodoWrite');
  });

  test('Edit without a prior Read is refused; the read state is kept in the State', async () => {
    const session: ScriptedSession = {
      replies: [
        { content: [edit('x1', 'one', 'uno')] },
        { content: [read('x2', 'app.txt')] },
        { content: [edit('x3', 'one', 'uno')] },
        { content: [text('done')] },
      ],
    };
    const run = await withJob(session, {}, { 'app.txt': 'one\n' });
    expect(toolResultFor(run.server, 'x1')).toMatch(/has not been read/i);
    expect(toolResultFor(run.server, 'x3')).not.toContain('is_error');
    expect(fs.readFileSync(path.join(run.workspace, 'app.txt'), 'utf8')).toBe('uno\n');
  });
});

describe('approvals and journals across worker crashes', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  test('an approval waits through a worker restart, then proceeds', async () => {
    const server = await ScriptedModelServer.start(twoEdits);
    const taskQueue = uniqueTaskQueue('approval-restart');
    const home = tempDir('home');
    const workspace = makeWorkspace({ 'app.txt': 'one two\n' });
    let worker = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home });
    try {
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `approval-restart-${Date.now()}`,
        args: [sessionInput(workspace, { permissions: { mode: 'default' } })],
      });
      await waitFor(() => pendingOf(handle.workflowId), 60_000, 'the approval request');
      await worker.kill('SIGKILL');
      // Answered while no worker runs: the signal waits in the history.
      await handle.signal(approvalSignal, { decision: 'allow', always: true });
      worker = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home });
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('uno dos\n');
    } finally {
      await worker.kill('SIGTERM');
      await server.close();
    }

    async function pendingOf(jobId: string) {
      const snapshot = (await env.client.workflow.getHandle(jobId).query(snapshotQuery)) as SessionSnapshot;
      return snapshot.pendingApprovals.length > 0 ? snapshot : undefined;
    }
  });

  test('a worker killed after an Edit completed but before Temporal heard: the retry returns the journal result', async () => {
    const server = await ScriptedModelServer.start(twoEdits);
    const taskQueue = uniqueTaskQueue('journal');
    const home = tempDir('home');
    const workspace = makeWorkspace({ 'app.txt': 'one two\n' });
    let worker = await spawnWorkerProcess({
      address: env.address,
      taskQueue,
      modelUrl: server.url,
      home,
      extraEnv: { DURABLE_AGENT_TEST_CRASH_AFTER_JOURNAL: 'e1' },
    });
    try {
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `journal-${Date.now()}`,
        args: [sessionInput(workspace)],
      });
      await new Promise<void>((resolve) => worker.child.once('exit', () => resolve()));
      // The Edit ran once and the worker died before reporting it.
      expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('uno two\n');
      worker = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home });
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('uno dos\n');
      expect(toolResultFor(server, 'e1')).toContain('has been updated');
      expect(toolResultFor(server, 'e1')).not.toContain('is_error');
      // The journal lives in the data directory: the workspace holds nothing of it.
      expect(fs.existsSync(path.join(workspace, '.durable-agent'))).toBe(false);
    } finally {
      await worker.kill('SIGTERM');
      await server.close();
    }
  });
});
