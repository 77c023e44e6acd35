// The parser alone: the package's index also loads its crontab-file reader, which needs `fs`, which
// workflow code may not import.
import { CronExpressionParser } from 'cron-parser/dist/CronExpressionParser';
import cronstrue from 'cronstrue';
import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { lazySchema } from '../lazy-schema';
import { flagField, textField } from './schema-parts';
import { WAKEUP_PROMPT_CHARS } from './schedule-wakeup';

/** A recurring schedule ends this long after it was made, as Claude Code's do (30 days). */
export const CRON_MAX_AGE_MS = 30 * 24 * 3_600_000;
/** The most schedules a job keeps at once. */
export const MAX_CRONS = 20;

const cronCreateSchema = lazySchema(() =>
  z.strictObject({
    cron: textField(
      'Standard 5-field cron expression, in UTC: "M H DoM Mon DoW" (e.g. "*/5 * * * *" = every 5 minutes, ' +
        '"30 14 28 2 *" = Feb 28 at 14:30 UTC).',
      200,
    ),
    prompt: textField('The prompt to enqueue at each fire time.', WAKEUP_PROMPT_CHARS),
    recurring: flagField(
      'true (default) = fire on every match until deleted or auto-expired after 30 days. false = fire once at the ' +
        'next match, then auto-delete.',
    ).optional(),
    durable: flagField(
      'Accepted for Claude Code compatibility: every schedule is kept with the job, survives worker and server ' +
        'restarts, and ends when the job ends.',
    ).optional(),
  }),
);
const cronDeleteSchema = lazySchema(() => z.strictObject({ id: textField('Job ID returned by CronCreate.', 100) }));
const cronListSchema = lazySchema(() => z.strictObject({}));

export type CronCreateInput = z.infer<typeof cronCreateSchema>;
export type CronDeleteInput = z.infer<typeof cronDeleteSchema>;
export type CronListInput = z.infer<typeof cronListSchema>;

/**
 * CronCreate schedules a prompt into the job, on every match of a cron expression or once. The
 * workflow answers it: the schedule joins the job's State, and when a turn ends the job sleeps on
 * a durable timer until the next one fires (holding no worker), then takes its prompt as a new
 * user message. A job with schedules left does not end when its turn does.
 */
export const cronCreateTool: ToolDefinition<CronCreateInput> = {
  name: 'CronCreate',
  description: [
    'Schedule a prompt to be sent to this job on a cron schedule (in UTC), recurring or once. When the turn ends',
    'the job sleeps until the next fire time, holding no worker, and then goes on with the prompt as a new',
    'message. A job with a schedule left does not end: delete recurring schedules (CronDelete) when they are no',
    'longer needed. Recurring schedules expire after 30 days. Each fire is a turn: maxTurns and the job budget',
    'apply. Use ScheduleWakeup instead for a single wait of up to an hour.',
  ].join('\n'),
  inputSchema: cronCreateSchema,
  isConcurrencySafe: () => false,
  isReadOnly: () => true,
};

export const cronListTool: ToolDefinition<CronListInput> = {
  name: 'CronList',
  description: 'List the prompts scheduled in this job with CronCreate: ID, schedule, next run and prompt.',
  inputSchema: cronListSchema,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
};

export const cronDeleteTool: ToolDefinition<CronDeleteInput> = {
  name: 'CronDelete',
  description: 'Cancel a prompt scheduled with CronCreate, by the ID CronCreate returned.',
  inputSchema: cronDeleteSchema,
  isConcurrencySafe: () => false,
  isReadOnly: () => true,
};

/** A prompt scheduled into the job, kept in its State. */
export interface ScheduledPrompt {
  id: string;
  cron: string;
  prompt: string;
  recurring: boolean;
  /** Workflow time it was made, and of its next fire, in ms since the epoch. */
  createdAtMs: number;
  nextFireAtMs: number;
}

/** What a Cron call does to the job's schedules, and what the model is told. */
export interface CronDecision {
  crons: ScheduledPrompt[];
  text: string;
  isError: boolean;
}

/**
 * A 5-field cron expression's next match strictly after `afterMs`, in UTC; an Error whose message
 * says what is wrong with an expression that has none.
 */
export function nextCronFire(cron: string, afterMs: number): number {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) throw new Error(`Invalid cron expression '${cron}'. Expected 5 fields: M H DoM Mon DoW.`);
  try {
    return CronExpressionParser.parse(fields.join(' '), { currentDate: new Date(afterMs), tz: 'UTC' })
      .next()
      .getTime();
  } catch (error) {
    const why = error instanceof Error && error.message ? error.message : 'it matches no time';
    throw new Error(`Invalid cron expression '${cron}': ${why}.`, { cause: error });
  }
}

/** "Every 5 minutes", "At 09:00, Monday through Friday" (UTC); the expression itself if it has no wording. */
export function humanSchedule(cron: string): string {
  try {
    return cronstrue.toString(cron, { use24HourTimeFormat: true, verbose: false });
  } catch {
    return cron;
  }
}

