import { InvalidArgumentError } from 'commander';
import { effortOf, parseThinkingTokens, thinkingSettingOf } from '../src/client/session-options';
import { modelFeaturesFor, thinkingNotice, thinkingRequest } from '../src/shared/thinking';

describe('thinkingRequest: what a call sends, as Claude Code 2.1.332 sends it per model', () => {
  const adaptive = { mode: 'adaptive' } as const;

  test('the 5.x family: adaptive at medium effort, whatever else was asked', () => {
    expect(thinkingRequest('claude-sonnet-5-5', adaptive, undefined, 128_000)).toEqual({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'medium' },
    });
    expect(thinkingRequest('claude-opus-5-5', { mode: 'disabled' }, 'high', 128_000)).toEqual({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    });
    expect(modelFeaturesFor('claude-opus-5-5').defaultMaxTokens).toBe(128_000);
  });

  test('4.6: adaptive at high effort; disabled is sent; a budget only turns thinking on', () => {
    expect(thinkingRequest('claude-sonnet-4-6', adaptive, undefined, 32_000)).toEqual({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    });
    expect(thinkingRequest('claude-sonnet-4-6', { mode: 'disabled' }, undefined, 32_000)).toEqual({
      thinking: { type: 'disabled' },
      output_config: { effort: 'high' },
    });
    expect(thinkingRequest('claude-sonnet-4-6', { mode: 'enabled', budgetTokens: 4000 }, undefined, 32_000)).toEqual({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    });
  });

  test('4.5: a manual budget (all but one token of the limit by default), no effort', () => {
    expect(thinkingRequest('claude-sonnet-4-5-20250929', adaptive, 'low', 32_000)).toEqual({
      thinking: { type: 'enabled', budget_tokens: 31_999 },
    });
    expect(thinkingRequest('claude-haiku-4-5', { mode: 'enabled', budgetTokens: 4000 }, undefined, 32_000)).toEqual({
      thinking: { type: 'enabled', budget_tokens: 4000 },
    });
    // A budget never reaches max_tokens, and a limit too small for the smallest budget sends none.
    expect(thinkingRequest('claude-haiku-4-5', { mode: 'enabled', budgetTokens: 50_000 }, undefined, 8_000)).toEqual({
      thinking: { type: 'enabled', budget_tokens: 7_999 },
    });
    expect(thinkingRequest('claude-haiku-4-5', adaptive, undefined, 1_000)).toEqual({ thinking: { type: 'disabled' } });
    expect(thinkingRequest('claude-sonnet-4-5', { mode: 'disabled' }, undefined, 32_000)).toEqual({
      thinking: { type: 'disabled' },
    });
  });

  test('display is sent only when asked; a job from before thinking sends nothing', () => {
    expect(thinkingRequest('claude-sonnet-5-5', { mode: 'adaptive', display: 'omitted' }, 'low', 1000)).toEqual({
      thinking: { type: 'adaptive', display: 'omitted' },
      output_config: { effort: 'low' },
    });
    expect(thinkingRequest('claude-sonnet-5-5', undefined, 'high', 1000)).toEqual({});
  });

  test('an unknown model is asked as Claude Code asks it: adaptive at high effort, 32,000 tokens', () => {
    expect(thinkingRequest('my-gateway-model', adaptive, undefined, 32_000)).toEqual({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    });
    expect(modelFeaturesFor('my-gateway-model')).toMatchObject({ known: false, defaultMaxTokens: 32_000 });
  });

  test('flags that do not mean what they say on a model are named once', () => {
    expect(thinkingNotice('claude-opus-5-5', { mode: 'disabled' }, undefined)).toMatch(/cannot turn it off/);
    expect(thinkingNotice('claude-sonnet-4-6', { mode: 'enabled', budgetTokens: 4000 }, undefined)).toMatch(
      /only turns thinking on/,
    );
    expect(thinkingNotice('claude-sonnet-4-5', { mode: 'adaptive' }, 'high')).toMatch(/takes no effort level/);
    expect(thinkingNotice('claude-sonnet-4-6', { mode: 'disabled' }, 'low')).toBeUndefined();
  });
});

describe('the thinking flags', () => {
  test('default: adaptive; a budget means enabled; 0 means disabled', () => {
    expect(thinkingSettingOf({})).toEqual({ mode: 'adaptive' });
    expect(thinkingSettingOf({ maxThinkingTokens: 4000 })).toEqual({ mode: 'enabled', budgetTokens: 4000 });
    expect(thinkingSettingOf({ maxThinkingTokens: 0 })).toEqual({ mode: 'disabled' });
    expect(thinkingSettingOf({ thinking: 'disabled' })).toEqual({ mode: 'disabled' });
    expect(thinkingSettingOf({ thinkingDisplay: 'omitted' })).toEqual({ mode: 'adaptive', display: 'omitted' });
  });

  test('bad values say what is wrong and what is accepted', () => {
    expect(() => thinkingSettingOf({ thinking: 'on' })).toThrow(
      new InvalidArgumentError(
        '--thinking must be one of adaptive, enabled, disabled (got "on"); e.g. --thinking disabled.',
      ),
    );
    expect(() => thinkingSettingOf({ maxThinkingTokens: 500 })).toThrow(/at least 1024/);
    expect(() => thinkingSettingOf({ thinking: 'disabled', maxThinkingTokens: 4000 })).toThrow(/keep one of them/);
    expect(() => thinkingSettingOf({ thinkingDisplay: 'full' })).toThrow(/summarized, omitted/);
    expect(() => effortOf('extreme')).toThrow(/low, medium, high, xhigh, max/);
    expect(effortOf('xhigh')).toBe('xhigh');
    expect(() => parseThinkingTokens('4k')).toThrow(/whole number/);
    expect(parseThinkingTokens('4096')).toBe(4096);
  });
});
