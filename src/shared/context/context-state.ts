import type { Usage } from '../messages';
import type { PendingUserMessage } from '../transcript';
import type { ContextThresholds } from './model-limits';

/**
 * What the loop knows about the size of its context, kept in the State. Plain numbers only:
 * nothing here grows with the job's age.
 */
export interface ContextState {
  /** Tokens the last reply's request and reply held, from the API's usage. 0 before the first call. */
  lastTokens: number;
  /** Characters of the last request's system, tools and messages (to scale characters to tokens). */
  lastRequestChars: number;
  /** Workflow time (ms) of the last reply; the prompt cache goes cold some minutes after it. */
  lastCallAt?: number;
  /** Tool results in transcript messages before this index are sent as a "cleared" marker. */
  clearedBefore: number;
  /** Compactions done in this job. */
  compactions: number;
  /** Compactions in a row that failed (the activity gave up). */
  consecutiveFailures: number;
  /** Compactions in a row after which the context was over the threshold again at once. */
  refillStreak: number;
  /** Turn of the last compaction, to tell a refill at once from one after real work. */
  lastCompactedTurn?: number;
  /** Set when autocompact stopped trying; says why. */
  autocompactOff?: string;
  /**
   * What stopped it: failures end with the next compaction that works (a reactive one), as
   * Claude Code's breaker resets on success; refills are a property of the content and stay.
   */
  autocompactOffBy?: 'failures' | 'refills';
  /** The turn microcompact last moved the boundary (its notice is given once per stretch of turns). */
  lastMicrocompactTurn?: number;
  /** The turn a prompt-too-long answer was last compacted for: a second one on it ends the job. */
  reactiveTurn?: number;
}

export const initialContextState = (): ContextState => ({
  lastTokens: 0,
  lastRequestChars: 0,
  clearedBefore: 0,
  compactions: 0,
  consecutiveFailures: 0,
  refillStreak: 0,
});

/** Rough characters per token when no usage has been seen yet. */
export const CHARS_PER_TOKEN = 4;

/** Tokens per character in this conversation, calibrated on the last request when there was one. */
export function tokensPerChar(context: ContextState): number {
  if (context.lastTokens > 0 && context.lastRequestChars > 0) return context.lastTokens / context.lastRequestChars;
  return 1 / CHARS_PER_TOKEN;
}

/**
 * The estimated prompt of the next call: the last call's real count (its reply included, which
 * the next request sends back) plus what was added since, `addedChars` characters.
 */
export function estimateContextTokens(context: ContextState, addedChars: number): number {
  return Math.round(context.lastTokens + addedChars * tokensPerChar(context));
}

/** Everything the API counted for one call: what it read (cached or not) and what it wrote. */
export function tokensOfCall(usage: Usage): number {
  return usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.output_tokens;
}

/** How long the API keeps a prompt prefix cached (`ephemeral`, 5 minutes) unless configured otherwise. */
export const DEFAULT_CACHE_TTL_MS = 5 * 60_000;
/** Tool results microcompact leaves as they are: the model is probably still working with them. */
export const KEEP_RECENT_TOOL_RESULTS = 5;
/** Autocompact stops after this many failed compactions in a row (Claude Code's limit). */
export const MAX_CONSECUTIVE_COMPACT_FAILURES = 3;
/** ... and after this many compactions in a row that left the context over the threshold at once. */
export const MAX_REFILL_STREAK = 3;

export type ContextAction = 'none' | 'microcompact' | 'autocompact';

/**
 * Phase 1's decision before a model call. Autocompact when the estimate passes its threshold (and
 * autocompact is still on); otherwise microcompact when the estimate passes the lower threshold or
 * the prompt cache has gone cold (clearing then costs no cache that is still warm).
 */
export function planContext(args: {
  context: ContextState;
  /** Characters waiting to be sent (tool results, user input) since the last call. */
  addedChars: number;
  thresholds: ContextThresholds;
  now: number;
  cacheTtlMs?: number;
}): { action: ContextAction; estimate: number; cacheCold: boolean } {
  const { context, thresholds, now } = args;
  const estimate = estimateContextTokens(context, args.addedChars);
  const cacheCold =
    context.lastCallAt !== undefined && now - context.lastCallAt > (args.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS);
  if (estimate > thresholds.autocompactAt && context.autocompactOff === undefined) {
    return { action: 'autocompact', estimate, cacheCold };
  }
  if (estimate > thresholds.microcompactAt || cacheCold) return { action: 'microcompact', estimate, cacheCold };
  return { action: 'none', estimate, cacheCold };
}

