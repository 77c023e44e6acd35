import { formatCost } from '../src/client/render';
import { resultMessage } from '../src/client/output-format';
import type { Terminal } from '../src/shared/terminal';
import { paidAgainBefore } from '../src/shared/stream-progress';

const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: cacheWrite,
});

describe('what cut-off attempts of a model call cost again', () => {
  test('a first attempt, or one whose predecessor never got its request through, lost nothing', () => {
    expect(paidAgainBefore(undefined)).toBeUndefined();
    expect(paidAgainBefore({ chars: 0, tail: '', attempt: 1 })).toBeUndefined();
  });

  test('each attempt carries what all before it lost: two crashes in a row count twice', () => {
    const second = paidAgainBefore({ chars: 40, tail: 'x', attempt: 1, billed: usage(1000, 10, 500) });
    expect(second).toEqual({ attempts: 1, usage: usage(1000, 10, 500) });
    const third = paidAgainBefore({
      chars: 8,
      tail: 'y',
      attempt: 2,
      billed: usage(1000, 2, 0, 500),
      paidBefore: second,
    });
    expect(third).toEqual({ attempts: 2, usage: usage(2000, 12, 500, 500) });
    // An attempt that died before the API took its request adds nothing, but keeps what it carried.
    expect(paidAgainBefore({ chars: 0, tail: '', attempt: 3, paidBefore: third })).toEqual(third);
  });

  test('heartbeat details from anyone (a malformed or hostile payload) count for nothing', () => {
    expect(paidAgainBefore({ billed: { input_tokens: '1000' } })).toBeUndefined();
    expect(paidAgainBefore({ billed: usage(-5, 0) })).toBeUndefined();
    expect(paidAgainBefore({ paidBefore: { attempts: 1, usage: { input_tokens: 1 } } })).toBeUndefined();
    expect(paidAgainBefore('billed')).toBeUndefined();
  });

  test('the summary line and the json result say what was paid again', () => {
    const paidAgain = {
      attempts: 2,
      inputTokens: 2000,
      outputTokens: 12,
      cacheReadInputTokens: 500,
      cacheCreationInputTokens: 0,
      costUSD: 0.0075,
    };
    const line = formatCost({ modelUsage: { 'claude-sonnet-5-5': { ...paidAgain, costUSD: 0.02 } }, paidAgain });
    expect(line).toContain('paid again for 2 cut-off attempts: 2,512 tokens, $0.0075');
    const terminal = {
      reason: 'completed',
      turnCount: 1,
      finalText: 'ok',
      usage: usage(1, 1),
      paidAgain,
    } as unknown as Terminal;
    expect(resultMessage('job-1', terminal).paid_again).toEqual(paidAgain);
    expect(resultMessage('job-1', { ...terminal, paidAgain: undefined }).paid_again).toBeUndefined();
  });
});
