/**
 * Phase 1 in the loop, against the scripted model server's real-API context window: autocompact
 * before the prompt overflows, the compaction request's shape, the transcript restarting at the
 * summary, model limits from settings, and the reactive path on `model_context_window_exceeded`.
 */
import { FileContentStore } from '../src/activities/store/content-store';
import { TranscriptStore } from '../src/activities/store/transcript-store';
import type { ScriptedSession } from '../src/model-server';
import { COMPACTION_PROMPT_MARKER } from '../src/shared/compact-prompt';
import type { SessionSnapshot } from '../src/shared/session';
import { snapshotQuery } from '../src/workflows/definitions';
import { messagesOf, scriptedJobSuite, textReply, toolUse, terminalOf } from './support/jobs';

const MODEL = 'claude-sonnet-5-5';
const WINDOW = 40_000;
const limits = [{ prefix: MODEL, contextWindow: WINDOW, maxOutputTokens: 8_000 }];

/** 8 KB files: about 2,000 tokens a read, so a 40k window fills in about fifteen turns. */
const files: Record<string, string> = {};
for (let i = 0; i < 4; i++) files[`f${i}.txt`] = `${String(i).repeat(79)}\n`.repeat(100);

function reading(turns: number): ScriptedSession {
  return {
    contextWindow: WINDOW,
    replies: [
      ...Array.from({ length: turns }, (_, i) => ({
        content: [
          { type: 'text' as const, text: `Reading part ${i}.` },
          toolUse(`r${i}`, 'Read', { file_path: `f${i % 4}.txt` }),
        ],
      })),
      textReply('Read everything.'),
    ],
  };
}

const notices = (snapshot: SessionSnapshot) =>
  snapshot.events.filter((e) => e.kind === 'notice').map((e) => (e as { text: string }).text);

describe('workflow: the context pipeline', () => {
  const { withJob } = scriptedJobSuite({ files });

  test('without compaction a 40-turn job overflows the window; with it, it completes and the transcript restarts', async () => {
    await withJob('autocompact', { session: reading(40), input: { modelLimits: limits } }, async (job) => {
      const { server, handle, storeDir } = job;
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.turnCount).toBe(41);
      expect(terminal.transitions?.autocompact).toBeGreaterThanOrEqual(1);
      expect(terminal.context).toMatchObject({ contextWindow: WINDOW, limitsSource: 'settings' });
      expect(terminal.context?.compactions).toBe(terminal.transitions?.autocompact);

      // No request was refused: every turn fit the window.
      const turns = server.requests.filter((r) => r.kind === 'turn');
      expect(turns).toHaveLength(41);
      const compactions = server.compactionRequests();
      expect(compactions.length).toBe(terminal.transitions?.autocompact);

      // The compaction request: the job's system prompt and tools (cache reuse), no tool may be called.
      const first = compactions[0]?.body;
      expect(first.tool_choice).toEqual({ type: 'none' });
      expect(first.tools.map((t: { name: string }) => t.name)).toEqual(
        turns[0]?.body.tools.map((t: { name: string }) => t.name),
      );
      expect(JSON.stringify(first.messages.at(-1))).toContain(COMPACTION_PROMPT_MARKER);

      // After it, the conversation starts with the summary and ends with the recent tail.
      const after = turns.find((r) => JSON.stringify(r.body.messages[0]).includes('compacted to save context'));
      expect(after).toBeDefined();
      expect(messagesOf(after).length).toBeLessThan(messagesOf(turns[turns.indexOf(after!) - 1]).length);

      // The stored transcript is bounded by the context, not by the job's age.
      const stored = await new TranscriptStore(new FileContentStore(storeDir)).load({
        head: terminal.transcriptHead,
        messageCount: terminal.messageCount,
      });
      expect(stored.length).toBe(terminal.messageCount);
      expect(stored.length).toBeLessThan(40);
      expect(JSON.stringify(stored.at(-1))).toContain('Read everything.');
      expect(notices(await handle.query(snapshotQuery)).some((n) => n.startsWith('context compacted (auto)'))).toBe(
        true,
      );
    });
  });

  test('model limits in the workspace settings set the window; status shows where it came from', async () => {
    const settings = JSON.stringify({ modelLimits: { [MODEL]: { contextWindow: 60_000, maxOutputTokens: 8_000 } } });
    const session: ScriptedSession = { replies: [textReply('Small job.')] };
    await withJob(
      'limits-settings',
      { session, files: { ...files, '.claude/settings.json': settings } },
      async ({ handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.context).toMatchObject({
          contextWindow: 60_000,
          limitsSource: 'settings',
          autocompactAt: 60_000 - 8_000 - 13_000,
        });
      },
    );
  });

  test('stop reason model_context_window_exceeded: compacted and asked again, the cut reply dropped', async () => {
    const session: ScriptedSession = {
      replies: [
        { content: [toolUse('r0', 'Read', { file_path: 'f0.txt' })] },
        textReply('Finished after the window filled.'),
      ],
      faults: [
        {
          turn: 1,
          attempt: 1,
          kind: 'reply',
          reply: {
            content: [{ type: 'text', text: 'A long answer that got cut' }],
            stop_reason: 'model_context_window_exceeded',
          },
        },
      ],
    };
    await withJob('window-exceeded', { session }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.finalText).toBe('Finished after the window filled.');
      expect(terminal.transitions).toMatchObject({ reactive_compact: 1, reactive_compact_retry: 1 });
      expect(server.compactionRequests()).toHaveLength(1);
      const retry = server.requests.filter((r) => r.kind === 'turn').at(-1);
      expect(JSON.stringify(retry?.body.messages)).not.toContain('got cut');
    });
  });
});