/** The context after a reply: its usage is the new baseline. */
export function afterModelCall(
  context: ContextState,
  call: { usage: Usage; requestChars: number; clearedBefore: number; now: number },
): ContextState {
  return {
    ...context,
    lastTokens: tokensOfCall(call.usage),
    lastRequestChars: call.requestChars,
    lastCallAt: call.now,
    clearedBefore: Math.max(context.clearedBefore, call.clearedBefore),
  };
}

/** The context after a compaction replaced the conversation by a summary and its recent tail. */
export function afterCompaction(
  context: ContextState,
  result: { chars: number; turn: number },
): { context: ContextState; notice?: string } {
  const ratio = tokensPerChar(context);
  const refilled = context.lastCompactedTurn !== undefined && result.turn - context.lastCompactedTurn <= 1;
  const refillStreak = refilled ? context.refillStreak + 1 : 1;
  const next: ContextState = {
    ...context,
    // The system prompt and tools are still sent: keep their share, counted in lastRequestChars.
    lastTokens: Math.round(result.chars * ratio),
    lastRequestChars: result.chars,
    clearedBefore: 0,
    compactions: context.compactions + 1,
    consecutiveFailures: 0,
    refillStreak,
    lastCompactedTurn: result.turn,
  };
  if (context.autocompactOffBy === 'failures') {
    delete next.autocompactOff;
    delete next.autocompactOffBy;
  }
  if (refillStreak >= MAX_REFILL_STREAK) {
    const why =
      `the context filled up again right after each of ${refillStreak} compactions in a row ` +
      '(the most recent messages or tool results alone nearly fill the window)';
    return {
      context: { ...next, autocompactOff: why, autocompactOffBy: 'refills' },
      notice: `autocompact stopped: ${why}`,
    };
  }
  const resumed = context.autocompactOffBy === 'failures';
  return resumed ? { context: next, notice: 'autocompact back on: a compaction worked again' } : { context: next };
}

/** The context after a compaction that failed; after three in a row autocompact stops. */
export function afterCompactionFailure(
  context: ContextState,
  detail: string,
): { context: ContextState; notice: string } {
  const consecutiveFailures = context.consecutiveFailures + 1;
  if (consecutiveFailures >= MAX_CONSECUTIVE_COMPACT_FAILURES) {
    const why = `${consecutiveFailures} compactions in a row failed (last: ${detail})`;
    return {
      context: { ...context, consecutiveFailures, autocompactOff: why, autocompactOffBy: 'failures' },
      notice: `autocompact stopped: ${why}`,
    };
  }
  return { context: { ...context, consecutiveFailures }, notice: `compaction failed (${detail}); will try again` };
}

/** Beyond the 50,000-character rule per result, one turn's results in all stay under this. */
export const TURN_TOOL_RESULTS_BUDGET_CHARS = 200_000;
/** What a result stored aside for the turn's budget still costs in the conversation (its preview). */
export const ASIDE_PREVIEW_CHARS = 2_500;

/**
 * Which of a turn's results go aside so the rest fit the per-turn budget: largest first, until
 * the total is under it. Indexes into `chars`; only results that can go aside are candidates.
 */
export function overBudgetResults(
  results: ReadonlyArray<{ chars: number; canGoAside: boolean }>,
  budget = TURN_TOOL_RESULTS_BUDGET_CHARS,
): number[] {
  let total = results.reduce((sum, result) => sum + result.chars, 0);
  if (total <= budget) return [];
  const candidates = results
    .map((result, index) => ({ ...result, index }))
    .filter((result) => result.canGoAside && result.chars > ASIDE_PREVIEW_CHARS)
    .sort((a, b) => b.chars - a.chars || a.index - b.index);
  const chosen: number[] = [];
  for (const candidate of candidates) {
    if (total <= budget) break;
    chosen.push(candidate.index);
    total -= candidate.chars - ASIDE_PREVIEW_CHARS;
  }
  return chosen.sort((a, b) => a - b);
}

/** Characters of messages waiting to be sent; a result whose size is unknown counts as a preview. */
export function pendingChars(pending: readonly PendingUserMessage[]): number {
  let chars = 0;
  for (const message of pending) {
    for (const block of message.content) {
      if (block.type === 'text') chars += block.text.length;
      else if (block.type === 'tool_result') chars += block.content.length;
      else if (block.type === 'text_ref') chars += block.chars;
      else chars += block.aside ? ASIDE_PREVIEW_CHARS : (block.chars ?? ASIDE_PREVIEW_CHARS);
    }
  }
  return chars;
}
