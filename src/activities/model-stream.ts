import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { MODEL_FAILURE_TYPES } from '../shared/activity-types';
import { toModelFailure } from './model-errors';

const HEARTBEAT_EVERY_MS = 1_000;
const KEEP_ALIVE_MS = 5_000;
const DEFAULT_STREAM_IDLE_MS = 120_000;

/**
 * One streamed Messages API call inside an activity: heartbeats the partial text (and keeps
 * heartbeating while the model thinks silently), aborts a stream that goes quiet, honours
 * cancellation, and maps API errors to the typed failures the workflow's recovery keys on.
 */
export async function streamModelReply(
  client: Anthropic,
  params: Anthropic.MessageCreateParamsNonStreaming,
  options: { streamIdleMs?: number; fallbackAvailable: boolean },
): Promise<Anthropic.Message> {
  const ctx = Context.current();
  const idleMs = options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
  let text = '';
  let lastBeat = 0;
  const beat = (force = false) => {
    const now = Date.now();
    if (!force && now - lastBeat < HEARTBEAT_EVERY_MS) return;
    lastBeat = now;
    ctx.heartbeat({ chars: text.length, tail: text.slice(-200) });
  };
  // The heartbeat proves the worker is alive even while the model thinks silently; it must come
  // well within the heartbeat timeout, however short the session configured it.
  const heartbeatTimeoutMs = ctx.info.heartbeatTimeoutMs;
  const keepAliveMs = Math.max(
    100,
    Math.min(KEEP_ALIVE_MS, heartbeatTimeoutMs ? Math.floor(heartbeatTimeoutMs / 3) : KEEP_ALIVE_MS),
  );
  const keepAlive = setInterval(() => beat(true), keepAliveMs);
  const idle = new AbortController();
  let idleTimer: NodeJS.Timeout | undefined;
  const armIdleTimer = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => idle.abort(), idleMs);
  };
  const signal = AbortSignal.any([ctx.cancellationSignal, idle.signal]);

  try {
    beat(true);
    armIdleTimer();
    const stream = client.messages.stream(params, { signal });
    // Any event is progress, not only text: a tool_use streams as input_json deltas.
    stream.on('streamEvent', () => {
      armIdleTimer();
      beat();
    });
    stream.on('text', (delta) => {
      text += delta;
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
    throw toModelFailure(error, { attempt: ctx.info.attempt, fallbackAvailable: options.fallbackAvailable });
  } finally {
    clearInterval(keepAlive);
    if (idleTimer) clearTimeout(idleTimer);
  }
}
