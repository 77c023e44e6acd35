import { CancellationScope, patched, upsertMemo } from '@temporalio/workflow';
import { PAID_AGAIN_MEMO, paidAgainUsd } from '../shared/batch';
import type { State } from '../shared/session';
import type { TranscriptRef } from '../shared/transcript';
import type { Terminal, TerminalReason } from '../shared/terminal';
import type { SessionActivities } from './activity-proxies';
import type { SessionControl } from './session-control';
import { publishOutcome } from './search-attributes';

/** What the loop adds about cost and time (see `cost-budget.ts`). */
type CostFields =
  'totalCostUsd' | 'modelUsage' | 'maxBudgetUsd' | 'durationMs' | 'durationApiMs' | 'modelRetries' | 'paidAgain';

/** Every exit goes through here: pending messages are written to the transcript, then the Terminal. */
export async function finish(
  activities: SessionActivities,
  control: SessionControl,
  state: State,
  reason: TerminalReason,
  detail?: string,
  extra: Pick<Terminal, 'context' | 'transitions' | CostFields> = {},
): Promise<Terminal> {
  const unsent = control.inbox.length;
  const transcript =
    state.pending.length === 0
      ? state.transcript
      : await CancellationScope.nonCancellable(() =>
          activities.commitTranscript({ transcript: state.transcript, append: state.pending }),
        );
  const details = [detail, unsent > 0 ? `${unsent} queued user message(s) were not sent` : undefined].filter(Boolean);
  const terminal = terminalOf(control, state, reason, transcript, details.join('; '), extra);
  return publish(control, state, terminal);
}

/** A Terminal of `state` as it is now, its transcript committed up to `transcript`. */
export function terminalOf(
  control: SessionControl,
  state: State,
  reason: TerminalReason,
  transcript: TranscriptRef,
  detail: string | undefined,
  extra: Pick<Terminal, 'context' | 'transitions' | CostFields> = {},
): Terminal {
  return {
    reason,
    turnCount: state.turnCount,
    finalText: state.lastAssistantText,
    ...(state.lastStopReason !== undefined ? { stopReason: state.lastStopReason } : {}),
    usage: state.usage,
    model: state.model,
    ...(detail ? { detail } : {}),
    transcriptHead: transcript.head,
    messageCount: transcript.messageCount,
    denials: state.denials,
    ...(state.denialCount !== undefined ? { denialCount: state.denialCount } : {}),
    todos: state.todos,
    ...(control.permissionSummary ? { permissions: control.permissionSummary } : {}),
    ...(control.sandbox ? { sandbox: control.sandboxReport(state) } : {}),
    ...(control.background ? { subagentStats: control.background.subagentStats() } : {}),
    ...extra,
  };
}

/** The Terminal of a job that could not start. */
export function setupFailed(control: SessionControl, state: State, detail: string): Terminal {
  return publish(control, state, {
    reason: 'setup_failed',
    turnCount: 0,
    finalText: '',
    usage: state.usage,
    model: state.model,
    detail,
    transcriptHead: null,
    messageCount: 0,
    denials: [],
    todos: [],
  });
}

function publish(control: SessionControl, state: State, terminal: Terminal): Terminal {
  // The Terminal first, so the current details the phase change publishes name the outcome.
  control.terminal = terminal;
  control.showTurnState(state);
  control.phase = 'finished';
  publishOutcome(terminal);
  publishPaidAgain(terminal);
  const detail = terminal.detail ? ` (${terminal.detail})` : '';
  control.record({ turn: state.turnCount, kind: 'notice', text: `terminal: ${terminal.reason}${detail}` });
  return terminal;
}

/** Guards the memo a job that paid again for cut-off calls sets as it ends. */
const PAID_AGAIN_MEMO_PATCH = 'paid-again-memo';

/**
 * A job that paid again for calls a crash cut off says how much in its memo, which the job list
 * carries: a batch's task table marks its cost without reading every job's result.
 */
function publishPaidAgain(terminal: Terminal): void {
  const usd = paidAgainUsd(terminal);
  if (usd > 0 && patched(PAID_AGAIN_MEMO_PATCH)) upsertMemo({ [PAID_AGAIN_MEMO]: usd });
}
