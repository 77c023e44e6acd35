/**
 * Public data shapes of the scripted model server: what a test scripts, and what the server
 * records. Plain data only, so a session can live in a JSON file (see `script.ts`).
 */

/** One content block the scripted model "generates". Mirrors the API's response blocks. */
export type ScriptedBlock =
  { type: 'text'; text: string } | ScriptedToolUseBlock | ScriptedThinkingBlock | ScriptedRedactedThinkingBlock;

/**
 * The model thought: a `thinking` block, anywhere in a reply (first, as the model usually thinks
 * before it acts, or between tool calls). The server adds the `signature` (an HMAC of the text
 * under a key of its own, see `thinkingKey`) and refuses the block when it comes back changed. A
 * reply that thinks answers only a request with thinking on (`thinking.type` `enabled`,
 * `adaptive` or `between_tools`); one whose script thinks while the request asks for none gets a
 * 400 naming the turn. With `display: 'omitted'` the text goes out empty, signed as such, and
 * still counts in `output_tokens`. Whether the model thought is said per turn: by the blocks of
 * that turn's reply.
 */
export interface ScriptedThinkingBlock {
  type: 'thinking';
  thinking: string;
}

/**
 * Thinking the API sends encrypted. The server sends `data` as an opaque sealed token that
 * carries this text (whole, in `content_block_start`), and refuses the block when it comes back
 * changed. Its text counts in `output_tokens`.
 */
export interface ScriptedRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** A tool call the scripted model makes. */
export interface ScriptedToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  /** The input a non-streaming response carries; a stream sends its JSON unless `partial_json` is set. */
  input: unknown;
  /**
   * The input JSON text as the stream sends it when the reply was cut in the middle of this call
   * (e.g. `'{"command":"ls","timeo'`). Only on the last block of a reply whose `stop_reason` says
   * it was cut: `max_tokens`, `model_context_window_exceeded` or `refusal`.
   */
  partial_json?: string;
}

/** The API's stop reasons that a scripted reply may claim. */
export type ScriptedStopReason =
  'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

/** Why a refusal happened, as the API reports it in `stop_details` (both fields may be null). */
export interface ScriptedRefusalDetails {
  type: 'refusal';
  category: string | null;
  explanation: string | null;
}

/** Token counters as the API reports them. */
export interface ScriptedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** The assistant message returned for one turn. */
export interface ScriptedReply {
  content: ScriptedBlock[];
  /** Defaults to `'tool_use'` when any block is a tool_use, else `'end_turn'`. */
  stop_reason?: ScriptedStopReason;
  /**
   * Only with `stop_reason: 'refusal'`, where the API always sends one; defaults to
   * `{ type: 'refusal', category: null, explanation: null }`.
   */
  stop_details?: ScriptedRefusalDetails;
  /**
   * Overrides for the estimated usage (input ≈ request chars / 4, output ≈ reply chars / 4,
   * thinking included: the API bills it as output).
   */
  usage?: Partial<ScriptedUsage>;
}

/**
 * A failure (or an unusual answer) injected instead of, or in the middle of, a normal answer.
 *
 * - `http`: a plain JSON error response in the real API's shape.
 * - `stream_error`: HTTP 200 and SSE, then an `event: error` frame after `afterBlocks` complete
 *   content blocks (default 0: right after `message_start` and `ping`). With `midBlock`, the next
 *   block is opened and streamed too, but never closed: a thinking block then ends before its
 *   `signature_delta`, so the client is left holding thinking without a signature.
 * - `drop`: like `stream_error`, but the socket is destroyed instead of sending an error frame.
 * - `hang`: the request is read and never answered, until the client gives up.
 * - `reply`: this attempt is answered with another reply than the turn's own: an empty, cut or
 *   refused one. A reply that the client does not write into its transcript leaves the next
 *   request on the same turn, so without this the same reply would answer it again.
 *
 * On a non-streaming request `stream_error` becomes a plain HTTP error of the matching status
 * and `drop` destroys the socket before any response byte.
 */
