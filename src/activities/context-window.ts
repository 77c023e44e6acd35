import { CLEARED_TOOL_RESULT, OMITTED_FOR_FIT } from '../shared/compact-prompt';
import { toolResultChars, type Message, type UserContentBlock } from '../shared/messages';

/**
 * Pure transformations of a conversation on its way to the model: microcompact's clearing of
 * old tool results, and the cuts a compaction makes. Every result keeps each tool_use and its
 * tool_result together, so the API accepts it.
 */

/** A result this short costs less than the marker that would replace it. */
const CLEARABLE_MIN_CHARS = 400;

/** Tool results in messages before `before` replaced by the cleared marker; everything else as is. */
export function clearOldToolResults(messages: Message[], before: number): Message[] {
  if (before <= 0) return messages;
  return messages.map((message, index) => {
    if (index >= before || message.role !== 'user' || typeof message.content === 'string') return message;
    let changed = false;
    const content = message.content.map((block): UserContentBlock => {
      if (block.type !== 'tool_result' || toolResultChars(block.content) < CLEARABLE_MIN_CHARS) return block;
      changed = true;
      return { ...block, content: CLEARED_TOOL_RESULT };
    });
    return changed ? { ...message, content } : message;
  });
}

/**
 * Where microcompact's clearing should end: the index of the message that holds the
 * `keepRecent`-th most recent clearable tool result, so that it and everything after stay. Never
 * moves back from `current` (what was cleared stays cleared, keeping the cached prefix stable).
 */
export function microcompactBoundary(messages: Message[], keepRecent: number, current: number): number {
  let seen = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as Message;
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    seen += message.content.filter(
      (block) => block.type === 'tool_result' && toolResultChars(block.content) >= CLEARABLE_MIN_CHARS,
    ).length;
    if (seen >= keepRecent) return Math.max(current, index);
  }
  return current;
}

/** What clearing the tool results in messages `from` to `to` (exclusive) would save, in characters. */
export function clearableChars(messages: Message[], from: number, to: number): number {
  let chars = 0;
  for (const message of messages.slice(Math.max(0, from), Math.max(0, to))) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_result' && toolResultChars(block.content) >= CLEARABLE_MIN_CHARS) {
        chars += toolResultChars(block.content) - CLEARED_TOOL_RESULT.length;
      }
    }
  }
  return chars;
}

/** Characters of a request as the model reads it (the same measure the token calibration uses). */
export function requestChars(system: unknown, messages: unknown, tools: unknown): number {
  return JSON.stringify([system, messages, tools]).length;
}

function messageChars(message: Message): number {
  return JSON.stringify(message.content).length;
}

/**
 * The start of the recent tail a compaction keeps: an assistant message (so the summary, a user
 * message, comes right before it and every tool_result keeps its tool_use), as far back as
 * `maxChars` allows. Returns `messages.length` (keep nothing) when even the last assistant message
 * and what follows it are over `maxChars`: the summary then covers them too.
 */
export function keptTailStart(messages: Message[], maxChars: number): number {
  let chars = 0;
  let start = messages.length;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as Message;
    chars += messageChars(message);
    if (chars > maxChars) break;
    if (message.role === 'assistant' && index > 0) start = index;
  }
  return start;
}

/**
 * The conversation cut to fit `maxChars` for a summary request: the oldest messages go, the first
 * user message (the task) stays, clipped, and a note says that something was left out.
 */
export function fitForSummary(messages: Message[], maxChars: number): { messages: Message[]; omitted: number } {
  const total = messages.reduce((sum, message) => sum + messageChars(message), 0);
  if (total <= maxChars || messages.length < 3) return { messages, omitted: 0 };
  const first = messages[0] as Message;
  const task = firstText(first).slice(0, 8_000);
  const head: Message = {
    role: 'user',
    content: [{ type: 'text', text: task ? `${task}\n\n${OMITTED_FOR_FIT}` : OMITTED_FOR_FIT }],
  };
  let chars = messageChars(head);
  let start = messages.length;
  for (let index = messages.length - 1; index > 0; index--) {
    const message = messages[index] as Message;
    chars += messageChars(message);
    if (chars > maxChars) break;
    if (message.role === 'assistant') start = index;
  }
  // Not even the last exchange fits: summarise what does, its tool results cleared.
  if (start >= messages.length) {
    const last = clearOldToolResults(messages, messages.length).slice(-2);
    const from = last[0]?.role === 'assistant' ? last : last.slice(1);
    return { messages: [head, ...from], omitted: messages.length - from.length };
  }
  return { messages: [head, ...messages.slice(start)], omitted: start };
}

function firstText(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .filter((block) => block.type === 'text')
    .map((block) => (block as { text: string }).text)
    .join('\n');
}
