/**
 * What a model call costs, in USD. Prices are per million tokens, as Anthropic lists them, for
 * base input, output, 5-minute cache writes (the only cache the model calls ask for) and cache
 * reads. Users add or correct prices with `modelPrices` in settings. A model with no price has an
 * unknown cost: it is reported as unknown, never guessed.
 */
import type { Usage } from './messages';

/** USD per million tokens. */
export interface TokenRates {
  input: number;
  output: number;
  /** A 5-minute prompt-cache write. */
  cacheWrite: number;
  /** A prompt-cache hit. */
  cacheRead: number;
}

export interface ModelPrices extends TokenRates {
  /** Rates for every token of a call whose prompt (input, cache writes and reads) passes `aboveTokens`. */
  longPrompt?: TokenRates & { aboveTokens: number };
}

/** A model name and its prices. */
export interface ModelPricesEntry extends ModelPrices {
  prefix: string;
}

/** Where a price came from; `unknown` means the cost is not known. */
export type PriceSource = 'built-in' | 'settings' | 'unknown';

const rates = (input: number, output: number, cacheWrite: number, cacheRead: number): TokenRates => ({
  input,
  output,
  cacheWrite,
  cacheRead,
});

/**
 * Anthropic's list prices (the pricing page and the model overviews, checked 2026-12-01). Each
 * entry names a model id: it matches that id, its dated snapshots (`claude-haiku-4-5-20251001`,
 * `@20251001`) and a `[1m]`-style suffix, but not a later version: `claude-opus-5` does not price
 * `claude-opus-5-7`, whose price nobody here knows yet.
 */
export const BUILT_IN_MODEL_PRICES: readonly ModelPricesEntry[] = [
  { prefix: 'claude-fable-5-1', ...rates(10, 50, 12.5, 0.25) },
  { prefix: 'claude-mythos-5-1', ...rates(10, 50, 12.5, 0.25) },
  { prefix: 'claude-fable-5', ...rates(10, 50, 12.5, 1) },
  { prefix: 'claude-mythos-5', ...rates(10, 50, 12.5, 1) },
  { prefix: 'claude-opus-5-5', ...rates(4, 20, 5, 0.2) },
  { prefix: 'claude-opus-5', ...rates(5, 25, 6.25, 0.5) },
  { prefix: 'claude-sonnet-5-5', ...rates(2, 10, 2.5, 0.2) },
  { prefix: 'claude-sonnet-5', ...rates(2, 10, 2.5, 0.2) },
  // Haiku 5.5 is priced by prompt length: a prompt over 100k tokens pays five times as much.
  {
    prefix: 'claude-haiku-5-5',
    ...rates(0.1, 0.5, 0.125, 0.01),
    longPrompt: { aboveTokens: 100_000, ...rates(0.5, 2.5, 0.625, 0.05) },
  },
  { prefix: 'claude-opus-4-8', ...rates(5, 25, 6.25, 0.5) },
  { prefix: 'claude-opus-4-7', ...rates(5, 25, 6.25, 0.5) },
  { prefix: 'claude-opus-4-6', ...rates(5, 25, 6.25, 0.5) },
  { prefix: 'claude-opus-4-5', ...rates(5, 25, 6.25, 0.5) },
  { prefix: 'claude-opus-4-1', ...rates(15, 75, 18.75, 1.5) },
  { prefix: 'claude-opus-4-0', ...rates(15, 75, 18.75, 1.5) },
  { prefix: 'claude-opus-4', ...rates(15, 75, 18.75, 1.5) },
  { prefix: 'claude-sonnet-4-6', ...rates(3, 15, 3.75, 0.3) },
  { prefix: 'claude-sonnet-4-5', ...rates(3, 15, 3.75, 0.3) },
  { prefix: 'claude-sonnet-4-0', ...rates(3, 15, 3.75, 0.3) },
  { prefix: 'claude-sonnet-4', ...rates(3, 15, 3.75, 0.3) },
  { prefix: 'claude-3-7-sonnet', ...rates(3, 15, 3.75, 0.3) },
  { prefix: 'claude-haiku-4-5', ...rates(1, 5, 1.25, 0.1) },
  { prefix: 'claude-3-5-haiku', ...rates(0.8, 4, 1, 0.08) },
  { prefix: 'claude-3-haiku', ...rates(0.25, 1.25, 0.3, 0.03) },
];

/** What may follow a built-in id: a snapshot date, a Vertex-style `@date`, a `[1m]`-style variant. */
const ID_SUFFIX = /^(?:[-@]\d{8})?(?:\[[^\]]*\])?$/;

