/**
 * What the session knows of the files it has read or written, as Claude Code keeps it: Edit and
 * Write refuse a file the session has not read, or one changed since. Part of the loop's State, so
 * the rule survives a crash, a resume and continue-as-new.
 */
export interface FileReadState {
  /** Modification time when the session last read or wrote the file. */
  mtimeMs: number;
  size: number;
  /** True when only part of the file was read (offset/limit). */
  partial: boolean;
}

/** Keyed by `fileStateKey(workspace, file_path)`. */
export type ReadFileStates = Record<string, FileReadState>;

/** A change a tool call made to the session's file knowledge; `state: null` forgets the file. */
export interface FileStateUpdate {
  key: string;
  state: FileReadState | null;
}

/**
 * The key of a tool's `file_path`: the absolute, normalised POSIX path (no symlink resolution, so
 * the workflow can compute it without touching the disk).
 */
export function fileStateKey(workspace: string, filePath: string): string {
  const joined = filePath.startsWith('/') ? filePath : `${workspace.replace(/\/+$/, '')}/${filePath}`;
  const parts: string[] = [];
  for (const part of joined.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}
