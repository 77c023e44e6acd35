/**
 * Turns a scripted reply into the complete `Message` object the API would return for a request,
 * filling in what the script leaves out (id, model, stop_reason, usage).
 */
import { newMessageId } from './api-error';
import type { ScriptedBlock, ScriptedReply, ScriptedStopReason, ScriptedUsage } from './types';

/** The API's `Message` response, restricted to the fields this server produces. */
export interface ApiMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ScriptedBlock[];
  stop_reason: ScriptedStopReason;
  stop_sequence: null;
  usage: ScriptedUsage;
}

/** Rough token count: the API's tokens average about four characters of English text. */
function approxTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/** Estimate `input_tokens` from the parts of a request that the model would actually read. */
export function estimateInputTokens(body: unknown): number {
  const b = (body ?? {}) as Record<string, unknown>;
  const prompt = JSON.stringify([b.system ?? null, b.messages ?? null, b.tools ?? null]);
  return approxTokens(prompt.length);
}

function estimateOutputTokens(content: ScriptedBlock[]): number {
  let chars = 0;
  for (const block of content) {
    chars += block.type === 'text' ? block.text.length : block.name.length + JSON.stringify(block.input).length;
  }
  return approxTokens(chars);
}

/** What the API reports when the script does not say: tool_use wins, as it does for the model. */
export function defaultStopReason(content: ScriptedBlock[]): ScriptedStopReason {
  return content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
}

/**
 * Build the full message for `reply` as an answer to `requestBody`. The content is deep-copied so
 * a client that mutates what it received cannot change what a retried request gets.
 */
export function buildMessage(reply: ScriptedReply, requestBody: unknown): ApiMessage {
  const content = structuredClone(reply.content);
  const model = (requestBody as { model?: unknown } | undefined)?.model;
  return {
    id: newMessageId(),
    type: 'message',
    role: 'assistant',
    model: typeof model === 'string' ? model : 'unknown-model',
    content,
    stop_reason: reply.stop_reason ?? defaultStopReason(content),
    stop_sequence: null,
    usage: {
      input_tokens: estimateInputTokens(requestBody),
      output_tokens: estimateOutputTokens(content),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      ...reply.usage,
    },
  };
}
