/**
 * The one failure a tool may throw: the activity layer tells a cancelled call apart from a
 * failed one by this name.
 */
export function abortError(message = 'The tool call was aborted'): Error {
  const error = new Error(message);
  error.name = 'AbortError';
  return error;
}

/** True for errors produced by `abortError` and by Node's own abortable APIs. */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || (error as { code?: unknown }).code === 'ABORT_ERR');
}

/** Throw an AbortError when the signal has fired; call between steps of a multi-step tool. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError();
}
