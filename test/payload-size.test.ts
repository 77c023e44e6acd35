/**
 * Nothing that crosses workflow history grows with the content a job handles: every activity
 * input and result, every run's input and the Terminal stay under 256 KiB (Temporal warns there;
 * it refuses at 2 MB), for a job that writes a 300 KB file, reads it back, reads five large files
 * in one turn, prints a lot from Bash and crosses continue-as-new.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { FileContentStore } from '../src/activities/store/content-store';
import type { ScriptedSession } from '../src/model-server';
import type { Terminal } from '../src/shared/terminal';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';
import { messagesOf, textReply, toolResultBlocks, toolUse, terminalOf } from './support/jobs';

const LIMIT = 256 * 1024;
const BIG = `${'0123456789abcdefghijklmnopqrstuvwxyz'.repeat(2)}${'-'.repeat(27)}\n`.repeat(3_000); // 300 KB

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Every payload an event carries, with a label naming where it came from. */
function payloadsOf(event: HistoryEvent): Array<{ where: string; bytes: number }> {
  const groups: Array<[string, temporal.api.common.v1.IPayloads | null | undefined]> = [
    [`start input`, event.workflowExecutionStartedEventAttributes?.input],
    [
      `activity ${event.activityTaskScheduledEventAttributes?.activityType?.name} input`,
      event.activityTaskScheduledEventAttributes?.input,
    ],
    [`activity result (event ${event.eventId})`, event.activityTaskCompletedEventAttributes?.result],
    [`continue-as-new input`, event.workflowExecutionContinuedAsNewEventAttributes?.input],
    [`workflow result`, event.workflowExecutionCompletedEventAttributes?.result],
    [
      `signal ${event.workflowExecutionSignaledEventAttributes?.signalName}`,
      event.workflowExecutionSignaledEventAttributes?.input,
    ],
  ];
  return groups.flatMap(([where, payloads]) =>
    (payloads?.payloads ?? []).map((payload) => ({ where, bytes: payload.data?.length ?? 0 })),
  );
}

describe('payload sizes (issue: State and history that stay small)', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal(['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=20']);
  });
  afterAll(async () => {
    await env?.teardown();
  });

  test('a 300 KB Write, large reads and loud Bash: every payload under 256 KiB, the content intact', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 5; i++) files[`part-${i}.txt`] = `${String(i).repeat(99)}\n`.repeat(440); // 44 KB each
    const session: ScriptedSession = {
      name: 'payload-size',
      replies: [
        { content: [toolUse('w1', 'Write', { file_path: 'big.txt', content: BIG })] },
        { content: [toolUse('r1', 'Read', { file_path: 'big.txt' })] },
        { content: [0, 1, 2, 3, 4].map((i) => toolUse(`p${i}`, 'Read', { file_path: `part-${i}.txt` })) },
        { content: [toolUse('b1', 'Bash', { command: 'head -c 400000 /dev/zero | tr "\\\\0" x' })] },
        textReply('Wrote and read everything.'),
      ],
    };
    const server = await ScriptedModelServer.start(session);
    const taskQueue = uniqueTaskQueue('payload');
    const { worker, done } = await startWorker(env, server, { taskQueue, storeDir: tempDir('store') });
    const workspace = makeWorkspace(files);
    try {
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `payload-${Date.now()}`,
        args: [sessionInput(workspace)],
      });
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      // The Write got its whole content, though the workflow only ever held a reference.
      expect(fs.readFileSync(path.join(workspace, 'big.txt'), 'utf8')).toBe(BIG);

      // The five reads of one turn passed the 200,000-character budget: the largest went aside.
      const turn3 = toolResultBlocks(messagesOf(server.requests.find((r) => r.turn === 3)).at(-1));
      expect(turn3).toHaveLength(5);
      const aside = turn3.filter((block) => String(block.content).includes('too large to show together'));
      expect(aside.length).toBeGreaterThanOrEqual(1);
      const sent = turn3.reduce((sum, block) => sum + String(block.content).length, 0);
      expect(sent).toBeLessThanOrEqual(200_000);

      // Every run of the job, following continue-as-new.
      const sizes: Array<{ where: string; bytes: number }> = [];
      let runId: string | undefined = handle.firstExecutionRunId;
      let runs = 0;
      while (runId) {
        const history = await env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
        runs++;
        for (const event of history.events ?? []) sizes.push(...payloadsOf(event));
        runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      }
      expect(runs).toBeGreaterThan(1);
      const largest = [...sizes].sort((a, b) => b.bytes - a.bytes).slice(0, 3);
      console.log(`largest payloads: ${largest.map((p) => `${p.where} ${p.bytes} B`).join('; ')}`);
      expect(sizes.filter((p) => p.bytes >= LIMIT)).toEqual([]);
    } finally {
      worker.shutdown();
      await done;
      await server.close();
    }
  });

  test('a reference the model writes itself is not resolved: no reading other content from the store', async () => {
    const storeDir = tempDir('store');
    // Content of another job in the shared store, whose address the model somehow learned.
    const secret = await new FileContentStore(storeDir).put("the other job's private tool output");
    const session: ScriptedSession = {
      name: 'forged-ref',
      replies: [
        { content: [toolUse('f1', 'Write', { file_path: 'leak.txt', content: { $contentRef: secret, chars: 10 } })] },
        textReply('Tried.'),
      ],
    };
    const server = await ScriptedModelServer.start(session);
    const taskQueue = uniqueTaskQueue('forged');
    const { worker, done } = await startWorker(env, server, { taskQueue, storeDir });
    const workspace = makeWorkspace({});
    try {
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `forged-${Date.now()}`,
        args: [sessionInput(workspace)],
      });
      expect(((await handle.result()) as Terminal).reason).toBe('completed');
      expect(fs.existsSync(path.join(workspace, 'leak.txt'))).toBe(false);
      const result = toolResultBlocks(messagesOf(server.requests.at(-1)).at(-1))[0];
      expect(result).toMatchObject({ tool_use_id: 'f1', is_error: true });
      expect(String(result?.content)).not.toContain('private tool output');
    } finally {
      worker.shutdown();
      await done;
      await server.close();
    }
  });
});
