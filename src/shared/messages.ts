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

/** The image formats the Messages API accepts. */
export const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

/** An image, base64-encoded, as Read returns it inside a tool_result. */
export interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: ImageMediaType; data: string };
}

/** A PDF, base64-encoded, as Read returns it inside a tool_result. */
export interface DocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: 'application/pdf'; data: string };
}

/** What a tool_result may hold besides plain text. */
export type ToolResultContentBlock = TextBlock | ImageBlock | DocumentBlock;

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  /** Text, or blocks when the result holds an image or a document (Read of a picture or a PDF). */
  content: string | ToolResultContentBlock[];
  is_error?: boolean;
}

/** What an image counts for in the context estimate: about what the API charges for a large one. */
export const IMAGE_ESTIMATE_CHARS = 6_400;

/**
 * A tool_result's size in characters, for the context and budget estimates (about four to a
 * token): its text, a fixed share for each image, and a PDF's base64 length.
 */
export function toolResultChars(content: ToolResultBlock['content']): number {
  if (typeof content === 'string') return content.length;
  let chars = 0;
  for (const block of content) {
    chars +=
      block.type === 'text'
        ? block.text.length
        : block.type === 'image'
          ? IMAGE_ESTIMATE_CHARS
          : block.source.data.length;
  }
  return chars;
}

/**
 * A tool_result's content as text: itself, or its text blocks joined, with a short mark for each
 * image or document. For previews, sizes and exports, never for what the model is sent.
 */
export function toolResultText(content: ToolResultBlock['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((block) =>
      block.type === 'text'
        ? block.text
        : `[${block.type === 'image' ? 'image' : 'document'}: ${block.source.media_type}, ${block.source.data.length} base64 characters]`,
    )
    .join('\n');
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
