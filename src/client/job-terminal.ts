import { WorkflowFailedError } from '@temporalio/client';
import type { Terminal } from '../shared/terminal';
import { terminalInFailure } from '../shared/terminal-failure';

/**
 * The Terminal a workflow's failure carries: a job (or batch) that did not complete ends failed
 * with its Terminal in the failure's details. Undefined for any other error, and for a failure
 * without one (terminated, timed out, cancelled, a real failure of the workflow).
 */
export function terminalOfFailure<T extends { reason: string } = Terminal>(error: unknown): T | undefined {
  return error instanceof WorkflowFailedError ? terminalInFailure<T>(error.cause) : undefined;
}

/**
 * Wait for a job's (or batch's) end and return its Terminal, whether the workflow completed with
 * it or failed with it. An ending without a Terminal is thrown as the client threw it.
 */
export async function terminalOf<T extends { reason: string } = Terminal>(handle: {
  result(): Promise<unknown>;
}): Promise<T> {
  try {
    return (await handle.result()) as T;
  } catch (error) {
    const terminal = terminalOfFailure<T>(error);
    if (terminal) return terminal;
    throw error;
  }
}
