import { condition } from '@temporalio/workflow';
import { exceedsMaxTurns } from '../shared/recovery';
import type { State } from '../shared/session';
import { clock } from '../shared/tools/schedule-wakeup';
import { afterFire, humanSchedule, nextDue, when } from '../shared/tools/cron';
import type { ScheduledPrompt } from '../shared/tools/cron';
import { budgetExhausted } from './cost-budget';
import type { Session } from './session';
import type { TurnStep } from './turn-step';

/**
 * The turn ended with something still to come: a wake-up (ScheduleWakeup), a scheduled prompt (CronCreate) or background commands
 * running. The job waits, with no activity of its own and no worker slot held (a background
 * command's activity is its own), until the wake-up fires, `wake` asks for it early, a background
 * command ends, new input arrives, or the job is aborted. A wake-up that fires sends its prompt as
 * the next user message; anything else takes a turn of its own (the notices and messages join it
 * at the turn's start), and a wake-up stays pending.
 */
export async function waitAfterTurn(
  session: Session,
  state: State,
  options: { turnsPerMessage?: boolean } = {},
): Promise<TurnStep> {
  const { control } = session;
  const wakeup = state.wakeup;
  const scheduled = nextDue(state.crons);
  const background = control.background;
  const at = wakeup ? clock(wakeup.atMs) : '';
  const waitingFor = wakeup
    ? `the wake-up set for ${at}`
    : scheduled
      ? `scheduled job ${scheduled.id} (next run ${when(scheduled.nextFireAtMs)})`
      : `${background?.running.length ?? 0} background task(s) still running`;
  const nextTurnCount = state.turnCount + 1;
  // Neither a turn nor money is left for what comes: say so now rather than after the wait. (An
  // open-input job's next turn answers something new, with turns of its own.)
  if (!options.turnsPerMessage && exceedsMaxTurns(nextTurnCount, control.maxTurns)) {
    return {
      kind: 'terminal',
      state,
      reason: 'max_turns',
      detail: `${waitingFor} ${wakeup || scheduled ? 'was not waited for' : 'were stopped'}: maxTurns ${control.maxTurns} reached`,
    };
  }
  const spent = budgetExhausted(session, state, `the turn after ${waitingFor}`);
  if (spent) return { kind: 'terminal', state, reason: 'budget_exhausted', detail: spent };

  const woken = () => wakeup !== undefined && control.wakeRequestedFor === wakeup.toolUseId;
  const cronWoken = () => scheduled !== undefined && control.wakeRequestedFor === scheduled.id;
  const news = () => (background?.news.length ?? 0) > 0;
  const wakeNow = () => woken() || cronWoken() || news() || control.inbox.length > 0 || control.abortRequested;
  // What fires first: the wake-up, or the next scheduled prompt.
  const dueAtMs = Math.min(wakeup?.atMs ?? Infinity, scheduled?.nextFireAtMs ?? Infinity);
  if (!wakeNow()) {
    control.showTurnState(state);
    if (dueAtMs !== Infinity) {
      const remainingMs = dueAtMs - Date.now();
      if (remainingMs > 0) {
        const why =
          wakeup && wakeup.atMs === dueAtMs
            ? `sleeping until ${at}: ${wakeup.reason}`
            : `sleeping until ${when(dueAtMs)}: scheduled job ${scheduled?.id} (${humanSchedule(scheduled?.cron ?? '')})`;
        control.record({ turn: state.turnCount, kind: 'notice', text: why });
        control.phase = 'sleeping';
        await condition(wakeNow, remainingMs);
      }
    } else {
      const running = background?.running ?? [];
      control.record({
        turn: state.turnCount,
        kind: 'notice',
        text: `waiting for background task(s) to end: ${running.map((task) => `${task.taskId} (${task.label})`).join(', ')}`,
      });
      control.phase = 'waiting_for_background';
      await condition(wakeNow);
    }
  }
  if (control.abortRequested) {
    const where =
      wakeup && wakeup.atMs === dueAtMs
        ? `while sleeping until ${at}`
        : scheduled
          ? `while sleeping until ${when(dueAtMs)}`
          : 'while waiting for background tasks';
    return { kind: 'terminal', state, reason: 'aborted_tools', detail: `${control.abortDetail} (${where})` };
  }
  const now = Date.now();
  const fired = wakeup !== undefined && (woken() || now >= wakeup.atMs);
  if (!fired && scheduled !== undefined && (cronWoken() || now >= scheduled.nextFireAtMs)) {
    return fireScheduled(session, state, scheduled, nextTurnCount);
  }
  if (!wakeup || !fired) {
    // A background command ended or input came: it takes the next turn; a wake-up keeps its time.
    return { kind: 'continue', state: { ...state, turnCount: nextTurnCount, transition: { reason: 'next_turn' } } };
  }
  control.record({
    turn: nextTurnCount,
    kind: 'notice',
    text: `woke${Date.now() < wakeup.atMs ? ` early (set for ${at})` : ''}: ${wakeup.prompt}`,
  });
  control.wakeRequestedFor = undefined;
  const { wakeup: _fired, ...rest } = state;
  return {
    kind: 'continue',
    state: {
      ...rest,
      pending: [...state.pending, { role: 'user', content: [{ type: 'text', text: wakeup.prompt }] }],
      turnCount: nextTurnCount,
      maxOutputTokensRecoveryCount: 0,
      ...(state.stopHookBlocks ? { stopHookBlocks: 0 } : {}),
      transition: { reason: 'scheduled_wakeup' },
    },
  };
}

/**
 * A scheduled prompt fires (its time came, or `wake` asked for it): its prompt is the next user
 * message; a one-shot schedule is gone, a recurring one waits for its next match, or ends at 30 days.
 */
function fireScheduled(session: Session, state: State, scheduled: ScheduledPrompt, nextTurnCount: number): TurnStep {
  const { control } = session;
  const now = Date.now();
  const { crons, expired } = afterFire(state.crons ?? [], scheduled, now);
  // A recurring schedule keeps its ID: a `wake` used up here must not fire it again after every turn.
  control.wakeRequestedFor = undefined;
  control.record({
    turn: nextTurnCount,
    kind: 'notice',
    text:
      `scheduled job ${scheduled.id} fired${now < scheduled.nextFireAtMs ? ` early (set for ${when(scheduled.nextFireAtMs)})` : ''}: ${scheduled.prompt}` +
      (expired ? ' (it is 30 days old: this was its last run)' : ''),
  });
  return {
    kind: 'continue',
    state: {
      ...state,
      crons: crons.length > 0 ? crons : undefined,
      pending: [...state.pending, { role: 'user', content: [{ type: 'text', text: scheduled.prompt }] }],
      turnCount: nextTurnCount,
      maxOutputTokensRecoveryCount: 0,
      ...(state.stopHookBlocks ? { stopHookBlocks: 0 } : {}),
      transition: { reason: 'scheduled_task' },
    },
  };
}
