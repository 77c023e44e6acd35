import { condition } from '@temporalio/workflow';
import { emptyUsage } from '../shared/messages';
import type { Usage } from '../shared/messages';
import type { InputQuery, State } from '../shared/session';
import type { Terminal } from '../shared/terminal';
import { terminalOf } from './finish';
import type { Session } from './session';
import type { TurnStep } from './turn-step';

/** Guards the open input of the Agent SDK's streaming mode (`SessionInput.inputOpen`). */
export const OPEN_INPUT_PATCH = 'open-input';

/** The message being answered: the first, from the job's first turn, when none was counted yet. */
function currentQuery(state: State): InputQuery {
  return state.inputQuery ?? { n: 1, startTurn: 1, startUsage: emptyUsage() };
}

function usageSince(now: Usage, start: Usage): Usage {
  return {
    input_tokens: now.input_tokens - start.input_tokens,
    output_tokens: now.output_tokens - start.output_tokens,
    cache_creation_input_tokens: now.cache_creation_input_tokens - start.cache_creation_input_tokens,
    cache_read_input_tokens: now.cache_read_input_tokens - start.cache_read_input_tokens,
  };
}

/**
 * An open-input job answered its current message: its result goes into the snapshot, as a
 * Terminal of that message alone (its turns and usage; the cost and duration are the job's so far,
 * as Claude Code's `total_cost_usd` is the session's).
 */
export function publishTurnResult(
  session: Session,
  state: State,
  extra: Pick<Terminal, 'context' | 'transitions' | 'totalCostUsd' | 'modelUsage' | 'maxBudgetUsd' | 'durationMs'>,
): void {
  const query = currentQuery(state);
  const whole = terminalOf(session.control, state, 'completed', state.transcript, undefined, extra);
  session.control.turnResult = {
    query: query.n,
    terminal: {
      ...whole,
      turnCount: state.turnCount - query.startTurn + 1,
      usage: usageSince(state.usage, query.startUsage),
    },
  };
}

/**
 * An open-input job answered its message and waits, holding nothing, for the next: a user message
 * starts the next turn (a new message to answer, with `maxTurns` turns of its own, as Claude Code
 * counts them per message); `closeInput`, an abort or `idleMs` without a message end the job.
 */
export async function waitForInput(session: Session, state: State, idleMs: number): Promise<TurnStep> {
  const { control } = session;
  const arrived = () => control.inbox.length > 0;
  if (!arrived() && !control.inputClosed && !control.abortRequested) {
    control.showTurnState(state);
    control.phase = 'waiting_for_input';
    await condition(() => arrived() || control.inputClosed || control.abortRequested, idleMs);
  }
  if (control.abortRequested) {
    return {
      kind: 'terminal',
      state,
      reason: 'aborted_tools',
      detail: `${control.abortDetail} (while waiting for input)`,
    };
  }
  if (!arrived()) {
    const detail = control.inputClosed
      ? undefined
      : `no further message came within ${idleWords(idleMs)}, so the job ended`;
    return { kind: 'terminal', state, reason: 'completed', ...(detail ? { detail } : {}) };
  }
  const continuing: State = {
    ...state,
    turnCount: state.turnCount + 1,
    maxOutputTokensRecoveryCount: 0,
    ...(state.stopHookBlocks ? { stopHookBlocks: 0 } : {}),
    transition: { reason: 'next_turn' },
  };
  return { kind: 'continue', state: nextQuery(session, state, continuing) };
}

function idleWords(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/**
 * `continuing` (the State after `answered`, whose message was answered) answers the next message:
 * its turns are counted from here, with the job's `maxTurns` each, as Claude Code counts them per
 * message.
 */
export function nextQuery(session: Session, answered: State, continuing: State): State {
  const { control } = session;
  const query = currentQuery(answered);
  // The turns this message was allowed (`--max-turns`, or what `setMaxTurns` made of it) are the next one's.
  if (control.maxTurns !== undefined) {
    control.maxTurns = continuing.turnCount - 1 + (control.maxTurns - (query.startTurn - 1));
  }
  return {
    ...continuing,
    inputQuery: { n: query.n + 1, startTurn: continuing.turnCount, startUsage: answered.usage },
  };
}
