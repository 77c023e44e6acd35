import { decideWakeup, scheduleWakeupTool } from '../../src/shared/tools/schedule-wakeup';

const NOW = Date.UTC(2026, 11, 6, 17, 58, 11);

describe('ScheduleWakeup decisions', () => {
  test('a delay inside the bounds is kept, and the answer says when, in UTC', () => {
    const decision = decideWakeup({ delaySeconds: 270, reason: 'CI', prompt: 'check CI' }, 'toolu_1', NOW, undefined);
    expect(decision).toEqual({
      kind: 'scheduled',
      wakeup: { atMs: NOW + 270_000, prompt: 'check CI', reason: 'CI', toolUseId: 'toolu_1' },
      text: expect.stringMatching(/^Next wakeup scheduled for 18:02:41 UTC \(in 270s\)\. If you owe the user/),
    });
  });

  test.each([
    [30, 60],
    [-5, 60],
    [0.4, 60],
    [86_400, 3_600],
    [1_200.6, 1_201],
  ])('a delay of %p s is clamped to %p s, and the answer says so', (asked, used) => {
    const decision = decideWakeup({ delaySeconds: asked, reason: 'r', prompt: 'p' }, 't', NOW, undefined);
    if (decision.kind !== 'scheduled') throw new Error(decision.text);
    expect(decision.wakeup.atMs).toBe(NOW + used * 1000);
    expect(decision.text).toContain(`(in ${used}s) (clamped to ${used}s from your requested value).`);
  });

  test('without stop, delaySeconds, reason and prompt are required', () => {
    expect(decideWakeup({ reason: 'r', prompt: 'p' }, 't', NOW, undefined)).toEqual({
      kind: 'invalid',
      text: '`delaySeconds` and `reason` are required when `stop` is not true.',
    });
    expect(decideWakeup({ delaySeconds: 60, reason: 'r' }, 't', NOW, undefined)).toEqual({
      kind: 'invalid',
      text: '`prompt` is required when `stop` is not true.',
    });
  });

  test('stop cancels what is pending, and says whether anything was', () => {
    const pending = { atMs: NOW + 60_000, prompt: 'p', reason: 'r', toolUseId: 'x' };
    expect(decideWakeup({ stop: true, delaySeconds: 60 }, 't', NOW, pending)).toEqual({
      kind: 'stopped',
      text: expect.stringMatching(/^Wake-up cancelled: the one set for 17:59:11 UTC will not fire/),
    });
    expect(decideWakeup({ stop: true }, 't', NOW, undefined).text).toMatch(/^No wake-up was pending/);
  });

  test('the schema takes numbers and flags written as text, and refuses fields Claude Code does not have', () => {
    const schema = scheduleWakeupTool.inputSchema;
    expect(schema.parse({ delaySeconds: '90', reason: 'r', prompt: 'p', noop: 'true' })).toEqual({
      delaySeconds: 90,
      reason: 'r',
      prompt: 'p',
      noop: true,
    });
    expect(schema.safeParse({ delaySeconds: 'soon', reason: 'r', prompt: 'p' }).success).toBe(false);
    expect(schema.safeParse({ delaySeconds: 60, reason: 'r', prompt: 'p', cron: '* * * * *' }).success).toBe(false);
    expect(schema.safeParse({ delaySeconds: 60, reason: 'r', prompt: 'x'.repeat(40_000) }).success).toBe(false);
  });
});
