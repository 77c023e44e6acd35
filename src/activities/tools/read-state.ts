import type { Stats } from 'node:fs';
import type { FileReadState, ReadFileStates } from '../../shared/file-state';

/** Claude Code's wording, which models know: Write and Edit on a file the session has not read. */
export const NOT_READ_MESSAGE = 'File has not been read yet. Read it first before writing to it.';
/** Claude Code's wording for a file changed on disk since the session last read or wrote it. */
export const MODIFIED_SINCE_READ_MESSAGE =
  'File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.';

/**
 * Claude Code's ending for a successful Write or Edit. True here: the call returns the file's new
 * state, which the session records, so the next Edit or Write of the file needs no Read.
 */
export const FILE_STATE_CURRENT = ' (file state is current in your context — no need to Read it back)';

/** The recorded state of `key`; own properties only, so no key can reach Object.prototype. */
export function recordedState(readState: ReadFileStates | undefined, key: string): FileReadState | undefined {
  return readState && Object.hasOwn(readState, key) ? readState[key] : undefined;
}

/**
 * Why an existing file may not be overwritten, or undefined when it may: it was never read, or it
 * changed since. A newer mtime is Claude Code's test; a different size also counts, because it
 * also catches a change made within the file system's timestamp granularity, and one that set the
 * mtime back (`cp -p`, `tar -x`, `touch -d`).
 */
export function staleReadError(recorded: FileReadState | undefined, current: Stats): string | undefined {
  if (!recorded) return NOT_READ_MESSAGE;
  if (current.mtimeMs > recorded.mtimeMs || current.size !== recorded.size) return MODIFIED_SINCE_READ_MESSAGE;
  return undefined;
}

/** The state to record for a file as it is now on disk (after a Read, Write or Edit). */
export function stateOf(info: Stats, partial: boolean): FileReadState {
  return { mtimeMs: info.mtimeMs, size: info.size, partial };
}
