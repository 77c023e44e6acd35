/**
 * Server-sent events exactly as the Messages API streams them, so the real SDK's parser
 * (`messages.stream()`, `messages.create({ stream: true })`) can consume them unchanged.
 *
 * Pure functions: the server decides when to write each frame; this module decides what they are.
 */
import { errorBody } from './api-error';
import type { ApiContentBlock, BuiltReply } from './reply';

/** One wire frame: `event: <name>\ndata: <json>\n\n`. */
export function formatSseEvent(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Split a string into a few chunks, never inside a surrogate pair. Short strings still get
 * several chunks so clients really exercise delta accumulation; long ones are capped per chunk.
 */
export function splitIntoChunks(text: string, parts = 4, maxChunkChars = 64): string[] {
  const chars = Array.from(text); // code points, so an emoji is never split in two
  if (chars.length === 0) return [];
  const size = Math.min(maxChunkChars, Math.max(1, Math.ceil(chars.length / parts)));
  const chunks: string[] = [];
  for (let i = 0; i < chars.length; i += size) chunks.push(chars.slice(i, i + size).join(''));
  return chunks;
}

function frame(type: string, index: number, extra: Record<string, unknown>): string {
  return formatSseEvent(type, { type, index, ...extra });
}

/** The deltas of a block, streamed in a few chunks. */
function deltas(index: number, text: string, kind: string, field: string): string[] {
  return splitIntoChunks(text).map((chunk) =>
    frame('content_block_delta', index, { delta: { type: kind, [field]: chunk } }),
  );
}

/**
 * A block's frames in two parts: `body` (its start and content deltas) and `closing` (what
 * completes it). A stream cut mid-block sends only the body. `inputJson` overrides a tool_use's
 * input text: a call cut off by the end of the reply.
 */
function blockFrames(block: ApiContentBlock, index: number, inputJson?: string): { body: string[]; closing: string[] } {
  const stop = frame('content_block_stop', index, {});
  switch (block.type) {
    case 'text':
      return {
        body: [
          frame('content_block_start', index, { content_block: { type: 'text', text: '' } }),
          ...deltas(index, block.text, 'text_delta', 'text'),
        ],
        closing: [stop],
      };
    case 'thinking':
      // The API opens a thinking block empty, streams the text, and signs it last: a stream cut
      // before the signature_delta leaves the client with thinking it cannot send back.
      return {
        body: [
          frame('content_block_start', index, { content_block: { type: 'thinking', thinking: '', signature: '' } }),
          ...deltas(index, block.thinking, 'thinking_delta', 'thinking'),
        ],
        closing: [
          frame('content_block_delta', index, { delta: { type: 'signature_delta', signature: block.signature } }),
          stop,
        ],
      };
    case 'redacted_thinking':
      return { body: [frame('content_block_start', index, { content_block: block })], closing: [stop] };
    case 'tool_use':
      // The API announces a tool_use with an empty input and streams the JSON text separately. A
      // call cut off by max_tokens still gets its content_block_stop: every block the API opens,
      // it closes before message_delta, so the client only learns of the cut from the stop_reason.
      return {
        body: [
          frame('content_block_start', index, {
            content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
          }),
          ...deltas(index, inputJson ?? JSON.stringify(block.input), 'input_json_delta', 'partial_json'),
        ],
        closing: [stop],
      };
  }
}

/** How a planned stream ends. */
export type StreamEnding =
  | { kind: 'complete' }
  | { kind: 'error'; errorType: string; message?: string; afterBlocks?: number; midBlock?: boolean; errorCode?: string }
  | { kind: 'drop'; afterBlocks?: number; midBlock?: boolean };

/** The frames to write, in order, and what to do with the socket afterwards. */
export interface StreamPlan {
  /** Frames written together before any delay: `message_start` and the early `ping`. */
  head: string[];
  /** Frames written one by one, with the per-chunk delay before each. */
  body: string[];
  /** `drop` means destroy the socket after `body`; otherwise end the response normally. */
  finish: 'end' | 'drop';
}

/**
 * Plan the stream for a built reply. With a fault ending, only the first `afterBlocks` content
 * blocks are sent complete (all of them when it exceeds the count), then, with `midBlock`, the
 * next one without its closing frames, then the error frame or drop.
 */
export function planStream(reply: BuiltReply, ending: StreamEnding = { kind: 'complete' }): StreamPlan {
  const { message, cutToolInputJson } = reply;
  const start = {
    type: 'message_start',
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      // The API reports input usage up front and the real output count in message_delta.
      usage: { ...message.usage, output_tokens: 1 },
    },
  };
  const head = [formatSseEvent('message_start', start), formatSseEvent('ping', { type: 'ping' })];

  const lastIndex = message.content.length - 1;
  const framesOf = (index: number) => {
    const block = message.content[index];
    return block ? blockFrames(block, index, index === lastIndex ? cutToolInputJson : undefined) : undefined;
  };
  const complete = ending.kind === 'complete' ? message.content.length : (ending.afterBlocks ?? 0);
  const body: string[] = [];
  for (let index = 0; index < Math.min(complete, message.content.length); index++) {
    const frames = framesOf(index);
    if (frames) body.push(...frames.body, ...frames.closing);
  }
  if (ending.kind !== 'complete' && ending.midBlock) body.push(...(framesOf(complete)?.body ?? []));

  if (ending.kind === 'error') {
    body.push(formatSseEvent('error', errorBody(ending.errorType, ending.message, undefined, ending.errorCode)));
    return { head, body, finish: 'end' };
  }
  if (ending.kind === 'drop') return { head, body, finish: 'drop' };

  body.push(
    formatSseEvent('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null, stop_details: message.stop_details },
      usage: { output_tokens: message.usage.output_tokens },
    }),
    formatSseEvent('message_stop', { type: 'message_stop' }),
  );
  return { head, body, finish: 'end' };
}
