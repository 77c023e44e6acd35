/**
 * The real API's checks on extended thinking: the `thinking` and `output_config` parameters, the
 * thinking blocks a conversation sends back (signatures, redacted data), and manual thinking's
 * demand that a tool loop's assistant turn start with its thinking.
 *
 * Wording follows the API's 400s as clients have reported them. Each check returns the first
 * problem found, or undefined.
 */
import type { ThinkingSeal } from './thinking-seal';
import { checkTaggedUnion } from './tagged-union';

type Json = Record<string, unknown>;

const MIN_BUDGET_TOKENS = 1024;
const THINKING_DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';
/** With interleaved thinking the budget spans the whole turn, so it may exceed `max_tokens`. */
const INTERLEAVED_THINKING_BETA = 'interleaved-thinking-2025-05-14';

/**
 * The fields each `thinking` type takes besides `type`. `block_binding` is the preserved-thinking
 * control; `between_tools` (thinking only between tool calls) is what one model takes instead of
 * `disabled`, and which types a model accepts is not this server's concern.
 */
const THINKING_FIELDS: Readonly<Record<string, readonly string[]>> = {
  enabled: ['budget_tokens', 'display', 'block_binding'],
  disabled: [],
  between_tools: [],
  adaptive: ['display', 'block_binding'],
};
type ThinkingType = 'enabled' | 'disabled' | 'between_tools' | 'adaptive';
const DISPLAYS = ['summarized', 'omitted', 'updates'];
const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'];

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `'a', 'b' or 'c'`, as the API lists allowed literals. */
function literals(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1) ?? ''}` : (quoted[0] ?? '');
}

/** The request's thinking type when it is a known one. */
export function thinkingType(body: unknown): ThinkingType | undefined {
  const thinking = isObject(body) ? body.thinking : undefined;
  const type = isObject(thinking) ? thinking.type : undefined;
  return typeof type === 'string' && type in THINKING_FIELDS ? (type as ThinkingType) : undefined;
}

/** True when the model may think on this request: thinking `enabled`, `adaptive` or `between_tools`. */
export function thinkingOn(body: unknown): boolean {
  const type = thinkingType(body);
  return type !== undefined && type !== 'disabled';
}

/** True when the request asks for thinking blocks without their text (`display: 'omitted'`). */
export function thinkingOmitted(body: unknown): boolean {
  const thinking = isObject(body) ? body.thinking : undefined;
  return isObject(thinking) && thinking.display === 'omitted';
}

/**
 * `thinking` is `{type: 'enabled', budget_tokens, display?}`, `{type: 'adaptive', display?}`,
 * `{type: 'between_tools'}` or `{type: 'disabled'}`. A manual budget is an integer of at least 1024 and below `max_tokens`
 * (unless interleaved thinking lets it span the turn). `betas` are the `anthropic-beta` values.
 */
export function checkThinkingParam(body: Json, betas: readonly string[]): string | undefined {
  if (body.thinking === undefined || body.thinking === null) return undefined;
  const checked = checkTaggedUnion('thinking', body.thinking, THINKING_FIELDS);
  if ('problem' in checked) return checked.problem;
  const { type, value: thinking } = checked;
  if (thinking.display !== undefined && thinking.display !== null && !DISPLAYS.includes(thinking.display as string)) {
    return `thinking.${type}.display: Input should be ${literals(DISPLAYS)}`;
  }
  if (type !== 'enabled') return undefined;
  const budget = thinking.budget_tokens;
  if (budget === undefined) return 'thinking.enabled.budget_tokens: Field required';
  if (typeof budget !== 'number' || !Number.isInteger(budget)) {
    return 'thinking.enabled.budget_tokens: Input should be a valid integer';
  }
  if (budget < MIN_BUDGET_TOKENS) {
    return `thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_BUDGET_TOKENS}`;
  }
  if (typeof body.max_tokens === 'number' && body.max_tokens <= budget && !betas.includes(INTERLEAVED_THINKING_BETA)) {
    return (
      '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at ' +
      `${THINKING_DOCS}#max-tokens-and-context-window-size`
    );
  }
  return undefined;
}

