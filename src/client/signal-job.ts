import { WorkflowNotFoundError } from '@temporalio/common';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { InvalidArgumentError } from 'commander';
import { OUTCOME_KEY, RUNNING_OUTCOME, WAITING_OUTCOME } from '../workflows/search-attributes';

/** How a job that has ended ended, for a message: its outcome, else Temporal's status. */
async function endingOf(handle: WorkflowHandle): Promise<string | undefined> {
  const description = await handle.describe().catch(() => undefined);
  if (!description || description.status.name === 'RUNNING') return undefined;
  const outcome = description.typedSearchAttributes.get(OUTCOME_KEY);
  // A job ended from outside keeps the outcome it had while it ran: Temporal's status says more.
  return outcome && outcome !== RUNNING_OUTCOME && outcome !== WAITING_OUTCOME
    ? outcome
    : description.status.name.toLowerCase();
}

/**
 * Signal job `id` with `send`. Temporal answers a signal to a job that has ended as if there were
 * no such job; then the user hears that it has ended, how, and what to do instead: `ended` says
 * it from the ending, and returns the line to print instead of failing when that is no mistake
 * (`abort` of a job that ended anyway).
 */
export async function signalJob(
  client: Client,
  id: string,
  send: (handle: WorkflowHandle) => Promise<void>,
  ended: (ending: string) => { refuse: string } | { say: string },
): Promise<string | undefined> {
  const handle = client.workflow.getHandle(id);
  try {
    await send(handle);
    return undefined;
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    const ending = await endingOf(handle);
    if (ending === undefined) throw error;
    const answer = ended(ending);
    if ('refuse' in answer) throw new InvalidArgumentError(answer.refuse);
    return answer.say;
  }
}
