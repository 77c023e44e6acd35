import { condition } from '@temporalio/workflow';
import { exceedsMaxTurns } from '../shared/recovery';
import type { State } from '../shared/session';
import { clock } from '../shared/tools/schedule-wakeup';
import { budgetExhausted } from './cost-budget';
import type { Session } from './session';
import type { TurnStep } from './turn-step';

/**
 * The turn ended with something still to come: a wake-up (ScheduleWakeup) or background commands
 * running. The job waits, with no activity of its own and no worker slot held (a background
 * command's activity is its own), until the wake-up fires, `wake` asks for it early, a background
 * command ends, new input arrives, or the job is aborted. A wake-up that fires sends its prompt as
 * the next user message; anything else takes a turn of its own (the notices and messages join it
 * at the turn's start), and a wake-up stays pending.
 */
export async function waitAfterTurn(session: Session, state: State): Promise<TurnStep> {
  const { control } = session;
  const wakeup = state.wakeup;
  const background = control.background;
  const at = wakeup ? clock(wakeup.atMs) : '';
  const waitingFor = wakeup
    ? `the wake-up set for ${at}`
    : `${background?.running.length ?? 0} background task(s) still running`;
  const nextTurnCount = state.turnCount + 1;
  // Neither a turn nor money is left for what comes: say so now rather than after the wait.
  if (exceedsMaxTurns(nextTurnCount, control.maxTurns)) {
    return {
      kind: 'terminal',
      state,
      reason: 'max_turns',
      detail: `${waitingFor} ${wakeup ? 'was not waited for' : 'were stopped'}: maxTurns ${control.maxTurns} reached`,
    };
  }
  const spent = budgetExhausted(session, state, `the turn after ${waitingFor}`);
  if (spent) return { kind: 'terminal', state, reason: 'budget_exhausted', detail: spent };

  const woken = () => wakeup !== undefined && control.wakeRequestedFor === wakeup.toolUseId;
  const news = () => (background?.news.length ?? 0) > 0;
  const wakeNow = () => woken() || news() || control.inbox.length > 0 || control.abortRequested;
  if (!wakeNow()) {
    control.showTurnState(state);
    if (wakeup) {
      const remainingMs = wakeup.atMs - Date.now();
      if (remainingMs > 0) {
        control.record({ turn: state.turnCount, kind: 'notice', text: `sleeping until ${at}: ${wakeup.reason}` });
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
    const where = wakeup ? `while sleeping until ${at}` : 'while waiting for background tasks';
    return { kind: 'terminal', state, reason: 'aborted_tools', detail: `${control.abortDetail} (${where})` };
  }
  const fired = wakeup !== undefined && (woken() || Date.now() >= wakeup.atMs);
  if (!wakeup || !fired) {
    // A background command ended or input came: it takes the next turn; a wake-up keeps its time.
    return { kind: 'continue', state: { ...state, turnCount: nextTurnCount, transition: { reason: 'next_turn' } } };
  }
  control.record({
    turn: nextTurnCount,
    kind: 'notice',
    text: `woke${Date.now() < wakeup.atMs ? ` early (set for ${at})` : ''}: ${wakeup.prompt}`,
  });
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
