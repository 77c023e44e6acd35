import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScriptedSession } from '../src/model-server';
import type { SessionSnapshot } from '../src/shared/session';
import { approvalSignal, snapshotQuery, userMessageSignal } from '../src/workflows/definitions';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from './support/harness';
import { editCall, readCall, toolUse, terminalOf } from './support/jobs';

type Block = Record<string, unknown>;
type Body = { messages: Array<{ role: string; content: string | Block[] }> };

const todos = [
  { content: 'Read the app', status: 'completed', activeForm: 'Reading the app' },
  { content: 'Survey the other files', status: 'in_progress', activeForm: 'Surveying the other files' },
  { content: 'Upper-case the app', status: 'pending', activeForm: 'Upper-casing the app' },
];

const read = readCall;
const edit = (id: string, from: string, to: string) => editCall(id, 'app.txt', from, to);

const OTHER_FILES = 8;
const NOTE = 'Also mention the weather.';

/**
 * TodoWrite; Read app.txt; eight turns of Reads of other files; an Edit of app.txt without reading
 * it again (it parks: the job runs in `default` mode); a Read; a second Edit of app.txt (covered by
 * the rule the approval added); the answer. Each reply reports its own usage, so the sum is known.
 */
function script(): ScriptedSession {
  const contents: ScriptedSession['replies'][number]['content'][] = [
    [toolUse('td', 'TodoWrite', { todos })],
    [read('ra', 'app.txt')],
    ...Array.from({ length: OTHER_FILES }, (_, i) => [read(`r${i}`, `other-${i}.txt`)]),
    [edit('ea', 'alpha', 'ALPHA')],
    [read('rb', 'late.txt')],
    [edit('eb', 'beta', 'BETA')],
    [{ type: 'text' as const, text: 'All done.' }],
  ];
  return {
    name: 'continue-as-new',
    replies: contents.map((content, i) => ({
      content,
      usage: {
        input_tokens: 100 + i,
        output_tokens: 10 + i,
        cache_creation_input_tokens: i,
        cache_read_input_tokens: 2 * i,
      },
    })),
  };
}

const files: Record<string, string> = { 'app.txt': 'alpha beta\n', 'late.txt': 'late\n' };
for (let i = 0; i < OTHER_FILES; i++) files[`other-${i}.txt`] = `other file ${i}\n`;

interface Run {
  runId: string;
  /** Activity ids scheduled in this run (a tool's activity id is `tool-<tool_use_id>`). */
  activities: string[];
  signals: string[];
}

