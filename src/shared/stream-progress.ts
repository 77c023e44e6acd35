import type { Usage } from './messages';

/**
 * What the earlier attempts of a model call were billed for and lost: each was cut off mid-stream
 * (its worker died, the stream dropped or failed) after the API had taken the request, so the
 * call was sent, and paid, again. Input and cache tokens are the API's own count (message_start);
 * output tokens are estimated from the characters that had streamed (four to a token), since the
 * API counts them only at the end.
 */
export interface PaidAgain {
  attempts: number;
  usage: Usage;
}

/**
 * What a streaming model call reports in its heartbeat, so a client can show the reply while it
 * streams: `durable-agent tail` reads it from the activity's pending info (`describe`).
 */
export interface StreamProgress {
  /** Characters (UTF-16 units) of reply text this attempt has received so far. */
  chars: number;
  /** The last {@link STREAM_TAIL_CHARS} of them: enough to cover the text between two heartbeats. */
  tail: string;
  /**
   * The activity attempt the text belongs to. Temporal keeps a failed attempt's last heartbeat
   * until the next attempt sends its own, and a retried call streams its reply from the start.
   */
  attempt: number;
  /** Set while the model is in a thinking block: characters of thought so far this attempt. */
  thinking?: number;
  /** What this attempt is billed for so far, once the API has taken the request. */
  billed?: Usage;
  /** What the attempts before this one were billed for and lost (carried from their heartbeats). */
  paidBefore?: PaidAgain;
}

/**
 * How much text a heartbeat carries. Heartbeats reach the server at most every 0.5 s (the worker's
 * throttle); a fast model streams well under 1,000 characters in that time.
 */
export const STREAM_TAIL_CHARS = 4096;

/** The text of a heartbeat's details, when they are a {@link StreamProgress}. */
export function asStreamProgress(details: unknown): StreamProgress | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { chars, tail, attempt, thinking } = details as Record<string, unknown>;
  if (typeof chars !== 'number' || typeof tail !== 'string' || typeof attempt !== 'number') return undefined;
  return { chars, tail, attempt, ...(typeof thinking === 'number' ? { thinking } : {}) };
}

/**
 * What a call's earlier attempts lost, from the last heartbeat of the attempt before this one
 * (`info.heartbeatDetails`): what it carried from its own predecessors, plus what it was billed
 * for itself if the API had taken its request. Undefined for a first attempt, or one whose
 * predecessors never got a request through.
 */
export function paidAgainBefore(previous: unknown): PaidAgain | undefined {
  if (typeof previous !== 'object' || previous === null) return undefined;
  const { billed, paidBefore } = previous as Record<string, unknown>;
  const carried = asPaidAgain(paidBefore);
  if (!isUsage(billed)) return carried;
  const before = carried?.usage;
  return {
    attempts: (carried?.attempts ?? 0) + 1,
    usage: {
      input_tokens: (before?.input_tokens ?? 0) + billed.input_tokens,
      output_tokens: (before?.output_tokens ?? 0) + billed.output_tokens,
      cache_creation_input_tokens: (before?.cache_creation_input_tokens ?? 0) + billed.cache_creation_input_tokens,
      cache_read_input_tokens: (before?.cache_read_input_tokens ?? 0) + billed.cache_read_input_tokens,
    },
  };
}

function asPaidAgain(value: unknown): PaidAgain | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { attempts, usage } = value as Record<string, unknown>;
  return typeof attempts === 'number' && attempts > 0 && isUsage(usage) ? { attempts, usage } : undefined;
}

function isUsage(value: unknown): value is Usage {
  if (typeof value !== 'object' || value === null) return false;
  const usage = value as Record<string, unknown>;
  return (['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const).every(
    (key) => typeof usage[key] === 'number' && Number.isFinite(usage[key]) && (usage[key] as number) >= 0,
  );
}
