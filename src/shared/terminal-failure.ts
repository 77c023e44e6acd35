/**
 * A job (or batch) that did not succeed ends as a failed workflow, so Temporal's Status column,
 * metrics and alerts count it; its Terminal travels in the failure's details, so nothing of it is
 * lost. Free of Node built-ins: the workflow bundle loads it (the batch reads its jobs' endings).
 */
import { ApplicationFailure } from '@temporalio/common';

/** The failure type of a batch whose own reason is `completed` but some of whose tasks did not complete. */
export const TASKS_NOT_COMPLETED = 'tasks_not_completed';

/** How much of the detail the failure's one-line message keeps (the whole of it is in the details). */
const MESSAGE_DETAIL_CHARS = 200;

/**
 * The failure a workflow throws to end with `terminal`: its type is `type` (the Terminal's reason,
 * unless said otherwise), its message one line, its only detail the Terminal itself.
 */
export function terminalFailure(
  terminal: { reason: string; detail?: string },
  type: string = terminal.reason,
): ApplicationFailure {
  const detail = (terminal.detail ?? '').replace(/\s+/g, ' ').trim();
  const cut = detail.length > MESSAGE_DETAIL_CHARS ? `${detail.slice(0, MESSAGE_DETAIL_CHARS)}…` : detail;
  return ApplicationFailure.create({
    type,
    message: cut ? `${terminal.reason}: ${cut}` : terminal.reason,
    nonRetryable: true,
    details: [terminal],
  });
}

/**
 * The Terminal a failure carries, when it is one {@link terminalFailure} made: `cause` is the
 * cause of a `WorkflowFailedError` (client) or of a `ChildWorkflowFailure` (workflow). Any other
 * failure (terminated, timed out, cancelled, a real failure of the workflow) carries none.
 */
export function terminalInFailure<T extends { reason: string }>(cause: unknown): T | undefined {
  if (!(cause instanceof ApplicationFailure)) return undefined;
  const terminal = cause.details?.[0] as { reason?: unknown } | undefined;
  if (typeof terminal !== 'object' || terminal === null || typeof terminal.reason !== 'string') return undefined;
  return cause.type === terminal.reason || cause.type === TASKS_NOT_COMPLETED ? (terminal as T) : undefined;
}