export type Fault =
  | {
      kind: 'http';
      status: number;
      errorType: string;
      message?: string;
      retryAfterSeconds?: number;
      /** Sent as `error.details.error_code`, e.g. `enforced_spend_limit_reached` on a 429. */
      errorCode?: string;
    }
  | {
      kind: 'stream_error';
      afterBlocks?: number;
      midBlock?: boolean;
      errorType: string;
      message?: string;
      errorCode?: string;
    }
  | { kind: 'drop'; afterBlocks?: number; midBlock?: boolean }
  | { kind: 'hang' }
  | { kind: 'reply'; reply: ScriptedReply };

/** Where a fault applies: turn index and 1-based attempt number for that turn. */
export interface FaultTarget {
  turn: number;
  attempt: number;
}

/** A fault bound to one (turn, attempt). */
export type ScheduledFault = FaultTarget & Fault;

/**
 * Where a compaction fault applies: the 0-based number of the distinct compaction and the
 * 1-based attempt at it. A retry of the same compaction request is the same `index`, next
 * `attempt` (see {@link ScriptedCompactions} for how the server tells the two apart).
 */
export interface CompactionTarget {
  index: number;
  attempt: number;
}

/** A fault bound to one (compaction index, attempt). */
export type ScheduledCompactionFault = CompactionTarget & Fault;

/**
 * How the scripted model answers compaction requests: requests whose last user message begins
 * with `COMPACTION_PROMPT_MARKER` (src/shared/compact-prompt.ts). They are not scripted turns and
 * never consume `replies[i]`.
 *
 * Compactions are numbered in order of first arrival. A compaction request is the same
 * compaction as an earlier one (a retry) when it is on the same turn and continues from the same
 * earlier summary (or from none); anything else is the next compaction.
 */
export interface ScriptedCompactions {
  /**
   * `replies[i]` answers compaction `i`; without one the server writes a summary itself, a
   * deterministic text with the usual seven sections and a line naming that compaction.
   */
  replies?: ScriptedReply[];
  faults?: ScheduledCompactionFault[];
}

/** Everything the server needs to impersonate the model for one conversation. */
export interface ScriptedSession {
  /** Used in error messages, e.g. "scripted session `demo` has no reply for turn 3". */
  name?: string;
  /**
   * `replies[i]` answers every request on turn `i`: one whose `messages` hold `i` assistant
   * messages, counted on across compactions (see {@link RecordedRequest.turn}).
   */
  replies: ScriptedReply[];
  faults?: ScheduledFault[];
  /** Compaction requests: scripted summaries and faults. By default they are answered automatically. */
  compactions?: ScriptedCompactions;
  /**
   * The model's context window in tokens. A request whose estimated input (chars / 4 of system,
   * messages and tools, as `count_tokens` reports it) exceeds it gets the real API's 400
   * `prompt is too long: <N> tokens > <M> maximum`. Unset: no limit.
   */
  contextWindow?: number;
  /** Lifetime of a default (`5m`) prompt-cache entry, so tests can let the cache go cold. Default 5 minutes. */
  cacheTtlMs?: number;
  /** Delay between SSE frames after the first ones, for every turn. */
  chunkDelayMs?: number;
  /** Per-turn override of `chunkDelayMs` (turn index → delay in ms). */
  slowTurns?: Record<number, number>;
}

/** What a recorded request was: a scripted turn, or a request to summarise the conversation. */
export type RequestKind = 'turn' | 'compaction';

/** A `POST /v1/messages` request as the server received it, recorded before it is answered. */
export interface RecordedRequest {
  kind: RequestKind;
  /**
   * The request's turn: the number of assistant messages in its `messages`, counted on across
   * compactions and across messages a request leaves out (see turns.ts for the rules).
   */
  turn: number;
  /**
   * 1 + number of earlier requests for the same turn (kind `turn`), or for the same compaction
   * (kind `compaction`).
   */
  attempt: number;
  /** Kind `compaction` only: the 0-based number of the distinct compaction. */
  compaction?: number;
  /** Parsed JSON body, or the raw text when it was not valid JSON. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- arbitrary client JSON; tests poke into it freely
  headers: Record<string, string | string[] | undefined>;
}
