/**
 * A tool loop with thinking on, against the model server's signed thinking: every block goes back
 * exactly as it came, across turns, an autocompaction, and a worker SIGKILLed mid-thought; the
 * server refuses any block sent back changed, so a job that completes with no refused request
 * kept them all.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScriptedReply, ScriptedSession } from '../src/model-server';
import { DEFAULT_SESSION_TIMEOUTS } from '../src/shared/session';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';
import { messagesOf, scriptedJobSuite, terminalOf, textReply, toolUse } from './support/jobs';

const MODEL = 'claude-sonnet-5-5';
const WINDOW = 40_000;

/** 8 KB files: about 2,000 tokens a read, so a 40k window fills in about fifteen turns. */
const files: Record<string, string> = {};
for (let i = 0; i < 4; i++) files[`f${i}.txt`] = `${String(i).repeat(79)}\n`.repeat(100);

function thinkingReading(turns: number): ScriptedSession {
  return {
    contextWindow: WINDOW,
    replies: [
      ...Array.from({ length: turns }, (_, i): ScriptedReply => ({
        content: [
          { type: 'thinking', thinking: `Part ${i} is next; f${i % 4}.txt holds it.` },
          { type: 'text', text: `Reading part ${i}.` },
          toolUse(`r${i}`, 'Read', { file_path: `f${i % 4}.txt` }),
        ],
      })),
      {
        content: [
          { type: 'thinking', thinking: 'All parts read.' },
          { type: 'text', text: 'Read everything.' },
        ],
      },
    ],
  };
}

describe('thinking in the loop', () => {
  const { withJob } = scriptedJobSuite({ files });

  test('every call asks for adaptive thinking, and the signed blocks go back unchanged across an autocompaction', async () => {
    const limits = [{ prefix: MODEL, contextWindow: WINDOW, maxOutputTokens: 8_000 }];
    const input = { modelLimits: limits, maxTokens: 8_000, thinking: { mode: 'adaptive' as const } };
    await withJob('thinking-compaction', { session: thinkingReading(24), input }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(server.rejected).toEqual([]);
      expect(terminal).toMatchObject({ reason: 'completed', finalText: 'Read everything.' });
      expect(terminal.transitions?.autocompact).toBeGreaterThanOrEqual(1);
      const turns = server.requests.filter((r) => r.kind === 'turn');
      for (const request of turns) {
        expect(request.body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } });
      }
      // The tool loop's assistant turns start with their thinking, as received, in every request:
      // before and after each autocompaction (a compaction may keep no turn at all, when it falls
      // on the last one, so the check is not on the last request alone).
      const firstCompaction = server.requests.findIndex((r) => r.kind === 'compaction');
      const resent = server.requests
        .slice(firstCompaction + 1)
        .filter((r) => r.kind === 'turn' && messagesOf(r).some((m) => m.role === 'assistant'));
      expect(firstCompaction).toBeGreaterThanOrEqual(0);
      expect(resent.length).toBeGreaterThan(0);
      for (const request of turns) {
        for (const message of messagesOf(request).filter((m) => m.role === 'assistant')) {
          const first = (message.content as { type: string; signature?: string }[])[0];
          expect(first).toMatchObject({ type: 'thinking', signature: expect.any(String) });
        }
      }
      // Thinking stays out of the workflow's history: the reply the workflow saw holds no thinking.
      const history = JSON.stringify((await handle.fetchHistory()).events);
      expect(history).not.toContain('Part 3 is next');
    });
  }, 180_000);
});

describe('thinking and a worker SIGKILLed mid-thought (production timeouts)', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  test('the retry streams the whole reply again; nothing half-thought is sent back', async () => {
    // Turn 1 thinks at length and slowly (about 8 s): the worker dies in the middle of it.
    const longThought = 'Weighing where the login check lives before reading any further. '.repeat(30);
    const server = await ScriptedModelServer.start({
      slowTurns: { 1: 250 },
      replies: [
        {
          content: [
            { type: 'thinking', thinking: 'Start by listing the workspace.' },
            toolUse('t0', 'Bash', { command: 'ls' }),
          ],
        },
        {
          content: [{ type: 'thinking', thinking: longThought }, toolUse('t1', 'Read', { file_path: 'login.ts' })],
        },
        textReply('The login check is in login.ts.'),
      ],
    });
    const home = tempDir('home');
    const taskQueue = uniqueTaskQueue('thinking-kill');
    const worker = () => spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home });
    const first = await worker();
    let second: Awaited<ReturnType<typeof worker>> | undefined;
    try {
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `thinking-kill-${Date.now()}`,
        args: [
          sessionInput(makeWorkspace({ 'login.ts': 'export const check = () => true;\n' }), {
            timeouts: DEFAULT_SESSION_TIMEOUTS,
            thinking: { mode: 'adaptive' },
          }),
        ],
      });
      await server.waitForRequest(1, 1, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await first.kill('SIGKILL');
      second = await worker();
      await server.waitForRequest(1, 2, 90_000);
      const terminal = await terminalOf(handle);
      expect(server.rejected).toEqual([]);
      expect(terminal).toMatchObject({ reason: 'completed', finalText: 'The login check is in login.ts.' });
      // The last request carries turn 1's thinking whole, signed, ahead of its tool call.
      const turn1 = messagesOf(server.requests.at(-1)).filter((m) => m.role === 'assistant')[1];
      expect(turn1?.content).toEqual([
        { type: 'thinking', thinking: longThought, signature: expect.any(String) },
        expect.objectContaining({ type: 'tool_use', id: 't1' }),
      ]);
    } finally {
      await first.kill('SIGKILL');
      await second?.kill('SIGTERM');
      await server.close();
    }
  }, 240_000);
});
