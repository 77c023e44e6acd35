/**
 * The request checks the real Messages API enforces and that an agent loop can get wrong:
 * empty messages, empty or blank text, trailing whitespace at the end of a final assistant
 * message, tool_use ids (pattern, uniqueness), tool_use / tool_result pairing and placement,
 * `tool_choice` (and forced tool use with manual thinking), cache_control (shape, TTL order,
 * limit), extended thinking (validate-thinking.ts: its parameters and the blocks sent back), and
 * image and document blocks (`media.ts`).
 *
 * Messages follow the API's wording (as seen in its 400 responses) so a test failure reads like
 * the production failure it predicts. Each check returns the first problem found, or undefined.
 */

import { checkMediaBlocks } from './media';
import { checkTaggedUnion } from './tagged-union';
import type { ThinkingSeal } from './thinking-seal';
import {
  checkOutputConfig,
  checkThinkingBlocks,
  checkThinkingParam,
  checkThinkingToolLoop,
  thinkingType,
} from './validate-thinking';

type Json = Record<string, unknown>;

const MAX_CACHE_CONTROL_BLOCKS = 4;
const TOOL_USE_ID_PATTERN = /^[a-zA-Z0-9_-]+$/;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A content block together with where it sits in the request, for error paths. */
interface LocatedBlock {
  block: Json;
  messageIndex: number;
  blockIndex: number;
}

/** What a request is checked against besides its body. */
export interface ValidationContext {
  /** The server's seal: thinking sent back must verify against it. Without one, any non-empty signature passes. */
  seal?: ThinkingSeal;
  /** The request's `anthropic-beta` values. */
  betas?: readonly string[];
}

/** Consecutive same-role messages, which the API merges into one turn before checking them. */
interface Turn {
  role: string;
  firstIndex: number;
  blocks: LocatedBlock[];
}

/**
 * Validate a `POST /v1/messages` body. Returns the `invalid_request_error` message to send, or
 * undefined when the real API would accept the request.
 */
export function validateMessagesRequest(body: unknown, context: ValidationContext = {}): string | undefined {
  if (!isObject(body)) return 'Request body must be a JSON object.';
  return (
    checkRequiredFields(body) ??
    checkThinkingParam(body, context.betas ?? []) ??
    checkOutputConfig(body) ??
    checkMessageShapes(body.messages as unknown[]) ??
    checkSystemMessagePlacement(body.messages as Json[]) ??
    checkToolChoice(body) ??
    checkEmptyText(body) ??
    checkMediaBlocks(body.messages as Json[]) ??
    checkFinalAssistantWhitespace(body.messages as Json[]) ??
    checkToolUseBlocks(body.messages as Json[]) ??
    checkThinkingBlocks(body.messages as Json[], context.seal) ??
    checkToolPairing(groupTurns(body.messages as Json[])) ??
    checkThinkingToolLoop(body) ??
    checkCacheControl(body)
  );
}

function checkRequiredFields(body: Json): string | undefined {
  if (body.model === undefined) return 'model: Field required';
  if (typeof body.model !== 'string' || body.model === '') return 'model: Input should be a non-empty string';
  if (body.max_tokens === undefined) return 'max_tokens: Field required';
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens)) {
    return 'max_tokens: Input should be a valid integer';
  }
  if (body.max_tokens < 0) return 'max_tokens: Input should be greater than or equal to 0';
  if (body.messages === undefined) return 'messages: Field required';
  if (!Array.isArray(body.messages)) return 'messages: Input should be a valid list';
  if (body.messages.length === 0) return 'messages: at least one message is required';
  return undefined;
}

function checkMessageShapes(messages: unknown[]): string | undefined {
  for (const [i, message] of messages.entries()) {
    if (!isObject(message)) return `messages.${i}: Input should be a valid dictionary`;
    // 'system' is accepted in `messages` by current API versions; the SDK types include it.
    if (message.role !== 'user' && message.role !== 'assistant' && message.role !== 'system') {
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    }
    const content = message.content;
    if (content === undefined) return `messages.${i}.content: Field required`;
    if (typeof content !== 'string' && !Array.isArray(content)) {
      return `messages.${i}.content: Input should be a valid string or list`;
    }
    for (const [j, block] of (Array.isArray(content) ? content : []).entries()) {
      if (!isObject(block) || typeof block.type !== 'string') {
        return `messages.${i}.content.${j}: Input tag must be a content block type`;
      }
    }
    // Only a final assistant message (a prefill) may be empty: a reply written back with no
    // content, followed by anything at all, is refused.
    const isFinalAssistant = i === messages.length - 1 && message.role === 'assistant';
    if (content.length === 0 && !isFinalAssistant) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
  }
  return undefined;
}

