import { ActivityFailure, ApplicationFailure, condition, patched } from '@temporalio/workflow';
import { MODEL_FAILURE_TYPES } from '../shared/activity-types';
import type { SessionControl } from './session-control';

/** The first wait for a worker with credentials, doubled after each try up to the last. */
const FIRST_WAIT_MS = 5_000;
const LONGEST_WAIT_MS = 60_000;

function noCredentials(error: unknown): ApplicationFailure | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  return cause instanceof ApplicationFailure && cause.type === MODEL_FAILURE_TYPES.noCredentials ? cause : undefined;
}

/**
 * Run a model call (or compaction). A worker without model credentials is that worker's
 * condition, not the job's: the job says it waits, asks again after a while, for as long as it
 * takes (an `abort` ends the wait: the next try is cancelled at once), and never fails for it.
 */
export async function withModelCredentials<T>(
  control: SessionControl,
  turn: number,
  call: () => Promise<T>,
): Promise<T> {
  let waitMs = FIRST_WAIT_MS;
  let waited = false;
  for (;;) {
    try {
      const result = await call();
      if (waited) control.record({ turn, kind: 'notice', text: 'a worker with model credentials took the call' });
      return result;
    } catch (error) {
      const failure = noCredentials(error);
      // Older workflow code ended the job here with model_error.
      if (!failure || !patched('wait-for-model-credentials')) throw error;
      if (!waited) {
        control.record({
          turn,
          kind: 'notice',
          text: `waiting for a worker with model credentials: ${failure.message}`,
        });
      }
      waited = true;
      const phaseBefore = control.phase;
      control.phase = 'waiting_for_credentials';
      try {
        await condition(() => control.abortRequested, waitMs);
      } finally {
        control.phase = phaseBefore;
      }
      waitMs = Math.min(LONGEST_WAIT_MS, waitMs * 2);
    }
  }
}
