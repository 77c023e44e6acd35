import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScriptedSession } from '../src/model-server';
import type { Terminal } from '../src/shared/terminal';
import { historyBytes } from './support/history';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';
import { terminalOf } from './support/jobs';

/** A job of `turns` turns; every turn but the last reads a 20 KB file. */
function readingSession(turns: number): ScriptedSession {
  const replies: ScriptedSession['replies'] = [];
  for (let i = 0; i < turns - 1; i++) {
    replies.push({
      content: [
        { type: 'text', text: `Reading chunk ${i}.` },
        { type: 'tool_use', id: `toolu_read_${i}`, name: 'Read', input: { file_path: `data/file-${i % 5}.txt` } },
      ],
    });
  }
  replies.push({ content: [{ type: 'text', text: 'All chunks read.' }] });
  return { name: `reading-${turns}`, replies };
}

const WINDOW_200K = [{ prefix: 'claude-sonnet-5-5', contextWindow: 200_000, maxOutputTokens: 64_000 }];

const files: Record<string, string> = {};
for (let i = 0; i < 5; i++) files[`data/file-${i}.txt`] = `${'x'.repeat(99)}\n`.repeat(200);

describe('history size (DESIGN.md invariant 4)', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  async function run(turns: number): Promise<{ bytes: number; terminal: Terminal; requestBytes: number }> {
    const server = await ScriptedModelServer.start(readingSession(turns));
    const taskQueue = uniqueTaskQueue(`history-${turns}`);
    const { worker, done } = await startWorker(env, server, { taskQueue, storeDir: tempDir('store') });
    try {
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `history-${turns}-${Date.now()}`,
        // A 200k window, as most models had when this test was written: 1 MB of reads overflows it.
        args: [sessionInput(makeWorkspace(files), { modelLimits: WINDOW_200K })],
      });
      const terminal = await terminalOf(handle);
      const requestBytes = Buffer.byteLength(JSON.stringify(server.requests.at(-1)?.body));
      return { bytes: await historyBytes(handle), terminal, requestBytes };
    } finally {
      worker.shutdown();
      await done;
      await server.close();
    }
  }

  test('grows with each turn, not with the transcript', async () => {
    const short = await run(10);
    const long = await run(50);
    expect(short.terminal.turnCount).toBe(10);
    expect(long.terminal.turnCount).toBe(50);
    // The transcript holds about a megabyte of tool output by the last turn (it used to be sent
    // whole, 275k tokens, past any 200k window); microcompact sends old results as a marker.
    expect(long.requestBytes).toBeLessThan(300_000);
    expect(long.terminal.transitions?.microcompact).toBeGreaterThanOrEqual(1);
    expect(long.terminal.reason).toBe('completed');
    const perTurnShort = short.bytes / 10;
    const perTurnLong = (long.bytes - short.bytes) / 40;
    console.log(
      `history bytes: 10 turns ${short.bytes} (${Math.round(perTurnShort)}/turn), 50 turns ${long.bytes} ` +
        `(${Math.round(long.bytes / 50)}/turn; turns 11-50 add ${Math.round(perTurnLong)}/turn); ` +
        `last model request ${long.requestBytes} bytes`,
    );
    // Linear: later turns cost no more than early ones (quadratic growth would multiply this).
    expect(perTurnLong).toBeLessThan(perTurnShort * 1.5);
    // And small: a few KB per turn, though each turn's tool result alone is 20 KB.
    expect(long.bytes / 50).toBeLessThan(8_000);
  });
});