/**
 * A `system` message inside `messages` (a mid-conversation instruction) goes right after a user
 * turn, as the API's placement rules say: not first, not after an assistant message. Several in a
 * row after a user message pass, the rules being silent on them. The wording is this server's.
 */
function checkSystemMessagePlacement(messages: Json[]): string | undefined {
  let previousRole: unknown;
  for (const [i, message] of messages.entries()) {
    if (message.role === 'system' && previousRole !== 'user') {
      return `messages.${i}: a \`system\` message must come right after a \`user\` message`;
    }
    if (message.role !== 'system') previousRole = message.role;
  }
  return undefined;
}

/** Why a text block is refused: `''` and whitespace-only text get different messages. */
function textProblem(block: unknown): 'must be non-empty' | 'must contain non-whitespace text' | undefined {
  if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') return undefined;
  if (block.text === '') return 'must be non-empty';
  return block.text.trim() === '' ? 'must contain non-whitespace text' : undefined;
}

function checkEmptyText(body: Json): string | undefined {
  const systemProblem = Array.isArray(body.system) ? body.system.map(textProblem).find(Boolean) : undefined;
  if (systemProblem) return `system: text content blocks ${systemProblem}`;
  for (const message of body.messages as Json[]) {
    // String content is one text block to the API (an empty string was refused earlier).
    if (typeof message.content === 'string') {
      const problem = textProblem({ type: 'text', text: message.content });
      if (problem) return `messages: text content blocks ${problem}`;
      continue;
    }
    for (const block of message.content as Json[]) {
      // Text nested in a tool_result is checked too: it reaches the model the same way.
      const nested = block.type === 'tool_result' && Array.isArray(block.content) ? block.content.map(textProblem) : [];
      const problem = textProblem(block) ?? nested.find(Boolean);
      if (problem) return `messages: text content blocks ${problem}`;
    }
  }
  return undefined;
}

/** A final assistant message is continued by the model, so it may not end in whitespace. */
function checkFinalAssistantWhitespace(messages: Json[]): string | undefined {
  const last = messages.at(-1);
  if (last?.role !== 'assistant') return undefined;
  const content = last.content as string | Json[];
  const lastBlock: Json | undefined = typeof content === 'string' ? { type: 'text', text: content } : content.at(-1);
  if (lastBlock?.type === 'text' && typeof lastBlock.text === 'string' && /\s$/.test(lastBlock.text)) {
    return 'messages: final assistant content cannot end with trailing whitespace';
  }
  return undefined;
}

/** tool_use ids must fit the API's pattern and be unique across the request; input must be an object. */
function checkToolUseBlocks(messages: Json[]): string | undefined {
  const seen = new Set<unknown>();
  for (const [i, message] of messages.entries()) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const [j, block] of (message.content as Json[]).entries()) {
      if (block.type !== 'tool_use') continue;
      if (typeof block.id !== 'string' || !TOOL_USE_ID_PATTERN.test(block.id)) {
        return `messages.${i}.content.${j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
      }
      if (!isObject(block.input))
        return `messages.${i}.content.${j}.tool_use.input: Input should be a valid dictionary`;
      if (seen.has(block.id)) return `messages.${i}.content.${j}: \`tool_use\` ids must be unique`;
      seen.add(block.id);
    }
  }
  return undefined;
}

