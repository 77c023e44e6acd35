import {
  clearOldToolResults,
  fitForSummary,
  keptTailStart,
  microcompactBoundary,
} from '../../src/activities/context-window';
import { CLEARED_TOOL_RESULT, OMITTED_FOR_FIT } from '../../src/shared/compact-prompt';
import type { Message } from '../../src/shared/messages';

const big = (n: number) => 'x'.repeat(n);

/** A conversation: the task, then `turns` exchanges of one Read and its (large) result. */
function conversation(turns: number, resultChars = 1_000): Message[] {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Fix the login module' }] }];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'Read', input: { i } }] });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: big(resultChars) }],
    });
  }
  return messages;
}

const resultText = (message: Message | undefined) =>
  Array.isArray(message?.content) && message.content[0]?.type === 'tool_result' ? message.content[0].content : '';

describe('microcompact', () => {
  test('an image result counts by its estimate, so an old one is cleared like a large text', () => {
    const messages = conversation(1);
    messages[2] = {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 't0',
          content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }],
        },
      ],
    };
    expect(microcompactBoundary(messages, 1, 0)).toBe(2);
    expect(resultText(clearOldToolResults(messages, 3)[2])).toBe(CLEARED_TOOL_RESULT);
  });

  test('clears results before the boundary, keeps pairs and everything after it', () => {
    const messages = conversation(8);
    const boundary = microcompactBoundary(messages, 5, 0);
    // Results sit at 2, 4, ..., 16: the 5th most recent is at index 8.
    expect(boundary).toBe(8);
    const cleared = clearOldToolResults(messages, boundary);
    expect(cleared).toHaveLength(messages.length);
    expect([2, 4, 6].map((i) => resultText(cleared[i]))).toEqual(Array(3).fill(CLEARED_TOOL_RESULT));
    expect([8, 10, 12, 14, 16].map((i) => resultText(cleared[i]).length)).toEqual(Array(5).fill(1_000));
    // Every tool_use keeps its tool_result, ids untouched.
    expect(cleared.map((m) => m.role)).toEqual(messages.map((m) => m.role));
    expect(JSON.stringify(cleared)).toContain('"tool_use_id":"t0"');
    // The input is not changed.
    expect(resultText(messages[2]).length).toBe(1_000);
  });

  test('short results are left alone (the marker would cost more); the boundary never moves back', () => {
    const messages = conversation(8, 100);
    expect(microcompactBoundary(messages, 5, 0)).toBe(0);
    expect(clearOldToolResults(messages, 10)).toEqual(messages);
    expect(microcompactBoundary(conversation(8), 5, 12)).toBe(12);
  });
});

describe('what a compaction keeps', () => {
  test('the tail starts at an assistant message and fits the budget', () => {
    const messages = conversation(10);
    const start = keptTailStart(messages, 5_500);
    expect(messages[start]?.role).toBe('assistant');
    expect(JSON.stringify(messages.slice(start).map((m) => m.content)).length).toBeLessThanOrEqual(5_500 + 20);
    expect(messages.length - start).toBeGreaterThanOrEqual(2);
  });

  test('nothing is kept when even the last exchange is over the budget', () => {
    const messages = conversation(3, 50_000);
    expect(keptTailStart(messages, 10_000)).toBe(messages.length);
  });

  test('a summary request that does not fit loses its oldest messages but keeps the task', () => {
    const messages = conversation(20, 5_000);
    const fitted = fitForSummary(messages, 30_000);
    expect(fitted.omitted).toBeGreaterThan(0);
    const first = fitted.messages[0];
    expect(JSON.stringify(first)).toContain('Fix the login module');
    expect(JSON.stringify(first)).toContain(OMITTED_FOR_FIT.slice(0, 40));
    expect(fitted.messages[1]?.role).toBe('assistant');
    expect(JSON.stringify(fitted.messages).length).toBeLessThan(32_000);
    expect(fitForSummary(conversation(2), 1_000_000)).toEqual({ messages: conversation(2), omitted: 0 });
  });
});
