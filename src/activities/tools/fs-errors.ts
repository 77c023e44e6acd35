import type { ToolOutcome } from '../../shared/tool-definition';

/** A failed tool call, as the model sees it. */
export function toolError(content: string): ToolOutcome {
  return { content, isError: true };
}

/** A successful tool call. */
export function toolResult(content: string): ToolOutcome {
  return { content, isError: false };
}

/**
 * Turn a file-system error into a sentence the model can act on; Node's own messages name
 * syscalls and absolute paths, which say little about what to do next.
 */
export function describeFsError(error: unknown, displayPath: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return `File does not exist: ${displayPath}`;
    case 'ENOTDIR':
      return `A component of ${displayPath} is a file, not a directory.`;
    case 'EISDIR':
      return `${displayPath} is a directory, not a file.`;
    case 'EACCES':
    case 'EPERM':
      return `Permission denied: ${displayPath}`;
    case 'ENOSPC':
      return `No space left on device while writing ${displayPath}.`;
    case 'EROFS':
      return `${displayPath} is on a read-only file system.`;
    case 'ENAMETOOLONG':
      return `The path ${displayPath} is too long.`;
    default:
      return `${displayPath}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Claude Code's note after a path that does not exist: relative paths start at the workspace, the
 * working directory of every tool.
 */
export function workingDirectoryNote(workspace: string): string {
  return `Note: your current working directory is ${workspace}.`;
}

/** True when the first bytes of a file look binary (a NUL byte, as git and grep judge it). */
export function looksBinary(head: Uint8Array): boolean {
  return head.includes(0);
}

/** Bytes inspected by `looksBinary`. */
export const BINARY_SNIFF_BYTES = 8192;
