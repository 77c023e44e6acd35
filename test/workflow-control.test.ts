/**
 * Everything that reaches a running job from outside: the `abort`, `setMaxTurns` and `userMessage`
 * signals, Temporal cancellation, the `snapshot` query, and the `maxTurns` limit. Real Temporal dev
 * server, in-process worker, the real Anthropic SDK against the scripted model server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FileContentStore } from '../src/activities/store/content-store';
import { TranscriptStore } from '../src/activities/store/transcript-store';
import type { ScriptedSession } from '../src/model-server';
import type { Message } from '../src/shared/messages';
import type { Terminal } from '../src/shared/terminal';
import { abortSignal, setMaxTurnsSignal, userMessageSignal } from '../src/workflows/definitions';
import { waitFor } from './support/harness';
import {
  isAlive,
  requestMessages,
  scriptedJobSuite,
  snapshot,
  textReply as text,
  toolUse,
  waitForSnapshot,
  terminalOf,
} from './support/jobs';

// ---------------------------------------------------------------------------------------------
// Helpers used only here (the shared ones are in support/jobs.ts)

/** The host pid of the live `sleep <duration>` process, if there is one. */
async function sleepProcess(duration: string): Promise<number | undefined> {
  for (const entry of await fs.promises.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await fs.promises.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline === `sleep\0${duration}\0` && isAlive(Number(entry))) return Number(entry);
  }
  return undefined;
}

async function loadTranscript(storeDir: string, terminal: Terminal): Promise<Message[]> {
  const transcripts = new TranscriptStore(new FileContentStore(storeDir));
  return transcripts.load({ head: terminal.transcriptHead, messageCount: terminal.messageCount });
}

// ---------------------------------------------------------------------------------------------