/** System messages in `messages` give instructions; they take no part in the user/assistant alternation. */
function groupTurns(messages: Json[]): Turn[] {
  const turns: Turn[] = [];
  for (const [messageIndex, message] of messages.entries()) {
    const role = message.role as string;
    if (role === 'system') continue;
    const content = message.content as string | Json[];
    const blocks: LocatedBlock[] =
      typeof content === 'string'
        ? [{ block: { type: 'text', text: content }, messageIndex, blockIndex: 0 }]
        : content.map((block, blockIndex) => ({ block, messageIndex, blockIndex }));
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.blocks.push(...blocks);
    else turns.push({ role, firstIndex: messageIndex, blocks });
  }
  return turns;
}

function toolUses(turn: Turn | undefined): LocatedBlock[] {
  if (!turn || turn.role !== 'assistant') return [];
  return turn.blocks.filter((b) => b.block.type === 'tool_use');
}

function checkToolPairing(turns: Turn[]): string | undefined {
  for (const [t, turn] of turns.entries()) {
    const problem =
      turn.role === 'assistant'
        ? checkToolUsesAnswered(turn, turns[t + 1])
        : checkToolResultsExpected(turn, turns[t - 1]);
    if (problem) return problem;
  }
  return undefined;
}

/** Every tool_use must be answered by a tool_result at the start of the very next (user) turn. */
function checkToolUsesAnswered(turn: Turn, next: Turn | undefined): string | undefined {
  const uses = toolUses(turn);
  const first = uses[0];
  if (!first) return undefined;
  const results = next?.role === 'user' ? next.blocks.filter((b) => b.block.type === 'tool_result') : [];
  const answered = new Set(results.map((b) => b.block.tool_use_id));
  const missing = uses.filter((b) => !answered.has(b.block.id));
  if (missing.length > 0) {
    const where = missing[0]?.messageIndex ?? first.messageIndex;
    return (
      `messages.${where}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ` +
      `${missing.map((b) => String(b.block.id)).join(', ')}. ` +
      'Each `tool_use` block must have a corresponding `tool_result` block in the next message.'
    );
  }
  // All answered; now they must also come first, before any text or other content.
  const firstOther = next?.blocks.findIndex((b) => b.block.type !== 'tool_result') ?? -1;
  const lastResult = next ? next.blocks.map((b) => b.block.type).lastIndexOf('tool_result') : -1;
  if (next && firstOther !== -1 && firstOther < lastResult) {
    return (
      `messages.${next.firstIndex}: Did not find ${uses.length} \`tool_result\` block(s) at the beginning of this message. ` +
      'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.'
    );
  }
  return undefined;
}

/** Every tool_result must answer a tool_use of the immediately preceding assistant turn. */
function checkToolResultsExpected(turn: Turn, previous: Turn | undefined): string | undefined {
  const expected = new Set(toolUses(previous).map((b) => b.block.id));
  for (const located of turn.blocks) {
    if (located.block.type !== 'tool_result' || expected.has(located.block.tool_use_id)) continue;
    return (
      `messages.${located.messageIndex}.content.${located.blockIndex}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ` +
      `${String(located.block.tool_use_id)}. ` +
      'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.'
    );
  }
  return undefined;
}

/** The fields each `tool_choice` type takes besides `type`. */
const TOOL_CHOICE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  auto: ['disable_parallel_tool_use'],
  any: ['disable_parallel_tool_use'],
  tool: ['name', 'disable_parallel_tool_use'],
  none: [],
};

function toolNames(body: Json): unknown[] {
  return Array.isArray(body.tools) ? body.tools.map((tool) => (isObject(tool) ? tool.name : undefined)) : [];
}

/**
 * `tool_choice` is one of `{type: 'auto' | 'any' | 'none'}` and `{type: 'tool', name}`, the first
 * two with an optional boolean `disable_parallel_tool_use`. Forcing a tool (any, tool) needs tools,
 * a named one must exist, and it cannot be combined with manual thinking (`enabled`); adaptive
 * thinking allows it (the model then skips thinking). The field-level wording follows the API's
 * validation messages; the wording of the last three checks is this server's.
 */