/** `output_config.effort`, when given, is one of the effort levels; the rest of `output_config` is not checked here. */
export function checkOutputConfig(body: Json): string | undefined {
  const config = body.output_config;
  if (config === undefined || config === null) return undefined;
  if (!isObject(config)) return 'output_config: Input should be a valid dictionary';
  if (config.effort !== undefined && config.effort !== null && !EFFORTS.includes(config.effort as string)) {
    return `output_config.effort: Input should be ${literals(EFFORTS)}`;
  }
  return undefined;
}

/**
 * Thinking sent back must be what the server sent: a `thinking` block's signature must verify
 * against its text, a `redacted_thinking` block's data must be intact. Without a `seal` (a check
 * of a conversation's shape alone) a non-empty signature is enough.
 */
export function checkThinkingBlocks(messages: Json[], seal?: ThinkingSeal): string | undefined {
  for (const [i, message] of messages.entries()) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const [j, block] of (message.content as Json[]).entries()) {
      const where = `messages.${i}.content.${j}`;
      if (block.type === 'thinking') {
        if (block.thinking === undefined) return `${where}.thinking.thinking: Field required`;
        if (typeof block.thinking !== 'string') return `${where}.thinking.thinking: Input should be a valid string`;
        if (block.signature === undefined) return `${where}.thinking.signature: Field required`;
        const signed =
          typeof block.signature === 'string' &&
          block.signature !== '' &&
          (!seal || seal.verify(block.thinking, block.signature));
        if (!signed) return `${where}: Invalid \`signature\` in \`thinking\` block`;
      } else if (block.type === 'redacted_thinking') {
        if (block.data === undefined) return `${where}.redacted_thinking.data: Field required`;
        if (typeof block.data !== 'string') return `${where}.redacted_thinking.data: Input should be a valid string`;
        if (block.data === '' || (seal && !seal.verifySealed(block.data))) {
          return `${where}: Invalid \`data\` in \`redacted_thinking\` block`;
        }
      }
    }
  }
  return undefined;
}

function firstBlockType(content: unknown): string | undefined {
  if (typeof content === 'string') return 'text';
  const first: unknown = Array.isArray(content) ? content[0] : undefined;
  return isObject(first) && typeof first.type === 'string' ? first.type : undefined;
}

function holdsToolResult(message: Json): boolean {
  return Array.isArray(message.content) && message.content.some((b) => isObject(b) && b.type === 'tool_result');
}

/** A user message that asks something, rather than answering tool calls: where a turn begins. */
function isAsk(message: Json | undefined): boolean {
  return message?.role === 'user' && !holdsToolResult(message);
}

/**
 * With manual thinking (`enabled`) the model always thinks before it first acts in a turn, and a
 * tool loop is one turn: when the request ends in tool results, the turn's first assistant
 * message (the first after the last user message that is not tool results) must start with its
 * thinking. Adaptive thinking may skip thinking, so it makes no such demand.
 */
export function checkThinkingToolLoop(body: Json): string | undefined {
  if (thinkingType(body) !== 'enabled') return undefined;
  const located = (body.messages as Json[])
    .map((message, index) => ({ message, index }))
    .filter(({ message }) => message.role !== 'system');
  const last = located.at(-1);
  if (last?.message.role !== 'user' || !holdsToolResult(last.message)) return undefined;
  let turnStart = located.length;
  while (turnStart > 0 && !isAsk(located[turnStart - 1]?.message)) turnStart--;
  const first = located.slice(turnStart).find(({ message }) => message.role === 'assistant');
  const type = first ? firstBlockType(first.message.content) : undefined;
  if (!first || type === undefined || type === 'thinking' || type === 'redacted_thinking') return undefined;
  return (
    `messages.${first.index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${type}\`. ` +
    'When `thinking` is enabled, a final `assistant` message must start with a thinking block ' +
    '(preceeding the lastmost set of `tool_use` and `tool_result` blocks). ' +
    'We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. ' +
    `Please consult our documentation at ${THINKING_DOCS}`
  );
}
