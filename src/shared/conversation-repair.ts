import type {
  AssistantContentBlock,
  AssistantMessage,
  Message,
  ToolResultBlock,
  ToolUseBlock,
  UserContentBlock,
  UserMessage,
} from './messages';

/** What an unanswered tool_use of a resumed conversation is answered with. */
export const NOT_RUN_RESULT = 'not run: the session ended before its result';

/** Stands in for the first message of a conversation that starts with the assistant. */
export const EARLIER_CONVERSATION_MISSING = '[The earlier part of this conversation is not available.]';

/** A conversation the Messages API accepts, and what had to change to get it. */
export interface RepairedConversation {
  messages: Message[];
  /** One line per kind of change, with counts (empty when nothing changed). */
  notes: string[];
}

export interface RepairOptions {
  /**
   * Results found elsewhere in the source, by tool_use id (a session file may hold a parallel
   * call's result on another line than the one the chain passes through).
   */
  knownResults?: ReadonlyMap<string, ToolResultBlock>;
}

/**
 * Makes a conversation valid for the Messages API, as a resumed job must send it: blank text
 * and unsigned thinking dropped, consecutive same-role messages merged, every tool_use answered
 * at the start of the next user message (an unanswered one by an `is_error` result saying it
 * was not run), tool_results whose tool_use is not right before them dropped, a repeated
 * tool_use id dropped, and a user message first. Tool calls of tools the new job does not offer
 * stay: the API takes them in history as long as the request defines tools. A conversation
 * that is already valid comes back equal.
 */
export function repairConversation(input: readonly Message[], options: RepairOptions = {}): RepairedConversation {
  const counts = new Map<string, number>();
  const note = (what: string) => counts.set(what, (counts.get(what) ?? 0) + 1);
  const seenToolUses = new Set<string>();
  const out: Message[] = [];

  for (const message of input) {
    if (message.role === 'assistant') {
      const content = cleanAssistant(message.content, seenToolUses, note);
      if (content.length === 0) continue;
      const last = out.at(-1);
      if (last?.role === 'assistant') {
        last.content.push(...content);
        note('consecutive assistant messages merged');
      } else {
        if (out.length === 0) {
          out.push({ role: 'user', content: [{ type: 'text', text: EARLIER_CONVERSATION_MISSING }] });
          note('a first user message added (the conversation started with the assistant)');
        }
        out.push({ role: 'assistant', content });
      }
      continue;
    }
    const blocks = cleanUser(message.content, note);
    if (blocks.length === 0) continue;
    const last = out.at(-1);
    if (last?.role === 'user') {
      // The assistant before this one was dropped (or there was none): only its text carries on.
      const kept = blocks.filter((block) => block.type !== 'tool_result');
      if (kept.length < blocks.length) note('tool results without their tool_use dropped');
      if (kept.length > 0) {
        (last.content as UserContentBlock[]).push(...kept);
        note('consecutive user messages merged');
      }
      continue;
    }
    const uses = last ? toolUses(last) : [];
    const answered = answerFirst(uses, blocks, options, note);
    if (answered.length > 0) out.push({ role: 'user', content: answered });
  }

  const last = out.at(-1);
  if (last?.role === 'assistant') {
    const uses = toolUses(last);
    if (uses.length > 0) out.push({ role: 'user', content: answerFirst(uses, [], options, note) });
  }
  return { messages: out, notes: [...counts].map(([what, n]) => (n === 1 ? what : `${what} (${n})`)) };
}

function toolUses(message: Message): ToolUseBlock[] {
  return message.role === 'assistant'
    ? message.content.filter((block): block is ToolUseBlock => block.type === 'tool_use')
    : [];
}

function isBlank(text: unknown): boolean {
  return typeof text !== 'string' || text.trim() === '';
}

function cleanAssistant(
  content: AssistantMessage['content'],
  seenToolUses: Set<string>,
  note: (what: string) => void,
): AssistantContentBlock[] {
  const kept: AssistantContentBlock[] = [];
  for (const block of content) {
    if (block.type === 'text') {
      if (isBlank(block.text)) note('blank text dropped');
      else kept.push(block);
    } else if (block.type === 'thinking') {
      // The API refuses thinking it did not sign (a reply cut mid-thought, an edited file).
      if (isBlank(block.signature)) note('thinking without a signature dropped');
      else kept.push(block);
    } else if (block.type === 'tool_use') {
      if (seenToolUses.has(block.id)) {
        note('repeated tool_use dropped');
        continue;
      }
      seenToolUses.add(block.id);
      const input = typeof block.input === 'object' && block.input !== null && !Array.isArray(block.input);
      kept.push(input ? block : { ...block, input: {} });
    } else {
      kept.push(block);
    }
  }
  return kept;
}

function cleanUser(content: UserMessage['content'], note: (what: string) => void): UserContentBlock[] {
  const blocks: UserContentBlock[] = typeof content === 'string' ? [{ type: 'text', text: content }] : [...content];
  return blocks.filter((block) => {
    if (block.type !== 'text' || !isBlank(block.text)) return true;
    note('blank text dropped');
    return false;
  });
}

/**
 * The user message after an assistant turn: a result for each of its tool_uses first, in the
 * order they were asked for, then the rest; results that answer nothing there are dropped.
 */
function answerFirst(
  uses: ToolUseBlock[],
  blocks: UserContentBlock[],
  options: RepairOptions,
  note: (what: string) => void,
): UserContentBlock[] {
  const ids = new Set(uses.map((use) => use.id));
  const given = new Map<string, ToolResultBlock>();
  const others: UserContentBlock[] = [];
  for (const block of blocks) {
    if (block.type !== 'tool_result') others.push(block);
    else if (!ids.has(block.tool_use_id) || given.has(block.tool_use_id))
      note('tool results without their tool_use dropped');
    else given.set(block.tool_use_id, block);
  }
  const results = uses.map((use): ToolResultBlock => {
    const result = given.get(use.id);
    if (result) return result;
    const known = options.knownResults?.get(use.id);
    if (known) {
      note('tool results found off the chain');
      return known;
    }
    note('unanswered tool calls answered as not run');
    return { type: 'tool_result', tool_use_id: use.id, content: NOT_RUN_RESULT, is_error: true };
  });
  return [...results, ...others];
}