/** The job's schedules after a CronCreate call at workflow time `nowMs`. */
export function decideCronCreate(
  input: CronCreateInput,
  toolUseId: string,
  nowMs: number,
  crons: readonly ScheduledPrompt[],
): CronDecision {
  const fail = (text: string): CronDecision => ({ crons: [...crons], text, isError: true });
  let nextFireAtMs: number;
  try {
    nextFireAtMs = nextCronFire(input.cron, nowMs);
  } catch (error) {
    return fail((error as Error).message);
  }
  const recurring = input.recurring !== false;
  if (recurring && nextFireAtMs - nowMs > CRON_MAX_AGE_MS)
    return fail(
      `The first run of '${input.cron}' would be ${when(nextFireAtMs)}, after the 30 days a recurring schedule ` +
        'lasts: schedule it with recurring: false to run it once.',
    );
  if (crons.length >= MAX_CRONS)
    return fail(`This job already has ${crons.length} schedules, the most it keeps: delete one with CronDelete first.`);
  const scheduled: ScheduledPrompt = {
    id: cronId(toolUseId, crons),
    cron: input.cron.trim().split(/\s+/).join(' '),
    prompt: input.prompt,
    recurring,
    createdAtMs: nowMs,
    nextFireAtMs,
  };
  const schedule = humanSchedule(scheduled.cron);
  const text = recurring
    ? `Scheduled recurring job ${scheduled.id} (${schedule}). Next run: ${when(nextFireAtMs)}. Kept with the job: ` +
      'it survives restarts, and the job sleeps between runs instead of ending. Auto-expires after 30 days. Use ' +
      'CronDelete to cancel sooner.'
    : `Scheduled one-shot task ${scheduled.id} (${schedule}). Next run: ${when(nextFireAtMs)}. Kept with the job: ` +
      'it survives restarts, and the job sleeps until then instead of ending. It will fire once then auto-delete.';
  return { crons: [...crons, scheduled], text, isError: false };
}

/** The job's schedules after a CronDelete call. */
export function decideCronDelete(input: CronDeleteInput, crons: readonly ScheduledPrompt[]): CronDecision {
  const id = input.id.trim();
  const found = crons.find((cron) => cron.id === id);
  if (!found) return { crons: [...crons], text: `No scheduled job with id '${id}'`, isError: true };
  return {
    crons: crons.filter((cron) => cron !== found),
    text: `Cancelled job ${id} (${humanSchedule(found.cron)}): ${clipPrompt(found.prompt)}`,
    isError: false,
  };
}

/** CronList's answer: one line per schedule, soonest first. */
export function listCrons(crons: readonly ScheduledPrompt[]): string {
  if (crons.length === 0) return 'No scheduled jobs.';
  return [...crons]
    .sort((a, b) => a.nextFireAtMs - b.nextFireAtMs)
    .map(
      (cron) =>
        `${cron.id} — ${humanSchedule(cron.cron)} (${cron.recurring ? 'recurring' : 'one-shot'}) [job], ` +
        `next run ${when(cron.nextFireAtMs)}: ${clipPrompt(cron.prompt)}`,
    )
    .join('\n');
}

/** The schedule that fires first, if any. */
export function nextDue(crons: readonly ScheduledPrompt[] | undefined): ScheduledPrompt | undefined {
  return (crons ?? []).reduce<ScheduledPrompt | undefined>(
    (soonest, cron) => (soonest === undefined || cron.nextFireAtMs < soonest.nextFireAtMs ? cron : soonest),
    undefined,
  );
}

/**
 * The schedules after `fired` fired at `nowMs`: a one-shot is gone, a recurring one moves to its
 * next match after now (runs missed while the job was busy are not made up), or ends at 30 days.
 */
export function afterFire(
  crons: readonly ScheduledPrompt[],
  fired: ScheduledPrompt,
  nowMs: number,
): { crons: ScheduledPrompt[]; expired: boolean } {
  const rest = crons.filter((cron) => cron.id !== fired.id);
  if (!fired.recurring) return { crons: rest, expired: false };
  const next = nextCronFire(fired.cron, Math.max(nowMs, fired.nextFireAtMs));
  if (next - fired.createdAtMs > CRON_MAX_AGE_MS) return { crons: rest, expired: true };
  return { crons: [...rest, { ...fired, nextFireAtMs: next }], expired: false };
}

/** "2026-12-06 20:55 UTC" */
export function when(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function clipPrompt(prompt: string): string {
  const line = prompt.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** 8 hex digits from the call's tool_use_id: the same on every replay, unique among the job's. */
function cronId(toolUseId: string, crons: readonly ScheduledPrompt[]): string {
  for (let salt = 0; ; salt++) {
    let hash = 0x811c9dc5;
    for (const char of `${toolUseId}#${salt}`) {
      hash ^= char.charCodeAt(0);
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    const id = hash.toString(16).padStart(8, '0');
    if (!crons.some((cron) => cron.id === id)) return id;
  }
}
