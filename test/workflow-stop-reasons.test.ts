/**
 * Nothing cut off is executed or sent, and every stop reason the API returns has its own path:
 * a tool call cut by max_tokens never runs (escalate first, then run the complete calls and tell
 * the model), an empty reply is never written back, `refusal` ends the job with its own Terminal,
 * `pause_turn` resumes, `model_context_window_exceeded` ends as prompt_too_long.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedReply, ScriptedSession } from '../src/model-server';
import { DEFAULT_MAX_TOKENS, ESCALATED_MAX_TOKENS, MAX_OUTPUT_RECOVERY_PROMPT } from '../src/shared/recovery';
import { messagesOf, scriptedJobSuite, snapshot, textReply as text, toolUse, terminalOf } from './support/jobs';

/** A reply cut by max_tokens in the middle of its last tool call's input. */
function cutIn(before: ScriptedReply['content'], id: string, name: string, partialJson: string): ScriptedReply {
  return {
    content: [...before, { type: 'tool_use', id, name, input: {}, partial_json: partialJson }],
    stop_reason: 'max_tokens',
  };
}

const multiEditCut = cutIn(
  [{ type: 'text', text: 'Applying both edits.' }],
  'toolu_multi',
  'MultiEdit',
  ['{"file_path":"a.txt","edits":[{"old_string":"one","new_string":"ONE"},', '{"old_string":"tw'].join(''),
);

