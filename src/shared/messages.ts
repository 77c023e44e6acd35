/**
 * Plain-data message shapes, shared by workflow and activities.
 *
 * They mirror the Anthropic Messages API closely enough to be sent as-is, but are declared here
 * so workflow code never imports `@anthropic-ai/sdk`.
 */

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/** Thinking blocks are carried through untouched: the API wants them back verbatim. */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export type AssistantContentBlock = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock;
export type UserContentBlock = TextBlock | ToolResultBlock;

export interface AssistantMessage {
  role: 'assistant';
  content: AssistantContentBlock[];
}

export interface UserMessage {
  role: 'user';
  content: string | UserContentBlock[];
}

export type Message = AssistantMessage | UserMessage;

/** Token usage as the API reports it; summed across turns in the State. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export const emptyUsage = (): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_creation_input_tokens: a.cache_creation_input_tokens + b.cache_creation_input_tokens,
    cache_read_input_tokens: a.cache_read_input_tokens + b.cache_read_input_tokens,
  };
}

/** The seed's test for `needsFollowUp`: tool_use blocks in the reply, never `stop_reason`. */
export function findToolUseBlocks(message: AssistantMessage): ToolUseBlock[] {
  return message.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
}

export function assistantText(message: AssistantMessage): string {
  return message.content
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('');
}