/** Share of the input price a cache write and a cache read cost when settings name only input and output. */
export const DEFAULT_CACHE_WRITE_FACTOR = 1.25;
export const DEFAULT_CACHE_READ_FACTOR = 0.1;

/**
 * Prices of `model`: the user's entries first (name prefixes, the longest wins, as `modelLimits`),
 * then the built-in table; undefined when neither knows it.
 */
export function modelPricesFor(
  model: string,
  userEntries: readonly ModelPricesEntry[] = [],
): (ModelPrices & { source: Exclude<PriceSource, 'unknown'> }) | undefined {
  const own = userEntries
    .filter((entry) => model.startsWith(entry.prefix))
    .sort((a, b) => b.prefix.length - a.prefix.length)[0];
  if (own) return { ...pricesOf(own), source: 'settings' };
  const known = BUILT_IN_MODEL_PRICES.find(
    (entry) => model.startsWith(entry.prefix) && ID_SUFFIX.test(model.slice(entry.prefix.length)),
  );
  return known ? { ...pricesOf(known), source: 'built-in' } : undefined;
}

function pricesOf(entry: ModelPricesEntry): ModelPrices {
  const { prefix: _prefix, ...prices } = entry;
  return prices;
}

/** Tokens of a call's prompt, as a prompt-length price tier counts them. */
export function promptTokens(usage: Usage): number {
  return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}

/** What one call with this usage costs, in USD. */
export function callCostUsd(prices: ModelPrices, usage: Usage): number {
  const tier = prices.longPrompt && promptTokens(usage) > prices.longPrompt.aboveTokens ? prices.longPrompt : prices;
  return (
    (usage.input_tokens * tier.input +
      usage.output_tokens * tier.output +
      usage.cache_creation_input_tokens * tier.cacheWrite +
      usage.cache_read_input_tokens * tier.cacheRead) /
    1_000_000
  );
}

/** One model's share of a job, in the shape of Claude Code's `modelUsage`. */
export interface ModelUsageEntry {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /** Null when no price is known for the model: its cost is unknown, not zero. */
  costUSD: number | null;
}

/**
 * What a job paid again because model call attempts were cut off mid-stream (a worker crash, a
 * dropped stream): the attempts lost, their tokens (output estimated) and cost. Included in
 * `modelUsage` and the total cost, which are the bill.
 */
export interface PaidAgainReport extends ModelUsageEntry {
  attempts: number;
}

/** Usage and cost per model, as Claude Code's `modelUsage`. */
export type ModelUsage = Record<string, ModelUsageEntry>;

/** `modelUsage` after one more call of `model`; `costUsd` null when its price is unknown. */
export function addModelUsage(
  modelUsage: ModelUsage | undefined,
  model: string,
  usage: Usage,
  costUsd: number | null,
): ModelUsage {
  const before = modelUsage?.[model];
  const entry: ModelUsageEntry = {
    inputTokens: (before?.inputTokens ?? 0) + usage.input_tokens,
    outputTokens: (before?.outputTokens ?? 0) + usage.output_tokens,
    cacheReadInputTokens: (before?.cacheReadInputTokens ?? 0) + usage.cache_read_input_tokens,
    cacheCreationInputTokens: (before?.cacheCreationInputTokens ?? 0) + usage.cache_creation_input_tokens,
    // Once a call's cost is unknown, the model's total is too.
    costUSD: before && before.costUSD === null ? null : costUsd === null ? null : (before?.costUSD ?? 0) + costUsd,
  };
  return { ...modelUsage, [model]: entry };
}

/** The job's cost so far: the sum over its models, null if any of them has no price. */
export function totalCostUsd(modelUsage: ModelUsage | undefined): number | null {
  let total = 0;
  for (const entry of Object.values(modelUsage ?? {})) {
    if (entry.costUSD === null) return null;
    total += entry.costUSD;
  }
  return total;
}

/** What the priced models cost; a lower bound of the total when some model has no price. */
export function knownCostUsd(modelUsage: ModelUsage | undefined): number {
  return Object.values(modelUsage ?? {}).reduce((sum, entry) => sum + (entry.costUSD ?? 0), 0);
}

/** The models of a job whose cost is unknown. */
export function unpricedModels(modelUsage: ModelUsage | undefined): string[] {
  return Object.entries(modelUsage ?? {})
    .filter(([, entry]) => entry.costUSD === null)
    .map(([model]) => model);
}

/** USD as people read it: cents for larger sums, four decimals for small ones. */
export function formatUsd(usd: number): string {
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  return `$${usd.toFixed(4)}`;
}

/** The `modelPrices` entry a user would add for `model`, as an example in messages. */
export function modelPricesExample(model: string): string {
  return `{"modelPrices": {"${model}": {"input": 3, "output": 15}}}`;
}
