import { condition } from '@temporalio/workflow';
import { exceedsMaxTurns } from '../shared/recovery';
import type { State } from '../shared/session';
import { clock } from '../shared/tools/schedule-wakeup';
import { budgetExhausted } from './cost-budget';
import type { Session } from './session';
import type { TurnStep } from './turn-step';

/**
 * The turn ended with a wake-up pending (ScheduleWakeup): the job sleeps on a durable timer, with
 * no activity and no worker slot held, until the wake-up fires, `wake` asks for it early, new input
 * arrives, or the job is aborted. A wake-up that fires sends its prompt as the next user message;
 * input that comes first takes a turn of its own, and the wake-up stays pending.
 */
export async function sleepUntilWakeup(session: Session, state: State): Promise<TurnStep> {
  const { control } = session;
  const wakeup = state.wakeup!;
  const at = clock(wakeup.atMs);
  const nextTurnCount = state.turnCount + 1;
  // Neither a turn nor money is left for it: say so now rather than after the wait.
  if (exceedsMaxTurns(nextTurnCount, control.maxTurns)) {
    return {
      kind: 'terminal',
      state,
      reason: 'max_turns',
      detail: `the wake-up set for ${at} was not waited for: maxTurns ${control.maxTurns} reached`,
    };
  }
  const spent = budgetExhausted(session, state, `the wake-up set for ${at}`);
  if (spent) return { kind: 'terminal', state, reason: 'budget_exhausted', detail: spent };

  const woken = () => control.wakeRequestedFor === wakeup.toolUseId;
  const wakeNow = () => woken() || control.inbox.length > 0 || control.abortRequested;
  const remainingMs = wakeup.atMs - Date.now();
  if (remainingMs > 0 && !wakeNow()) {
    control.record({ turn: state.turnCount, kind: 'notice', text: `sleeping until ${at}: ${wakeup.reason}` });
    control.showTurnState(state);
    control.phase = 'sleeping';
    await condition(wakeNow, remainingMs);
  }
  if (control.abortRequested) {
    return { kind: 'terminal', state, reason: 'aborted_tools', detail: `${control.abortDetail} (while sleeping until ${at})` };
  }
  const fired = woken() || Date.now() >= wakeup.atMs;
  if (!fired) {
    // New input came first: it takes the next turn, and the wake-up still waits for its time.
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