describe('State carried across continue-as-new', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    // A tiny history budget: Temporal suggests continue-as-new every turn or two.
    env = await startTemporal(['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=20']);
  });
  afterAll(async () => {
    await env?.teardown();
  });

  /** Every run of the job, in order, following the continued-as-new chain from the first. */
  async function runsOf(workflowId: string, firstRunId: string): Promise<Run[]> {
    const runs: Run[] = [];
    let runId: string | undefined = firstRunId;
    while (runId) {
      const history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>> = await env.client.workflow
        .getHandle(workflowId, runId)
        .fetchHistory();
      const events = history.events ?? [];
      runs.push({
        runId,
        activities: events.flatMap((e) =>
          e.activityTaskScheduledEventAttributes?.activityId ? [e.activityTaskScheduledEventAttributes.activityId] : [],
        ),
        signals: events.flatMap((e) =>
          e.workflowExecutionSignaledEventAttributes?.signalName
            ? [e.workflowExecutionSignaledEventAttributes.signalName]
            : [],
        ),
      });
      runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    }
    return runs;
  }

  test('read state, todos, added rules, queued input, turn count and usage survive; the conversation loses nothing', async () => {
    const session = script();
    const server = await ScriptedModelServer.start(session);
    const taskQueue = uniqueTaskQueue('can');
    const { worker, done } = await startWorker(env, server, { taskQueue, storeDir: tempDir('store') });
    const workspace = makeWorkspace(files);
    try {
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `can-${Date.now()}`,
        args: [sessionInput(workspace, { permissions: { mode: 'default' } })],
      });
      const snapshot = () => handle.query(snapshotQuery) as Promise<SessionSnapshot>;

      // The Edit of app.txt parks for approval, several runs after app.txt was read.
      const parked = await waitFor(
        async () =>
          (await snapshot()).pendingApprovals[0]?.toolUseId === 'ea' ? (await handle.describe()).runId : undefined,
        60_000,
        'the Edit to park',
      );
      expect(parked).not.toBe(handle.firstExecutionRunId);

      // Queued input arrives while the turn is still running: it waits in the inbox, across the boundary.
      await handle.signal(userMessageSignal, NOTE);
      await waitFor(
        async () => ((await snapshot()).queuedUserMessages === 1 ? true : undefined),
        30_000,
        'the message to queue',
      );
      await handle.signal(approvalSignal, { toolUseId: 'ea', decision: 'allow', always: true });

      // The second Edit matches the added rule: the job ends without parking again.
      const outcome = await waitFor(
        async () => {
          if ((await handle.describe()).status.name === 'COMPLETED') return 'completed';
          return (await snapshot()).pendingApprovals.length > 0 ? 'parked again' : undefined;
        },
        60_000,
        'the job to end',
      );
      expect(outcome).toBe('completed');
      const terminal = await terminalOf(handle);

      // Several runs, and the interesting steps on either side of a boundary.
      expect((await handle.describe()).runId).not.toBe(handle.firstExecutionRunId);
      const runs = await runsOf(handle.workflowId, handle.firstExecutionRunId);
      expect(runs.at(-1)?.runId).toBe((await handle.describe()).runId);
      expect(runs.length).toBeGreaterThanOrEqual(4);
      const runOf = (toolUseId: string) => runs.findIndex((run) => run.activities.includes(`tool-${toolUseId}`));
      for (const id of ['ra', 'ea', 'rb', 'eb']) expect(runOf(id)).toBeGreaterThanOrEqual(0);
      // The Edit ran in a later run than the Read it relied on.
      expect(runOf('ea')).toBeGreaterThan(runOf('ra'));
      // The rule was added in one run and used in a later one.
      expect(runOf('eb')).toBeGreaterThan(runOf('ea'));
      // The job continued as new right after the parked turn: the message and the approval reached
      // that run, and the message was sent from the next.
      expect(runOf('rb')).toBe(runOf('ea') + 1);
      expect(runs[runOf('ea')]?.signals).toEqual(['userMessage', 'approval']);

      // The edits worked: the read state of app.txt crossed the boundaries.
      expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('ALPHA BETA\n');

      // The Terminal accounts for every turn of every run.
      expect(terminal.reason).toBe('completed');
      expect(terminal.finalText).toBe('All done.');
      expect(terminal.turnCount).toBe(session.replies.length);
      expect(terminal.todos).toEqual(todos);
      expect(terminal.denials).toEqual([]);
      const sum = (key: 'input_tokens' | 'output_tokens' | 'cache_creation_input_tokens' | 'cache_read_input_tokens') =>
        session.replies.reduce((total, reply) => total + (reply.usage?.[key] ?? 0), 0);
      expect(terminal.usage).toEqual({
        input_tokens: sum('input_tokens'),
        output_tokens: sum('output_tokens'),
        cache_creation_input_tokens: sum('cache_creation_input_tokens'),
        cache_read_input_tokens: sum('cache_read_input_tokens'),
      });
      expect(server.requests).toHaveLength(session.replies.length);

      // The last request holds the whole conversation: every reply and every tool_result, once.
      const last = server.requests.at(-1)?.body as Body;
      const assistant = last.messages.filter((m) => m.role === 'assistant');
      expect(
        assistant.map((m) => (m.content as Block[]).filter((b) => b.type === 'tool_use').map((b) => b.id)),
      ).toEqual(session.replies.slice(0, -1).map((reply) => reply.content.map((b) => (b as { id: string }).id)));
      const results = new Map<string, Block>();
      const texts: string[] = [];
      for (const message of last.messages.filter((m) => m.role === 'user')) {
        for (const block of message.content as Block[]) {
          if (block.type === 'tool_result') {
            expect(results.has(block.tool_use_id as string)).toBe(false);
            results.set(block.tool_use_id as string, block);
          }
          if (block.type === 'text') texts.push(block.text as string);
        }
      }
      const toolIds = ['td', 'ra', ...Array.from({ length: OTHER_FILES }, (_, i) => `r${i}`), 'ea', 'rb', 'eb'];
      expect([...results.keys()]).toEqual(toolIds);
      const content = (id: string) => JSON.stringify(results.get(id)?.content);
      for (const id of toolIds) expect(results.get(id)?.is_error).toBeFalsy();
      expect(content('ra')).toContain('alpha beta');
      for (let i = 0; i < OTHER_FILES; i++) expect(content(`r${i}`)).toContain(`other file ${i}`);
      expect(content('ea')).toContain('has been updated');
      expect(content('eb')).toContain('has been updated');

      // The message queued before the boundary was sent once, with the next request after it.
      expect(texts.filter((text) => text === NOTE)).toHaveLength(1);
      const firstWithNote = server.requests.findIndex((request) => JSON.stringify(request.body).includes(NOTE));
      expect(server.requests[firstWithNote]?.turn).toBe(
        session.replies.findIndex((reply) => reply.content.some((b) => (b as { id?: string }).id === 'ea')) + 1,
      );
      const noteMessage = (server.requests[firstWithNote]?.body as Body).messages.at(-1)?.content as Block[];
      expect(noteMessage.map((b) => b.type)).toEqual(['tool_result', 'text']);
      expect(noteMessage[0]?.tool_use_id).toBe('ea');
    } finally {
      worker.shutdown();
      await done;
      await server.close();
    }
  }, 180_000);
});
