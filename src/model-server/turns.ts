/**
 * Which turn a request is on, across compactions. Without one, a request's turn is the number of
 * assistant messages it carries. After a compaction the agent's transcript restarts from a user
 * message holding the summary, then the most recent messages kept verbatim, then new ones; and a
 * compaction request itself may leave out the oldest messages to fit the window. The count must
 * go on regardless, so the script keeps working. Two rules, the first that applies wins:
 *
 * 1. Anchor: the last assistant message that equals a reply this server sent for turn t (compared
 *    on content, `cache_control` aside) puts the request on turn t + 1 + (assistant messages after
 *    it). Messages dropped before it, or a summary in place of them, change nothing; a reply the
 *    agent altered before writing it back (a cut tool call dropped) is skipped for an earlier one.
 *    When the same content was sent on several turns, the one nearest rule 2's count wins.
 * 2. Summary: a request whose first user message holds a summary this server sent (it carries a
 *    unique reference line) is on turn
 *
 *      offset + (assistants of the compaction request) − j + (assistants of this request),
 *
 *    where offset is the compaction request's turn minus its assistant messages, and j the largest
 *    number such that this request's first j assistant messages equal the compaction request's
 *    last j (kept ones, counted already). This covers a compaction that kept no message.
 * 3. Otherwise: the number of assistant messages.
 *
 * Nested compactions chain, since a compaction request's own turn is computed the same way.
 */
import { isDeepStrictEqual } from 'node:util';
import { contentBlocks, messageTexts, requestMessages, summaryFingerprints } from './compaction';

type Json = Record<string, unknown>;

/** A summary the server sent, and where the conversation it summarised stood. */
export interface SummaryRecord {
  /** The compaction that produced it. */
  index: number;
  fingerprints: string[];
  /** The compaction request's turn minus its assistant messages. */
  offset: number;
  /** The compaction request's assistant messages, normalised. */
  assistants: unknown[];
  /** The user's original request, carried from summary to summary. */
  primaryRequest: string;
}

/** A request's place in the conversation. */
export interface TurnIdentity {
  turn: number;
  /** The summary the request's transcript restarts from, if any. */
  base?: SummaryRecord;
}

/** A block as the model wrote it: what the SDK adds on parsing (`citations: null`) and `cache_control` aside. */
function normalised(block: Json): Json {
  if (block.type === 'text') return { type: 'text', text: block.text };
  if (block.type === 'tool_use') return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
  const { cache_control: _dropped, ...rest } = block;
  return rest;
}

function assistantContents(messages: Json[]): unknown[] {
  return messages.filter((m) => m.role === 'assistant').map((m) => contentBlocks(m.content).map(normalised));
}

/** JSON with object keys sorted, so equal contents give equal keys whatever order a client kept. */
function stableKey(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function nearest(candidates: number[], target: number): number {
  return candidates.reduce((best, t) => (Math.abs(t - target) < Math.abs(best - target) ? t : best));
}

/** The largest j such that the first j of `next` equal the last j of `previous`. */
function overlap(previous: unknown[], next: unknown[]): number {
  for (let j = Math.min(previous.length, next.length); j > 0; j--) {
    const tail = previous.slice(previous.length - j);
    if (tail.every((content, k) => isDeepStrictEqual(content, next[k]))) return j;
  }
  return 0;
}

/** The replies and summaries a server sent, and the turn arithmetic that follows from them. */
export class TurnLedger {
  private readonly summaries = new Map<number, SummaryRecord>();
  /** Turns each reply content was sent on, by {@link stableKey}. */
  private readonly replies = new Map<string, number[]>();

  /** The turn of a request body, and the summary it continues from. */
  identify(body: unknown): TurnIdentity {
    const messages = requestMessages(body);
    const assistants = assistantContents(messages);
    const base = this.summaryIn(messages.find((m) => m.role === 'user'));
    const counted = base
      ? base.offset + base.assistants.length - overlap(base.assistants, assistants) + assistants.length
      : assistants.length;
    const identity = (turn: number): TurnIdentity => (base ? { turn, base } : { turn });
    for (let k = assistants.length - 1; k >= 0; k--) {
      const sentOn = this.replies.get(stableKey(assistants[k]));
      if (!sentOn) continue;
      const after = assistants.length - 1 - k;
      return identity(nearest(sentOn, counted - 1 - after) + 1 + after);
    }
    return identity(counted);
  }

  /** Remember that `content` was sent as the reply for `turn`. */
  sent(turn: number, content: readonly unknown[]): void {
    const key = stableKey((content as Json[]).map(normalised));
    const turns = this.replies.get(key) ?? [];
    if (!turns.includes(turn)) this.replies.set(key, [...turns, turn]);
  }

  /**
   * Remember the summary `text` sent for compaction `index`, asked by `compactionBody` on `turn`.
   * A retry of the same compaction replaces what its earlier attempt left.
   */
  remember(index: number, text: string, compactionBody: unknown, turn: number, primaryRequest: string): void {
    const fingerprints = summaryFingerprints(text);
    if (fingerprints.length === 0) return;
    const assistants = assistantContents(requestMessages(compactionBody));
    this.summaries.set(index, { index, fingerprints, offset: turn - assistants.length, assistants, primaryRequest });
  }

  /** The most recent remembered summary that `message` holds. */
  private summaryIn(message: Json | undefined): SummaryRecord | undefined {
    if (!message || this.summaries.size === 0) return undefined;
    const text = messageTexts(message).join('\n');
    let found: SummaryRecord | undefined;
    for (const record of this.summaries.values()) {
      if (record.fingerprints.some((f) => text.includes(f)) && (!found || record.index > found.index)) found = record;
    }
    return found;
  }
}
