import {
  afterCompaction,
  afterCompactionFailure,
  afterModelCall,
  estimateContextTokens,
  initialContextState,
  overBudgetResults,
  pendingChars,
  planContext,
} from '../../src/shared/context/context-state';
import { contextThresholds, modelLimitsFor } from '../../src/shared/context/model-limits';

const usage = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

describe('model limits and thresholds', () => {
  test("Claude Code's autocompact threshold: window - min(max output, 20k) - 13k", () => {
    expect(contextThresholds({ contextWindow: 200_000, maxOutputTokens: 64_000 }, 32_000)).toEqual({
      contextWindow: 200_000,
      autocompactAt: 167_000,
      microcompactAt: 147_000,
    });
    // A small output limit leaves more room for the prompt.
    expect(contextThresholds({ contextWindow: 200_000, maxOutputTokens: 64_000 }, 8_000).autocompactAt).toBe(179_000);
  });

  test('the longest prefix wins; settings come before the table; unknown models get the default', () => {
    expect(modelLimitsFor('claude-haiku-4-5-20251001')).toMatchObject({ contextWindow: 200_000, source: 'built-in' });
    expect(modelLimitsFor('claude-sonnet-4-6')).toMatchObject({ contextWindow: 1_000_000 });
    expect(modelLimitsFor('claude-sonnet-4-20250514')).toMatchObject({ contextWindow: 200_000 });
    const own = [{ prefix: 'claude-haiku', contextWindow: 50_000, maxOutputTokens: 8_000 }];
    expect(modelLimitsFor('claude-haiku-4-5', own)).toEqual({
      contextWindow: 50_000,
      maxOutputTokens: 8_000,
      source: 'settings',
    });
    expect(modelLimitsFor('claude-sonnet-5-5')).toMatchObject({ contextWindow: 1_000_000, maxOutputTokens: 128_000 });
    expect(modelLimitsFor('my-local-model')).toMatchObject({ contextWindow: 200_000, source: 'default' });
  });
});

describe('planContext', () => {
  const thresholds = { contextWindow: 200_000, autocompactAt: 167_000, microcompactAt: 147_000 };
  const seen = afterModelCall(initialContextState(), {
    usage: usage(100_000, 1_000),
    requestChars: 404_000,
    clearedBefore: 0,
    now: 1_000,
  });

  test('estimates from the last usage plus what was added, scaled by the calibrated ratio', () => {
    // 101,000 tokens for 404,000 chars: 0.25 tokens per char.
    expect(estimateContextTokens(seen, 40_000)).toBe(111_000);
  });

  test('nothing below the thresholds, microcompact above the lower one, autocompact above the upper', () => {
    expect(planContext({ context: seen, addedChars: 0, thresholds, now: 2_000 }).action).toBe('none');
    expect(planContext({ context: seen, addedChars: 200_000, thresholds, now: 2_000 }).action).toBe('microcompact');
    expect(planContext({ context: seen, addedChars: 300_000, thresholds, now: 2_000 }).action).toBe('autocompact');
  });

  test('a cold prompt cache (last call older than the TTL) microcompacts at any size', () => {
    const plan = planContext({ context: seen, addedChars: 0, thresholds, now: 1_000 + 5 * 60_000 + 1 });
    expect(plan).toMatchObject({ action: 'microcompact', cacheCold: true });
    expect(planContext({ context: seen, addedChars: 0, thresholds, now: 1_000 + 60_000 }).cacheCold).toBe(false);
  });

  test('with autocompact off, a full context only microcompacts (and the API has the last word)', () => {
    const off = { ...seen, autocompactOff: 'failed' };
    expect(planContext({ context: off, addedChars: 300_000, thresholds, now: 2_000 }).action).toBe('microcompact');
  });
});

describe('compaction bookkeeping', () => {
  test('three failures in a row turn autocompact off, saying why', () => {
    let context = initialContextState();
    const notices: string[] = [];
    for (let i = 0; i < 3; i++) {
      const next = afterCompactionFailure(context, `boom ${i}`);
      context = next.context;
      notices.push(next.notice);
    }
    expect(context.autocompactOff).toContain('3 compactions in a row failed (last: boom 2)');
    expect(notices[0]).toContain('will try again');
    expect(notices[2]).toContain('autocompact stopped');
  });

  test('a success resets the failure count', () => {
    const failed = afterCompactionFailure(initialContextState(), 'x').context;
    expect(afterCompaction(failed, { chars: 1_000, turn: 5 }).context.consecutiveFailures).toBe(0);
  });

  test('three compactions that refill at once (consecutive turns) turn autocompact off', () => {
    let context = initialContextState();
    let notice: string | undefined;
    for (const turn of [10, 11, 12]) ({ context, notice } = afterCompaction(context, { chars: 1_000, turn }));
    expect(context.autocompactOff).toContain('filled up again right after each of 3 compactions');
    expect(notice).toContain('autocompact stopped');
  });

  test('compactions with real work between them never stop autocompact', () => {
    let context = initialContextState();
    for (const turn of [10, 30, 50, 70]) context = afterCompaction(context, { chars: 1_000, turn }).context;
    expect(context.autocompactOff).toBeUndefined();
    expect(context.compactions).toBe(4);
  });
});

describe('the per-turn tool-result budget', () => {
  test('under 200,000 characters in all, nothing goes aside', () => {
    expect(
      overBudgetResults([
        { chars: 150_000, canGoAside: true },
        { chars: 49_000, canGoAside: true },
      ]),
    ).toEqual([]);
  });

  test('over it, the largest go aside first until the rest fit', () => {
    const results = [40_000, 49_000, 45_000, 30_000, 48_000, 20_000].map((chars) => ({ chars, canGoAside: true }));
    // 232,000 in all: setting aside the 49k one (keeping a 2.5k preview) leaves 185,500.
    expect(overBudgetResults(results)).toEqual([1]);
  });

  test('errors and inline results stay; only candidates go', () => {
    const results = [
      { chars: 120_000, canGoAside: false },
      { chars: 60_000, canGoAside: true },
      { chars: 45_000, canGoAside: true },
    ];
    expect(overBudgetResults(results)).toEqual([1]);
  });

  test('pending characters count text, inline results, refs by size and aside refs as a preview', () => {
    expect(
      pendingChars([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'abc' },
            { type: 'tool_result', tool_use_id: 't', content: '12345' },
            { type: 'tool_result_ref', tool_use_id: 'u', ref: 'sha256:x', is_error: false, chars: 1_000 },
            { type: 'tool_result_ref', tool_use_id: 'v', ref: 'sha256:y', is_error: false, chars: 90_000, aside: true },
          ],
        },
      ]),
    ).toBe(3 + 5 + 1_000 + 2_500);
  });
});

describe('autocompact after it stopped', () => {
  test('stopped by failures: the next compaction that works (a reactive one) turns it back on', () => {
    let context = initialContextState();
    for (let i = 0; i < 3; i++) context = afterCompactionFailure(context, 'api_error').context;
    expect(context.autocompactOffBy).toBe('failures');
    const after = afterCompaction(context, { chars: 1_000, turn: 40 });
    expect(after.context.autocompactOff).toBeUndefined();
    expect(after.notice).toBe('autocompact back on: a compaction worked again');
  });

  test('stopped by refills: it stays off, the content keeps refilling the window', () => {
    let context = initialContextState();
    for (const turn of [10, 11, 12]) context = afterCompaction(context, { chars: 1_000, turn }).context;
    expect(context.autocompactOffBy).toBe('refills');
    expect(afterCompaction(context, { chars: 1_000, turn: 40 }).context.autocompactOff).toBeDefined();
  });
});
