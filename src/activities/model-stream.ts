import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { MODEL_FAILURE_TYPES } from '../shared/activity-types';
import { paidAgainBefore, STREAM_TAIL_CHARS } from '../shared/stream-progress';
import type { StreamProgress } from '../shared/stream-progress';
import type { Usage } from '../shared/messages';
import { endpointForMessages, toModelFailure } from './model-errors';

/**
 * Text is heartbeaten at most this often, the last of a burst included. The worker's heartbeat
 * throttle (create-worker.ts) decides how often one reaches the server; this only spares
 * encoding a heartbeat for every delta.
 */
const HEARTBEAT_EVERY_MS = 100;
const KEEP_ALIVE_MS = 5_000;
const DEFAULT_STREAM_IDLE_MS = 120_000;

/**
 * One streamed Messages API call inside an activity: heartbeats the partial text as a
 * {@link StreamProgress} (and keeps heartbeating while the model thinks silently), aborts a stream
 * that goes quiet, honours cancellation, and maps API errors to the typed failures the workflow's
 * recovery keys on.
 */
export async function streamModelReply(
  client: Anthropic,
  params: Anthropic.MessageCreateParamsNonStreaming,
  options: {
    streamIdleMs?: number;
    fallbackAvailable: boolean;
    /**
     * Filled with the input JSON text each tool_use block streamed, by block index: a block the
     * output limit cut has text that does not parse, one that ended whole has text that does.
     */
    toolInputJson?: Map<number, string>;
  },
): Promise<Anthropic.Message> {
  const ctx = Context.current();
  const idleMs = options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
  let text = '';
  // What this attempt is billed for, from message_start on; output estimated from what streamed.
  let billed: Usage | undefined;
  let streamedChars = 0;
  // Characters of thought, and whether the block streaming now is a thinking block.
  let thoughtChars = 0;
  let thinkingNow = false;
  // Carried in every heartbeat, so the attempt after this one knows what all before it lost.
  const paidBefore = paidAgainBefore(ctx.info.heartbeatDetails);
  let lastBeat = 0;
  let trailing: NodeJS.Timeout | undefined;
  const send = () => {
    if (trailing) clearTimeout(trailing);
    trailing = undefined;
    lastBeat = Date.now();
    const progress: StreamProgress = {
      chars: text.length,
      tail: text.slice(-STREAM_TAIL_CHARS),
      attempt: ctx.info.attempt,
      ...(thinkingNow ? { thinking: thoughtChars } : {}),
      ...(billed
        ? { billed: { ...billed, output_tokens: Math.max(billed.output_tokens, Math.ceil(streamedChars / 4)) } }
        : {}),
      ...(paidBefore ? { paidBefore } : {}),
    };
    ctx.heartbeat(progress);
  };
  // A delta within the interval is not dropped: it goes out with the heartbeat due at its end.
  const beat = () => {
    if (trailing) return;
    const wait = HEARTBEAT_EVERY_MS - (Date.now() - lastBeat);
    if (wait <= 0) send();
    else trailing = setTimeout(send, wait);
  };
  // The heartbeat proves the worker is alive even while the model thinks silently; it must come
  // well within the heartbeat timeout, however short the session configured it.
  const heartbeatTimeoutMs = ctx.info.heartbeatTimeoutMs;
  const keepAliveMs = Math.max(
    100,
    Math.min(KEEP_ALIVE_MS, heartbeatTimeoutMs ? Math.floor(heartbeatTimeoutMs / 3) : KEEP_ALIVE_MS),
  );
  const keepAlive = setInterval(send, keepAliveMs);
  const idle = new AbortController();
  let idleTimer: NodeJS.Timeout | undefined;
  const armIdleTimer = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => idle.abort(), idleMs);
  };
  const signal = AbortSignal.any([ctx.cancellationSignal, idle.signal]);

  try {
    // No heartbeat before the stream's first event: the first one an attempt sends reaches the
    // server at once (later ones wait for the throttle), and it should already say what the
    // attempt is billed for, so a crash right after still counts in the next attempt's paidAgain.
    armIdleTimer();
    const stream = client.messages.stream(params, { signal });
    // Any event is progress, not only text: a tool_use streams as input_json deltas.
    stream.on('streamEvent', (event) => {
      armIdleTimer();
      if (event.type === 'message_start') billed = toUsage(event.message.usage);
      if (event.type === 'content_block_start') {
        thinkingNow = event.content_block.type === 'thinking' || event.content_block.type === 'redacted_thinking';
      }
      if (event.type === 'content_block_delta' && event.delta.type === 'thinking_delta') {
        thoughtChars += event.delta.thinking.length;
      }
      if (event.type === 'content_block_stop') thinkingNow = false;
      if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
        options.toolInputJson?.set(event.index, '');
      }
      if (event.type === 'content_block_delta') {
        if (event.delta.type === 'text_delta') text += event.delta.text;
        if (event.delta.type === 'input_json_delta' && options.toolInputJson?.has(event.index)) {
          options.toolInputJson.set(event.index, options.toolInputJson.get(event.index) + event.delta.partial_json);
        }
        streamedChars += deltaChars(event.delta);
      }
      beat();
    });
    return await stream.finalMessage();
  } catch (error) {
    // Cancellation by the workflow: let Temporal see the cancellation, not an API error.
    if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? error;
    if (idle.signal.aborted) {
      throw ApplicationFailure.create({
        message: `The model stream sent nothing for ${idleMs / 1000}s; retrying`,
        type: MODEL_FAILURE_TYPES.streamStalled,
      });
    }
    throw toModelFailure(error, {
      attempt: ctx.info.attempt,
      fallbackAvailable: options.fallbackAvailable,
      endpoint: endpointForMessages(client.baseURL),
    });
  } finally {
    clearInterval(keepAlive);
    if (trailing) clearTimeout(trailing);
    if (idleTimer) clearTimeout(idleTimer);
  }
}

/** Characters a delta adds to the reply, whatever its kind: the base of the output estimate. */
function deltaChars(delta: Anthropic.RawContentBlockDeltaEvent['delta']): number {
  switch (delta.type) {
    case 'text_delta':
      return delta.text.length;
    case 'input_json_delta':
      return delta.partial_json.length;
    case 'thinking_delta':
      return delta.thinking.length;
    default:
      return 0;
  }
}

/** The API's usage in the loop's shape: a field the API leaves out counts zero. */
export function toUsage(usage: Anthropic.Usage): Usage {
  return {
    input_tokens: usage.input_tokens ?? 0,
    output_tokens: usage.output_tokens ?? 0,
    cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
  };
}
