import {
  afterFire,
  CRON_MAX_AGE_MS,
  cronCreateTool,
  decideCronCreate,
  decideCronDelete,
  humanSchedule,
  listCrons,
  MAX_CRONS,
  nextCronFire,
  nextDue,
} from '../../src/shared/tools/cron';
import type { ScheduledPrompt } from '../../src/shared/tools/cron';

const NOW = Date.UTC(2026, 11, 6, 20, 51, 33);

describe('CronCreate, CronList and CronDelete decisions', () => {
  test('a recurring schedule gets an ID from its call, its next match in UTC, and Claude Code’s answer', () => {
    const decision = decideCronCreate({ cron: '*/5 * * * *', prompt: 'Check the build.' }, 'toolu_1', NOW, []);
    expect(decision.isError).toBe(false);
    expect(decision.crons).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{8}$/),
        cron: '*/5 * * * *',
        prompt: 'Check the build.',
        recurring: true,
        createdAtMs: NOW,
        nextFireAtMs: Date.UTC(2026, 11, 6, 20, 55),
      },
    ]);
    expect(decision.text).toMatch(
      /^Scheduled recurring job [0-9a-f]{8} \(Every 5 minutes\)\. Next run: 2026-12-06 20:55 UTC\. .*Auto-expires after 30 days\. Use CronDelete to cancel sooner\.$/,
    );
    // The same call gets the same ID on every replay.
    expect(decideCronCreate({ cron: '*/5 * * * *', prompt: 'x' }, 'toolu_1', NOW, []).crons[0]!.id).toBe(
      decision.crons[0]!.id,
    );
  });

  test('a one-shot fires once at its next match', () => {
    const decision = decideCronCreate({ cron: '* * * * *', prompt: 'ping', recurring: false }, 'toolu_2', NOW, []);
    expect(decision.crons[0]).toMatchObject({ recurring: false, nextFireAtMs: Date.UTC(2026, 11, 6, 20, 52) });
    expect(decision.text).toMatch(
      /^Scheduled one-shot task [0-9a-f]{8} \(Every minute\)\. .* It will fire once then auto-delete\.$/,
    );
  });

  test.each([
    ['bogus', "Invalid cron expression 'bogus'. Expected 5 fields: M H DoM Mon DoW."],
    ['* * * *', "Invalid cron expression '* * * *'. Expected 5 fields: M H DoM Mon DoW."],
    ['61 * * * *', "Invalid cron expression '61 * * * *': "],
    ['0 0 31 2 *', "Invalid cron expression '0 0 31 2 *': "],
  ])('%p is refused with what is wrong, and nothing is scheduled', (cron, message) => {
    const decision = decideCronCreate({ cron, prompt: 'x' }, 't', NOW, []);
    expect(decision.isError).toBe(true);
    expect(decision.text.startsWith(message)).toBe(true);
    expect(decision.crons).toEqual([]);
  });

  test('a recurring schedule whose first run is past its 30 days is refused; as a one-shot it is kept', () => {
    const refused = decideCronCreate({ cron: '0 0 29 2 *', prompt: 'Leap day.' }, 't', NOW, []);
    expect(refused.isError).toBe(true);
    expect(refused.text).toBe(
      "The first run of '0 0 29 2 *' would be 2028-02-29 00:00 UTC, after the 30 days a recurring schedule lasts: " +
        'schedule it with recurring: false to run it once.',
    );
    expect(decideCronCreate({ cron: '0 0 29 2 *', prompt: 'Leap day.', recurring: false }, 't', NOW, []).isError).toBe(
      false,
    );
  });

  test('the input check takes Claude Code’s fields and refuses others', () => {
    expect(cronCreateTool.inputSchema.safeParse({ cron: '* * * * *', prompt: 'p', durable: true }).success).toBe(true);
    expect(cronCreateTool.inputSchema.safeParse({ cron: '* * * * *' }).success).toBe(false);
    expect(cronCreateTool.inputSchema.safeParse({ cron: '* * * * *', prompt: 'p', every: 5 }).success).toBe(false);
  });

  test('a job keeps at most MAX_CRONS schedules', () => {
    let crons: ScheduledPrompt[] = [];
    for (let i = 0; i < MAX_CRONS; i++)
      crons = decideCronCreate({ cron: '* * * * *', prompt: `p${i}` }, `t${i}`, NOW, crons).crons;
    expect(new Set(crons.map((cron) => cron.id)).size).toBe(MAX_CRONS);
    const refused = decideCronCreate({ cron: '* * * * *', prompt: 'one more' }, 'tx', NOW, crons);
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('delete one with CronDelete first');
  });

  test('CronList lists soonest first; CronDelete removes one, and names an unknown ID', () => {
    const a = decideCronCreate({ cron: '0 9 * * 1-5', prompt: 'Standup notes.' }, 'ta', NOW, []).crons;
    const both = decideCronCreate({ cron: '* * * * *', prompt: 'Tick.', recurring: false }, 'tb', NOW, a).crons;
    const listed = listCrons(both).split('\n');
    expect(listed).toHaveLength(2);
    expect(listed[0]).toMatch(
      /^[0-9a-f]{8} — Every minute \(one-shot\) \[job\], next run 2026-12-06 20:52 UTC: Tick\.$/,
    );
    expect(listed[1]).toMatch(/At 09:00, Monday through Friday \(recurring\) .* 2026-12-07 09:00 UTC: Standup notes\./);
    expect(listCrons([])).toBe('No scheduled jobs.');
    const gone = decideCronDelete({ id: a[0]!.id }, both);
    expect(gone).toMatchObject({ isError: false, text: expect.stringMatching(/^Cancelled job [0-9a-f]{8} /) });
    expect(gone.crons.map((cron) => cron.prompt)).toEqual(['Tick.']);
    expect(decideCronDelete({ id: 'nosuch' }, both)).toMatchObject({
      isError: true,
      text: "No scheduled job with id 'nosuch'",
    });
  });

  test('after a fire: a one-shot is gone, a recurring one moves past now (missed runs are not made up), and ends at 30 days', () => {
    const [every5] = decideCronCreate({ cron: '*/5 * * * *', prompt: 'p' }, 't1', NOW, []).crons;
    const [once] = decideCronCreate({ cron: '* * * * *', prompt: 'q', recurring: false }, 't2', NOW, []).crons;
    const crons = [every5!, once!];
    expect(nextDue(crons)).toBe(once);
    expect(afterFire(crons, once!, once!.nextFireAtMs)).toEqual({ crons: [every5], expired: false });
    // The job was busy for 12 minutes past the fire time: the next run is the next match after now.
    const late = every5!.nextFireAtMs + 12 * 60_000;
    expect(afterFire(crons, every5!, late).crons.find((cron) => cron.id === every5!.id)?.nextFireAtMs).toBe(
      Date.UTC(2026, 11, 6, 21, 10),
    );
    const old = { ...every5!, nextFireAtMs: NOW + CRON_MAX_AGE_MS - 60_000 };
    expect(afterFire([old], old, old.nextFireAtMs)).toEqual({ crons: [], expired: true });
  });

  test('schedules read as people say them; the next fire is strictly after the time given', () => {
    expect(humanSchedule('30 14 28 2 *')).toBe('At 14:30, on day 28 of the month, only in February');
    expect(nextCronFire('0 * * * *', Date.UTC(2026, 11, 6, 21))).toBe(Date.UTC(2026, 11, 6, 22));
  });
});