describe('workflow: signals, query and limits', () => {
  const { withJob } = scriptedJobSuite();

  describe('abort', () => {
    test('abort while the model call hangs ends the job promptly with aborted_streaming', async () => {
      const session: ScriptedSession = {
        replies: [text('never sent')],
        faults: [{ turn: 0, attempt: 1, kind: 'hang' }],
      };
      // A heartbeat timeout longer than the test, so only the abort can end the hung call.
      const input = { timeouts: { modelHeartbeatMs: 60_000, modelRetryInitialMs: 100, toolHeartbeatMs: 3_000 } };
      await withJob('abort-streaming', { session, input }, async ({ server, handle, storeDir }) => {
        await server.waitForRequest(0, 1, 30_000);
        const before = await snapshot(handle);
        expect(before.phase).toBe('calling_model');

        const started = Date.now();
        await handle.signal(abortSignal, 'user pressed stop');
        const terminal = await terminalOf(handle);
        const elapsed = Date.now() - started;

        expect(terminal.reason).toBe('aborted_streaming');
        expect(terminal.detail).toBe('user pressed stop');
        expect(terminal.turnCount).toBe(1);
        expect(elapsed).toBeLessThan(10_000);
        expect(server.requests).toHaveLength(1);
        // The prompt is kept: the transcript holds the user's message and nothing from the model.
        const transcript = await loadTranscript(storeDir, terminal);
        expect(transcript.map((m) => m.role)).toEqual(['user']);
        const after = await snapshot(handle);
        expect(after.phase).toBe('finished');
        expect(after.abortRequested).toBe(true);
        expect(after.terminal?.reason).toBe('aborted_streaming');
      });
    });

    test('abort while Bash sleeps ends with aborted_tools, a synthetic error result, and no process left', async () => {
      const session: ScriptedSession = {
        replies: [
          {
            content: [
              { type: 'text', text: 'Running the long command.' },
              // A unique duration names the process: inside the sandbox's PID namespace $$ is not a host pid.
              toolUse('toolu_sleep', 'Bash', { command: 'exec sleep 30.0417' }),
              // Queued behind the Bash call (neither is concurrency-safe): it must never start.
              toolUse('toolu_write', 'Write', { file_path: 'after-abort.txt', content: 'should not exist' }),
            ],
          },
          text('never reached'),
        ],
      };
      await withJob('abort-tools', { session }, async ({ server, handle, workspace, storeDir }) => {
        await waitForSnapshot(
          handle,
          (s) => s.runningTools.some((t) => t.toolUseId === 'toolu_sleep'),
          'the Bash call to start',
        );
        const pid = await waitFor(async () => sleepProcess('30.0417'), 10_000, 'the sleep process');

        const started = Date.now();
        await handle.signal(abortSignal);
        const terminal = await terminalOf(handle);
        expect(Date.now() - started).toBeLessThan(10_000);

        expect(terminal.reason).toBe('aborted_tools');
        expect(terminal.detail).toBe('aborted by request');
        expect(terminal.turnCount).toBe(1);
        expect(terminal.finalText).toBe('Running the long command.');
        expect(server.requests).toHaveLength(1);

        // The transcript ends with the tool_use answered by a synthetic error, so it can be resumed.
        const transcript = await loadTranscript(storeDir, terminal);
        expect(transcript).toHaveLength(terminal.messageCount);
        expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
        const last = transcript.at(-1);
        expect(Array.isArray(last?.content)).toBe(true);
        const blocks = last!.content as Array<{
          type: string;
          tool_use_id?: string;
          is_error?: boolean;
          content?: string;
        }>;
        expect(blocks).toHaveLength(2);
        expect(blocks[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_sleep', is_error: true });
        expect(blocks[0]?.content).toMatch(/Interrupted by user.*cancelled before it finished/);
        expect(blocks[1]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_write', is_error: true });
        expect(blocks[1]?.content).toMatch(/Interrupted by user.*never started/);
        expect(fs.existsSync(path.join(workspace, 'after-abort.txt'))).toBe(false);

        // The sleep itself was killed, not left running behind the finished job.
        await waitFor(async () => (isAlive(pid) ? undefined : true), 15_000, `sleep process ${pid} to die`);
      });
    });

    test('Temporal cancellation during a model call returns an aborted Terminal', async () => {
      const session: ScriptedSession = {
        replies: [text('never sent')],
        faults: [{ turn: 0, attempt: 1, kind: 'hang' }],
      };
      const input = { timeouts: { modelHeartbeatMs: 60_000, modelRetryInitialMs: 100, toolHeartbeatMs: 3_000 } };
      await withJob('temporal-cancel', { session, input }, async ({ server, handle }) => {
        await server.waitForRequest(0, 1, 30_000);
        const started = Date.now();
        await handle.cancel();
        // The workflow catches the cancellation and still ends with its Terminal (invariant 5),
        // so the execution fails with it, as every ending but completed does, rather than
        // ending as "cancelled" with none.
        const terminal = await terminalOf(handle);
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(terminal.reason).toBe('aborted_streaming');
        expect(terminal.detail).toBe('workflow cancelled');
        expect(terminal.turnCount).toBe(1);
        expect(server.requests).toHaveLength(1);
        const description = await handle.describe();
        expect(description.status.name).toBe('FAILED');
      });
    });

    test('Temporal cancellation while a tool runs returns aborted_tools', async () => {
      const session: ScriptedSession = {
        replies: [{ content: [toolUse('toolu_gate', 'Bash', { command: 'cat gate.fifo' })] }, text('never reached')],
      };
      await withJob(
        'temporal-cancel-tools',
        { session, fifos: ['gate.fifo'] },
        async ({ server, handle, storeDir }) => {
          await waitForSnapshot(handle, (s) => s.runningTools.length === 1, 'the tool to start');
          await handle.cancel();
          const terminal = await terminalOf(handle);
          expect(terminal.reason).toBe('aborted_tools');
          expect(terminal.detail).toBe('workflow cancelled');
          expect(server.requests).toHaveLength(1);
          const transcript = await loadTranscript(storeDir, terminal);
          expect(JSON.stringify(transcript.at(-1))).toContain('toolu_gate');
          expect(JSON.stringify(transcript.at(-1))).toContain('"is_error":true');
        },
      );
    });
  });

  describe('maxTurns', () => {
    const alwaysTool = (turns: number): ScriptedSession => ({
      replies: Array.from({ length: turns }, (_, i) => ({
        content: [toolUse(`toolu_turn_${i}`, 'Read', { file_path: 'a.txt' })],
      })),
    });

    test('maxTurns 2 with a model that always asks for a tool: max_turns after exactly 2 requests', async () => {
      await withJob(
        'max-turns',
        { session: alwaysTool(6), files: { 'a.txt': 'a\n' }, input: { maxTurns: 2 } },
        async ({ server, handle, storeDir }) => {
          const terminal = await terminalOf(handle);
          expect(terminal.reason).toBe('max_turns');
          expect(terminal.turnCount).toBe(2);
          expect(server.requests).toHaveLength(2);
          // The second turn's tool result is kept in the transcript: nothing is left unanswered.
          const transcript = await loadTranscript(storeDir, terminal);
          expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
          expect(JSON.stringify(transcript.at(-1))).toContain('toolu_turn_1');
        },
      );
    });

    test('setMaxTurns raising the limit on a running job lets it continue', async () => {
      const session: ScriptedSession = {
        ...alwaysTool(2),
        replies: [...alwaysTool(2).replies, text('Finished after three turns.')],
        slowTurns: { 0: 300 },
      };
      await withJob(
        'raise-max-turns',
        { session, files: { 'a.txt': 'a\n' }, input: { maxTurns: 1 } },
        async ({ server, handle }) => {
          await server.waitForStreamStarted(0, 30_000);
          await handle.signal(setMaxTurnsSignal, 3);
          const terminal = await terminalOf(handle);
          expect(terminal.reason).toBe('completed');
          expect(terminal.turnCount).toBe(3);
          expect(terminal.finalText).toBe('Finished after three turns.');
          expect(server.requests).toHaveLength(3);
          const s = await snapshot(handle);
          expect(s.maxTurns).toBe(3);
          expect(s.events.some((e) => e.kind === 'notice' && e.text === 'maxTurns set to 3')).toBe(true);
        },
      );
    });

    test('setMaxTurns lowering the limit stops a job that had none', async () => {
      const session: ScriptedSession = { ...alwaysTool(6), slowTurns: { 0: 300 } };
      await withJob('lower-max-turns', { session, files: { 'a.txt': 'a\n' } }, async ({ server, handle }) => {
        await server.waitForStreamStarted(0, 30_000);
        await handle.signal(setMaxTurnsSignal, 1);
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('max_turns');
        expect(terminal.turnCount).toBe(1);
        expect(server.requests).toHaveLength(1);
      });
    });

    test('a malformed setMaxTurns value is ignored', async () => {
      const session: ScriptedSession = {
        ...alwaysTool(2),
        replies: [...alwaysTool(2).replies, text('ok')],
        slowTurns: { 0: 300 },
      };
      await withJob('bad-max-turns', { session, files: { 'a.txt': 'a\n' } }, async ({ handle, server }) => {
        await server.waitForStreamStarted(0, 30_000);
        await handle.signal(setMaxTurnsSignal, 0);
        await handle.signal(setMaxTurnsSignal, 1.5);
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.turnCount).toBe(3);
        expect((await snapshot(handle)).maxTurns).toBeUndefined();
      });
    });
  });

  describe('userMessage', () => {
    test('a message sent while a tool runs joins the next request after the tool_result blocks', async () => {
      const session: ScriptedSession = {
        replies: [
          {
            content: [
              toolUse('toolu_gate', 'Bash', { command: 'cat gate.fifo' }),
              toolUse('toolu_read', 'Read', { file_path: 'a.txt' }),
            ],
          },
          text('Done, and I saw your note.'),
        ],
      };
      await withJob(
        'user-msg-tool',
        { session, files: { 'a.txt': 'a\n' }, fifos: ['gate.fifo'] },
        async ({ server, handle, workspace }) => {
          await waitForSnapshot(
            handle,
            (s) => s.runningTools.some((t) => t.toolUseId === 'toolu_gate'),
            'the Bash call to start',
          );
          await handle.signal(userMessageSignal, 'Please also check the README.');
          await waitForSnapshot(handle, (s) => s.queuedUserMessages === 1, 'the message to be queued');
          await fs.promises.writeFile(path.join(workspace, 'gate.fifo'), 'gate output\n');

          const terminal = await terminalOf(handle);
          expect(terminal.reason).toBe('completed');
          expect(terminal.turnCount).toBe(2);
          expect(server.requests).toHaveLength(2);
          const messages = requestMessages(server, 1);
          expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
          const last = messages[2]!.content as Array<Record<string, unknown>>;
          expect(last.map((b) => b.type)).toEqual(['tool_result', 'tool_result', 'text']);
          expect(last.map((b) => b.tool_use_id)).toEqual(['toolu_gate', 'toolu_read', undefined]);
          expect(last[2]?.text).toBe('Please also check the README.');
          const s = await snapshot(handle);
          expect(s.queuedUserMessages).toBe(0);
          expect(s.events.some((e) => e.kind === 'notice' && e.text === 'user: Please also check the README.')).toBe(
            true,
          );
        },
      );
    });

    test('a message sent while the final answer streams makes the loop take one more turn', async () => {
      const firstAnswer =
        'Here is a long first answer that streams slowly, chunk by chunk, so a message can arrive before it ends.';
      const session: ScriptedSession = {
        replies: [text(firstAnswer), text('Answering your follow-up too.')],
        slowTurns: { 0: 250 },
      };
      await withJob('user-msg-final', { session }, async ({ server, handle }) => {
        await server.waitForStreamStarted(0, 30_000);
        await handle.signal(userMessageSignal, 'One more thing: what about tests?');
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.turnCount).toBe(2);
        expect(terminal.finalText).toBe('Answering your follow-up too.');
        expect(server.requests).toHaveLength(2);
        const messages = requestMessages(server, 1);
        expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
        expect(JSON.stringify(messages[1])).toContain('long first answer');
        const last = messages[2]!.content as Array<Record<string, unknown>>;
        expect(last).toHaveLength(1);
        expect(last[0]).toMatchObject({ type: 'text', text: 'One more thing: what about tests?' });
      });
    });

    test('an empty userMessage is ignored', async () => {
      const session: ScriptedSession = { replies: [text('Only answer.')], slowTurns: { 0: 200 } };
      await withJob('user-msg-empty', { session }, async ({ server, handle }) => {
        await server.waitForStreamStarted(0, 30_000);
        await handle.signal(userMessageSignal, '   ');
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.turnCount).toBe(1);
        expect(server.requests).toHaveLength(1);
      });
    });
  });

  describe('snapshot query', () => {
    test('phase, turnCount, runningTools, usage sums and events filtered by sinceSeq', async () => {
      const session: ScriptedSession = {
        replies: [
          {
            content: [{ type: 'text', text: 'Checking.' }, toolUse('toolu_gate', 'Bash', { command: 'cat gate.fifo' })],
            usage: { input_tokens: 100, output_tokens: 10, cache_creation_input_tokens: 7, cache_read_input_tokens: 0 },
          },
          {
            content: [{ type: 'text', text: 'The gate said hello.' }],
            usage: {
              input_tokens: 200,
              output_tokens: 20,
              cache_creation_input_tokens: 0,
              cache_read_input_tokens: 50,
            },
          },
        ],
        slowTurns: { 1: 300 },
      };
      await withJob(
        'snapshot',
        { session, fifos: ['gate.fifo'], input: { maxTurns: 5 } },
        async ({ server, handle, workspace }) => {
          const running = await waitForSnapshot(handle, (s) => s.runningTools.length === 1, 'the tool to run');
          expect(running.phase).toBe('running_tools');
          expect(running.turnCount).toBe(1);
          expect(running.maxTurns).toBe(5);
          expect(running.model).toBe('claude-sonnet-5-5');
          expect(running.runningTools).toEqual([{ toolUseId: 'toolu_gate', name: 'Bash' }]);
          expect(running.lastAssistantText).toBe('Checking.');
          expect(running.usage).toEqual({
            input_tokens: 100,
            output_tokens: 10,
            cache_creation_input_tokens: 7,
            cache_read_input_tokens: 0,
          });
          expect(running.terminal).toBeUndefined();
          expect(running.abortRequested).toBe(false);
          expect(running.events.map((e) => e.kind)).toEqual(['assistant_text', 'tool_call']);
          const seqs = running.events.map((e) => e.seq);
          expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
          const mark = Math.max(...seqs);
          expect(running.events[1]).toMatchObject({
            kind: 'tool_call',
            toolUseId: 'toolu_gate',
            name: 'Bash',
            turn: 1,
          });
          expect(JSON.parse((running.events[1] as { input: string }).input)).toEqual({ command: 'cat gate.fifo' });

          await fs.promises.writeFile(path.join(workspace, 'gate.fifo'), 'hello\n');
          await server.waitForStreamStarted(1, 30_000);
          const calling = await snapshot(handle);
          expect(calling.phase).toBe('calling_model');
          expect(calling.turnCount).toBe(2);
          expect(calling.runningTools).toEqual([]);

          const terminal = await terminalOf(handle);
          expect(terminal.reason).toBe('completed');
          const total = {
            input_tokens: 300,
            output_tokens: 30,
            cache_creation_input_tokens: 7,
            cache_read_input_tokens: 50,
          };
          expect(terminal.usage).toEqual(total);

          const finished = await snapshot(handle);
          expect(finished.phase).toBe('finished');
          expect(finished.turnCount).toBe(2);
          expect(finished.usage).toEqual(total);
          expect(finished.terminal).toEqual(terminal);
          expect(finished.lastAssistantText).toBe('The gate said hello.');

          // sinceSeq returns exactly the events after the mark, and nothing before it.
          const later = await snapshot(handle, mark);
          expect(later.events.length).toBeGreaterThan(0);
          expect(later.events.every((e) => e.seq > mark)).toBe(true);
          expect(later.events).toEqual(finished.events.filter((e) => e.seq > mark));
          expect(later.events.map((e) => e.kind)).toEqual(['tool_result', 'assistant_text', 'notice']);
          expect(later.events[0]).toMatchObject({ toolUseId: 'toolu_gate', isError: false, preview: 'hello' });
          expect(later.events[2]).toMatchObject({ kind: 'notice', text: 'terminal: completed' });
          const lastSeq = Math.max(...finished.events.map((e) => e.seq));
          expect((await snapshot(handle, lastSeq)).events).toEqual([]);
        },
      );
    });
  });
});
