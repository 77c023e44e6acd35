/**
 * A model call's start-to-close timeout fits the longest reply it may ask for: the configured
 * floor plus an allowance per output token, capped. The pure rule, and what a job schedules when
 * max-output recovery raises the limit to 64k (real dev server, in-process worker, the scripted
 * model server).
 */
import type { ScriptedReply } from '../src/model-server';
import { DEFAULT_MAX_TOKENS, ESCALATED_MAX_TOKENS } from '../src/shared/recovery';
import { DEFAULT_SESSION_TIMEOUTS, MODEL_START_TO_CLOSE_CAP_MS, modelStartToCloseMs } from '../src/shared/session';
import { scriptedJobSuite, textReply, terminalOf } from './support/jobs';

const minutes = (ms: number) => ms / 60_000;

describe('model call start-to-close timeout', () => {
  test('grows with max_tokens from the 15-minute floor', () => {
    expect(minutes(modelStartToCloseMs(DEFAULT_SESSION_TIMEOUTS, 0))).toBe(15);
    const atDefault = modelStartToCloseMs(DEFAULT_SESSION_TIMEOUTS, DEFAULT_MAX_TOKENS);
    const at64k = modelStartToCloseMs(DEFAULT_SESSION_TIMEOUTS, ESCALATED_MAX_TOKENS);
    expect(atDefault).toBeGreaterThan(15 * 60_000);
    // Max-output recovery's 64k limit: room for 20 tokens a second on top of the floor.
    expect(at64k).toBe(15 * 60_000 + 64_000 * 50);
    expect(minutes(at64k)).toBeGreaterThan(60);
    expect(at64k).toBeGreaterThan(atDefault);
  });

  test('is capped, and never under the configured floor', () => {
    expect(modelStartToCloseMs(DEFAULT_SESSION_TIMEOUTS, 1_000_000)).toBe(MODEL_START_TO_CLOSE_CAP_MS);
    const longFloor = { ...DEFAULT_SESSION_TIMEOUTS, modelStartToCloseMs: 3 * 60 * 60_000 };
    expect(modelStartToCloseMs(longFloor, ESCALATED_MAX_TOKENS)).toBe(3 * 60 * 60_000);
    expect(modelStartToCloseMs(DEFAULT_SESSION_TIMEOUTS, Number.NaN)).toBe(15 * 60_000);
  });

  describe('in a job', () => {
    const { withJob } = scriptedJobSuite();

    test('the escalated 64k call is scheduled with the longer timeout, the first with the shorter', async () => {
      const cut: ScriptedReply = { content: [{ type: 'text', text: 'Half of the answer' }], stop_reason: 'max_tokens' };
      const session = { replies: [cut, textReply(' and the other half.')] };
      await withJob('model-timeouts', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        const sent = server.requests.map((r) => r.body.max_tokens as number);
        expect(sent).toEqual([DEFAULT_MAX_TOKENS, ESCALATED_MAX_TOKENS, ESCALATED_MAX_TOKENS]);
        const scheduled = ((await handle.fetchHistory()).events ?? [])
          .map((e) => e.activityTaskScheduledEventAttributes)
          .filter((a) => a?.activityType?.name === 'callModel')
          .map((a) => Number(a?.startToCloseTimeout?.seconds ?? 0) * 1000 + (a?.startToCloseTimeout?.nanos ?? 0) / 1e6);
        expect(scheduled).toEqual(sent.map((tokens) => modelStartToCloseMs(DEFAULT_SESSION_TIMEOUTS, tokens)));
      });
    });
  });
});
