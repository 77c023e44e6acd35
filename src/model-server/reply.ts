/**
 * Turns a scripted reply into the complete `Message` object the API would return for a request,
 * filling in what the script leaves out (id, model, stop_reason, usage).
 */
import { newMessageId } from './api-error';
import type { InputUsage } from './prompt-cache';
import { approxTokens, estimateInputTokens } from './prompt-tokens';
import type { ThinkingSeal } from './thinking-seal';
import type { ScriptedBlock, ScriptedRefusalDetails, ScriptedReply, ScriptedStopReason, ScriptedUsage } from './types';

/** A content block as the API returns it (a script's `partial_json` is only for the stream). */
export type ApiContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

/** How the thinking of a reply goes out: signed by `seal`, its text left out when `omitted`. */
export interface ThinkingOutput {
  seal: ThinkingSeal;
  /** `thinking.display: 'omitted'`: the block keeps its signature but its text is empty. */
  omitted?: boolean;
}

/** The API's `Message` response, restricted to the fields this server produces. */
export interface ApiMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ApiContentBlock[];
  stop_reason: ScriptedStopReason;
  stop_sequence: null;
  /** Present on every refusal, null otherwise. */
  stop_details: ScriptedRefusalDetails | null;
  usage: ScriptedUsage;
}

/** A built message plus what the stream needs beyond it. */
export interface BuiltReply {
  message: ApiMessage;
  /** The JSON text to stream for the last block, a tool_use cut off in the middle of its input. */
  cutToolInputJson?: string;
}

/** Thinking counts whole, even when its text is not sent: the API bills what the model thought. */
function blockChars(block: ScriptedBlock): number {
  switch (block.type) {
    case 'text':
      return block.text.length;
    case 'thinking':
      return block.thinking.length;
    case 'redacted_thinking':
      return block.data.length;
    case 'tool_use':
      return block.name.length + (block.partial_json ?? JSON.stringify(block.input)).length;
  }
}

function estimateOutputTokens(content: ScriptedBlock[]): number {
  return approxTokens(content.reduce((chars, block) => chars + blockChars(block), 0));
}

function toApiBlock(block: ScriptedBlock, thinking: ThinkingOutput | undefined): ApiContentBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: structuredClone(block.input) };
    case 'thinking': {
      if (!thinking) throw new Error('a thinking block needs a seal to sign it');
      const text = thinking.omitted ? '' : block.thinking;
      return { type: 'thinking', thinking: text, signature: thinking.seal.sign(text) };
    }
    case 'redacted_thinking':
      if (!thinking) throw new Error('a redacted_thinking block needs a seal');
      return { type: 'redacted_thinking', data: thinking.seal.seal(block.data) };
  }
}

/** What the API reports when the script does not say: tool_use wins, as it does for the model. */
export function defaultStopReason(content: ScriptedBlock[]): ScriptedStopReason {
  return content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
}

/**
 * Build the full message for `reply` as an answer to `requestBody`. The content is deep-copied so
 * a client that mutates what it received cannot change what a retried request gets. `input` is
 * how the prompt cache split the request's input (default: all of it uncached); the script's
 * `usage` overrides any counter. `thinking` signs thinking blocks; a reply that holds some needs it.
 */
export function buildMessage(
  reply: ScriptedReply,
  requestBody: unknown,
  input?: InputUsage,
  thinking?: ThinkingOutput,
): BuiltReply {
  const model = (requestBody as { model?: unknown } | undefined)?.model;
  const stopReason = reply.stop_reason ?? defaultStopReason(reply.content);
  const last = reply.content.at(-1);
  const message: ApiMessage = {
    id: newMessageId(),
    type: 'message',
    role: 'assistant',
    model: typeof model === 'string' ? model : 'unknown-model',
    content: reply.content.map((block) => toApiBlock(block, thinking)),
    stop_reason: stopReason,
    stop_sequence: null,
    stop_details:
      stopReason === 'refusal' ? { type: 'refusal', category: null, explanation: null, ...reply.stop_details } : null,
    usage: {
      ...(input ?? {
        input_tokens: estimateInputTokens(requestBody),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      }),
      output_tokens: estimateOutputTokens(reply.content),
      ...reply.usage,
    },
  };
  return last?.type === 'tool_use' && last.partial_json !== undefined
    ? { message, cutToolInputJson: last.partial_json }
    : { message };
}
