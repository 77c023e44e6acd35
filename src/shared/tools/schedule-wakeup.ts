import { z } from 'zod';
import type { ToolDefinition } from '../tool-definition';
import { lazySchema } from '../lazy-schema';
import { flagField, textField } from './schema-parts';

/** The shortest and longest wait a wake-up may ask for; other delays are clamped to these, as Claude Code does. */
export const WAKEUP_MIN_SECONDS = 60;
export const WAKEUP_MAX_SECONDS = 3_600;
/** The most a wake-up's prompt may hold: it is sent inline, like a message queued with `send`. */
export const WAKEUP_PROMPT_CHARS = 32_768;

const scheduleWakeupSchema = lazySchema(() =>
  z.strictObject({
    delaySeconds: z
      .preprocess(
        (value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value),
        z.number().finite(),
      )
      .describe(
        `Seconds from now to wake up, clamped to [${WAKEUP_MIN_SECONDS}, ${WAKEUP_MAX_SECONDS}]. Required unless \`stop\` is true.`,
      )
      .optional(),
    reason: textField(
      'One short sentence on why this delay: shown in the job status. Required unless `stop` is true.',
      1_000,
    ).optional(),
    prompt: textField(
      'The message the job wakes with: what to do then. Required unless `stop` is true.',
      WAKEUP_PROMPT_CHARS,
    ).optional(),
    stop: flagField(
      'true cancels the pending wake-up and schedules none; the other fields are then ignored.',
    ).optional(),
    noop: flagField(
      'true when this tick changed nothing (you checked and there is nothing to report); false when it did.',
    ).optional(),
  }),
);

export type ScheduleWakeupInput = z.infer<typeof scheduleWakeupSchema>;

/**
 * ScheduleWakeup ends the turn and puts the job to sleep on a durable timer: no worker slot and no
 * process is held while it sleeps, and it wakes with `prompt` as a new user message. Answered by
 * the workflow (no activity runs it); the wait is the workflow's own timer.
 */
export const scheduleWakeupTool: ToolDefinition<ScheduleWakeupInput> = {
  name: 'ScheduleWakeup',
  description: [
    'Put the job to sleep and resume it later with `prompt` as a new message. Use it when the next step has to',
    'wait for something this job cannot watch (a CI run, a deploy, a remote queue): call it, write any status',
    'update as ordinary text, and end the turn. The job holds no worker while it sleeps, survives restarts, and',
    'wakes when the delay has passed, when new input arrives, or when someone runs `durable-agent wake`.',
    '',
    `delaySeconds is clamped to ${WAKEUP_MIN_SECONDS}-${WAKEUP_MAX_SECONDS}. The prompt cache lasts 5 minutes: up to`,
    '270 s the next request reads the conversation from cache; beyond 300 s it is read uncached, slower and',
    'dearer, so either stay under 270 s or wait 1200 s or more. Do not poll for something that will tell you',
    'when it is done. Call it again on each wake-up to keep waiting, or with `stop: true` to cancel a pending',
    'wake-up. Each wake-up is a turn: maxTurns and the job budget apply.',
  ].join('\n'),
  inputSchema: scheduleWakeupSchema,
  isConcurrencySafe: () => false,
  isReadOnly: () => true,
};

/** A pending wake-up, kept in the job's State. */
export interface Wakeup {
  /** Workflow time at which it fires, in ms since the epoch. */
  atMs: number;
  prompt: string;
  reason: string;
  noop?: boolean;
  /** The call that scheduled it. */
  toolUseId: string;
}

/** What a ScheduleWakeup call does to the job's pending wake-up, and what the model is told. */
export type WakeupDecision =
  | { kind: 'scheduled'; wakeup: Wakeup; text: string }
  | { kind: 'stopped'; text: string }
  | { kind: 'invalid'; text: string };

/**
 * Decide a parsed call at workflow time `nowMs`: clamp the delay, or cancel what is pending.
 * Times are written in UTC, so every worker words the answer alike.
 */
export function decideWakeup(
  input: ScheduleWakeupInput,
  toolUseId: string,
  nowMs: number,
  pending: Wakeup | undefined,
): WakeupDecision {
  if (input.stop === true) {
    return {
      kind: 'stopped',
      text: pending
        ? `Wake-up cancelled: the one set for ${clock(pending.atMs)} will not fire and no other is scheduled. End the turn when you are done.`
        : 'No wake-up was pending, so there was nothing to cancel; none is scheduled. End the turn when you are done.',
    };
  }
  if (input.delaySeconds === undefined || input.reason === undefined) {
    return { kind: 'invalid', text: '`delaySeconds` and `reason` are required when `stop` is not true.' };
  }
  if (input.prompt === undefined) return { kind: 'invalid', text: '`prompt` is required when `stop` is not true.' };
  const clamped = Math.min(WAKEUP_MAX_SECONDS, Math.max(WAKEUP_MIN_SECONDS, Math.round(input.delaySeconds)));
  const wasClamped = clamped !== input.delaySeconds;
  const atMs = nowMs + clamped * 1000;
  return {
    kind: 'scheduled',
    wakeup: {
      atMs,
      prompt: input.prompt,
      reason: input.reason,
      ...(input.noop !== undefined ? { noop: input.noop } : {}),
      toolUseId,
    },
    text:
      `Next wakeup scheduled for ${clock(atMs)} (in ${clamped}s)` +
      (wasClamped ? ` (clamped to ${clamped}s from your requested value)` : '') +
      '. If you owe the user a status update, write it now as ordinary text; then end the turn. The job sleeps ' +
      'until the wakeup fires or new input arrives, and then goes on with the prompt you gave.',
  };
}

/** "18:00:00 UTC" */
export function clock(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}
