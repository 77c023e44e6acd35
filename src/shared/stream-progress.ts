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
}

/**
 * How much text a heartbeat carries. Heartbeats reach the server at most every 0.5 s (the worker's
 * throttle); a fast model streams well under 1,000 characters in that time.
 */
export const STREAM_TAIL_CHARS = 4096;

/** The text of a heartbeat's details, when they are a {@link StreamProgress}. */
export function asStreamProgress(details: unknown): StreamProgress | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { chars, tail, attempt } = details as Record<string, unknown>;
  if (typeof chars !== 'number' || typeof tail !== 'string' || typeof attempt !== 'number') return undefined;
  return { chars, tail, attempt };
}