function checkToolChoice(body: Json): string | undefined {
  if (body.tool_choice === undefined) return undefined;
  const checked = checkTaggedUnion('tool_choice', body.tool_choice, TOOL_CHOICE_FIELDS);
  if ('problem' in checked) return checked.problem;
  const { type, value: choice } = checked;
  if (choice.disable_parallel_tool_use !== undefined && typeof choice.disable_parallel_tool_use !== 'boolean') {
    return `tool_choice.${type}.disable_parallel_tool_use: Input should be a valid boolean`;
  }
  if (type === 'tool' && choice.name === undefined) return 'tool_choice.tool.name: Field required';
  if (type === 'tool' && typeof choice.name !== 'string')
    return 'tool_choice.tool.name: Input should be a valid string';
  if (type !== 'any' && type !== 'tool') return undefined;
  const names = toolNames(body);
  if (names.length === 0) return `tool_choice: type '${type}' forces tool use, but no tools were provided`;
  if (type === 'tool' && !names.includes(choice.name)) {
    return `tool_choice: tool '${String(choice.name)}' is not among the tools provided`;
  }
  if (thinkingType(body) === 'enabled') return 'Thinking may not be enabled when tool_choice forces tool use.';
  return undefined;
}

/** A `cache_control` value and where it sits, in the order the API renders the prompt. */
interface LocatedCacheControl {
  path: string;
  value: unknown;
}

function cacheControls(body: Json): LocatedCacheControl[] {
  const found: LocatedCacheControl[] = [];
  const collect = (items: unknown, path: string): void => {
    if (!Array.isArray(items)) return;
    for (const [i, item] of items.entries()) {
      if (!isObject(item)) continue;
      if (item.cache_control !== undefined && item.cache_control !== null) {
        found.push({ path: `${path}.${i}`, value: item.cache_control });
      }
      if (item.type === 'tool_result') collect(item.content, `${path}.${i}.content`);
    }
  };
  collect(body.tools, 'tools');
  collect(body.system, 'system');
  for (const [i, message] of (body.messages as Json[]).entries()) collect(message.content, `messages.${i}.content`);
  // Top-level cache_control (automatic caching) places one more breakpoint, on the last block.
  if (body.cache_control !== undefined && body.cache_control !== null) {
    found.push({ path: '(top level)', value: body.cache_control });
  }
  return found;
}

function cacheControlPath({ path }: LocatedCacheControl): string {
  return path === '(top level)' ? 'cache_control' : `${path}.cache_control`;
}

function cacheControlProblem(located: LocatedCacheControl): string | undefined {
  const { value } = located;
  const where = cacheControlPath(located);
  if (!isObject(value)) return `${where}: Input should be a valid dictionary or object to extract fields from`;
  if (value.type !== 'ephemeral') return `${where}.type: Input should be 'ephemeral'`;
  if (value.ttl !== undefined && value.ttl !== '5m' && value.ttl !== '1h')
    return `${where}.ttl: Input should be '5m' or '1h'`;
  const extra = Object.keys(value).find((key) => key !== 'type' && key !== 'ttl');
  return extra ? `${where}.${extra}: Extra inputs are not permitted` : undefined;
}

/**
 * The API allows at most four cache breakpoints across tools, system and messages together, each
 * `{type: 'ephemeral', ttl?: '5m' | '1h'}`, and a 1-hour breakpoint may not follow a 5-minute one
 * in render order (the docs: longer TTLs must come first; that message's wording is this server's).
 */
function checkCacheControl(body: Json): string | undefined {
  const found = cacheControls(body);
  const problem = found.map(cacheControlProblem).find(Boolean);
  if (problem) return problem;
  if (found.length > MAX_CACHE_CONTROL_BLOCKS) {
    return `A maximum of ${MAX_CACHE_CONTROL_BLOCKS} blocks with cache_control may be provided. Found ${found.length}.`;
  }
  const ttlOf = (f: LocatedCacheControl): unknown => (f.value as Json).ttl ?? '5m';
  const firstShort = found.findIndex((f) => ttlOf(f) === '5m');
  const lateLong = firstShort === -1 ? -1 : found.findIndex((f, i) => i > firstShort && ttlOf(f) === '1h');
  const long = found[lateLong];
  const short = found[firstShort];
  if (long && short) {
    return (
      `${cacheControlPath(long)}: a breakpoint with ttl '1h' cannot come after one with ttl '5m' ` +
      `(${cacheControlPath(short)}); longer TTLs must come first, in the order tools, system, messages`
    );
  }
  return undefined;
}
