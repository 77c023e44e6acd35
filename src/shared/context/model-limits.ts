/**
 * How much a model can read and write in one call. The loop's compaction thresholds are derived
 * from these numbers, so a wrong entry means compacting too early (wasted summaries) or too late
 * (a prompt_too_long). Users extend or correct the table with `modelLimits` in settings.
 */
export interface ModelLimits {
  /** Tokens of input plus output one request may hold. */
  contextWindow: number;
  /** The largest `max_tokens` the model accepts. */
  maxOutputTokens: number;
}

/** A model name prefix and its limits; the longest matching prefix wins. */
export interface ModelLimitsEntry extends ModelLimits {
  prefix: string;
}

/**
 * Current model families as the model overview documents them (checked 2026-12-01). Names are
 * prefixes, so dated ids (`claude-haiku-4-5-20251001`) match their alias.
 */
export const BUILT_IN_MODEL_LIMITS: readonly ModelLimitsEntry[] = [
  { prefix: 'claude-fable-5', contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  { prefix: 'claude-opus-5', contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  { prefix: 'claude-sonnet-5', contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  { prefix: 'claude-haiku-5', contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  { prefix: 'claude-opus-4-7', contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  { prefix: 'claude-opus-4-6', contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  { prefix: 'claude-sonnet-4-6', contextWindow: 1_000_000, maxOutputTokens: 64_000 },
  { prefix: 'claude-opus-4-5', contextWindow: 200_000, maxOutputTokens: 64_000 },
  { prefix: 'claude-sonnet-4-5', contextWindow: 200_000, maxOutputTokens: 64_000 },
  { prefix: 'claude-haiku-4-5', contextWindow: 200_000, maxOutputTokens: 64_000 },
  { prefix: 'claude-opus-4-1', contextWindow: 200_000, maxOutputTokens: 32_000 },
  { prefix: 'claude-sonnet-4', contextWindow: 200_000, maxOutputTokens: 64_000 },
  { prefix: 'claude-opus-4', contextWindow: 200_000, maxOutputTokens: 32_000 },
];

/**
 * What an unknown model is taken to have. Every current Claude model reads at least 200k tokens,
 * so assuming that much compacts early rather than failing late.
 */
export const DEFAULT_MODEL_LIMITS: ModelLimits = { contextWindow: 200_000, maxOutputTokens: 32_000 };

/** Limits of `model`: the user's entries first, then the built-in table, then the default. */
export function modelLimitsFor(
  model: string,
  userEntries: readonly ModelLimitsEntry[] = [],
): ModelLimits & { source: 'settings' | 'built-in' | 'default' } {
  const longest = (entries: readonly ModelLimitsEntry[]) =>
    entries.filter((entry) => model.startsWith(entry.prefix)).sort((a, b) => b.prefix.length - a.prefix.length)[0];
  const own = longest(userEntries);
  if (own) return { contextWindow: own.contextWindow, maxOutputTokens: own.maxOutputTokens, source: 'settings' };
  const known = longest(BUILT_IN_MODEL_LIMITS);
  if (known) return { contextWindow: known.contextWindow, maxOutputTokens: known.maxOutputTokens, source: 'built-in' };
  return { ...DEFAULT_MODEL_LIMITS, source: 'default' };
}

/** Room Claude Code leaves below the window besides the reply itself. */
export const AUTOCOMPACT_BUFFER_TOKENS = 13_000;
/** The reply's share of that room is capped: a summary never needs more. */
export const MAX_OUTPUT_RESERVE_TOKENS = 20_000;
/** Microcompact starts this far below the autocompact threshold (Claude Code's warning level). */
export const MICROCOMPACT_MARGIN_TOKENS = 20_000;

/** The context sizes at which the loop acts, for one model and output limit. */
export interface ContextThresholds {
  contextWindow: number;
  /** Above this, old tool results are cleared. */
  microcompactAt: number;
  /** Above this, the conversation is summarised. */
  autocompactAt: number;
}

/** Claude Code's autocompact threshold: window - min(max output, 20k) - 13k. */
export function contextThresholds(limits: ModelLimits, maxTokens: number): ContextThresholds {
  const reserve = Math.min(maxTokens, limits.maxOutputTokens, MAX_OUTPUT_RESERVE_TOKENS);
  const autocompactAt = Math.max(1, limits.contextWindow - reserve - AUTOCOMPACT_BUFFER_TOKENS);
  return {
    contextWindow: limits.contextWindow,
    autocompactAt,
    microcompactAt: Math.max(1, autocompactAt - MICROCOMPACT_MARGIN_TOKENS),
  };
}
