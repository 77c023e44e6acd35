/**
 * The price table and cost arithmetic (pure), `modelPrices` in settings files, and the
 * `--max-budget-usd` flag's parsing.
 */
import { InvalidArgumentError } from 'commander';
import { parseSettings } from '../src/activities/permission-settings';
import { parseBudgetUsd } from '../src/client/session-options';
import { formatCost } from '../src/client/render';
import {
  addModelUsage,
  callCostUsd,
  knownCostUsd,
  modelPricesFor,
  totalCostUsd,
  unpricedModels,
} from '../src/shared/pricing';
import type { Usage } from '../src/shared/messages';

const usage = (input: number, output: number, write = 0, read = 0): Usage => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: write,
  cache_read_input_tokens: read,
});

describe('the price table', () => {
  test('list prices per million tokens, for aliases and their dated snapshots', () => {
    expect(modelPricesFor('claude-sonnet-4-5-20250929')).toMatchObject({
      input: 3,
      output: 15,
      cacheWrite: 3.75,
      cacheRead: 0.3,
      source: 'built-in',
    });
    expect(modelPricesFor('claude-opus-4-20250514')).toMatchObject({ input: 15, output: 75 });
    expect(modelPricesFor('claude-opus-4-1')).toMatchObject({ input: 15, cacheRead: 1.5 });
    expect(modelPricesFor('claude-opus-4-7')).toMatchObject({ input: 5, output: 25, cacheWrite: 6.25 });
    expect(modelPricesFor('claude-haiku-4-5-20251001')).toMatchObject({ input: 1, output: 5, cacheRead: 0.1 });
    expect(modelPricesFor('claude-sonnet-5-5')).toMatchObject({ input: 2, output: 10, cacheWrite: 2.5 });
    expect(modelPricesFor('claude-opus-5-5')).toMatchObject({ input: 4, output: 20, cacheRead: 0.2 });
    expect(modelPricesFor('claude-opus-5')).toMatchObject({ input: 5, output: 25 });
    expect(modelPricesFor('claude-fable-5-1')).toMatchObject({ input: 10, cacheRead: 0.25 });
    expect(modelPricesFor('claude-fable-5')).toMatchObject({ input: 10, cacheRead: 1 });
  });

  test('a model nobody priced has no price: not a guess from its family', () => {
    expect(modelPricesFor('claude-opus-5-7')).toBeUndefined();
    expect(modelPricesFor('claude-sonnet-4-9')).toBeUndefined();
    expect(modelPricesFor('my-local-model')).toBeUndefined();
  });

  test('settings entries are prefixes, win over the table, the longest first', () => {
    const own = [
      { prefix: 'claude-', input: 1, output: 2, cacheWrite: 1.25, cacheRead: 0.1 },
      { prefix: 'claude-sonnet-5-5', input: 7, output: 8, cacheWrite: 9, cacheRead: 0.7 },
    ];
    expect(modelPricesFor('claude-sonnet-5-5', own)).toMatchObject({ input: 7, source: 'settings' });
    expect(modelPricesFor('claude-opus-5-7', own)).toMatchObject({ input: 1, source: 'settings' });
  });

  test('a call costs each counter at its rate', () => {
    const prices = modelPricesFor('claude-sonnet-4-5')!;
    // 1M input $3, 100k output $1.50, 200k cache writes $0.75, 1M cache reads $0.30.
    expect(callCostUsd(prices, usage(1_000_000, 100_000, 200_000, 1_000_000))).toBeCloseTo(5.55, 10);
  });

  test("Haiku 5.5's long prompts pay the higher rate on every token of the call", () => {
    const prices = modelPricesFor('claude-haiku-5-5')!;
    expect(callCostUsd(prices, usage(50_000, 10_000, 0, 50_000))).toBeCloseTo(0.005 + 0.005 + 0.0005, 10);
    expect(callCostUsd(prices, usage(50_000, 10_000, 0, 50_001))).toBeCloseTo(0.025 + 0.025 + 0.0025, 6);
  });

  test('usage adds up per model; an unpriced model makes the total unknown, not zero', () => {
    let modelUsage = addModelUsage(undefined, 'a', usage(10, 1, 2, 3), 0.5);
    modelUsage = addModelUsage(modelUsage, 'a', usage(5, 1, 0, 0), 0.25);
    modelUsage = addModelUsage(modelUsage, 'b', usage(1, 1, 0, 0), 1);
    expect(modelUsage.a).toEqual({
      inputTokens: 15,
      outputTokens: 2,
      cacheReadInputTokens: 3,
      cacheCreationInputTokens: 2,
      costUSD: 0.75,
    });
    expect(totalCostUsd(modelUsage)).toBe(1.75);
    modelUsage = addModelUsage(modelUsage, 'c', usage(1, 1), null);
    modelUsage = addModelUsage(modelUsage, 'c', usage(1, 1), null);
    expect(modelUsage.c?.costUSD).toBeNull();
    expect(totalCostUsd(modelUsage)).toBeNull();
    expect(knownCostUsd(modelUsage)).toBe(1.75);
    expect(unpricedModels(modelUsage)).toEqual(['c']);
    expect(formatCost({ modelUsage, maxBudgetUsd: 5 })).toContain(
      'cost unknown (at least $1.75) of the $5.00 budget: no price for c, add it to "modelPrices" in settings',
    );
    expect(formatCost({ modelUsage: { a: modelUsage.a! }, durationMs: 2_500, durationApiMs: 1_000 })).toBe(
      '  cost $0.7500 · took 2.5 s (API 1.0 s)',
    );
  });
});

describe('modelPrices in settings', () => {
  test('read as entries; cache prices default to 1.25x and 0.1x input', () => {
    const parsed = parseSettings(
      '/ws/.claude/settings.json',
      JSON.stringify({
        modelPrices: { 'my-model': { input: 4, output: 20 }, other: { input: 1, output: 2, cacheRead: 0 } },
      }),
    );
    expect(parsed.modelPrices).toEqual([
      { prefix: 'my-model', input: 4, output: 20, cacheWrite: 5, cacheRead: 0.4 },
      { prefix: 'other', input: 1, output: 2, cacheWrite: 1.25, cacheRead: 0 },
    ]);
  });

  test('a malformed entry names the file, the field and the fix', () => {
    const bad = (value: unknown) => () =>
      parseSettings('/ws/.claude/settings.json', JSON.stringify({ modelPrices: value }));
    expect(bad({ m: { input: -1, output: 2 } })).toThrow(/settings\.json: modelPrices\.m\.input/);
    expect(bad({ m: { input: 1 } })).toThrow(/modelPrices\.m\.output/);
    expect(bad({ m: { input: 1, output: 2, cache: 3 } })).toThrow(/Write it as \{"modelPrices"/);
    expect(bad([1])).toThrow(/modelPrices/);
  });
});

describe('--max-budget-usd', () => {
  test('takes a positive decimal', () => {
    expect(parseBudgetUsd('5')).toBe(5);
    expect(parseBudgetUsd('0.50')).toBe(0.5);
    expect(parseBudgetUsd('.25')).toBe(0.25);
  });

  test.each(['abc', '0', '0.0', '-1', '1e999', '1e3', 'Infinity', '', '$5'])('refuses %p with the fix', (value) => {
    expect(() => parseBudgetUsd(value)).toThrow(InvalidArgumentError);
    expect(() => parseBudgetUsd(value)).toThrow(/--max-budget-usd must be a positive amount in USD.*e\.g\./);
  });
});