describe('workflow: stop reasons and cut replies', () => {
  const { withJob } = scriptedJobSuite();

  test('a MultiEdit cut after its first edit is not applied; the escalated retry applies both', async () => {
    const session: ScriptedSession = {
      replies: [
        { content: [toolUse('toolu_read', 'Read', { file_path: 'a.txt' })] },
        multiEditCut,
        text('Both edits applied.'),
      ],
      faults: [
        {
          turn: 1,
          attempt: 2,
          kind: 'reply',
          reply: {
            content: [
              toolUse('toolu_multi2', 'MultiEdit', {
                file_path: 'a.txt',
                edits: [
                  { old_string: 'one', new_string: 'ONE' },
                  { old_string: 'two', new_string: 'TWO' },
                ],
              }),
            ],
          },
        },
      ],
    };
    await withJob(
      'cut-multiedit',
      { session, files: { 'a.txt': 'one\ntwo\n' } },
      async ({ server, handle, workspace }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(fs.readFileSync(path.join(workspace, 'a.txt'), 'utf8')).toBe('ONE\nTWO\n');
        expect(server.requests.map((r) => [r.turn, r.attempt, r.body.max_tokens])).toEqual([
          [0, 1, DEFAULT_MAX_TOKENS],
          [1, 1, DEFAULT_MAX_TOKENS],
          [1, 2, ESCALATED_MAX_TOKENS],
          // A new turn starts again from the configured limit.
          [2, 1, DEFAULT_MAX_TOKENS],
        ]);
        // The cut call is in no request: not as a tool_use, not with a result.
        for (const request of server.requests) expect(JSON.stringify(request.body)).not.toContain('toolu_multi"');
        const events = (await snapshot(handle)).events;
        expect(events.filter((e) => e.kind === 'tool_call').map((e) => (e as { toolUseId: string }).toolUseId)).toEqual(
          ['toolu_read', 'toolu_multi2'],
        );
      },
    );
  });

  test('cut again after escalating: the complete calls run, the cut one does not, and the model is told', async () => {
    const cut = cutIn(
      [toolUse('toolu_log', 'Bash', { command: 'echo ran >> log.txt' })],
      'toolu_cut',
      'Bash',
      '{"command":"echo never >> log.txt", "timeo',
    );
    const session: ScriptedSession = { replies: [cut, text('I will split it up.')] };
    await withJob('cut-bash', { session }, async ({ server, handle, workspace }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(fs.readFileSync(path.join(workspace, 'log.txt'), 'utf8')).toBe('ran\n');
      expect(server.requests.map((r) => [r.turn, r.attempt, r.body.max_tokens])).toEqual([
        [0, 1, DEFAULT_MAX_TOKENS],
        [0, 2, ESCALATED_MAX_TOKENS],
        [1, 1, ESCALATED_MAX_TOKENS],
      ]);
      const messages = messagesOf(server.requests[2]);
      const reply = messages.at(-2)!;
      expect(reply.role).toBe('assistant');
      expect(JSON.stringify(reply.content)).toContain('toolu_log');
      expect(JSON.stringify(reply.content)).not.toContain('toolu_cut');
      const results = messages.at(-1)!;
      expect(results.role).toBe('user');
      const blocks = results.content as Array<Record<string, unknown>>;
      expect(blocks[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_log' });
      expect(String(blocks.at(-1)?.text)).toMatch(/in the middle of the Bash call toolu_cut, so that call was not run/);
    });
  });

  test('an empty reply cut by max_tokens is never sent back as an empty assistant message', async () => {
    const empty: ScriptedReply = { content: [], stop_reason: 'max_tokens' };
    const session: ScriptedSession = {
      replies: [empty],
      // The empty reply is not written, so the next requests are still turn 0 to the server.
      faults: [{ turn: 0, attempt: 3, kind: 'reply', reply: text('Here is the answer.') }],
    };
    await withJob('empty-reply', { session }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.finalText).toBe('Here is the answer.');
      expect(server.requests).toHaveLength(3);
      for (const request of server.requests) {
        expect(messagesOf(request).filter((m) => m.role === 'assistant')).toEqual([]);
      }
      expect(JSON.stringify(messagesOf(server.requests[2]).at(-1)?.content)).toContain(MAX_OUTPUT_RECOVERY_PROMPT);
    });
  });

  test('refusal ends the job with its own Terminal and runs nothing from that reply', async () => {
    const session: ScriptedSession = {
      replies: [
        {
          content: [
            { type: 'text', text: 'I started, but' },
            toolUse('toolu_refused', 'Bash', { command: 'touch refused.txt' }),
          ],
          stop_reason: 'refusal',
          stop_details: { type: 'refusal', category: 'cyber', explanation: 'Declined this request.' },
        },
      ],
    };
    await withJob('refusal', { session }, async ({ server, handle, workspace }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('refusal');
      expect(terminal.detail).toMatch(/declined to continue \(cyber: Declined this request\.\)/);
      expect(fs.existsSync(path.join(workspace, 'refused.txt'))).toBe(false);
      expect(server.requests).toHaveLength(1);
    });
  });

  test('pause_turn: the paused reply goes back as it is and the model resumes', async () => {
    const session: ScriptedSession = {
      replies: [{ content: [{ type: 'text', text: 'Working on it.' }], stop_reason: 'pause_turn' }, text('Done.')],
    };
    await withJob('pause-turn', { session }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.turnCount).toBe(2);
      expect(terminal.finalText).toBe('Done.');
      const second = messagesOf(server.requests[1]);
      expect(second.map((m) => m.role)).toEqual(['user', 'assistant']);
    });
  });

  test('pause_turn over and over ends the job instead of paying for calls forever', async () => {
    const paused: ScriptedReply = { content: [{ type: 'text', text: 'Still working.' }], stop_reason: 'pause_turn' };
    const session: ScriptedSession = { replies: Array.from({ length: 12 }, () => paused) };
    await withJob('pause-loop', { session }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('model_error');
      expect(terminal.detail).toMatch(/paused its turn 10 times in a row/);
      expect(server.requests).toHaveLength(10);
    });
  });

  test('model_context_window_exceeded ends as prompt_too_long with what to change', async () => {
    const session: ScriptedSession = {
      replies: [{ content: [{ type: 'text', text: 'The files are' }], stop_reason: 'model_context_window_exceeded' }],
    };
    await withJob('context-window', { session }, async ({ handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('prompt_too_long');
      expect(terminal.detail).toMatch(/context window/);
    });
  });
});
